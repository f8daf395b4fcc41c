"""Closing a buffer with unsaved changes: save, discard, or keep it open (a
`Confirm`: no letter decides, Cancel is focused)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from ...guest_text import safe_text
from ..confirm import Confirm


class ConfirmClose(Confirm[str | None]):
    """Dismisses with "save", "discard" or None (keep the buffer open)."""

    SAFE = "keep"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "safe", "Keep it open", id="confirm_close.keep"),
    ]

    def __init__(self, title: str, path: str | None) -> None:
        super().__init__()
        self.buffer_title = title
        self.path = path

    def question(self) -> Text:
        where = f"{safe_text(self.path)}" if self.path else "a file (it has none yet)"
        return Text.assemble(
            (safe_text(self.buffer_title), "bold"),
            " has changes that are not saved.\n",
            (f"Save writes them to {where}; discard closes it (ctrl+t reopens it).", "dim"),
        )

    def buttons(self) -> list[tuple[str, str, str]]:
        return [
            ("Save", "save", "primary"),
            ("Discard", "discard", "error"),
            ("Cancel", "keep", "default"),
        ]

    def answer(self, button_id: str) -> str | None:
        return None if button_id == "keep" else button_id
