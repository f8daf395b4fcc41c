"""ctrl+o: a letter on every panel; press it to put the focus there (posting's jump mode).

Works in every terminal (no alt+digit, which tmux, xterm and GNOME Terminal turn
into other characters), and shows where each key goes instead of asking a
person to remember it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Center
from textual.geometry import Offset
from textual.screen import ModalScreen
from textual.widgets import Label


@dataclass(frozen=True)
class JumpTarget:
    """One place to jump to: its key, its name, and where on the screen its letter goes."""

    key: str
    name: str
    offset: Offset | None  # None: an action with no place on the screen (it is listed below)


class JumpOverlay(ModalScreen[str | None]):
    """Shows each target's letter over its panel; dismisses with the chosen target's name."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,ctrl+o", "dismiss_overlay", "Cancel", id="jump.cancel", show=False),
    ]

    DEFAULT_CSS = """
    JumpOverlay { background: $background 40%; }
    JumpOverlay .jump-label {
        dock: top; width: auto; height: 1; padding: 0 1;
        background: $accent; color: $text; text-style: bold;
    }
    JumpOverlay #jump-info {
        dock: bottom; height: 1; margin-bottom: 2; width: 100%;
    }
    JumpOverlay #jump-info Label { background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, targets: list[JumpTarget]) -> None:
        super().__init__()
        self.targets = {target.key: target for target in targets}

    def compose(self) -> ComposeResult:
        for target in self.targets.values():
            if target.offset is not None:
                label = Label(target.key, classes="jump-label")
                label.styles.offset = target.offset
                yield label
        keys = "  ".join(f"{t.key} {t.name}" for t in self.targets.values())
        with Center(id="jump-info"):
            yield Label(f"Jump to:  {keys}   ·  esc cancel")

    def on_key(self, event: events.Key) -> None:
        target = self.targets.get(event.character or "")
        if target is not None:
            event.stop()
            self.dismiss(target.name)

    def action_dismiss_overlay(self) -> None:
        self.dismiss(None)
