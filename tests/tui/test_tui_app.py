"""The IDE as a person uses it, driven with Pilot: run, cancel, logs, calls, paging,
approvals, history, themes, a bad config, errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea
from tui_helpers import (
    SIZE,
    decide,
    jump,
    make_app,
    run_to_end,
    screen_text,
    set_source,
    settle,
    until,
)

from run_repl.tui.app import RunReplApp
from run_repl.tui.commands import IdeCommands
from run_repl.tui.components.calls_table import CallsTable
from run_repl.tui.components.error_view import RunErrorView
from run_repl.tui.components.log_panel import LogPanel
from run_repl.tui.components.value.view import ValueView
from run_repl.tui.messages import RunFinished, RunInterrupted
from run_repl.tui.run_controller import FLUSH_SECONDS
from run_repl.tui.screens.call_detail import CallDetailScreen


async def test_run_shows_value_calls_and_status(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(
        pilot,
        "console.info('looking'); const [c] = await crm.listAccounts(); return await store.listOrders(c.id)",
    )
    await run_to_end(pilot)
    assert app.main.runs.result is not None and app.main.runs.result.status == "ok"
    assert app.main.status.state == "ok" and app.main.status.calls == 2
    calls = app.query_one(CallsTable)
    assert [c.path for c in calls.calls.values()] == ["crm.listAccounts", "store.listOrders"]
    assert all(c.ok for c in calls.calls.values())
    logs = app.query_one(LogPanel)
    assert [line.text for line in logs.lines] == ["looking"]
    value = app.query_one(ValueView)
    assert value.page_offset == 0
    assert list(value.page_items) == app.main.runs.result.value_window.items


@pytest.mark.slow
@pytest.mark.parametrize("key", ["ctrl+j", "f5"])
async def test_run_keys(app_and_pilot: tuple[RunReplApp, Any], key: str) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "21 * 2")
    await run_to_end(pilot, key)
    assert app.main.runs.result.value == 42


async def test_run_the_selection_only(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "throw new Error('not me')\n6 * 7")
    editor = app.main.editor_tabs.active_editor
    editor.select_line(1)
    await run_to_end(pilot)
    assert app.main.runs.result.value == 42


@pytest.mark.slow
async def test_cancel_a_spinning_run(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "while (true) {}")
    await pilot.press("ctrl+j")
    await until(pilot, lambda: app.main.running)
    await pilot.press("escape")
    await settle(pilot)
    assert app.main.runs.result.error.code == "RUN_ABORTED"
    assert app.main.status.state == "cancelled"
    # Escape is the editor's own again once nothing runs.
    assert app.check_action("cancel", ()) is False


@pytest.mark.slow
async def test_logs_stream_and_filter(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(
        pilot, "console.debug('d'); console.log('l'); console.warn('w'); console.error('e')"
    )
    await run_to_end(pilot)
    logs = app.query_one(LogPanel)
    assert [line.level for line in logs.lines] == ["debug", "log", "warn", "error"]
    logs.focus()
    for _ in range(3):  # debug -> log -> info -> warn
        await pilot.press("f")
    assert logs.min_level == "warn"
    assert [line.text for line in logs.lines if logs._visible(line)] == ["w", "e"]
    await pilot.press("space")
    assert logs.follow is False
    await pilot.press("ctrl+l")
    assert logs.lines == []


async def test_a_long_log_shows_its_end_while_following(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    # It said "following" and showed lines 0-13 of 300: the first batch came before
    # the scrollbar was laid out, and a scroll without one was ignored.
    app, pilot = app_and_pilot
    await set_source(pilot, "for (let i = 0; i < 300; i++) console.log('line ' + i)")
    await run_to_end(pilot)
    logs = app.query_one(LogPanel)
    assert logs.follow is True
    text = screen_text(app)
    assert "300 lines · following" in text
    assert "line 299" in text
    assert "line 0 " not in text


async def test_logs_come_in_batches_and_nothing_ticks_once_the_run_is_over(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    logs = app.query_one(LogPanel)
    batches: list[int] = []
    add_lines = logs.add_lines
    logs.add_lines = lambda lines: (batches.append(len(lines)), add_lines(lines))  # type: ignore[method-assign]
    await set_source(pilot, "for (let i = 0; i < 400; i++) console.log('line ' + i)")
    await run_to_end(pilot)
    assert [line.text for line in logs.lines] == [f"line {i}" for i in range(400)]
    assert sum(batches) == 400 and len(batches) < 40, batches
    # Idle, nothing flushes (it flushed every 50 ms, run or no run, waking the loop
    # twenty times a second). A batch's timer already set calls the flush it was given.
    flushes = 0
    flush_logs = app.main.runs.flush_logs

    def counted() -> None:
        nonlocal flushes
        flushes += 1
        flush_logs()

    app.main.runs.flush_logs = counted  # type: ignore[method-assign]
    await asyncio.sleep(FLUSH_SECONDS * 5)
    assert flushes == 0


async def test_error_shows_and_editor_jumps_to_it(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "const a = 1\nconst b = a.nope.deeper\n")
    await run_to_end(pilot)
    view = app.query_one(RunErrorView)
    assert view.has_class("-shown") and view.error.code == "RUN_EXCEPTION"
    editor = app.main.editor_tabs.active_editor
    assert editor.cursor_location[0] == 1  # line 2, zero-based
    assert app.main.status.state == "error"


@pytest.mark.slow
async def test_call_detail_opens_on_enter(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    from run_repl.tui.screens.call_detail import CallDetailScreen

    app, pilot = app_and_pilot
    await set_source(pilot, "await crm.getAccount('acc_0007')")
    await run_to_end(pilot)
    await jump(pilot, "c")
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, CallDetailScreen)
    assert app.screen.call.path == "crm.getAccount"
    await pilot.press("escape")


@pytest.mark.slow
async def test_history_opens_a_past_run_in_a_new_buffer(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    from run_repl.tui.screens.history import HistoryScreen

    app, pilot = app_and_pilot
    await set_source(pilot, "'from history'")
    await run_to_end(pilot)
    before = len(app.main.editor_tabs.snapshot())
    await pilot.press("f2")
    await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
    await settle(pilot)  # the search worker lists the runs
    await pilot.press("enter")
    await until(pilot, lambda: len(app.main.editor_tabs.snapshot()) == before + 1)
    assert app.main.editor_tabs.active_editor.text == "'from history'"


@pytest.mark.slow
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
        await set_source(pilot, "'rebound'")
        await run_to_end(pilot, "ctrl+t")
        assert app.main.runs.result.value == "rebound"


@pytest.mark.slow
async def test_buffers_persist_across_restarts(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, "'kept'")
        await app.main.editor_tabs.action_new_buffer("'second'", title="two")
        await pilot.pause()
        await pilot.press("ctrl+q")
    again = make_app(data_dir)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        texts = [b.text for b in again.main.editor_tabs.snapshot()]
        assert texts == ["'kept'", "'second'"]


async def test_file_argument_opens_in_the_editor(data_dir: Path, tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.ts"
    snippet.write_text("const x: number = 5\nx * 2")
    app = make_app(data_dir, file=str(snippet), source=snippet.read_text())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.main.editor_tabs.active_buffer.path == str(snippet)
        await run_to_end(pilot)
        assert app.main.runs.result.value == 10


@pytest.mark.slow
async def test_messages_flow_in_order(data_dir: Path, no_arm_delay: None) -> None:
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
            pilot,
            "const d = await documents.listDrafts(); return await documents.publish(d[3].id)",
        )
        await run_to_end(pilot)
        await decide(pilot, "y")
    assert seen == ["RunSubmitted", "RunInterrupted", "ApprovalDecided", "RunFinished"]


@pytest.mark.slow
async def test_help_shows_bindings_of_the_focused_widget(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    from run_repl.tui.screens.help import HelpScreen

    app, pilot = app_and_pilot
    app.main.editor_tabs.active_editor.focus()
    await pilot.press("f1")
    await until(pilot, lambda: isinstance(app.screen, HelpScreen))
    screen = app.screen
    ids = {row[2] for row in screen.binding_rows}
    assert {"app.run", "app.history", "app.help", "editor.new"} <= ids
    assert screen.focused_help is not None and "ctrl+enter" in screen.focused_help


async def test_palette_offers_the_focused_widgets_actions(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "Array.from({ length: 500 }, (_, i) => i)")
    await run_to_end(pilot)
    view = app.query_one(ValueView)
    view.focus()
    await pilot.pause()
    commands = {c.title: c for c in IdeCommands(app.screen).commands()}
    assert {"Run", "History", "Next page", "Go to item"} <= set(commands)
    assert "value.next_page" in commands["Next page"].help
    before = view.page_offset
    result = commands["Next page"].callback()
    if result is not None:
        await result
    await pilot.pause()
    assert view.page_offset > before


@pytest.mark.slow
async def test_a_calls_detail_shows_dates_decoded_never_the_wire(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "return await billing.listInvoices('acc_0001')")
    await run_to_end(pilot)
    await jump(pilot, "c")
    assert app.focused is app.query_one(CallsTable)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, CallDetailScreen))
    await until(pilot, lambda: '"issued_at": Date 20' in screen_text(app))  # painted next
    text = screen_text(app)
    assert "\\u0000" not in text and "u0000" not in text
