"""What the main screen looks like: idle, after a run with a paged value, with an
approval pending. Durations are blanked and the cursor stops blinking, so the
pictures only change when the screen does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea

from run_repl.tui import app as app_module
from run_repl.tui.components import calls_table, log_panel, status_bar
from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.workspace import open_workspace

SIZE = (160, 48)


@pytest.fixture
def stable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(status_bar, "format_ms", lambda ms: "#.# ms")
    monkeypatch.setattr(status_bar, "format_seconds", lambda s: "#.# s")
    monkeypatch.setattr(status_bar, "format_mib", lambda n: "#.# MiB")
    monkeypatch.setattr(log_panel, "format_time", lambda ms: "    #.#ms")
    monkeypatch.setattr(calls_table, "format_ms", lambda ms: "#.# ms")
    monkeypatch.setattr(calls_table, "format_wait", lambda ms: "#.# s")
    return tmp_path / "data"


def make_app(data_dir: Path) -> app_module.RunReplApp:
    return app_module.RunReplApp(open_workspace(None, data_dir_override=str(data_dir)))


async def still(pilot: Any) -> None:
    for area in pilot.app.query(TextArea):
        area.cursor_blink = False
    await pilot.pause()


async def finish(pilot: Any, source: str, until: Any) -> None:
    await still(pilot)
    editor = pilot.app.editor_tabs.active_editor
    editor.load_text(source)
    await pilot.press("ctrl+j")
    waited = 0.0
    while not until(pilot.app):
        await pilot.pause(0.05)
        waited += 0.05
        assert waited < 30, "the run did not finish"
    await pilot.pause(0.2)
    await still(pilot)


def test_idle_screen(stable: Path, snap_compare: Any) -> None:
    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=still)


def test_after_a_run_with_a_paged_value(stable: Path, snap_compare: Any) -> None:
    source = "console.log('listing'); const [c] = await crm.listAccounts(); return await store.listOrders(c.id)"

    async def run_before(pilot: Any) -> None:
        await finish(pilot, source, lambda app: app.current_result is not None and not app.running)
        await pilot.press("alt+2")
        await pilot.press("n")  # the second page of items
        await still(pilot)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)


def test_approval_pending(stable: Path, snap_compare: Any) -> None:
    source = (
        "const drafts = await documents.listDrafts()\nreturn await documents.publish(drafts[0].id)"
    )

    async def run_before(pilot: Any) -> None:
        await finish(pilot, source, lambda app: app.query_one(ApprovalPrompt).current is not None)

    assert snap_compare(make_app(stable), terminal_size=SIZE, run_before=run_before)
