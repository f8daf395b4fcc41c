"""The line REPL (`run-repl repl`), driven by keystrokes through a pipe.

Each test types into prompt-toolkit's pipe input and reads what the REPL
printed from a VT100 output over a text buffer (escape sequences stripped),
against a workspace with a small host written into tmp_path.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from run_repl.host.loader import describe
from run_repl.line import run_line_repl
from run_repl.line.completion import ReplCompleter
from run_repl.line.input_complete import indent_for, is_complete
from run_repl.line.repl import COMMAND_HELP
from run_repl.present.sanitize import UNSAFE
from run_repl.workspace import Workspace, open_workspace

HOST = '''
from run_repl.sandbox.approval import requires_approval

CALLS = []


def greet(name: str) -> str:
    """Say hello to someone.

    Longer text that completion does not show."""
    return f"hello-{name}"


def rows(n: int = 300) -> list:
    """Rows to page through."""
    return [{"i": i} for i in range(n)]


@requires_approval(message=lambda order_id: f"Refund order {order_id}?")
def refund(order_id: str) -> dict:
    """Refund an order."""
    CALLS.append(order_id)
    return {"refunded": order_id}


HOSTS = {"util": {"greet": greet, "rows": rows}, "orders": {"refund": refund}}
'''

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|[\r\x08]")


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    path = tmp_path / "test_host.py"
    path.write_text(HOST, encoding="utf-8")
    return path


@pytest.fixture
def ws(host_file: Path, tmp_path: Path) -> Iterator[Workspace]:
    workspace = open_workspace(host_spec=str(host_file), data_dir_override=str(tmp_path / "data"))
    yield workspace
    workspace.close()


class Repl:
    """A running REPL: type into it, read what it printed, wait for its exit code."""

    def __init__(self, ws: Workspace, pipe: PipeInput) -> None:
        self.ws = ws
        self.pipe = pipe
        self.buffer = io.StringIO()
        output = Vt100_Output(self.buffer, lambda: Size(rows=48, columns=160), term="xterm")
        self.sigint_before = signal.getsignal(signal.SIGINT)
        self.task: asyncio.Task[int] = asyncio.create_task(
            run_line_repl(ws, input=pipe, output=output)
        )

    def type(self, keys: str) -> None:
        self.pipe.send_text(keys)

    @property
    def text(self) -> str:
        return ESCAPES.sub("", self.buffer.getvalue())

    async def wait_for(self, needle: str, timeout: float = 10) -> None:
        async def poll() -> None:
            while needle not in self.text:
                if self.task.done():
                    raise AssertionError(f"the REPL ended before printing {needle!r}:\n{self.text}")
                await asyncio.sleep(0.01)

        try:
            await asyncio.wait_for(poll(), timeout)
        except TimeoutError:
            raise AssertionError(f"no {needle!r} after {timeout} s:\n{self.text}") from None

    async def exit_code(self, timeout: float = 15) -> int:
        return await asyncio.wait_for(self.task, timeout)

    def runs(self) -> list[Any]:
        return list(reversed(self.ws.store.list_runs(limit=100)))

    def calls(self) -> list[str]:
        return self.ws.host.functions["orders"]["refund"].__globals__["CALLS"]


@pytest.fixture
async def repl(ws: Workspace) -> AsyncIterator[Repl]:
    with create_pipe_input() as pipe:
        session = Repl(ws, pipe)
        yield session
        if not session.task.done():
            session.task.cancel()
            await asyncio.gather(session.task, return_exceptions=True)


async def test_a_complete_snippet_runs_on_enter(repl: Repl) -> None:
    repl.type("return 40 + 2\r:quit\r")
    assert await repl.exit_code() == 0
    assert "42" in repl.text and "ok in" in repl.text
    assert [r.source for r in repl.runs()] == ["return 40 + 2"]


async def test_an_incomplete_snippet_continues_and_runs_once_closed(repl: Repl) -> None:
    repl.type("function f() {\rreturn 42\r}\r:quit\r")
    assert await repl.exit_code() == 0
    # One run, of all three lines (the body indented for us), after the brace closed.
    assert [r.source for r in repl.runs()] == ["function f() {\n  return 42\n}"]


async def test_ctrl_j_continues_a_complete_statement(repl: Repl) -> None:
    repl.type("const a = 20\nreturn a * 2\r:quit\r")
    assert await repl.exit_code() == 0
    assert [r.source for r in repl.runs()] == ["const a = 20\nreturn a * 2"]
    assert "40" in repl.text


async def test_brackets_in_strings_and_comments_do_not_count(repl: Repl) -> None:
    repl.type("return \"{\" + '(' + `[${1}` // {\r:quit\r")
    assert await repl.exit_code() == 0
    assert '"{([1"' in repl.text
    assert len(repl.runs()) == 1


async def test_escape_enter_runs_an_incomplete_snippet_as_it_is(repl: Repl) -> None:
    repl.type("return [1,\x1b\r:quit\r")
    assert await repl.exit_code() == 0
    assert "RUN_SYNTAX_ERROR" in repl.text


async def test_logs_stream_and_calls_show(repl: Repl) -> None:
    repl.type(
        'console.log("first log"); console.warn("second"); return await util.greet("ada")\r:quit\r'
    )
    assert await repl.exit_code() == 0
    text = repl.text
    assert "first log" in text and "warn" in text and "second" in text
    assert '#1  util.greet("ada")' in text and '"hello-ada"' in text
    assert text.index("first log") < text.index('"hello-ada"')


async def test_an_error_shows_its_code_line_and_excerpt(repl: Repl) -> None:
    repl.type("if (true) {\rnull.x\r}\r:quit\r")
    assert await repl.exit_code() == 0
    text = repl.text
    assert "RUN_EXCEPTION at line 2, column 3" in text
    assert "2 |   null.x" in text and "next: " in text


async def test_a_long_line_in_an_error_fits_the_terminal_with_the_caret_under_its_column(
    repl: Repl,
) -> None:
    # The terminal is 160 columns: a wrapped excerpt would put the caret on the row below
    # another row of the source.
    code = "const s = [" + ", ".join(f"{i}" for i in range(80)) + "]; let y = ;"
    repl.type(code + "\r:quit\r")
    assert await repl.exit_code() == 0
    rows = repl.text.split("\n")
    (at,) = [i for i, row in enumerate(rows) if row.startswith("  1 | ")]
    source_row, caret_row = rows[at], rows[at + 1]
    assert len(source_row) <= 160 and source_row.endswith("let y = ;")
    assert source_row[caret_row.index("^")] == ";"


async def test_more_pages_without_gap_or_overlap(repl: Repl) -> None:
    # The first page, then :more, Ctrl-N and :more until the end (300 items, 66 a page).
    repl.type("return await util.rows()\r:more\r\x0e:more\r:more\r:more\r")
    await repl.wait_for("that was all of it: 300 items")
    seen = [int(n) for n in re.findall(r'"i": (\d+)', repl.text)]
    assert seen == list(range(300))
    assert "items 67–132 of 300" in repl.text
    before = len(repl.text)
    repl.type(":item 123\r:page 2\r:quit\r")
    assert await repl.exit_code() == 0
    tail = repl.text[before:]
    assert "item 123 of 300" in tail and '"i": 122' in tail
    page_two = tail[tail.index("items 67–132 of 300") :]
    assert [int(n) for n in re.findall(r'"i": (\d+)', page_two)] == list(range(66, 132))


async def test_approve_with_y_resumes_and_the_function_runs_once(repl: Repl) -> None:
    repl.type(
        'console.log("before"); const r = await orders.refund("o1"); console.log("after"); return r\r'
    )
    await repl.wait_for("approve? y")
    repl.type("y\r:quit\r")
    assert await repl.exit_code() == 0
    text = repl.text
    assert "waiting for approval: orders.refund" in text and "Refund order o1?" in text
    assert '  arg 1 of 1 (string, 2 characters):\n    "o1"' in text
    assert (
        '"refunded": "o1"' in text and 'orders.refund("o1")  ' in text and " ok approved " in text
    )
    assert repl.calls() == ["o1"]
    # The resume replays the snippet from the start: its first log is not printed twice.
    assert len(re.findall(r"ms log +before", text)) == 1
    assert len(re.findall(r"ms log +after", text)) == 1
    assert repl.ws.store.list_approvals(status="pending") == []


async def test_history_says_what_became_of_a_paused_run(repl: Repl) -> None:
    repl.type('return await orders.refund("o2")\r')
    await repl.wait_for("approve? y")
    repl.type("y\r")
    await repl.wait_for('"refunded": "o2"')
    before = len(repl.text)
    repl.type(":history\r:quit\r")
    assert await repl.exit_code() == 0
    paused, resumed = [row for row in repl.text[before:].splitlines() if "refund" in row]
    assert "interrupted" in paused and "resumed: ok" in paused
    assert "a resume" in resumed


async def test_deny_with_n_makes_the_snippet_see_approval_denied(repl: Repl) -> None:
    repl.type('try { await orders.refund("o2") } catch (e) { return e.code }\r')
    await repl.wait_for("approve? y")
    repl.type("n\r:quit\r")
    assert await repl.exit_code() == 0
    assert '"RUN_APPROVAL_DENIED"' in repl.text
    assert repl.calls() == []


async def test_always_approves_the_path_for_the_rest_of_the_session(repl: Repl) -> None:
    repl.type('return await orders.refund("o3")\r')
    await repl.wait_for("approve? y")
    repl.type("a\r")
    await repl.wait_for("type yes to confirm")
    repl.type("yes\r")
    await repl.wait_for('"refunded": "o3"')
    repl.type('return await orders.refund("o4")\r:quit\r')  # no answer typed: none is asked for
    assert await repl.exit_code() == 0
    assert '"refunded": "o4"' in repl.text
    assert "you approved orders.refund for the rest of this session" in repl.text
    second = repl.text.split("waiting for approval: orders.refund")[2]
    assert "approve? y" not in second and repl.calls() == ["o3", "o4"]
    assert "orders.refund" in repl.ws.session_approvals


async def test_always_needs_its_confirmation(repl: Repl) -> None:
    repl.type('return await orders.refund("o6")\r')
    await repl.wait_for("approve? y")
    repl.type("a\r")
    await repl.wait_for("type yes to confirm")
    repl.type("y\r")  # not `yes`: the session approval is not given, and the question comes back
    await repl.wait_for("not approved for the session")
    assert repl.calls() == [] and len(repl.ws.session_approvals) == 0
    repl.type("n\r:quit\r")
    assert await repl.exit_code() == 0
    assert repl.calls() == []


async def test_keys_typed_before_the_question_never_decide(repl: Repl) -> None:
    # Typed ahead with the snippet (a paste, or keys pressed while it ran): discarded.
    repl.type('return await orders.refund("o7")\ry\ryes\r')
    await repl.wait_for("approve? y")
    await asyncio.sleep(0.3)  # the typed-ahead keys had every chance to be taken as an answer
    assert repl.calls() == [] and "approved" not in repl.text.split("approve? y", 1)[1]
    repl.type("no\r:quit\r")
    assert await repl.exit_code() == 0
    assert repl.calls() == []
    assert [a.status for a in repl.ws.store.list_approvals(status=None)] == ["denied"]


async def test_only_a_whole_answer_decides(repl: Repl) -> None:
    repl.type('return await orders.refund("o8")\r')
    await repl.wait_for("approve? y")
    repl.type("yikes\r")  # starts with y, but is not an answer
    await repl.wait_for("answer y, n or a, then Enter")
    assert repl.calls() == []
    repl.type("\x03:quit\r")
    assert await repl.exit_code() == 0
    assert repl.calls() == [] and len(repl.ws.store.list_approvals(status="pending")) == 1


async def test_ctrl_c_at_the_question_leaves_the_approval_pending(repl: Repl) -> None:
    repl.type('return await orders.refund("o5")\r')
    await repl.wait_for("approve? y")
    repl.type("\x03:quit\r")
    assert await repl.exit_code() == 0
    pending = repl.ws.store.list_approvals(status="pending")
    assert len(pending) == 1 and repl.calls() == []
    assert f"run-repl approvals approve {pending[0].id}" in repl.text


@pytest.mark.skipif(
    sys.platform == "win32", reason="SIGINT is what a terminal's Ctrl-C sends on POSIX"
)
async def test_ctrl_c_cancels_a_running_snippet_and_the_repl_goes_on(repl: Repl) -> None:
    outside = repl.sigint_before
    # The log's text is not in the source: the echoed input cannot satisfy the wait
    # (it did, on Python 3.13: the prompt still held SIGINT when the test sent it).
    repl.type('console.log("spin" + "ning"); while (true) {}\r')
    await repl.wait_for("spinning")
    # While a snippet runs the terminal is not raw: Ctrl-C arrives as SIGINT.
    assert signal.getsignal(signal.SIGINT) is not outside
    os.kill(os.getpid(), signal.SIGINT)
    await repl.wait_for("RUN_ABORTED", timeout=5)
    repl.type("return 6 * 7\r:quit\r")
    assert await repl.exit_code() == 0
    assert "42" in repl.text.split("RUN_ABORTED", 1)[1]
    assert signal.getsignal(signal.SIGINT) is outside  # put back


async def test_ctrl_x_ctrl_e_edits_the_snippet_in_the_editor_as_typescript_then_runs_it(
    repl: Repl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen.txt"
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, sys\n"
        "path = pathlib.Path(sys.argv[1])\n"
        f"pathlib.Path({str(seen)!r}).write_text(path.name)\n"
        "path.write_text(path.read_text().replace('foo', 'bar') + '\\n')\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {script}")
    repl.type("return 'foo'\x18\x05")  # edit, then run (bash's edit-and-execute)
    await repl.wait_for('"bar"')
    repl.type(":quit\r")
    assert await repl.exit_code() == 0
    assert seen.read_text().endswith(".ts")
    assert [r.source for r in repl.runs()] == ["return 'bar'"]


async def test_ctrl_c_at_the_prompt_clears_the_input(repl: Repl) -> None:
    repl.type("return 1 +\x03return 2\r\x04")
    assert await repl.exit_code() == 0
    assert [r.source for r in repl.runs()] == ["return 2"]


async def test_ctrl_d_exits_with_zero(repl: Repl) -> None:
    repl.type("\x04")
    assert await repl.exit_code() == 0
    assert (repl.ws.data_dir / "repl_history").parent.is_dir()


async def test_commands(repl: Repl) -> None:
    repl.type("return 1\r:host\r:history\r:h\r:nope\r:q\r")
    assert await repl.exit_code() == 0
    text = repl.text
    assert "util.greet(name)" in text and "orders.refund(order_id)  needs approval" in text
    assert re.search(r"ok\s+[\d.]+ ms  return 1", text)
    assert "Escape Enter" in text and "unknown command :nope" in text
    assert ":quit      leave (or Ctrl-D) (:q, :exit)" in text


async def test_guest_escape_sequences_are_not_sent_to_the_terminal(repl: Repl) -> None:
    repl.type(
        'console.log("\\x1b]0;pwned\\x07 \\x01x\\x02\\u202e"); '
        'await orders.refund("\\x1b[1A\\u202e\\x9b"); return "\\x9b31m"\r'
    )
    await repl.wait_for("approve? y")
    repl.type("y\r:quit\r")
    assert await repl.exit_code() == 0
    raw = repl.buffer.getvalue()
    guest = raw.replace("\x1b[", "").replace("\x1b]", "")  # what is left of our own escapes
    assert (
        "pwned\x07" not in raw and "\x01" not in raw and "\x9b" not in raw and "\u202e" not in raw
    )
    assert "\x1b" not in ESCAPES.sub("", raw)
    assert UNSAFE.search(repl.text) is None
    assert "\\u001b]0;pwned\\u0007 \\u0001x\\u0002\\u202e" in repl.text  # shown, not obeyed
    assert "Refund order \\u001b[1A\\u202e\\u009b?" in repl.text
    del guest


def test_completion_offers_host_paths_with_signature_and_doc(ws: Workspace) -> None:
    completer = ReplCompleter(describe(ws.host), COMMAND_HELP)
    found = {
        c.text: c.display_meta_text
        for c in completer.get_completions(Document("await util."), CompleteEvent())
    }
    assert found == {
        "util.greet": "util.greet(name) — Say hello to someone.",
        "util.rows": "util.rows(n?) — Rows to page through.",
    }
    orders = [
        c.display_meta_text for c in completer.get_completions(Document("ord"), CompleteEvent())
    ]
    assert orders == ["orders.refund(order_id) — Refund an order. (needs approval)"]
    assert not list(completer.get_completions(Document("x.util."), CompleteEvent()))
    assert [c.text for c in completer.get_completions(Document(":hi"), CompleteEvent())] == [
        ":history"
    ]


@pytest.mark.parametrize(
    ("source", "complete"),
    [
        ("1 + 1", True),
        ("", True),
        ("function f() {", False),
        ("function f() {\n  return 1\n}", True),
        ("const s = '{'", True),
        ('const s = "(["', True),
        ("const t = `${", False),
        ("const t = `a\nb", False),
        ("const t = `${ {a: 1}.a }`", True),
        ("const t = `${ `${1}` }`", True),
        ("x = 1 // {", True),
        ("/* {", False),
        ("/* { */ 1", True),
        ("const r = /[{(]/g", True),
        ("a / b", True),
        ("1 +", False),
        ("x = ", False),
        ("f(a,", False),
        ("a\n  .b.", False),
        ("x++", True),
        ("const a = b!", True),
        ("let a: Array<number>", True),
        ("x => ", False),
        ("a &&", False),
        ("'a' + \\", False),
        ("}", True),  # over-closed: run it, and let the engine say where
        ("f())", True),
    ],
)
def test_is_complete(source: str, complete: bool) -> None:
    assert is_complete(source) is complete


def test_indent_follows_open_brackets_but_not_inside_template_text() -> None:
    assert indent_for("function f() {") == "  "
    assert indent_for("if (a) {\n  g([") == "      "
    assert indent_for("const t = `a") == ""
    assert indent_for("x") == ""


def run_piped(host_file: Path, tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "run_repl.cli",
            "repl",
            "--host",
            str(host_file),
            "--data-dir",
            str(tmp_path / "piped"),
        ],
        input=source,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "code", "stdout", "stderr"),
    [
        ('return await util.greet("pipe")', 0, '"hello-pipe"\n', "ok in"),
        ("throw new Error('boom')", 1, "", "RUN_EXCEPTION at line 1"),
        ('await orders.refund("o9")', 3, "", "saved pending approval int_"),
    ],
)
def test_piped_stdin_is_one_snippet_ended_as_run_ends(
    host_file: Path, tmp_path: Path, source: str, code: int, stdout: str, stderr: str
) -> None:
    done = run_piped(host_file, tmp_path, textwrap.dedent(source))
    assert done.returncode == code, done.stderr
    assert done.stdout == stdout and stderr in done.stderr
    assert "js>" not in done.stdout + done.stderr  # never a prompt
