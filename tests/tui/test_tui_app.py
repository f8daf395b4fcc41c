"""The IDE as a person uses it, driven with Pilot: run, cancel, logs, calls, paging,
approvals, history, themes, a bad config, errors."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.approval_prompt import ApprovalPrompt
from run_repl.tui.components.calls_table import CallsTable
from run_repl.tui.components.error_view import RunErrorView
from run_repl.tui.components.log_panel import LogPanel
from run_repl.tui.components.value_view import ValueView
from run_repl.tui.messages import RunFinished, RunInterrupted
from run_repl.workspace import open_workspace

SIZE = (160, 48)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


def make_app(data_dir: Path, **kwargs: Any) -> RunReplApp:
    ws = open_workspace(None, data_dir_override=str(data_dir))
    return RunReplApp(ws, **kwargs)


async def set_source(app: RunReplApp, pilot: Any, source: str) -> None:
    editor = app.editor_tabs.active_editor
    assert editor is not None
    editor.load_text(source)
    editor.focus()
    await pilot.pause()


async def run_and_wait(
    app: RunReplApp, pilot: Any, key: str = "ctrl+j", timeout: float = 20
) -> None:
    await pilot.press(key)
    await wait_until(pilot, lambda: app.run_token > 0 and not app.running, timeout)


async def wait_until(pilot: Any, condition: Any, timeout: float = 20) -> None:
    waited = 0.0
    while not condition():
        await pilot.pause(0.05)
        waited += 0.05
        if waited > timeout:
            raise AssertionError("timed out waiting for the app")
    await pilot.pause()


@pytest.fixture
async def app_and_pilot(data_dir: Path) -> AsyncIterator[tuple[RunReplApp, Any]]:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


async def test_run_shows_value_calls_and_status(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(
        app,
        pilot,
        "console.info('looking'); const [c] = await crm.listAccounts(); return await store.listOrders(c.id)",
    )
    await run_and_wait(app, pilot)
    assert app.current_result is not None and app.current_result.status == "ok"
    assert app.status.state == "ok" and app.status.calls == 2
    calls = app.query_one(CallsTable)
    assert [c.path for c in calls.calls.values()] == ["crm.listAccounts", "store.listOrders"]
    assert all(c.ok for c in calls.calls.values())
    logs = app.query_one(LogPanel)
    assert [line.text for line in logs.lines] == ["looking"]
    value = app.query_one(ValueView)
    assert value.page_offset == 0
    assert list(value.page_items) == app.current_result.value_window.items


@pytest.mark.parametrize("key", ["ctrl+j", "f5"])
async def test_run_keys(app_and_pilot: tuple[RunReplApp, Any], key: str) -> None:
    app, pilot = app_and_pilot
    await set_source(app, pilot, "21 * 2")
    await run_and_wait(app, pilot, key)
    assert app.current_result.value == 42


async def test_run_the_selection_only(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(app, pilot, "throw new Error('not me')\n6 * 7")
    editor = app.editor_tabs.active_editor
    editor.select_line(1)
    await run_and_wait(app, pilot)
    assert app.current_result.value == 42


async def test_cancel_a_spinning_run(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(app, pilot, "while (true) {}")
    await pilot.press("ctrl+j")
    await wait_until(pilot, lambda: app.running)
    await pilot.pause(0.2)
    await pilot.press("escape")
    await wait_until(pilot, lambda: not app.running, timeout=2)
    assert app.current_result.error.code == "RUN_ABORTED"
    assert app.status.state == "cancelled"
    # Escape is the editor's own again once nothing runs.
    assert app.check_action("cancel", ()) is False


async def test_logs_stream_and_filter(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(
        app, pilot, "console.debug('d'); console.log('l'); console.warn('w'); console.error('e')"
    )
    await run_and_wait(app, pilot)
    logs = app.query_one(LogPanel)
    assert [line.level for line in logs.lines] == ["debug", "log", "warn", "error"]
    logs.focus()
    for _ in range(3):  # debug -> log -> info -> warn
        await pilot.press("f")
    assert logs.min_level == "warn"
    assert [line.text for line in logs.lines if logs._visible(line)] == ["w", "e"]
    await pilot.press("space")
    assert logs.follow is False
    await pilot.press("c")
    assert logs.lines == []


async def test_error_shows_and_editor_jumps_to_it(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(app, pilot, "const a = 1\nconst b = a.nope.deeper\n")
    await run_and_wait(app, pilot)
    view = app.query_one(RunErrorView)
    assert view.has_class("-shown") and view.error.code == "RUN_EXCEPTION"
    editor = app.editor_tabs.active_editor
    assert editor.cursor_location[0] == 1  # line 2, zero-based
    assert app.status.state == "error"


async def test_call_detail_opens_on_enter(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    from run_repl.tui.screens.call_detail import CallDetailScreen

    app, pilot = app_and_pilot
    await set_source(app, pilot, "await crm.getAccount('acc_0007')")
    await run_and_wait(app, pilot)
    await pilot.press("alt+4")
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, CallDetailScreen)
    assert app.screen.call.path == "crm.getAccount"
    await pilot.press("escape")


async def test_approval_inline_approve_resumes_and_changes_data(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(
            app,
            pilot,
            "const d = await documents.listDrafts(); return await documents.publish(d[0].id)",
        )
        await pilot.press("ctrl+j")
        prompt = app.query_one(ApprovalPrompt)
        await wait_until(pilot, lambda: prompt.current is not None)
        assert prompt.has_class("-pending") and app.focused is prompt
        assert prompt.current.path == "documents.publish"
        assert app.status.state == "interrupted"
        await pilot.press("y")
        await wait_until(
            pilot, lambda: not app.running and app.current_result.status != "interrupted"
        )
        assert app.current_result.status == "ok", app.current_result.error
        assert app.current_result.value["published"] is True
        replayed = [c.replayed for c in app.query_one(CallsTable).calls.values()]
        assert replayed == [True, False]
    db = sqlite3.connect(data_dir / "demo.sqlite3")
    assert db.execute("SELECT published FROM drafts WHERE id = 'draft_01'").fetchone()[0] == 1


async def test_approval_deny_and_approve_path_for_the_session(data_dir: Path) -> None:
    app = make_app(data_dir)
    source = "const d = await documents.listDrafts(); return await documents.publish(d[1].id)"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(app, pilot, source)
        await pilot.press("ctrl+j")
        prompt = app.query_one(ApprovalPrompt)
        await wait_until(pilot, lambda: prompt.current is not None)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.running and app.current_result.status == "error")
        assert app.current_result.error.code == "RUN_APPROVAL_DENIED"
        # 'a' approves, and approves this path without asking for the rest of the session.
        await set_source(app, pilot, source)
        await pilot.press("ctrl+j")
        await wait_until(pilot, lambda: prompt.current is not None)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.running and app.current_result.status == "ok")
        await set_source(
            app,
            pilot,
            "const d = await documents.listDrafts(); return await documents.publish(d[2].id)",
        )
        await run_and_wait(app, pilot)
        await wait_until(pilot, lambda: not app.running and app.current_result.status == "ok")
        assert prompt.current is None
        assert app.current_result.value["id"] == "draft_03"


async def test_quitting_with_approvals_pending_keeps_them(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(
            app,
            pilot,
            "const d = await documents.listDrafts(); return await documents.publish(d[0].id)",
        )
        await pilot.press("ctrl+j")
        await wait_until(pilot, lambda: app.query_one(ApprovalPrompt).current is not None)
        await pilot.press("ctrl+q")
    pending = app.ws.store.list_approvals()
    assert [a.path for a in pending] == ["documents.publish"]


async def test_history_opens_a_past_run_in_a_new_buffer(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    from run_repl.tui.screens.history import HistoryScreen

    app, pilot = app_and_pilot
    await set_source(app, pilot, "'from history'")
    await run_and_wait(app, pilot)
    before = len(app.editor_tabs.snapshot())
    await pilot.press("f2")
    await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    await pilot.pause(0.3)
    await pilot.press("enter")
    await wait_until(pilot, lambda: len(app.editor_tabs.snapshot()) == before + 1)
    assert app.editor_tabs.active_editor.text == "'from history'"


async def test_theme_switch_applies_to_editor_and_persists(data_dir: Path, tmp_path: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.theme = "run-repl-light"
        await pilot.pause()
        area = app.query_one(TextArea)
        assert area.theme == "run-repl-light"
    saved = (tmp_path / "config" / "config.toml").read_text()
    assert 'theme = "run-repl-light"' in saved
    again = make_app(data_dir)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "run-repl-light"


async def test_no_color_uses_the_ansi_theme(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme.startswith("ansi-")


async def test_bad_config_gives_a_message_and_defaults(data_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("theme = [broken\n")
    app = make_app(data_dir)
    notes: list[str] = []
    # Before the app mounts, so the start-up message is seen.
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        assert app.theme == "run-repl-dark"
    assert any("config.toml" in w and "default settings" in w for w in app.ws.warnings)
    assert any("config.toml" in n and "default settings" in n for n in notes)


async def test_keymap_from_config_rebinds_run(data_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[keymap]\n"app.run" = "ctrl+t"\n')
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(app, pilot, "'rebound'")
        await run_and_wait(app, pilot, "ctrl+t")
        assert app.current_result.value == "rebound"


async def test_buffers_persist_across_restarts(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(app, pilot, "'kept'")
        await app.editor_tabs.action_new_buffer("'second'", title="two")
        await pilot.pause()
        await pilot.press("ctrl+q")
    again = make_app(data_dir)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        texts = [b.text for b in again.editor_tabs.snapshot()]
        assert texts == ["'kept'", "'second'"]


async def test_file_argument_opens_in_the_editor(data_dir: Path, tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.ts"
    snippet.write_text("const x: number = 5\nx * 2")
    app = make_app(data_dir, file=str(snippet), source=snippet.read_text())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.editor_tabs.active_buffer.path == str(snippet)
        await run_and_wait(app, pilot)
        assert app.current_result.value == 10


async def test_messages_flow_in_order(data_dir: Path) -> None:
    seen: list[str] = []
    counted: list[Any] = []
    app = make_app(data_dir)

    def hook(message: Any) -> None:
        # A bubbling message reaches the hook once per node it passes.
        if any(m is message for m in counted):
            return
        counted.append(message)
        if isinstance(message, RunFinished | RunInterrupted):
            seen.append(type(message).__name__)
        elif type(message).__name__ in ("RunSubmitted", "ApprovalDecided"):
            seen.append(type(message).__name__)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.pause()
        await set_source(
            app,
            pilot,
            "const d = await documents.listDrafts(); return await documents.publish(d[3].id)",
        )
        await pilot.press("ctrl+j")
        await wait_until(pilot, lambda: app.query_one(ApprovalPrompt).current is not None)
        await pilot.press("y")
        await wait_until(pilot, lambda: "RunFinished" in seen)
    assert seen == ["RunSubmitted", "RunInterrupted", "ApprovalDecided", "RunFinished"]


async def test_help_shows_bindings_of_the_focused_widget(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    from run_repl.tui.screens.help import HelpScreen

    app, pilot = app_and_pilot
    app.editor_tabs.active_editor.focus()
    await pilot.press("f1")
    await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
    screen = app.screen
    ids = {row[2] for row in screen.binding_rows}
    assert {"app.run", "app.history", "app.help", "editor.new"} <= ids
    assert screen.focused_help is not None and "ctrl+enter" in screen.focused_help


async def test_palette_offers_the_focused_widgets_actions(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await set_source(app, pilot, "Array.from({ length: 500 }, (_, i) => i)")
    await run_and_wait(app, pilot)
    view = app.query_one(ValueView)
    view.focus()
    await pilot.pause()
    commands = {c.title: c for c in app.get_system_commands(app.screen)}
    assert {"Run", "History", "Next page", "Go to item"} <= set(commands)
    assert "value.next_page" in commands["Next page"].help
    before = view.page_offset
    result = commands["Next page"].callback()
    if result is not None:
        await result
    await pilot.pause()
    assert view.page_offset > before
