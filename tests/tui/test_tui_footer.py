"""The footer shows the keys that work where the focus is, and is rebuilt only when
they change (Textual's rebuilds it on every refresh of any binding)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.dom import DOMNode
from textual.widgets._footer import FooterKey
from tui_helpers import settle

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.key_footer import KeyFooter


def shown(app: RunReplApp) -> list[tuple[str, str, bool]]:
    """The footer's keys, but the command palette's (always last, always there)."""
    keys = list(app.query(FooterKey))
    assert keys[-1].has_class("-command-palette")
    return [(k.key, k.description, not k._disabled) for k in keys[:-1]]


def expected(app: RunReplApp) -> list[tuple[str, str, bool]]:
    """What Textual's footer would show now: the shown bindings where the focus is."""
    keys: dict[str, tuple[str, str, bool]] = {}
    for _, binding, enabled, _tip in app.screen.active_bindings.values():
        if binding.show:
            keys.setdefault(binding.action, (binding.key, binding.description, enabled))
    return list(keys.values())


async def test_the_footer_follows_the_focus_and_is_kept_while_its_keys_stay(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await settle(pilot)
    footer = app.query_one(KeyFooter)
    in_editor = shown(app)
    assert in_editor and in_editor == expected(app)

    # A refresh that changes no key keeps the footer's widgets as they are.
    widgets = list(app.query(FooterKey))
    app.refresh_bindings()
    await settle(pilot)
    assert list(app.query(FooterKey)) == widgets

    # The value panel has keys of its own: the footer says so.
    await pilot.press("f4", "f4")
    await settle(pilot)
    assert app.focused is not None and app.focused is not app.main.editor_tabs.active_editor
    assert shown(app) == expected(app) != in_editor
    assert footer.is_attached


async def test_a_rebuilt_footer_styles_each_key_once(
    app_and_pilot: tuple[RunReplApp, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key is made compact or not before it is mounted: Textual's keys start compact
    and are told otherwise once mounted, which restyled each key twice more at every
    rebuild (every focus move that changes the keys)."""
    app, pilot = app_and_pilot
    await settle(pilot)
    restyled: list[DOMNode] = []
    update = DOMNode.update_node_styles

    def recorded(self: DOMNode, animate: bool = True) -> None:
        if isinstance(self, FooterKey):
            restyled.append(self)
        update(self, animate)

    monkeypatch.setattr(DOMNode, "update_node_styles", recorded)
    before = list(app.query(FooterKey))
    await pilot.press("f4", "f4")  # the value panel: other keys, a rebuilt footer
    await settle(pilot)
    after = list(app.query(FooterKey))
    assert after and not set(after) & set(before)
    assert restyled == []
    assert [key.has_class("-compact") for key in after] == [key.compact for key in after]
    assert [key.compact for key in after if not key.has_class("-command-palette")] == [False] * (
        len(after) - 1
    )
