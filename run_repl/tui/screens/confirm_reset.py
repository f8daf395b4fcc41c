"""Resetting the demo data: what it undoes and what it keeps (a `Confirm`: no letter
decides, Cancel is focused)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from ..components.confirm import Confirm
from ..guest_text import safe_text


class ConfirmReset(Confirm[bool]):
    """Dismisses with True (reset) or False (leave the data as it is)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "safe", "Cancel", id="confirm_reset.cancel"),
    ]

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def question(self) -> Text:
        return Text.assemble(
            ("Reset the demo data?\n\n", "bold"),
            "Every draft is unpublished and every order is as it was first made: the "
            "publishes and refunds approved so far are undone.\n",
            (
                f"Only {safe_text(self.path)} changes: buffers, history and approvals stay.",
                "dim",
            ),
        )

    def buttons(self) -> list[tuple[str, str, str]]:
        return [("Reset", "reset", "error"), ("Cancel", "cancel", "default")]

    def answer(self, button_id: str) -> bool:
        return button_id == "reset"
