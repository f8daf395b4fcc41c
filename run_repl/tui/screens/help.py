"""F1 help: the focused widget's own help, and the key bindings active right now."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from ...config import config_path

NO_WIDGET_HELP = "*The focused widget has no help of its own; its keys are listed below.*"
GENERAL = "general"
FIXED = "fixed"


def group_bindings(
    bindings: list[tuple[str, str, str]],
) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Bindings grouped by the part of their id before the first dot (`editor.run` ->
    `editor`), in order of first appearance; ids without a dot go to "general", and
    bindings without an id (which no keymap can change) to "fixed", last."""
    groups: dict[str, list[tuple[str, str, str]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for item in bindings:
        if item in seen:
            continue  # the same binding reached through two parts of the focus chain
        seen.add(item)
        _keys, _description, binding_id = item
        if not binding_id:
            group = FIXED
        elif "." in binding_id:
            group = binding_id.split(".", 1)[0]
        else:
            group = GENERAL
        groups.setdefault(group, []).append(item)
    fixed = groups.pop(FIXED, None)
    ordered = list(groups.items())
    if fixed:
        ordered.append((FIXED, fixed))
    return ordered


def group_title(group: str) -> str:
    if group == FIXED:
        return "Fixed keys (no binding id)"
    return group.replace("_", " ").replace("-", " ").capitalize()


class HelpScreen(ModalScreen[None]):
    """Help for what has focus, then every active key binding with its id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "close", "Close help", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > #help-dialog {
        width: 84%;
        max-width: 110;
        height: 88%;
        border: thick $primary 60%;
        background: $surface;
        padding: 0 1;
    }
    HelpScreen #help-title {
        text-style: bold;
        color: $text-primary;
        height: 1;
    }
    HelpScreen #help-body {
        height: 1fr;
    }
    HelpScreen #help-focused {
        background: $surface;
        margin: 0;
    }
    HelpScreen .help-section {
        margin-top: 1;
        text-style: bold;
        color: $text-secondary;
    }
    HelpScreen .help-group {
        margin-top: 1;
    }
    HelpScreen #help-keymap-note {
        margin-top: 1;
        color: $text-muted;
    }
    HelpScreen #help-hint {
        color: $text-muted;
        height: 1;
    }
    """

    def __init__(self, focused_help: str | None, bindings: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.focused_help = focused_help
        self.binding_rows = list(bindings)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static("Help", id="help-title")
            with VerticalScroll(id="help-body"):
                yield Markdown(
                    (self.focused_help or "").strip() or NO_WIDGET_HELP, id="help-focused"
                )
                yield Static("Key bindings", classes="help-section")
                groups = group_bindings(self.binding_rows)
                if not groups:
                    yield Static(Text("No key bindings are active.", style="dim"))
                for group, items in groups:
                    yield Static(self._table(group, items), classes="help-group")
                yield Static(self._keymap_note(), id="help-keymap-note")
            yield Static("↑↓ scroll · esc/F1 close", id="help-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()

    def _table(self, group: str, items: list[tuple[str, str, str]]) -> Table:
        table = Table(
            title=group_title(group),
            title_justify="left",
            title_style="bold",
            show_edge=False,
            box=None,
            padding=(0, 2, 0, 0),
            expand=False,
        )
        table.add_column("Keys", style="bold", no_wrap=True, min_width=14)
        table.add_column("Does", min_width=28)
        table.add_column("Binding id", style="dim", no_wrap=True)
        for keys, description, binding_id in items:
            table.add_row(keys, description, binding_id or "—")
        return table

    def _keymap_note(self) -> Text:
        example = next((b[2] for b in self.binding_rows if b[2]), "editor.run")
        keys = next((b[0] for b in self.binding_rows if b[2] == example), "ctrl+r")
        note = Text()
        note.append("Change any binding in the config file ")
        note.append(str(config_path()), style="bold")
        note.append(" under ")
        note.append("[keymap]", style="bold")
        note.append(", one line per binding id: ")
        note.append(f'{example} = "{keys}"', style="bold")
        note.append(". Several keys are separated by commas.")
        return note

    def action_close(self) -> None:
        self.dismiss(None)
