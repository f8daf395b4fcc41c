"""The call audit, filled live: one row per host call, updated when it ends."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from ...present import formats
from ...present.results import call_state
from ...present.rich_render import RICH_STYLES, to_text
from ...present.styled import line
from ...sandbox.result import CallRecord
from ..themes import present_styles

# Status and times first: they are what a person scans, and they are never cut. The call
# text comes last and is the one that gets cut (enter shows it whole).
COLUMNS = (
    ("seq", "#"),
    ("status", "status"),
    ("duration", "time"),
    ("wait", "approval wait"),
    ("path", "call"),
)
MAX_CALL_CHARS = 160


def status_text(call: CallRecord, styles: dict[str, str] | None = None) -> Text:
    """How the call stands, in present/'s words: ok, its error code, replayed, the decision."""
    return to_text(call_state(call), styles or RICH_STYLES)


def call_text(call: CallRecord) -> Text:
    args = call.args_preview
    room = MAX_CALL_CHARS - len(call.path)
    if len(args) > room:
        args = args[: max(room - 1, 0)] + "…"
    return to_text(line(("path", call.path), args), {"path": "bold"})


class CallsTable(DataTable[Text]):
    HELP: ClassVar[str] = """\
### Calls
Every host call of the run, in order, as it starts and ends: its time, how long
it waited for approval (apart from its own time), and how it ended. Replayed
calls were answered from the record of the interrupted run, not run again.

- **enter**: the call's full arguments and result (or error)
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_call", "Details", id="calls.open"),
    ]

    class OpenCall(Message):
        def __init__(self, call: CallRecord) -> None:
            super().__init__()
            self.call = call

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.calls: dict[int, CallRecord] = {}

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    def clear_calls(self) -> None:
        self.calls.clear()
        self.clear()

    def upsert(self, call: CallRecord) -> None:
        self.calls[call.seq] = call
        styles = present_styles(self.app.current_theme)
        cells = {
            "seq": Text(str(call.seq), style=styles["dim"]),
            "status": status_text(call, styles),
            "duration": Text(
                formats.format_ms(call.duration_ms) if call.duration_ms is not None else "–",
                justify="right",
            ),
            "wait": Text(formats.format_ms(call.wait_ms) if call.wait_ms else "", justify="right"),
            "path": call_text(call),
        }
        key = str(call.seq)
        if key in self.rows:
            for column, value in cells.items():
                # The width follows: "ok approved" is longer than "running…" was.
                self.update_cell(key, column, value, update_width=True)
        else:
            self.add_row(*cells.values(), key=key)

    def action_open_call(self) -> None:
        if not self.row_count:
            return
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        if key is not None and int(key) in self.calls:
            self.post_message(self.OpenCall(self.calls[int(key)]))
