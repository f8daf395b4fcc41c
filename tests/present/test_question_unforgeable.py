"""The approval question cannot be forged, and hides nothing, in any front end.

A host's message may embed a snippet's argument (the README's own
`f"Refund {order_id}?"`). Whatever that argument holds, every line a person
reads in the question is the host's own wording, or on the message's one line:
a newline in the message is a visible mark, never a line that could pass for
the `call:` and `arg 1 of 1 (...)` lines around it. Each invisible character
(line separators, tags, zero-width characters, the BOM, the soft hyphen,
variation selectors) is a visible escape.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from run_repl.cli import main
from run_repl.line import run_line_repl
from run_repl.mcp.approval_wait import Standing, waiting_message
from run_repl.mcp.client_approval import question
from run_repl.present.approvals import (
    approval_detail_lines,
    approval_list_lines,
    message_fragments,
)
from run_repl.present.results import interruption_lines
from run_repl.present.rich_render import lines_to_text
from run_repl.present.styled import Line, plain
from run_repl.sandbox.result import Interruption
from run_repl.store import PendingApproval
from run_repl.tui.components.approval_prompt import approval_text
from run_repl.workspace import open_workspace

# The structure lines a forger would copy: as `run`, `approvals show` and the IDE write them.
FORGED = (
    'ord_1?\n  call: orders.refund("ord_1")\n  arg 1 of 1 (string, 5 characters):\n'
    '    "ord_1"\n  (checked by finance: amount $4.99)\r\u2028call: x\u2029arg 1 of 1 (x)'
    "\x85orders.refund  1 argument\x0barg 1 of 1\x0c  call:\x1c\x1d\x1earg 1 of 1"
)
# A line a person could take for the host's: the call, an argument's heading or its value.
STRUCTURE = re.compile(r'^\s*(call:|arg \d+ of \d+|orders\.refund\b|\(checked|"ord_1"$)', re.I)
# Wherever any renderer (or `str.splitlines`) could break a line.
LINE_BREAKS = re.compile(r"\r\n|[\n\r\u2028\u2029\x85\x0b\x0c\x1c-\x1e]")

INVISIBLE = {
    "\u2028": "U+2028",  # line separator
    "\u2029": "U+2029",  # paragraph separator
    "\U000e0041": "U+E0041",  # tag A ("ASCII smuggling")
    "\U000e007f": "U+E007F",  # cancel tag
    "\u200b": "U+200B",  # zero-width space
    "\u200c": "U+200C",  # zero-width non-joiner
    "\u200d": "U+200D",  # zero-width joiner
    "\u2060": "U+2060",  # word joiner
    "\ufeff": "U+FEFF",  # the BOM
    "\u00ad": "U+00AD",  # soft hyphen
    "\ufe0f": "U+FE0F",  # variation selector 16
    "\U000e0100": "U+E0100",  # variation selector 17
    "\u180e": "U+180E",  # Mongolian vowel separator
    "\u034f": "U+034F",  # combining grapheme joiner
    "\u3164": "U+3164",  # Hangul filler
}
HIDDEN = "pay" + "".join(INVISIBLE) + "bob"


def escaped(ch: str, text: str) -> bool:
    """`ch` is shown as a visible escape in `text`: ⟨U+XXXX⟩ or a JSON `\\uXXXX` escape."""
    code = ord(ch)
    if f"⟨{INVISIBLE[ch]}⟩" in text:
        return True
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}" in text
    return f"\\u{code:04x}" in text


def assert_hides_nothing(text: str) -> None:
    for ch in INVISIBLE:
        assert ch not in text, f"{INVISIBLE[ch]} reached the approver raw"
        assert escaped(ch, text), f"{INVISIBLE[ch]} is not shown as an escape"


def structure(text: str) -> list[str]:
    """How each line that starts like a structure line starts, in order."""
    found = (STRUCTURE.match(t.rstrip()) for t in LINE_BREAKS.split(text))
    return [m[1].lower() for m in found if m]


def assert_not_forged(forged: str, honest: str, *, argument_forged: bool = False) -> None:
    """The question with the forging message has the structure lines of the same question
    with a plain message, and no more: the message added none. When the argument is the
    forging text too, its own value line (JSON, one line) no longer reads `"ord_1"`."""
    expected = structure(honest)
    if argument_forged:
        expected = [s for s in expected if s != '"ord_1"']
    assert structure(forged) == expected, forged
    assert "⟨newline⟩" in forged


def rendered(lines: list[Line]) -> str:
    """As the CLI's writer and the IDE draw them (each fragment through the sanitizer)."""
    return lines_to_text(lines).plain


def interruption(message: str, arg: str = "ord_1") -> Interruption:
    return Interruption(
        id="int_1",
        path="orders.refund",
        args=[arg],
        payload={"kind": "approval", "message": message},
    )


def pending(message: str, arg: str = "ord_1") -> PendingApproval:
    return PendingApproval(
        id="int_1",
        run_id="run_1",
        source="return await orders.refund(x)",
        path="orders.refund",
        args=[arg],
        message=message,
        continuation="token",
    )


# ---------------------------------------------------------------- present/ and each renderer
FRONT_ENDS: dict[str, Callable[[str, str], str]] = {
    "run and the line REPL": lambda m, a: rendered(interruption_lines(interruption(m, a))),
    "approvals list": lambda m, a: rendered(approval_list_lines([pending(m, a)])),
    "approvals show and the IDE inbox": lambda m, a: rendered(approval_detail_lines(pending(m, a))),
    "the IDE prompt": lambda m, a: approval_text(interruption(m, a)).plain,
    "the MCP elicitation": lambda m, a: question(pending(m, a)),
}


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_newline_in_the_message_forges_no_line(front_end: str) -> None:
    render = FRONT_ENDS[front_end]
    assert_not_forged(render(f"Refund {FORGED}?", "ord_1"), render("Refund ord_1?", "ord_1"))


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_invisible_characters_are_visible_escapes(front_end: str) -> None:
    text = FRONT_ENDS[front_end](f"Refund {HIDDEN}?", HIDDEN)
    assert_hides_nothing(text)


def test_the_message_is_one_line_with_its_breaks_marked() -> None:
    text = plain(message_fragments("a\nb\tc\r\nd\u2028e"))
    assert "\n" not in text and "\t" not in text and "\r" not in text
    assert text == "a⟨newline⟩b⟨tab⟩c⟨U+000D⟩⟨newline⟩d⟨U+2028⟩e"


def test_the_mcp_waiting_text_hides_nothing() -> None:
    state = Standing(status="waiting", run_id="run_1", approvals=[pending("Refund?", HIDDEN)])
    text = waiting_message(state, lambda i: f"run-repl approvals approve {i}")
    assert "\n" not in text
    assert_hides_nothing(text)


# ---------------------------------------------------------------- the front ends, end to end
REFUND_HOST = """
from run_repl.sandbox.approval import requires_approval

@requires_approval(message=lambda order_id: f"Refund {order_id}?")
def refund(order_id: str) -> dict:
    return {"refunded": order_id}

HOSTS = {"orders": {"refund": refund}}
"""


def js(text: str) -> str:
    return json.dumps(text)  # a JS string literal with the same characters


@pytest.fixture
def host(tmp_path: Path) -> str:
    path = tmp_path / "refund_host.py"
    path.write_text(textwrap.dedent(REFUND_HOST), encoding="utf-8")
    return str(path)


def cli(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: Path,
    host: str,
    *args: str,
    stdin: str = "",
) -> tuple[int, str, str]:
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    )
    capsys.readouterr()
    code = main([*args, "--data-dir", str(data), "--host", host])
    out = capsys.readouterr()
    return code, out.out, out.err


def cli_question(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    host: str,
    arg: str,
) -> dict[str, str]:
    data = tmp_path / f"data{len(list(tmp_path.iterdir()))}"
    code, _, err = cli(
        capsys, monkeypatch, data, host, "run", "-", stdin=f"return await orders.refund({js(arg)})"
    )
    assert code == 3, err
    approval_id = re.search(r"saved pending approval (int_\w+)", err)
    assert approval_id is not None, err
    _, listed, _ = cli(capsys, monkeypatch, data, host, "approvals", "list")
    _, shown, _ = cli(capsys, monkeypatch, data, host, "approvals", "show", approval_id[1])
    return {"run": err, "approvals list": listed, "approvals show": shown}


def test_the_cli_question_cannot_be_forged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host: str
) -> None:
    forged = cli_question(capsys, monkeypatch, tmp_path, host, FORGED)
    honest = cli_question(capsys, monkeypatch, tmp_path, host, "ord_1")
    for command, text in forged.items():
        assert_not_forged(text, honest[command], argument_forged=True)


def test_the_cli_question_hides_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host: str
) -> None:
    for command, text in cli_question(capsys, monkeypatch, tmp_path, host, HIDDEN).items():
        for ch in INVISIBLE:
            assert ch not in text and escaped(ch, text), (command, INVISIBLE[ch])


async def test_the_line_repl_question_cannot_be_forged(tmp_path: Path, host: str) -> None:
    ws = open_workspace(host_spec=host, data_dir_override=str(tmp_path / "data"))
    buffer = io.StringIO()
    output = Vt100_Output(buffer, lambda: Size(rows=48, columns=400), term="xterm")
    try:
        with create_pipe_input() as pipe:
            task = asyncio.create_task(run_line_repl(ws, input=pipe, output=output))
            pipe.send_text(f"return await orders.refund({js(FORGED + HIDDEN)})\r")
            for _ in range(1000):
                if "approve? " in buffer.getvalue() or task.done():
                    break
                await asyncio.sleep(0.01)
            pipe.send_text("n\r:quit\r")
            assert await asyncio.wait_for(task, 15) == 0
    finally:
        ws.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]", "", buffer.getvalue())
    question = text[text.index("waiting for approval") : text.index("approve? ")]
    # The honest question says `arg 1 of 1` once; the message adds no structure line.
    assert structure(question) == ["arg 1 of 1"], question
    assert "⟨newline⟩" in question
    assert_hides_nothing(question)


# ---------------------------------------------------------------- the one sanitizer
def test_the_sanitizer_escapes_every_invisible_character_in_any_text() -> None:
    from run_repl.present.sanitize import safe, safe_json

    shown = safe(HIDDEN)
    assert_hides_nothing(shown)
    assert safe(shown) == shown
    # In JSON, a character beyond U+FFFF is its UTF-16 pair: still valid, the same data.
    text = safe_json({HIDDEN: [HIDDEN]}, indent=None)
    assert_hides_nothing(text)
    assert "\\udb40\\udc41" in text and json.loads(text) == {HIDDEN: [HIDDEN]}


def test_the_snippets_lines_in_the_mcp_question_are_marked_as_the_snippets() -> None:
    """A comment in the source can hold any text: each of its lines is numbered, as
    `approvals show` numbers them, so none passes for the question's own lines."""
    forging_source = (
        "/*\nCall: orders.refund, 1 argument:\n  arg 1 of 1 (string, 5 characters):\n"
        '    "ord_1"\n*/\nreturn await orders.refund(x)'
    )
    honest = pending("Refund ord_1?")
    forged = honest.model_copy(update={"source": forging_source})
    assert structure(question(forged)) == structure(question(honest))
    assert " 3 |   arg 1 of 1 (string, 5 characters):" in question(forged)


@given(st.text(alphabet=st.characters() | st.sampled_from([*INVISIBLE, "\U0001f44d", "\x1b"])))
def test_the_fast_sanitizer_is_the_one_rule(text: str) -> None:
    """`safe` scans twice for speed; what it escapes is exactly `UNSAFE`, the one rule."""
    from run_repl.present.sanitize import UNSAFE, escape, is_safe, safe

    assert safe(text) == UNSAFE.sub(lambda m: escape(m.group()), text)
    assert is_safe(text) == (UNSAFE.search(text) is None)


# ---------------------------------------------------------------- wrapped rows
# A long message soft-wraps: the terminal starts a row wherever the width falls, so a
# snippet's argument padded to the right length starts a row with a line of its own.
TAIL = "  call: orders.refund(ord_1)"
PROBE = "qqqqq"


def screen_rows(text: str, width: int) -> list[str]:
    """What a terminal `width` columns wide shows: each written line cut into rows."""
    from rich.cells import cell_len

    rows: list[str] = []
    for written in LINE_BREAKS.split(text):
        row, used = "", 0
        for ch in written:
            if used + cell_len(ch) > width:
                rows.append(row)
                row, used = "", 0
            row += ch
            used += cell_len(ch)
        rows.append(row)
    return rows


def landing(text: str, width: int, after: str = "") -> str:
    """An argument that, put where PROBE is in `text` (the same question with PROBE as
    the argument), starts a row of a `width`-column screen with TAIL: the first place
    the argument is written after `after` decides (what follows it moves, what precedes
    it does not)."""
    for written in LINE_BREAKS.split(text[text.index(after) :]):
        if PROBE in written:
            column = written.index(PROBE)
            return "x" * ((width - column % width) % width) + TAIL
    raise AssertionError(f"{PROBE} not in {text!r}")


def assert_rows_marked(text: str, honest: str, width: int) -> None:
    """On a `width`-column screen, the question forged to start a row with TAIL shows
    the honest question's structure lines and no more; every row of the snippet's text
    fits (the terminal wraps none of them), and each wrapped row starts with its line's
    indent and `↪`."""
    rows = screen_rows(text, width)
    assert structure("\n".join(rows)) == structure(honest), "\n".join(rows)
    written = LINE_BREAKS.split(text)
    guest = [x for x in written if "xxxx" in x or "ord_1" in x]  # the snippet's text
    assert all(len(x) <= width for x in guest), "a row is left to the terminal to wrap"
    assert any(re.match(r"^\s*↪ ", x) for x in written)
    assert any(re.match(r"^\s*↪ .*call: orders\.refund", x) for x in written), text


@pytest.mark.parametrize("width", [80, 40])
def test_a_wrapped_row_of_the_cli_question_is_marked(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    host: str,
    width: int,
) -> None:
    from run_repl.present import rich_render

    monkeypatch.setattr(rich_render, "terminal_width", lambda stream: width)
    probe = cli_question(capsys, monkeypatch, tmp_path, host, PROBE)
    for command, honest in probe.items():
        for after in ("", "waiting for approval:") if command == "run" else ("",):
            # `run`: the call's line in the calls list, and the message in the question.
            arg = landing(honest, width, after)
            forged = cli_question(capsys, monkeypatch, tmp_path, host, arg)
            assert_rows_marked(forged[command], honest, width)


def test_the_cli_question_to_a_pipe_or_a_file_is_written_whole_unwrapped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host: str
) -> None:
    """Not a terminal: nothing wraps what is written, so each line is written whole, as
    it is, and no row is marked."""
    arg = "x" * 71 + TAIL
    for command, text in cli_question(capsys, monkeypatch, tmp_path, host, arg).items():
        assert "↪" not in text, command
        assert any(f"Refund {arg}?" in x for x in text.split("\n")), command


@pytest.mark.parametrize("width", [80, 40])
async def test_a_wrapped_row_of_the_line_repl_question_is_marked(
    tmp_path: Path, host: str, width: int
) -> None:
    async def asked(arg: str) -> str:
        ws = open_workspace(host_spec=host, data_dir_override=str(tmp_path / f"data-{arg[:9]}"))
        buffer = io.StringIO()
        output = Vt100_Output(buffer, lambda: Size(rows=48, columns=width), term="xterm")
        try:
            with create_pipe_input() as pipe:
                task = asyncio.create_task(run_line_repl(ws, input=pipe, output=output))
                pipe.send_text(f"return await orders.refund({js(arg)})\r")
                for _ in range(1000):
                    if "approve? " in buffer.getvalue() or task.done():
                        break
                    await asyncio.sleep(0.01)
                pipe.send_text("n\r:quit\r")
                assert await asyncio.wait_for(task, 15) == 0
        finally:
            ws.close()
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]", "", buffer.getvalue())
        return text[text.index("waiting for approval") : text.index("approve? ")]

    honest = await asked(PROBE)
    assert_rows_marked(await asked(landing(honest, width)), honest, width)


def test_wrapping_cuts_by_cells_keeps_the_indent_and_marks_each_wrapped_row() -> None:
    from run_repl.present.wrapping import row_texts, wrap_line, wrap_lines

    rows = row_texts(wrap_line([("", "    "), ("string", '"' + "中" * 10 + 'abc"')], 16))
    assert rows == ['    "中中中中中', "    ↪ 中中中中中", '    ↪ abc"']
    # Too narrow for the indent and 8 cells of text: the indent gives way first.
    assert row_texts(wrap_line([("", "    abcdefghijkl")], 12))[1] == "  ↪ ijkl"
    assert row_texts(wrap_line([("", "\tab\x07")], 9)) == ["        a", "↪ b\\u0007"]
    lines = [[("", "short")], [("", "y" * 30)]]
    assert wrap_lines(lines, None) == lines  # not a terminal: as they are
    assert row_texts(wrap_lines(lines, 12)) == ["short", "y" * 12, "↪ " + "y" * 10, "↪ " + "y" * 8]


@given(
    st.lists(st.tuples(st.sampled_from(["", "dim", "mark"]), st.text()), max_size=6),
    st.integers(min_value=12, max_value=100),
)
# A mark of no width and a character of two cells: as many cells as characters, in all.
@example(line=[("", "00\x1f\U00011a51"), ("", "\x1f\x08\u31ef")], width=12)
def test_wrapped_rows_fit_keep_every_character_and_each_after_the_first_is_marked(
    line: list[tuple[str, str]], width: int
) -> None:
    from rich.cells import cell_len

    from run_repl.present.sanitize import safe
    from run_repl.present.wrapping import CONTINUATION, row_texts, wrap_line

    rows = row_texts(wrap_line(line, width))
    whole = safe("".join(t for _, t in line))
    if "\t" not in whole:
        indent = whole[: len(whole) - len(whole.lstrip(" "))][: width - 10]
        assert rows[0] + "".join(r[len(indent) + 2 :] for r in rows[1:]) == whole
        assert all(r.startswith(indent + CONTINUATION) for r in rows[1:])
    # A character two cells wide moves to the next row whole: no row goes past the edge.
    assert all(cell_len(r) <= width for r in rows)


# ---------------------------------------------------------------- logs beside the question
LOGGED = 'checking\n  call: orders.refund("ord_2")\narg 1 of 1 (string, 5 characters):'


def test_a_logged_newline_starts_a_marked_row_never_a_line_like_the_hosts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host: str
) -> None:
    # The logs are printed just above the question: a row of a log after a newline
    # is marked as the log's, so it cannot pass for a line of the question.
    source = f"console.log({js(LOGGED)}); return await orders.refund('ord_1')"
    code, _, err = cli(capsys, monkeypatch, tmp_path / "data", host, "run", "-", stdin=source)
    assert code == 3, err
    rows = err.splitlines()
    first = next(i for i, r in enumerate(rows) if r.endswith("log   checking"))
    assert rows[first + 1] == " " * 17 + '│   call: orders.refund("ord_2")'
    assert rows[first + 2] == " " * 17 + "│ arg 1 of 1 (string, 5 characters):"
    assert not any(r.startswith(("  call:", "arg 1 of 1")) for r in rows)


def test_the_log_rows_of_one_log_are_marked_after_the_first() -> None:
    from run_repl.present.results import log_line, log_rows
    from run_repl.sandbox.result import LogLine

    log = LogLine(level="info", text="a\r\nb\nc", at_ms=1.0)
    assert [plain(r) for r in log_rows(log)] == [
        "    1.0 ms info  a",
        " " * 17 + "│ b",
        " " * 17 + "│ c",
    ]
    assert plain(log_line(log)) == "\n".join(plain(r) for r in log_rows(log))
