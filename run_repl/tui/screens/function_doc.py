"""F9 in the editor: the doc of the host function at the cursor, whole."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...host.loader import FunctionInfo
from ...present.rich_render import lines_to_text
from ..components.host_catalog import doc_lines
from ..themes import present_styles


class FunctionDocScreen(ModalScreen[None]):
    """One host function: how a snippet calls it, whether it asks first, its docstring."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f9,q", "close", "Close", id="function_doc.close"),
    ]

    DEFAULT_CSS = """
    FunctionDocScreen { align: center middle; }
    FunctionDocScreen > VerticalScroll {
        width: 80%; max-width: 100; height: auto; max-height: 80%;
        border: thick $primary 60%; background: $surface; padding: 0 1;
        border-title-color: $text-primary; border-title-style: bold;
        border-subtitle-color: $text-muted;
    }
    """

    def __init__(self, info: FunctionInfo) -> None:
        super().__init__()
        self.info = info

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Host function"
            scroll.border_subtitle = "esc close"
            yield Static(
                lines_to_text(doc_lines(self.info), present_styles(self.app.current_theme)),
                id="function-doc",
            )

    def action_close(self) -> None:
        self.dismiss(None)
