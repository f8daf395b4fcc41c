"""The export prompt (ctrl+e in the Value panel) shows the file name it offers whole,
so the person sees what enter will write before pressing it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input
from tui_helpers import make_app, run_to_end, screen_text, set_source

from run_repl.tui.components.value.view import ValueView

BIG = "return Array.from({length: 5000}, (_, i) => ({i, label: 'row ' + i}))"


@pytest.mark.parametrize("size", [(160, 48), (120, 40)])
async def test_the_export_prompt_shows_the_default_file_name_whole(
    data_dir: Path, size: tuple[int, int]
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await set_source(pilot, BIG)
        await run_to_end(pilot)
        view = app.query_one(ValueView)
        view.focus()
        await pilot.press("ctrl+e")
        await pilot.pause()
        prompt = view.query_one("#value-prompt-input", Input)
        assert prompt.has_focus and prompt.value.startswith("./value-")
        assert prompt.value.endswith(".json")
        assert prompt.cursor_position == len(prompt.value)  # typing goes on from its end
        shown = screen_text(app)
        assert prompt.value in shown, shown
        assert "Export the whole value to:" in shown
