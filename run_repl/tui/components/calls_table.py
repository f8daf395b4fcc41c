"""The call audit, filled live: one row per host call, updated when it ends."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from ...sandbox.result import CallRecord
from ..guest_text import safe_text

COLUMNS = (
    ("seq", "#"),
    ("path", "call"),
    ("duration", "time"),
    ("wait", "approval wait"),
    ("status", "status"),
)


def format_ms(ms: float) -> str:
    return f"{ms:.1f} ms"


def format_wait(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def status_text(call: CallRecord) -> Text:
    if call.ok is None:
        if call.decision == "pending":
            return Text("waiting for approval", style="bold yellow")
        return Text("running…", style="yellow")
    bits = Text()
    if call.ok:
        bits.append("ok", style="green")
    else:
        bits.append(safe_text(str(call.error_code or "error")), style="red")
    if call.replayed:
        bits.append(" replayed", style="dim")
    if call.decision in ("approved", "denied", "refused"):
        bits.append(f" {call.decision}", style="magenta")
    return bits


class CallsTable(DataTable[Text]):
    HELP: ClassVar[str] = """\
### Calls
Every host call of the run, in order, as it starts and ends: its time, how long
it waited for approval (apart from its own time), and how it ended. Replayed
calls were answered from the record of the interrupted run, not run again.

- **enter**: the call's full arguments and result (or error)
"""

    BINDINGS: ClassVar[list[Binding]] = [
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
        cells = {
            "seq": Text(str(call.seq), style="dim"),
            "path": Text.assemble(
                (safe_text(call.path), "bold"), (safe_text(call.args_preview), "")
            ),
            "duration": Text(
                format_ms(call.duration_ms) if call.duration_ms is not None else "–",
                justify="right",
            ),
            "wait": Text(format_wait(call.wait_ms) if call.wait_ms else "", justify="right"),
            "status": status_text(call),
        }
        key = str(call.seq)
        if key in self.rows:
            for column, value in cells.items():
                self.update_cell(key, column, value)
        else:
            self.add_row(*cells.values(), key=key)

    def action_open_call(self) -> None:
        if not self.row_count:
            return
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        if key is not None and int(key) in self.calls:
            self.post_message(self.OpenCall(self.calls[int(key)]))
