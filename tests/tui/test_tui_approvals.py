"""Approving in the IDE is deliberate: the prompt never takes keys typed for
something else, waits a moment before it takes any, asks twice before a
session-wide approval, and shows what is asked whole.

Here, with the whole IDE and a real run: what a decision does to the run, and the
IDE's own keys. The prompt's key rules (arming, engaging, confirming) are tested in
a small App of their own, with a clock the test steps: test_tui_approval_prompt.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Static
from tui_helpers import SIZE, make_app, run_to_end, set_source, settle, until

from run_repl.sandbox.result import Interruption
from run_repl.tui.app import RunReplApp
from run_repl.tui.components.approval_prompt import ApprovalPrompt, approval_text
from run_repl.tui.components.calls_table import CallsTable
from run_repl.tui.messages import ApprovalDecided

PUBLISH_FIRST = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"
PUBLISH_TWO = (
    "const d = await documents.listDrafts()\n"
    "return await Promise.all([documents.publish(d[0].id), documents.publish(d[1].id)])"
)


def published(data_dir: Path, draft: str) -> bool:
    db = sqlite3.connect(data_dir / "demo.sqlite3")
    try:
        return bool(db.execute("SELECT published FROM drafts WHERE id = ?", (draft,)).fetchone()[0])
    finally:
        db.close()


def decided(messages: list[Any]) -> list[ApprovalDecided]:
    seen: dict[int, ApprovalDecided] = {}
    for m in messages:
        if isinstance(m, ApprovalDecided):
            seen.setdefault(id(m), m)
    return list(seen.values())


def plain(text: Any, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None, legacy_windows=False)
    console.print(text)
    return console.export_text()


async def interrupted(pilot: Any, source: str = PUBLISH_FIRST) -> ApprovalPrompt:
    await set_source(pilot, source)
    await run_to_end(pilot)
    prompt = pilot.app.query_one(ApprovalPrompt)
    assert prompt.current is not None, pilot.app.main.runs.result
    return prompt


# ---------------------------------------------------------------- the safety defect
async def test_typing_while_an_approval_appears_decides_nothing(data_dir: Path) -> None:
    """The report's story: a comment typed while the run pauses. Every letter of it
    (y, n, a, enter among them) stays in the editor, and nothing is decided."""
    messages: list[Any] = []
    app = make_app(data_dir)
    before = "// now try"
    after = " again anyway: yes, no, always\nand enter\n"
    # Enter is the key a person presses for a new line (a "\n" would be ctrl+j: run).
    after_keys = [key if key != "\n" else "enter" for key in after]
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await pilot.pause()
        await set_source(pilot, PUBLISH_FIRST + "\n")
        editor = app.main.editor_tabs.active_editor
        editor.move_cursor(editor.document.end)
        await pilot.press("ctrl+j")
        await pilot.press(*before)  # typed while the run is going
        await settle(pilot)  # ... and the run pauses for approval meanwhile
        prompt = app.query_one(ApprovalPrompt)
        assert prompt.current is not None and prompt.has_class("-pending")
        assert app.focused is editor
        await pilot.press(*after_keys)  # typed while the prompt is on screen
        await settle(pilot)
        assert editor.text == PUBLISH_FIRST + "\n" + before + after
        assert app.focused is editor
        assert prompt.current is not None
        assert decided(messages) == []
        assert app.main.runs.result.status == "interrupted"
    assert not published(data_dir, "draft_01")
    assert [a.path for a in app.ws.store.list_approvals()] == ["documents.publish"]


async def test_panel_keys_never_reach_the_prompt_and_f3_or_the_jump_engage_it(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    # The IDE's own keys (F4, the jump overlay, F3); the prompt's rules are in
    # test_tui_approval_prompt.py. No run: the prompt is asked directly.
    app, pilot = app_and_pilot
    prompt = app.query_one(ApprovalPrompt)
    prompt.ask([hidden_transfer()])
    await pilot.pause()
    for key in ["f4"] * 6:  # every panel, and round to the first again
        await pilot.press(key)
        assert app.focused is not prompt, key
    assert prompt.current is not None and not prompt.engaged
    await pilot.press("ctrl+o", "a")
    await until(pilot, lambda: app.focused is prompt)
    assert prompt.engaged
    await pilot.press("escape")
    assert not prompt.engaged and prompt.current is not None
    await pilot.press("f3")
    assert app.focused is prompt and prompt.engaged


async def test_f3_then_y_in_one_burst_puts_nothing_in_the_editor_and_decides_nothing(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    """F3 and `y` typed together (both queued before F3 is handled, as a terminal sends a
    fast burst): the `y` is the prompt's, ignored as too soon and said so, never the
    editor's."""
    from textual import events

    app, pilot = app_and_pilot
    editor = app.main.editor_tabs.active_editor
    before = editor.text
    prompt = app.query_one(ApprovalPrompt)
    prompt.clock = lambda: 1000.0  # the guard never passes, however slow the machine is
    prompt.ask([hidden_transfer()])
    await pilot.pause()
    assert app.focused is editor
    assert app._driver is not None
    for key in ("f3", "y"):
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)
    await settle(pilot)
    assert editor.text == before and app.focused is prompt and prompt.current is not None
    assert "ignored: too soon (y)" in str(prompt.query_one("#approval-keys").render())
    await pilot.press("escape", "f3", "y")  # the same with Pilot's keys
    assert editor.text == before and app.focused is prompt and prompt.current is not None


async def test_f3_engages_and_y_approves(data_dir: Path, no_arm_delay: None) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        prompt = await interrupted(pilot)
        assert "F3" in str(prompt.border_subtitle)
        await pilot.press("f3", "escape")  # back to the editor, nothing decided
        assert app.focused is app.main.editor_tabs.active_editor and prompt.current is not None
        await pilot.press("f3")
        assert app.focused is prompt and prompt.engaged
        await pilot.press("y")
        await settle(pilot)
        assert app.main.runs.result.status == "ok", app.main.runs.result.error
        assert app.main.runs.result.value["published"] is True
        replayed = [c.replayed for c in app.query_one(CallsTable).calls.values()]
        assert replayed == [True, False]
        assert app.focused is app.main.editor_tabs.active_editor  # back where the person was
    assert published(data_dir, "draft_01")


async def test_a_batch_approved_then_denied_ends_denied(
    app_and_pilot: tuple[RunReplApp, Any], no_arm_delay: None
) -> None:
    app, pilot = app_and_pilot
    prompt = await interrupted(pilot, PUBLISH_TWO)
    assert prompt.total == 2
    await pilot.press("f3", "y")
    assert len(prompt.queue) == 1 and prompt.engaged  # the second, still engaged
    await pilot.press("n")
    await settle(pilot)
    assert app.main.runs.result.status == "error"
    assert app.main.runs.result.error.code == "RUN_APPROVAL_DENIED"


async def test_approving_for_the_session_does_not_ask_again(
    data_dir: Path, no_arm_delay: None
) -> None:
    messages: list[Any] = []
    app = make_app(data_dir)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await pilot.pause()
        prompt = await interrupted(pilot)
        await pilot.press("f3", "a", "enter")
        await settle(pilot)
        assert [(d.approved, d.approve_path) for d in decided(messages)] == [(True, True)]
        assert app.main.runs.result.status == "ok"
        # The rest of the session does not ask for this function.
        await set_source(
            pilot, "const d = await documents.listDrafts(); return await documents.publish(d[2].id)"
        )
        await run_to_end(pilot)
        assert prompt.current is None
        assert app.main.runs.result.value["id"] == "draft_03"
    assert published(data_dir, "draft_01") and published(data_dir, "draft_03")


async def test_quitting_with_approvals_pending_keeps_them(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await interrupted(pilot)
        await pilot.press("ctrl+q")
    pending = app.ws.store.list_approvals()
    assert [a.path for a in pending] == ["documents.publish"]


# ---------------------------------------------------------------- shown whole
def hidden_transfer() -> Interruption:
    return Interruption(
        id="int_1",
        path="bank.transfer",
        args=["savings…" + " " * 420, 1000000, "to: mallory"],
        payload={"kind": "approval", "message": "Transfer money?"},
    )


def test_every_argument_is_shown_whole_with_lengths_and_whitespace_marked() -> None:
    text = plain(approval_text(hidden_transfer()), width=80)
    assert "⟨420 spaces⟩" in text
    assert "string, 428 characters; 420 blanks in a row" in text
    assert "1000000" in text and "number: 1,000,000" in text
    assert '"to: mallory"' in text
    assert "3 arguments" in text


def test_nested_strings_and_invisible_characters_are_marked_but_indentation_is_not() -> None:
    it = Interruption(
        id="int_2",
        path="mail.send",
        args=[{"to": "bob\u200b@example.com", "body": "hi" + "\u00a0" * 6 + "there"}],
    )
    text = plain(approval_text(it))
    assert "⟨U+200B⟩" in text
    assert "⟨6 blanks⟩" in text
    assert "object, 2 keys" in text
    assert "spaces⟩" not in text  # pretty JSON's own indentation is left alone


def test_guest_text_in_the_prompt_cannot_drive_the_terminal() -> None:
    it = Interruption(
        id="int_3",
        path="documents.publish",
        args=["\x1b]52;c;cHduZWQ=\x07 \u202egnp.exe"],
        payload={"kind": "approval", "message": "Publish\x1b[2J \u202eevil\u202c?\x9b31m"},
    )
    text = plain(approval_text(it))
    for raw in ("\x1b", "\x07", "\u202e", "\u202c", "\x9b"):
        assert raw not in text
    assert "\\u202e" in text and "\\u001b" in text


class PromptHarness(App[None]):
    def compose(self) -> ComposeResult:
        yield ApprovalPrompt()


async def test_a_long_argument_scrolls_and_nothing_is_cut() -> None:
    it = Interruption(
        id="int_4",
        path="bank.transfer",
        args=["x" * 3000, 1000000, "to: mallory"],
        payload={"kind": "approval", "message": "Transfer?"},
    )
    app = PromptHarness()
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(ApprovalPrompt)
        prompt.ask([it])
        await pilot.pause()
        body = prompt.query_one("#approval-body")
        assert body.max_scroll_y > 0  # taller than the room it has: it scrolls
        # Every line of the text is there to scroll to: nothing is cut.
        text = prompt.query_one("#approval-text", Static)
        lines = [s.text.strip() for s in text.render_lines(Region(0, 0, *text.size))]
        assert "".join(lines).count("x") == 3000
        assert '"to: mallory"' in lines and "1000000" in lines
