"""The layout follows the terminal's width: the editor keeps room to type in, the value
panel stays readable, and the host catalog narrows, folds away on narrow screens (ctrl+b
brings it back over the editor) and returns when the screen is wide again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from tui_helpers import make_app

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.host_catalog import HostCatalog


def widths(app: RunReplApp) -> dict[str, int]:
    """Columns of the editor's text area, the value panel, and the catalog (0: not shown)."""
    editor = app.main.editor_tabs.active_editor
    assert editor is not None
    catalog = app.query_one(HostCatalog)
    return {
        "editor": editor.region.width,
        "value": app.query_one("#right").region.width,
        "catalog": catalog.region.width if catalog.display else 0,
    }


async def settled(pilot: Any) -> None:
    # A resize is laid out over a few refreshes.
    for _ in range(3):
        await pilot.pause()


@pytest.mark.parametrize(
    ("size", "editor_at_least", "value_at_least", "catalog"),
    [
        ((60, 20), 32, 22, 0),  # was: editor 11 with the catalog shown
        ((80, 24), 50, 26, 0),  # was: catalog 38, editor 25, value 17
        ((120, 40), 50, 34, 30),  # the catalog narrower, the editor past 50
        ((160, 48), 70, 48, 38),  # as it always was
    ],
)
async def test_the_panels_fit_the_terminal(
    data_dir: Path,
    size: tuple[int, int],
    editor_at_least: int,
    value_at_least: int,
    catalog: int,
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        got = widths(app)
        assert got["editor"] >= editor_at_least, got
        assert got["value"] >= value_at_least, got
        assert got["catalog"] == catalog, got
        # Nothing is pushed off the screen.
        assert app.query_one("#right").region.right == size[0]


@pytest.mark.parametrize(
    ("size", "width_class", "catalog_classes"),
    [((90, 30), "-compact", {"-hidden"}), ((160, 48), "-wide", set())],
)
async def test_the_panels_are_first_styled_for_the_terminals_width(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
    width_class: str,
    catalog_classes: set[str],
) -> None:
    """The width class and the catalog's fold are there when the panels are first
    styled: set on mount, they restyled every widget a second time at each start."""
    first: dict[str, set[str]] = {}
    apply = Stylesheet.apply

    def recorded(self: Stylesheet, node: DOMNode, *args: Any, **kwargs: Any) -> None:
        if node.id == "left" and "screen" not in first:
            first["screen"] = set(node.screen.classes)
        if node.id == "catalog" and "catalog" not in first:
            first["catalog"] = set(node.classes) & {"-hidden", "-drawer"}
        apply(self, node, *args, **kwargs)

    monkeypatch.setattr(Stylesheet, "apply", recorded)
    app = make_app(data_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        widths = {name for _, name in app.main.WIDTHS}
        assert set(app.main.classes) & widths == {width_class}
        assert first["screen"] & widths == {width_class}
        assert first["catalog"] == catalog_classes


async def test_starting_styles_each_panel_once(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A panel is styled as it is mounted, and not again as the screen first shows (what
    Textual's first ScreenResume does: nothing has changed since, its widgets were just
    styled); shown again later, it is restyled when Textual asks."""
    styled: list[str] = []
    apply = Stylesheet.apply

    def recorded(self: Stylesheet, node: DOMNode, *args: Any, **kwargs: Any) -> None:
        if node.id in ("left", "right", "catalog"):
            styled.append(node.id)
        apply(self, node, *args, **kwargs)

    monkeypatch.setattr(Stylesheet, "apply", recorded)
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert sorted(styled) == ["catalog", "left", "right"]
        styled.clear()
        # Shown again later (a mode switched back to, say), it is restyled as Textual says.
        app.main.post_message(events.ScreenResume(refresh_styles=True))
        await pilot.pause()
        assert sorted(styled) == ["catalog", "left", "right"]


async def test_ctrl_b_on_a_narrow_screen_shows_the_catalog_over_the_editor(
    data_dir: Path,
) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        before = widths(app)
        await pilot.press("ctrl+b")
        await settled(pilot)
        catalog = app.query_one(HostCatalog)
        assert catalog.display and catalog.region.width >= 30
        assert catalog.region.x == 0
        # Over the editor, not beside it: the editor and the value keep their columns.
        assert widths(app)["editor"] == before["editor"]
        assert widths(app)["value"] == before["value"]
        await pilot.press("ctrl+b")
        await settled(pilot)
        assert not catalog.display
        # Closing it over the editor was no wish to hide it where it fits.
        await pilot.resize_terminal(160, 48)
        await settled(pilot)
        assert catalog.display


async def test_inserting_a_call_from_the_narrow_catalog_folds_it_away(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        app.main.editor_tabs.active_editor.load_text("")
        await pilot.press("ctrl+o", "h")
        await settled(pilot)
        catalog = app.query_one(HostCatalog)
        assert catalog.display and app.main.panel_of(app.focused) == "catalog"
        tree = catalog.tree
        tree.move_cursor(tree.root.children[0].children[0])  # crm's first function
        await pilot.pause()
        await pilot.press("enter")
        await settled(pilot)
        assert app.main.editor_tabs.active_editor.text.startswith("await crm.")
        assert not catalog.display
        assert app.focused is app.main.editor_tabs.active_editor


async def test_resizing_folds_the_catalog_and_resizing_back_restores_it(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await settled(pilot)
        catalog = app.query_one(HostCatalog)
        assert catalog.display
        await pilot.resize_terminal(80, 24)
        await settled(pilot)
        assert not catalog.display
        assert widths(app)["editor"] >= 50
        await pilot.resize_terminal(160, 48)
        await settled(pilot)
        assert catalog.display and widths(app)["catalog"] == 38


async def test_a_catalog_hidden_by_hand_stays_hidden_across_resizes(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(160, 48)) as pilot:
        await settled(pilot)
        await pilot.press("ctrl+b")
        await settled(pilot)
        catalog = app.query_one(HostCatalog)
        assert not catalog.display
        await pilot.resize_terminal(80, 24)
        await settled(pilot)
        await pilot.resize_terminal(160, 48)
        await settled(pilot)
        assert not catalog.display
        await pilot.press("ctrl+b")
        await settled(pilot)
        assert catalog.display
