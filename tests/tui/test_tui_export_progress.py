"""Exporting from the value panel: a progress bar under it while the thread writes page
by page, escape or the Cancel button stopping it (no file left, an old one as it
was), and an unwritable folder reported in one line. The store is held on a gate
between pages, so each state is looked at while it holds, never raced."""

from __future__ import annotations

import csv
import json
import os
import threading
from pathlib import Path
from typing import Any

from test_tui_value_view import FakePager, Harness, posted, run, windowed
from textual.message import Message
from textual.widgets import Input

from run_repl.sandbox.wire.result_store import Page
from run_repl.tui.components.value.export_progress import ExportProgress
from run_repl.tui.components.value.view import ValueView

ITEMS = [{"id": i, "name": f"n{i}", "tags": [i]} for i in range(5_000)]


class GatedPager(FakePager):
    """Reads the first page at once; from the second on, waits for `gate`."""

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def __call__(self, ref: str, offset: int, limit: int) -> Page:
        if offset >= 1_000:
            self.waiting.set()
            assert self.gate.wait(10), "the test never opened the gate"
        return super().__call__(ref, offset, limit)


def unwritable(tmp_path: Path) -> Path:
    """A folder no one here can create a file in (root ignores permission bits)."""
    if os.geteuid() == 0:
        return Path("/sys")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


async def start_export(app: Harness, pilot: Any, path: Path) -> ExportProgress:
    await pilot.press("ctrl+e")
    app.query_one("#value-prompt-input", Input).value = str(path)
    await pilot.press("enter")
    return app.query_one(ExportProgress)


async def wait_for(pilot: Any, event: threading.Event) -> None:
    for _ in range(500):
        if event.is_set():
            return
        await pilot.pause(0.01)
    raise AssertionError("the export never reached the store's second page")


async def finished(app: Harness, pilot: Any, messages: list[Message]) -> Any:
    # Not the worker's end: a cancelled thread worker counts as done at once, while its
    # thread still removes the temporary file and then says so.
    for _ in range(1_000):
        done = posted(messages, ValueView.ExportFinished)
        if done:
            await pilot.pause()
            assert len(done) == 1
            return done[0]
        await pilot.pause(0.01)
    raise AssertionError("the export never finished")


async def test_the_progress_bar_shows_and_finishes(tmp_path: Path) -> None:
    pager = GatedPager(ITEMS)
    messages: list[Message] = []
    app = Harness(windowed(ITEMS, 40), pager)
    async with run(app, messages) as pilot:
        progress = await start_export(app, pilot, tmp_path / "v.csv")
        await wait_for(pilot, pager.waiting)
        await pilot.pause(0.15)
        assert progress.display and progress.running
        label = str(progress.query_one("#export-label").render())
        assert label == f"Exporting CSV to {tmp_path / 'v.csv'}"
        assert progress.bar.total == 2 * len(ITEMS)  # the keys' pass, then the rows'
        assert 0 < (progress.bar.progress or 0) < progress.bar.total
        pager.gate.set()
        done = await finished(app, pilot, messages)
        assert done.error is None and not done.cancelled and done.items == len(ITEMS)
        assert not progress.display and not progress.running
        assert "escape" not in app.screen.active_bindings  # nothing left to cancel
        assert progress.bar.progress == progress.bar.total
        assert any("Exported 5,000 items" in n.message for n in app._notifications)
    with (tmp_path / "v.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "name", "tags"] and rows[-1] == ["4999", "n4999", "[4999]"]


async def test_escape_cancels_and_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "v.jsonl"
    target.write_text("old\n")
    pager = GatedPager(ITEMS)
    messages: list[Message] = []
    app = Harness(windowed(ITEMS, 40), pager)
    async with run(app, messages) as pilot:
        await pilot.press("ctrl+e")
        app.query_one("#value-prompt-input", Input).value = str(target)
        await pilot.press("enter")  # it exists: a second enter replaces it
        await pilot.press("enter")
        progress = app.query_one(ExportProgress)
        await wait_for(pilot, pager.waiting)
        view = app.query_one(ValueView)
        assert "escape" in app.screen.active_bindings
        assert app.screen.active_bindings["escape"].binding.action == "cancel_export"
        await pilot.press("escape")
        pager.gate.set()
        done = await finished(app, pilot, messages)
        assert done.cancelled and done.error is None
        assert not progress.display and view.view == "table"
        assert any("cancelled: nothing was written" in n.message for n in app._notifications)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.jsonl"]
    assert target.read_text() == "old\n"


async def test_the_cancel_button_cancels(tmp_path: Path) -> None:
    pager = GatedPager(ITEMS)
    messages: list[Message] = []
    app = Harness(windowed(ITEMS, 40), pager)
    async with run(app, messages) as pilot:
        await start_export(app, pilot, tmp_path / "v.json")
        await wait_for(pilot, pager.waiting)
        await pilot.click("#export-cancel")
        pager.gate.set()
        done = await finished(app, pilot, messages)
        assert done.cancelled
    assert list(tmp_path.iterdir()) == []


async def test_an_unwritable_folder_is_one_clear_line(tmp_path: Path) -> None:
    folder = unwritable(tmp_path)
    messages: list[Message] = []
    app = Harness(windowed(ITEMS, 40), FakePager(ITEMS))
    async with run(app, messages) as pilot:
        progress = await start_export(app, pilot, folder / "v.csv")
        done = await finished(app, pilot, messages)
        assert done.error == f"permission denied: cannot write in {folder}: choose another folder"
        assert not progress.display
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert errors == [f"Export to {folder / 'v.csv'} failed: {done.error}"]


async def test_a_second_export_waits_for_the_first(tmp_path: Path) -> None:
    pager = GatedPager(ITEMS)
    messages: list[Message] = []
    app = Harness(windowed(ITEMS, 40), pager)
    async with run(app, messages) as pilot:
        await start_export(app, pilot, tmp_path / "a.json")
        await wait_for(pilot, pager.waiting)
        await start_export(app, pilot, tmp_path / "b.json")
        assert any("An export is running" in n.message for n in app._notifications)
        pager.gate.set()
        done = await finished(app, pilot, messages)
        assert done.items == len(ITEMS)
    assert json.loads((tmp_path / "a.json").read_text()) == ITEMS
    assert not (tmp_path / "b.json").exists()
