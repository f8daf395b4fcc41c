"""The history (F2) says what became of a paused run, and what a resumed run resumed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable
from tui_helpers import (
    SIZE,
    decide,
    make_app,
    run_to_end,
    screen_text,
    set_source,
    settle,
    until,
)

from run_repl.tui.screens.history import HistoryScreen

PUBLISH = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"


async def test_history_links_a_paused_run_and_the_run_that_resumed_it(
    data_dir: Path, no_arm_delay: None
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, PUBLISH)
        await run_to_end(pilot)
        await decide(pilot, "y")
        assert app.main.runs.result is not None and app.main.runs.result.status == "ok"
        resumed = app.main.runs.result.run_id
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await settle(pilot)
        table = app.screen.query_one("#history-runs", DataTable)
        assert table.row_count == 2
        cells = {str(key.value): str(table.get_cell(key, "status")) for key in table.rows}
        paused = next(k for k in cells if k != resumed)
        assert cells == {resumed: "ok (a resume)", paused: "interrupted → ok"}
        # The preview of each names the other.
        await pilot.press("down")  # to the list: the newest (the resumed run) is chosen
        await pilot.pause()
        assert f"resumes {paused}" in screen_text(app)
        await pilot.press("down")
        await pilot.pause()
        assert f"resumed as {resumed}: ok" in screen_text(app)
        # What it waited for was decided: the preview no longer says it waits.
        assert "waiting for a decision" not in screen_text(app)
        assert "paused for a decision on documents.publish()" in screen_text(app)
