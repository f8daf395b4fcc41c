"""Closing a buffer with unsaved changes: save, discard, or keep it open.

No letter decides: a person typing (ctrl+w is "delete a word" to bash and vim
hands) lands on Cancel, which is focused; discarding takes the arrow keys or
tab to reach it, then enter, or a click.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..guest_text import safe_text


class ConfirmClose(ModalScreen[str | None]):
    """Dismisses with "save", "discard" or None (keep the buffer open)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "keep", "Keep it open", id="confirm_close.keep"),
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
    ]

    DEFAULT_CSS = """
    ConfirmClose { align: center middle; }
    ConfirmClose > Vertical {
        width: 64; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    ConfirmClose #confirm-close-text { margin-bottom: 1; }
    ConfirmClose Horizontal { height: auto; align-horizontal: right; }
    ConfirmClose Button { margin-left: 1; }
    """

    def __init__(self, title: str, path: str | None) -> None:
        super().__init__()
        self.buffer_title = title
        self.path = path

    def compose(self) -> ComposeResult:
        where = f"{safe_text(self.path)}" if self.path else "a file (it has none yet)"
        with Vertical():
            yield Static(
                Text.assemble(
                    (safe_text(self.buffer_title), "bold"),
                    " has changes that are not saved.\n",
                    (f"Save writes them to {where}; discard closes it (ctrl+t reopens it).", "dim"),
                ),
                id="confirm-close-text",
            )
            with Horizontal():
                yield Button("Save", id="save", variant="primary")
                yield Button("Discard", id="discard", variant="error")
                yield Button("Cancel", id="keep")

    def on_mount(self) -> None:
        self.query_one("#keep", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "keep" else event.button.id)

    def action_keep(self) -> None:
        self.dismiss(None)
