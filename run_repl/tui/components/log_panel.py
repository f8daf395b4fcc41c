"""Live logs: coloured by level, following the end unless paused, filterable."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import RichLog, Static

from ...safe_text import clean
from ...sandbox.result import LogLine

LEVELS = ("debug", "log", "info", "warn", "error")
LEVEL_STYLE = {"debug": "dim", "log": "", "info": "cyan", "warn": "yellow", "error": "bold red"}
MAX_LINES = 20_000


def format_time(at_ms: float) -> str:
    return f"{at_ms:8.1f}ms"


class LogPanel(Vertical, can_focus=True):
    HELP: ClassVar[str] = """\
### Logs
Console lines of the run, as they are printed.

- **space**: pause or follow the end
- **f**: show only lines at or above a level (cycles debug → log → info → warn → error)
- **c**: clear, **y**: copy the shown lines
"""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("space", "toggle_follow", "Pause/follow", id="logs.follow"),
        Binding("f", "cycle_filter", "Filter", id="logs.filter"),
        Binding("c", "clear", "Clear", id="logs.clear"),
        Binding("y", "copy", "Copy", id="logs.copy"),
    ]

    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    LogPanel > #log-bar { height: 1; color: $text-muted; background: $boost; padding: 0 1; }
    LogPanel > RichLog { height: 1fr; background: $surface; }
    """

    min_level: reactive[str] = reactive("debug")
    follow: reactive[bool] = reactive(True)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[LogLine] = []
        self.dropped = 0

    def compose(self) -> ComposeResult:
        yield Static(id="log-bar")
        yield RichLog(max_lines=MAX_LINES, wrap=True, markup=False, highlight=False, auto_scroll=True)

    def on_mount(self) -> None:
        self._update_bar()

    def _visible(self, line: LogLine) -> bool:
        return LEVELS.index(line.level) >= LEVELS.index(self.min_level)

    @staticmethod
    def format_line(line: LogLine) -> Text:
        text = Text()
        text.append(format_time(line.at_ms) + " ", style="dim")
        text.append(f"{line.level:<5} ", style=LEVEL_STYLE.get(line.level, "") or "bold")
        # Guest text: control characters become visible escapes, never terminal commands.
        text.append(clean(line.text), style=LEVEL_STYLE.get(line.level, ""))
        return text

    def add_lines(self, lines: list[LogLine]) -> None:
        """Append a batch (the app batches lines so a chatty snippet cannot flood the UI)."""
        self.lines.extend(lines)
        if len(self.lines) > MAX_LINES:
            del self.lines[: len(self.lines) - MAX_LINES]
        log = self.query_one(RichLog)
        for line in lines:
            if self._visible(line):
                log.write(self.format_line(line), scroll_end=self.follow)
        self._update_bar()

    def set_dropped(self, dropped: int) -> None:
        self.dropped = dropped
        self._update_bar()

    def clear(self) -> None:
        self.lines.clear()
        self.dropped = 0
        self.query_one(RichLog).clear()
        self._update_bar()

    def _rewrite(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        for line in self.lines:
            if self._visible(line):
                log.write(self.format_line(line), scroll_end=self.follow)

    def _update_bar(self) -> None:
        shown = sum(1 for line in self.lines if self._visible(line))
        parts = [f"{shown} line{'s' if shown != 1 else ''}"]
        if self.min_level != "debug":
            parts.append(f"level ≥ {self.min_level}")
        if self.dropped:
            parts.append(f"{self.dropped} dropped (max_log_lines)")
        parts.append("following" if self.follow else "paused (space to follow)")
        self.query_one("#log-bar", Static).update(" · ".join(parts))

    def watch_min_level(self) -> None:
        if self.is_mounted:
            self._rewrite()
            self._update_bar()

    def watch_follow(self, follow: bool) -> None:
        if self.is_mounted:
            log = self.query_one(RichLog)
            log.auto_scroll = follow
            if follow:
                log.scroll_end(animate=False)
            self._update_bar()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow

    def action_cycle_filter(self) -> None:
        self.min_level = LEVELS[(LEVELS.index(self.min_level) + 1) % len(LEVELS)]

    def action_clear(self) -> None:
        self.clear()

    def action_copy(self) -> None:
        text = "\n".join(f"{line.level}\t{line.text}" for line in self.lines if self._visible(line))
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {text.count(chr(10)) + 1 if text else 0} log lines")
