"""What the main screen looks like: idle, after a run with a paged value, with an
approval pending. Durations are blanked (present's one `format_ms`) and the cursor stops blinking, so the
pictures only change when the screen does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import SIZE, jump, make_app, run_to_end, settle, still

from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.tui.components.editor.confirm_close import ConfirmClose
from run_repl.tui.screens.jump import JumpOverlay


async def finish(pilot: Any, source: str) -> None:
    await still(pilot)
    editor = pilot.app.main.editor_tabs.active_editor
    editor.load_text(source)
    await run_to_end(pilot)
    await still(pilot)


def test_idle_screen(stable: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=still)


@pytest.mark.slow
def test_after_a_run_with_a_paged_value(stable: Path, snap_compare: Any) -> None:
    source = "console.log('listing'); const [c] = await crm.listAccounts(); return await store.listOrders(c.id)"

    async def run_before(pilot: Any) -> None:
        await finish(pilot, source)
        await jump(pilot, "v")  # before n: a key sent sooner goes to the editor
        await pilot.press("n")  # the second page of items
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


PUBLISH = (
    "const drafts = await documents.listDrafts()\nreturn await documents.publish(drafts[0].id)"
)


def test_approval_pending(stable: Path, snap_compare: Any) -> None:
    """The prompt is shown, the editor keeps the focus, the footer offers F3."""

    async def run_before(pilot: Any) -> None:
        await finish(pilot, PUBLISH)
        assert pilot.app.query_one(ApprovalPrompt).current is not None

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


def test_approval_engaged(stable: Path, snap_compare: Any) -> None:
    """After F3: the prompt has the focus and says which keys decide."""

    async def run_before(pilot: Any) -> None:
        await finish(pilot, PUBLISH)
        await pilot.press("f3")
        prompt = pilot.app.query_one(ApprovalPrompt)
        assert prompt.engaged and pilot.app.focused is prompt
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_approval_pending_at_80_columns(stable: Path, snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await finish(pilot, PUBLISH)
        assert pilot.app.query_one(ApprovalPrompt).current is not None

    assert snap_compare(make_app(stable), terminal_size=(80, 24), run_before=run_before)


def test_jump_overlay(stable: Path, snap_compare: Any) -> None:
    """ctrl+o: a letter on every panel, and what each letter does."""

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(pilot.app.screen, JumpOverlay)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


def test_idle_screen_at_80_columns(stable: Path, snap_compare: Any) -> None:
    """The run hint and the run keys fit; the catalog is folded away and the editor has
    50 columns, the value panel 26."""
    assert snap_compare(make_app(stable), terminal_size=(80, 24), run_before=still)


def test_idle_screen_at_120_columns(stable: Path, snap_compare: Any) -> None:
    """The catalog is shown, narrower (30 columns), and the editor keeps 50."""
    assert snap_compare(make_app(stable), terminal_size=(120, 40), run_before=still)


def test_catalog_over_the_editor_at_80_columns(stable: Path, snap_compare: Any) -> None:
    """ctrl+b on a narrow screen: the catalog is drawn over the editor's left side."""

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+b")
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.slow
def test_closing_an_unsaved_buffer_asks(stable: Path, snap_compare: Any) -> None:
    """The ● on the tab, and the question with Cancel focused."""

    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+n", *"draft", "ctrl+w")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ConfirmClose)
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


PUBLISHED = (
    "const drafts = await documents.listDrafts()\n"
    "await documents.publish(drafts[0].id)\n"
    'return "published"'  # not the draft: its times change with every run
)


@pytest.mark.slow
def test_calls_after_an_approval(stable: Path, snap_compare: Any, no_arm_delay: None) -> None:
    """Status, time and approval wait come first and are never cut; the call text is."""

    async def run_before(pilot: Any) -> None:
        await finish(pilot, PUBLISHED)
        await pilot.press("f3", "y")
        await settle(pilot)
        await pilot.press("ctrl+o", "c")
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_calls_after_an_approval_at_80_columns(
    stable: Path, snap_compare: Any, no_arm_delay: None
) -> None:
    async def run_before(pilot: Any) -> None:
        await finish(pilot, PUBLISHED)
        await pilot.press("f3", "y")
        await settle(pilot)
        await pilot.press("ctrl+o", "c")
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=(80, 24), run_before=run_before)
