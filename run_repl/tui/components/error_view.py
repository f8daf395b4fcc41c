"""A failed run: its code, message, place in the snippet and the one next step."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from ...sandbox.result import RunErrorInfo
from ..guest_text import safe_lines, safe_text


class RunErrorView(Static, can_focus=True):
    DEFAULT_CSS = """
    RunErrorView { display: none; height: auto; max-height: 14; padding: 0 1; border: tall $error; }
    RunErrorView.-shown { display: block; }
    RunErrorView:focus { border: tall $accent; }
    """

    class JumpTo(Message):
        def __init__(self, line: int, column: int | None) -> None:
            super().__init__()
            self.line = line
            self.column = column

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.error: RunErrorInfo | None = None

    def show_error(self, error: RunErrorInfo | None) -> None:
        self.error = error
        self.set_class(error is not None, "-shown")
        if error is None:
            self.update("")
            return
        text = Text()
        text.append(safe_text(str(error.code)), style="bold red")
        if error.line:
            text.append(
                f"  line {error.line}" + (f", column {error.column}" if error.column else ""),
                style="bold",
            )
        text.append(f"\n{safe_lines(error.message)}")
        if error.did_you_mean:
            text.append(
                f"\ndid you mean: {safe_text(', '.join(map(str, error.did_you_mean)))}",
                style="cyan",
            )
        if error.stack and error.code == "RUN_EXCEPTION":
            for frame in error.stack.splitlines()[1:6]:
                text.append(f"\n{safe_text(frame)}", style="dim")
        for action in error.next_actions:
            text.append(f"\nnext: {safe_text(action.why or action.type)}", style="italic")
        self.update(text)

    def on_click(self) -> None:
        if self.error is not None and self.error.line:
            self.post_message(self.JumpTo(self.error.line, self.error.column))
