"""A question answered by buttons, never by a letter: the base of the IDE's
confirmations (closing unsaved work, recovering a stuck approval).

A person typing when it opens (ctrl+w is "delete a word" to bash and vim
hands) lands on the safe answer, which is focused; any other answer takes the
arrow keys or tab to reach it, then enter, or a click. Escape gives the safe
answer.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

T = TypeVar("T")


class Confirm(ModalScreen[T], Generic[T]):
    """`question()` above `buttons()` ((label, id, variant) each); a press
    dismisses with `answer(id)`, escape (each subclass binds it, with an id of
    its own for keymaps) with `answer(SAFE)`."""

    SAFE: ClassVar[str] = "cancel"  # the id of the focused, harmless button

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "app.focus_previous", "Previous", id="confirm.previous", show=False),
        Binding("right", "app.focus_next", "Next", id="confirm.next", show=False),
    ]

    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical {
        width: 64; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    Confirm .confirm-text { margin-bottom: 1; }
    Confirm Horizontal { height: auto; align-horizontal: right; }
    Confirm Button { margin-left: 1; }
    """

    def question(self) -> Text:
        raise NotImplementedError

    def buttons(self) -> list[tuple[str, str, str]]:
        raise NotImplementedError

    def answer(self, button_id: str) -> T:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question(), classes="confirm-text")
            with Horizontal():
                for label, button_id, variant in self.buttons():
                    yield Button(label, id=button_id, variant=variant)  # type: ignore[arg-type]  # subclasses name Button variants

    def on_mount(self) -> None:
        self.query_one(f"#{self.SAFE}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.answer(event.button.id or self.SAFE))

    def action_safe(self) -> None:
        self.dismiss(self.answer(self.SAFE))
