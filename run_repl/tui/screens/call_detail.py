"""One host call in full: path, timing, approval, arguments, result or error and traceback."""

from __future__ import annotations

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
from ...present.inspect import NotDecoded, decode_text, inspect_lines
from ...present.results import call_state
from ...present.rich_render import lines_to_text
from ...present.styled import Line, line, plain, plain_lines, styled
from ...sandbox.result import CallRecord
from ..guest_text import safe_lines, safe_text
from ..themes import present_styles, rich_colour, rich_syntax_theme

_DECISIONS = {
    "approved": "approved by a person",
    "denied": "denied by a person",
    "allowed": "allowed by the policy",
    "refused": "refused by the policy",
    "pending": "waiting for a decision",
}


def payload_lines(text: str | None) -> list[Line]:
    """A call's arguments or result as JavaScript shows them, decoded from the wire
    (dates as dates, never `{"\\u0000": "d", ...}`); a text cut at the record's
    limit cannot be decoded, and is shown as it was kept, saying so."""
    if text is None:
        return []
    try:
        return inspect_lines(decode_text(text))
    except NotDecoded:
        return [
            styled("warn", f"(kept only the first {len(text):,} characters: not decoded)"),
            *[line(t) for t in text.split("\n")],
        ]


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
    args = plain_lines(payload_lines(call.args_text)) if call.args_text else call.args_preview
    out += ["", "Arguments", safe_lines(args)]
    if call.result_text is not None:
        out += ["", "Result", safe_lines(plain_lines(payload_lines(call.result_text)))]
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
        args = payload_lines(call.args_text) if call.args_text else [line(call.args_preview)]
        self.query_one("#call-detail-args", Static).update(self._text(args))
        if call.result_text is not None:
            self.query_one("#call-detail-result", Static).update(
                self._text(payload_lines(call.result_text))
            )
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

    def _text(self, lines: list[Line]) -> Text:
        return lines_to_text(lines, present_styles(self.app.current_theme))

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
