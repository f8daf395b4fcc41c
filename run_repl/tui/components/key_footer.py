"""The footer: Textual's, rebuilt only when the keys it shows change.

Textual's `Footer` recomposes (a new widget per key, each styled and laid
out) whenever any screen's bindings are refreshed: every focus move, every
change of `running`, every key that calls `refresh_bindings`. Most of those
leave the footer's keys as they were; the rebuilds were ~8 % of the IDE tests'
CPU in a sampling profile, and starting the IDE went from 197 to 175 ms of CPU
without them. This one compares what it would show with what it shows, and
rebuilds only on a difference, its keys made as they will be shown (compact or
not) so that mounting them restyles nothing.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FOOTER_KEYS_START_COMPACT = True
"""Textual's `FooterKey.compact` default (test_textual_private_apis checks it)."""


class KeyFooter(Footer):
    _shown: tuple[object, ...] | None = None  # what the last compose showed

    def keys_shown(self) -> tuple[object, ...]:
        """Everything the keys are drawn from: equal means the same footer. Every active
        binding counts, shown or not: a key's label can name its hidden aliases
        (`RunReplApp.get_key_display`). Bindings are frozen dataclasses, compared whole."""
        app = self.app
        keys = tuple(
            (binding, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
        )
        palette = self.show_command_palette and app.ENABLE_COMMAND_PALETTE
        return (keys, palette, app.COMMAND_PALETTE_BINDING if palette else None)

    def compose(self) -> ComposeResult:
        self._shown = self.keys_shown() if self._bindings_ready else None
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # Made as it will be, before it is mounted: Textual's keys start compact,
                # get the class once mounted, and are told otherwise (data_bind), each
                # class change a restyle of the key, twice per key at every rebuild. (The
                # palette's key is not bound to the footer: it stays compact.)
                # (Reading `widget.compact` now would run its watcher: a restyle too.)
                bound = "compact" in (widget._reactive_connect or {})
                compact = self.compact if bound else FOOTER_KEYS_START_COMPACT
                widget.set_reactive(FooterKey.compact, compact)
                widget.set_class(compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self.keys_shown() != self._shown:
            await self.recompose()
