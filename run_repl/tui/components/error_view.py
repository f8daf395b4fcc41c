"""A failed run: its code, message, place in the snippet and the one next step,
worded by present/ as the CLI and the line REPL word it; a click jumps to the place."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static

from ...present.results import error_lines
from ...present.rich_render import lines_to_text
from ...sandbox.result import RunErrorInfo
from ..themes import present_styles


class RunErrorView(Static, can_focus=True):
    DEFAULT_CSS = """
    RunErrorView {
        display: none; height: auto; max-height: 14; padding: 0 1; border: tall $error;
        overflow-y: auto;
    }
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
        self.source: str | None = None

    def show_error(self, error: RunErrorInfo | None, source: str | None = None) -> None:
        """Show a run's error in present/'s words: code and place, the message, the
        snippet's line with a caret (given the `source` that ran), close names, the
        guest's stack, and the next step."""
        self.error = error
        self.source = source
        self.set_class(error is not None, "-shown")
        self._render_error()

    def _render_error(self) -> None:
        if self.error is None:
            self.update("")
            return
        styles = present_styles(self.app.current_theme)
        # The snippet's line is cut to the panel's width: wrapped, its caret would
        # sit under another character. (0 before the first layout: on_resize redraws.)
        width = self.scrollable_content_region.width or None
        self.update(lines_to_text(error_lines(self.error, self.source, width=width), styles))

    def on_resize(self) -> None:
        if self.error is not None:
            self._render_error()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted and self.error is not None:
            self._render_error()

    def on_click(self) -> None:
        if self.error is not None and self.error.line:
            self.post_message(self.JumpTo(self.error.line, self.error.column))
