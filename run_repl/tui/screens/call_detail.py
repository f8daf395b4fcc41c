"""One host call in full: path, timing, approval, arguments, result or error and traceback."""

from __future__ import annotations

import json
from typing import ClassVar

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...present import formats
from ...present.results import call_state
from ...present.styled import plain
from ...sandbox.result import CallRecord
from ..guest_text import safe_lines, safe_text
from ..themes import rich_colour, rich_syntax_theme

_DECISIONS = {
    "approved": "approved by a person",
    "denied": "denied by a person",
    "allowed": "allowed by the policy",
    "refused": "refused by the policy",
    "pending": "waiting for a decision",
}


def pretty_payload(text: str | None) -> tuple[str, bool]:
    """(text to show, whether it is JSON): pretty-printed JSON, else the text as it is.

    Tagged wire data (objects keyed "\\u0000" for Dates, Maps, BigInts...) is shown as
    it is: re-indenting it would suggest it is the plain value it is not.
    """
    if text is None:
        return "", False
    if '"\\u0000"' in text or "\x00" in text:
        return safe_lines(text), False
    try:
        value = json.loads(text)
    except ValueError:
        return safe_lines(text), False  # cut at the preview limit, or not JSON at all
    return safe_lines(json.dumps(value, indent=2, ensure_ascii=False)), True


def call_facts(call: CallRecord) -> list[tuple[str, str]]:
    """The call's facts as (label, value) rows, in reading order."""
    facts = [
        ("path", safe_text(call.path)),
        ("seq", f"#{call.seq}"),
        ("status", safe_text(plain(call_state(call)))),
        ("started", f"{formats.format_ms(call.started_at_ms)} into the run"),
        (
            "call time",
            formats.format_ms(call.duration_ms)
            if call.duration_ms is not None
            else "still running",
        ),
    ]
    if call.wait_ms is not None:
        # Kept apart so a slow person never reads as a slow host function.
        facts.append(
            ("approval wait", f"{formats.format_ms(call.wait_ms)} (not part of the call time)")
        )
    facts.append(("decision", _DECISIONS.get(call.decision or "", "none needed")))
    facts.append(
        (
            "replayed",
            "yes: answered from the recorded ledger, not run again" if call.replayed else "no",
        )
    )
    return facts


def error_line(call: CallRecord) -> str:
    return safe_lines(f"{call.error_code or 'error'}: {call.error_message or ''}".rstrip())


def call_detail_text(call: CallRecord) -> str:
    """The whole detail as plain text: what `y` copies."""
    width = max(len(label) for label, _ in call_facts(call))
    out = [f"{label:<{width}}  {value}" for label, value in call_facts(call)]
    args, _ = pretty_payload(call.args_text)
    out += ["", "Arguments", args or safe_text(call.args_preview)]
    if call.result_text is not None:
        result, _ = pretty_payload(call.result_text)
        out += ["", "Result", result]
    if call.ok is False:
        out += ["", "Error", error_line(call)]
    if call.traceback:
        out += ["", "Traceback", safe_lines(call.traceback.rstrip())]
    return "\n".join(out) + "\n"


class CallDetailScreen(ModalScreen[None]):
    """The full record of one host call, scrollable; `y` copies it."""

    HELP = """\
## Call detail

Everything about one host call: its path and sequence number, when it started,
how long the host function took, how long the approval waited (apart from the
call time), the decision, whether it was replayed from the ledger on resume,
the full arguments and the result (or the error and its traceback).

- **y**: copy the whole detail as text
- **↑/↓, PgUp/PgDn**: scroll
- **Escape**: close
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="call_detail.close"),
        Binding("y", "copy", "Copy detail", id="call_detail.copy"),
    ]

    DEFAULT_CSS = """
    CallDetailScreen {
        align: center middle;
    }
    CallDetailScreen > #call-detail-dialog {
        width: 88%;
        height: 88%;
        border: thick $primary 60%;
        background: $surface;
        padding: 0 1;
    }
    CallDetailScreen #call-detail-title {
        text-style: bold;
        color: $text-primary;
        height: 1;
    }
    CallDetailScreen #call-detail-body {
        height: 1fr;
    }
    CallDetailScreen .call-detail-section {
        margin-top: 1;
        text-style: bold;
        color: $text-secondary;
    }
    CallDetailScreen .call-detail-payload {
        padding-left: 2;
    }
    CallDetailScreen #call-detail-error {
        color: $text-error;
    }
    CallDetailScreen #call-detail-hint {
        color: $text-muted;
        height: 1;
    }
    """

    def __init__(self, call: CallRecord) -> None:
        super().__init__()
        self.call = call

    def compose(self) -> ComposeResult:
        call = self.call
        with Vertical(id="call-detail-dialog"):
            yield Static(
                Text(f"Host call #{call.seq}  {safe_text(call.path)}"), id="call-detail-title"
            )
            with VerticalScroll(id="call-detail-body"):
                yield Static(id="call-detail-facts")
                yield Static("Arguments", classes="call-detail-section")
                yield Static(id="call-detail-args", classes="call-detail-payload")
                if call.result_text is not None:
                    yield Static("Result", classes="call-detail-section")
                    yield Static(id="call-detail-result", classes="call-detail-payload")
                if call.ok is False:
                    yield Static("Error", classes="call-detail-section")
                    yield Static(
                        Text(error_line(call)),
                        id="call-detail-error",
                        classes="call-detail-payload",
                    )
                if call.traceback:
                    yield Static("Traceback", classes="call-detail-section")
                    yield Static(id="call-detail-traceback", classes="call-detail-payload")
            yield Static("y copy · ↑↓ scroll · esc close", id="call-detail-hint")

    def on_mount(self) -> None:
        self._render_detail()
        # Colours come from the app theme, so a theme switch re-renders them.
        self.watch(self.app, "theme", self._render_detail, init=False)
        self.query_one("#call-detail-body", VerticalScroll).focus()

    def _render_detail(self) -> None:
        call = self.call
        self.query_one("#call-detail-facts", Static).update(self._facts())
        self.query_one("#call-detail-args", Static).update(
            self._payload(call.args_text or safe_text(call.args_preview))
        )
        if call.result_text is not None:
            self.query_one("#call-detail-result", Static).update(self._payload(call.result_text))
        if call.traceback:
            self.query_one("#call-detail-traceback", Static).update(
                self._syntax(safe_lines(call.traceback.rstrip()), "pytb")
            )

    def _facts(self) -> RenderableType:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        theme = self.app.current_theme
        status_style = {
            True: f"bold {rich_colour(theme.success) or 'green'}",
            False: f"bold {rich_colour(theme.error) or 'red'}",
            None: f"bold {rich_colour(theme.warning) or 'yellow'}",
        }[self.call.ok]
        for label, value in call_facts(self.call):
            if label in ("path", "seq"):
                continue  # the title already says them
            grid.add_row(label, Text(value, style=status_style if label == "status" else ""))
        return grid

    def _payload(self, text: str) -> RenderableType:
        shown, is_json = pretty_payload(text)
        if not is_json:
            return Text(shown)
        return self._syntax(shown, "json")

    def _syntax(self, text: str, lexer: str) -> Syntax:
        return Syntax(
            text,
            lexer,
            theme=rich_syntax_theme(self.app.current_theme),
            word_wrap=True,
        )

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(call_detail_text(self.call))
        self.notify("Call detail copied to the clipboard.", timeout=2)
