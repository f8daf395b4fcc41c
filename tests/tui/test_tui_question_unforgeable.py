"""The IDE's approval prompt and inbox ask the question as every front end does: the
host's message on one line, whatever a snippet's argument put in it, and every
invisible character shown (the rule and the other front ends:
tests/present/test_question_unforgeable.py)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static
from tui_helpers import SIZE, open_inbox, run_to_end, set_source, settle, until

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.workspace import open_workspace

# As in tests/present/test_question_unforgeable.py: lines a forger would copy, and
# characters a reader cannot see.
FORGED = (
    'ord_1?\n  call: orders.refund("ord_1")\n  arg 1 of 1 (string, 5 characters):\n'
    '    "ord_1"\u2028orders.refund  1 argument\u2029arg 1 of 1 (x)\x85call: x'
)
STRUCTURE = re.compile(r'^\s*(call:|arg \d+ of \d+|orders\.refund\b|"ord_1"$)', re.I)
LINE_BREAKS = re.compile(r"\r\n|[\n\r\u2028\u2029\x85\x0b\x0c\x1c-\x1e]")
INVISIBLE = "\u2028\u2029\U000e0041\u200b\u200d\u2060\ufeff\u00ad\ufe0f\U000e0100"
HIDDEN = "pay" + INVISIBLE + "bob"


def structure(text: str) -> list[str]:
    found = (STRUCTURE.match(t.rstrip()) for t in LINE_BREAKS.split(text))
    return [m[1].lower() for m in found if m]


def assert_hides_nothing(text: str) -> None:
    for ch in INVISIBLE:
        assert ch not in text and f"⟨U+{ord(ch):04X}⟩" in text, f"U+{ord(ch):04X}"


REFUND_HOST = """
from run_repl.sandbox.approval import requires_approval

@requires_approval(message=lambda order_id: f"Refund {order_id}?")
def refund(order_id: str) -> dict:
    return {"refunded": order_id}

HOSTS = {"orders": {"refund": refund}}
"""


def content(app: RunReplApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def asked(tmp_path: Path, data_dir: Path, argument: str) -> tuple[str, str]:
    """What the prompt and the inbox's detail say about `orders.refund(argument)`."""
    tmp_path.mkdir(exist_ok=True)
    host = tmp_path / "refund_host.py"
    host.write_text(textwrap.dedent(REFUND_HOST), encoding="utf-8")
    app = RunReplApp(open_workspace(str(host), data_dir_override=str(data_dir)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, f"return await orders.refund({json.dumps(argument)})")
        await run_to_end(pilot)
        prompt = app.query_one(ApprovalPrompt)
        await until(pilot, lambda: prompt.current is not None)
        shown = content(app, "#approval-text")
        await open_inbox(pilot)
        await settle(pilot)
        await until(pilot, lambda: "Refund" in content(app, "#inbox-detail-text"))
        detail = content(app, "#inbox-detail-text")
        await pilot.press("escape")
        return shown, detail


# Two or three whole IDEs each, every one running the snippet to its approval and opening
# the inbox: 2-3 s of CPU a test. The rule itself is in the fast lane for every front end
# (tests/present/test_question_unforgeable.py), and so is hide_nothing's IDE below.
@pytest.mark.slow
async def test_the_prompt_and_the_inbox_cannot_be_forged(tmp_path: Path, data_dir: Path) -> None:
    prompt, detail = await asked(tmp_path, data_dir, FORGED)
    honest_prompt, honest_detail = await asked(tmp_path / "honest", tmp_path / "d2", "ord_1")
    for forged, honest in ((prompt, honest_prompt), (detail, honest_detail)):
        assert structure(forged) == [s for s in structure(honest) if s != '"ord_1"'], forged
        assert "⟨newline⟩" in forged


async def test_the_prompt_and_the_inbox_hide_nothing(tmp_path: Path, data_dir: Path) -> None:
    for text in await asked(tmp_path, data_dir, HIDDEN):
        assert_hides_nothing(text)


# ---------------------------------------------------------------- wrapped rows
# The panel wraps a long message at its width: padded to the right length, a snippet's
# argument would start a row with a line of its own. Each wrapped row is marked instead.
TAIL = "  call: orders.refund(ord_1)"
PROBE = "qqqqq"
WIDGETS = ("#approval-text", "#inbox-detail-text")


def drawn_rows(widget: Static) -> list[str]:
    """The rows the widget draws, as a person reads them."""
    from textual.geometry import Region

    width, height = widget.size
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


async def drawn(tmp_path: Path, data_dir: Path, argument: str, width: int) -> dict[str, Any]:
    """For the prompt and the inbox's detail: (rows drawn, text unwrapped, width)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    host = tmp_path / "refund_host.py"
    host.write_text(textwrap.dedent(REFUND_HOST), encoding="utf-8")
    app = RunReplApp(open_workspace(str(host), data_dir_override=str(data_dir)))
    seen: dict[str, Any] = {}

    def look(selector: str) -> None:
        widget = app.screen.query_one(selector, Static)
        seen[selector] = (drawn_rows(widget), str(widget.content), widget.size.width)

    async with app.run_test(size=(width, 40)) as pilot:
        await pilot.pause()
        await set_source(pilot, f"return await orders.refund({json.dumps(argument)})")
        await run_to_end(pilot)
        prompt = app.query_one(ApprovalPrompt)
        await until(pilot, lambda: prompt.current is not None)
        await settle(pilot)
        look("#approval-text")
        await open_inbox(pilot)
        await settle(pilot)
        await until(pilot, lambda: "Refund" in content(app, "#inbox-detail-text"))
        look("#inbox-detail-text")
        await pilot.press("escape")
    return seen


def landing(text: str, width: int) -> str:
    """An argument that, where PROBE is first written in `text`, starts a drawn row of a
    `width`-cell panel with TAIL (what follows it moves, what precedes it does not)."""
    for written in text.split("\n"):
        if PROBE in written:
            column = written.index(PROBE)
            return "x" * ((width - column % width) % width) + TAIL
    raise AssertionError(f"{PROBE} not in {text!r}")


@pytest.mark.slow  # three whole IDEs a width (see test_the_prompt_and_the_inbox_cannot_be_forged)
@pytest.mark.parametrize("width", [80, 40])
async def test_a_wrapped_row_of_the_prompt_and_the_inbox_is_marked(
    tmp_path: Path, width: int
) -> None:
    honest = await drawn(tmp_path / "probe", tmp_path / "probe-data", PROBE, width)
    for selector in WIDGETS:
        rows, text, panel = honest[selector]
        forged_rows, _, forged_panel = (
            await drawn(
                tmp_path / selector[1:],
                tmp_path / f"{selector[1:]}-data",
                landing(text, panel),
                width,
            )
        )[selector]
        assert forged_panel == panel
        assert structure("\n".join(forged_rows)) == structure("\n".join(rows)), forged_rows
        assert any(re.match(r"^\s*↪ .*call: orders\.refund", r) for r in forged_rows), forged_rows
