"""The bottom line: what the run is doing, how long, how many calls, how much memory."""

from __future__ import annotations

import time

from rich.text import Text
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from ...present import formats
from ..themes import muted_colour, rich_colour, text_on

STATE_COLOUR = {
    "running": "warning",
    "interrupted": "secondary",
    "ok": "success",
    "error": "error",
    "cancelled": "error",
    "stuck": "error",
    "unfinished": "error",
    "failed": "error",
    "denied": "error",
}
"""The theme colour of each state's pill (idle has none)."""


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    state: reactive[str] = reactive("idle")
    detail: reactive[str] = reactive("")
    host_name: reactive[str] = reactive("")
    store_note: reactive[str] = reactive("")
    panel: reactive[str] = reactive("")
    """The focused panel's name: where the next key goes."""
    approvals: reactive[int] = reactive(0)
    """Approvals waiting in the store (any process): F6 opens the inbox."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.started_at: float | None = None
        self.duration_ms: float | None = None
        self.calls = 0
        self.memory_bytes: int | None = None
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.1, self._tick, pause=True)

    def _tick(self) -> None:
        self.refresh()

    def start(self) -> None:
        self.state = "running"
        self.started_at = time.perf_counter()
        self.duration_ms = None
        self.calls = 0
        self.memory_bytes = None
        self.detail = ""
        if self._timer is not None:
            self._timer.resume()

    def finish(
        self,
        state: str,
        *,
        duration_ms: float | None,
        calls: int,
        memory: int | None,
        detail: str = "",
    ) -> None:
        self.state = state
        self.duration_ms = duration_ms
        self.calls = calls
        self.memory_bytes = memory
        self.detail = detail
        if self._timer is not None:
            self._timer.pause()
        self.refresh()

    def count_call(self) -> None:
        self.calls += 1

    def _pill(self, state: str) -> str | None:
        """A state in a pill of its theme colour, the text black or white, whichever reads."""
        name = STATE_COLOUR.get(state)
        colour = rich_colour(getattr(self.app.current_theme, name, None)) if name else None
        if colour is None or not colour.startswith("#"):
            return f"bold reverse {colour}" if colour else None
        return f"bold {text_on(colour)} on {colour}"

    def _inbox_keys(self) -> str:
        hints = getattr(self.app, "key_hints", None)
        return hints.keys("app.approvals") if hints is not None else "F6"

    def render(self) -> Text:
        text = Text()
        theme = self.app.current_theme
        muted = muted_colour(theme) or "dim"
        text.append(f" {self.state} ", style=self._pill(self.state) or f"bold {muted}")
        if self.state == "running" and self.started_at is not None:
            text.append("  " + formats.format_ms((time.perf_counter() - self.started_at) * 1000))
        elif self.duration_ms is not None:
            text.append("  " + formats.format_ms(self.duration_ms))
        text.append(f"  · {self.calls} call{'s' if self.calls != 1 else ''}")
        if self.memory_bytes:
            text.append(f"  · heap {formats.format_bytes(self.memory_bytes)}")
        if self.detail:
            text.append(f"  · {self.detail}")
        waiting = (
            f" {self.approvals} approval{'s' if self.approvals != 1 else ''} · {self._inbox_keys()} "
            if self.approvals
            else ""
        )
        focus = f" ▸ {self.panel} " if self.panel else ""
        host = (
            "  " + f"host: {self.host_name}" + (f" · {self.store_note}" if self.store_note else "")
        )
        # Narrow screens drop the host first, then the focus; waiting approvals always show.
        room = self.size.width - text.cell_len - 1
        if len(waiting) + len(focus) + len(host) + 1 > room:
            host = ""
        if len(waiting) + len(focus) + 1 > room:
            focus = ""
        pad = max(1, room - len(waiting) - len(focus) - len(host) - (1 if waiting else 0))
        text.append(" " * pad)
        if waiting:
            text.append(waiting, style=self._pill("running") or "bold reverse")
            text.append(" ")
        text.append(focus, style="bold reverse")
        text.append(host, style=muted)
        return text
