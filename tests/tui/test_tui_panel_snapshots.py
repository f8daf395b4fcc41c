"""What the newer panels look like: the host catalog with a function's doc, completion
as you type, the approvals inbox, and the light theme with an approval waiting. Each
picture is taken once its state is asserted, so a snapshot never records a wrong state."""

from __future__ import annotations

import itertools
import secrets
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable
from tui_helpers import SIZE, make_app, run_to_end, settle, still, until

from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.tui.components.completion_menu import CompletionMenu
from run_repl.tui.components.host_catalog import HostCatalog
from run_repl.tui.screens import approvals as approvals_screen
from run_repl.tui.screens.approvals import ApprovalsScreen

PUBLISH = (
    "const drafts = await documents.listDrafts()\nreturn await documents.publish(drafts[0].id)"
)


async def paused_on_publish(pilot: Any) -> None:
    await still(pilot)
    pilot.app.main.editor_tabs.active_editor.load_text(PUBLISH)
    await run_to_end(pilot)
    assert pilot.app.query_one(ApprovalPrompt).current is not None
    await still(pilot)


@pytest.mark.slow
def test_catalog_with_a_functions_doc(stable: Path, snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await still(pilot)
        await pilot.press("ctrl+o", "h")
        tree = pilot.app.query_one(HostCatalog).tree
        assert pilot.app.focused is tree
        tree.move_cursor(tree.root.children[3].children[1])  # documents.publish
        await pilot.pause()
        assert "needs approval" in str(pilot.app.query_one("#catalog-doc").content)
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


def test_completion_as_you_type(stable: Path, snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await still(pilot)
        editor = pilot.app.main.editor_tabs.active_editor
        editor.load_text("")
        editor.focus()
        await pilot.press(*"const d = await documents.")
        menu = pilot.app.query_one(CompletionMenu)
        assert [c.path for c in menu.candidates] == ["documents.listDrafts", "documents.publish"]
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


def test_approvals_inbox(stable: Path, snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The inbox names the run, the approval, when it was asked and the store's file:
    # numbered ids, one clock and a short path keep the picture the same each time.
    count = itertools.count(1)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: f"{next(count):0{2 * n}x}")
    monkeypatch.setattr(approvals_screen, "format_when", lambda when, now=None: "12:00:00")
    app = make_app(stable)
    app.ws.store.location = "data/run-repl.sqlite3"

    async def run_before(pilot: Any) -> None:
        await paused_on_publish(pilot)
        await pilot.press("f6")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ApprovalsScreen)
        await until(pilot, lambda: screen.query_one(DataTable).row_count == 1)
        await still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme_with_an_approval_waiting(stable: Path, snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        pilot.app.theme = "run-repl-light"
        await paused_on_publish(pilot)
        assert pilot.app.current_theme.name == "run-repl-light"

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)
