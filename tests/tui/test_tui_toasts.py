"""Toasts never hide the hints that say which keys do what: on the main screen they
sit above the status bar and the footer, in the approvals inbox above its key hints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.widget import Widget
from tui_helpers import make_app, open_inbox, until

from run_repl.tui.components.status_bar import StatusBar


def toast_regions(app: Any) -> list[Region]:
    return [w.region for w in app.screen.query("Toast") if w.region.area]


def overlaps(regions: list[Region], widget: Widget) -> list[Region]:
    return [r for r in regions if r.overlaps(widget.region)]


async def three_toasts(pilot: Any) -> list[Region]:
    app = pilot.app
    for i in range(3):
        app.notify(f"news number {i}: one approval came from another run", title="Approvals")
    await until(pilot, lambda: len(toast_regions(app)) == 3)
    await pilot.pause()
    return toast_regions(app)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_toasts_leave_the_inbox_key_hints_in_view(
    data_dir: Path, size: tuple[int, int]
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.pause()
        await open_inbox(pilot)
        await pilot.pause()
        keys = app.screen.query_one("#inbox-keys")
        assert keys.region.area
        regions = await three_toasts(pilot)
        assert not overlaps(regions, keys), (regions, keys.region)
        # Still so after the terminal changes size.
        await pilot.resize_terminal(size[0] - 10, size[1] + 4)
        await pilot.pause()
        await pilot.pause()
        keys = app.screen.query_one("#inbox-keys")
        assert not overlaps(toast_regions(app), keys), (toast_regions(app), keys.region)


async def test_toasts_leave_the_status_bar_and_footer_in_view(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await pilot.pause()
        regions = await three_toasts(pilot)
        status = app.query_one(StatusBar)
        assert not overlaps(regions, status), (regions, status.region)
        footer = app.query_one("KeyFooter")
        assert not overlaps(regions, footer)
