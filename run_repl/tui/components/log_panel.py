"""Live logs: coloured by level, following the end unless paused, filterable.

A chatty snippet can print a hundred thousand lines: the panel renders only
the rows on screen (the Line API), so appending costs a list append, whatever
the count.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ...present.results import log_line
from ...present.rich_render import to_text
from ...sandbox.result import LogLine
from ..themes import present_styles


def expand(text: str) -> str:
    """Tabs as spaces, so columns line up (the rest of the sanitizing is `to_text`'s)."""
    return text.expandtabs(4) if "\t" in text else text


LEVELS = ("debug", "log", "info", "warn", "error")
LEVEL_RANK = {level: i for i, level in enumerate(LEVELS)}
MAX_LINES = 200_000
MAX_WIDTH = 2000  # a longer row is cut on screen; copy keeps it whole
INDENT = 17  # continuation rows of a multi-line log sit under its text (after time and level)


class LogRows(ScrollView, can_focus=False):
    """The rows of the shown log lines (a line with newlines is several rows)."""

    DEFAULT_CSS = "LogRows { height: 1fr; background: $surface; }"

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, int]] = []  # (line index, row within the line)
        self.follow = True
        self._cache: dict[tuple[int, int], Strip] = {}
        self._width = 0

    def reset(self, rows: list[tuple[int, int]], width: int) -> None:
        self.rows = rows
        self._cache.clear()
        self._width = width
        self._resize()

    def extend(self, rows: list[tuple[int, int]], width: int) -> None:
        self.rows.extend(rows)
        self._width = max(self._width, width)
        self._resize()

    def _resize(self) -> None:
        self.virtual_size = Size(min(self._width, MAX_WIDTH) + 2, len(self.rows))
        if self.follow:
            # force: the scrollbar these rows call for is laid out later, and without
            # one a scroll is ignored (the end of the first batch was never shown).
            self.scroll_end(animate=False, immediate=True, force=True)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        panel = self.parent
        assert isinstance(panel, LogPanel)
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        key = self.rows[index]
        strip = self._cache.get(key)
        if strip is None:
            strip = Strip(panel.row_segments(*key)).apply_style(self.rich_style)
            if len(self._cache) > 4000:
                self._cache.clear()
            self._cache[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)


class LogPanel(Vertical, can_focus=True):
    HELP: ClassVar[str] = """\
### Logs
Console lines of the run, as they are printed.

- **space**: pause or follow the end
- **f**: show only lines at or above a level (cycles debug → log → info → warn → error)
- **ctrl+l**: clear, **y**: copy the shown lines
- arrows, page up/down, home/end: scroll
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_follow", "Pause/follow", id="logs.follow"),
        Binding("f", "cycle_filter", "Filter", id="logs.filter"),
        Binding("ctrl+l", "clear", "Clear", id="logs.clear"),
        Binding("y", "copy", "Copy", id="logs.copy"),
        Binding("up", "scroll('up')", "Up", show=False, id="logs.up"),
        Binding("down", "scroll('down')", "Down", show=False, id="logs.down"),
        Binding("pageup", "scroll('pageup')", "Page up", show=False, id="logs.page_up"),
        Binding("pagedown", "scroll('pagedown')", "Page down", show=False, id="logs.page_down"),
        Binding("home", "scroll('home')", "Top", show=False, id="logs.top"),
        Binding("end", "scroll('end')", "End", show=False, id="logs.end"),
        Binding("left", "scroll('left')", "Left", show=False, id="logs.left"),
        Binding("right", "scroll('right')", "Right", show=False, id="logs.right"),
    ]

    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    LogPanel > #log-bar { height: 1; color: $text-muted; background: $boost; padding: 0 1; }
    LogPanel:focus > #log-bar { color: $text; }
    """

    min_level: reactive[str] = reactive("debug")
    follow: reactive[bool] = reactive(True)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[LogLine] = []
        self.dropped = 0
        self._styles: dict[str, str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="log-bar")
        yield LogRows()

    def on_mount(self) -> None:
        self._update_bar()

    @property
    def _rows_view(self) -> LogRows:
        return self.query_one(LogRows)

    def _visible(self, line: LogLine) -> bool:
        return LEVEL_RANK[line.level] >= LEVEL_RANK[self.min_level]

    def format_line(self, line: LogLine) -> Text:
        """A log line in present/'s words (time, level, text), in the theme's colours.
        Guest text: `to_text` turns control characters into visible escapes."""
        if self._styles is None:
            self._styles = present_styles(self.app.current_theme)
        text = to_text(log_line(line.model_copy(update={"text": expand(line.text)})), self._styles)
        text.no_wrap = True
        return text

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None  # a new theme: its colours
        if self.is_mounted:
            self._rows_view.reset(self._rows_view.rows, self._rows_view._width)

    def row_segments(self, index: int, row: int) -> list[Segment]:
        text = self.format_line(self.lines[index]).split("\n")[row]
        if row:
            text = Text(" " * INDENT) + text  # continuation rows sit under the text
        if text.cell_len > MAX_WIDTH:
            text.truncate(MAX_WIDTH, overflow="ellipsis")
        return list(text.render(self.app.console))

    def _rows_of(self, start: int) -> tuple[list[tuple[int, int]], int]:
        rows: list[tuple[int, int]] = []
        width = 0
        floor = LEVEL_RANK[self.min_level]
        lines = self.lines
        for i in range(start, len(lines)):
            line = lines[i]
            if LEVEL_RANK[line.level] < floor:
                continue
            text = line.text
            if "\n" not in text:
                rows.append((i, 0))
                if len(text) > width:
                    width = len(text)
                continue
            for r, part in enumerate(text.split("\n")):
                rows.append((i, r))
                width = max(width, len(part))
        return rows, width + INDENT + 1

    def add_lines(self, lines: list[LogLine]) -> None:
        """Append a batch (the app batches lines so a chatty snippet cannot flood the UI)."""
        start = len(self.lines)
        self.lines.extend(lines)
        if len(self.lines) > MAX_LINES:
            del self.lines[: len(self.lines) - MAX_LINES]
            self._rebuild()
        else:
            rows, width = self._rows_of(start)
            self._rows_view.extend(rows, width)
        self._update_bar()

    def set_dropped(self, dropped: int) -> None:
        self.dropped = dropped
        self._update_bar()

    def clear(self) -> None:
        self.lines.clear()
        self.dropped = 0
        self._rebuild()
        self._update_bar()

    def _rebuild(self) -> None:
        rows, width = self._rows_of(0)
        self._rows_view.reset(rows, width)

    def _update_bar(self) -> None:
        shown = (
            sum(1 for line in self.lines if self._visible(line))
            if self.min_level != "debug"
            else len(self.lines)
        )
        parts = [f"{shown:,} line{'s' if shown != 1 else ''}"]
        if self.min_level != "debug":
            parts.append(f"level ≥ {self.min_level}")
        if self.dropped:
            parts.append(f"{self.dropped:,} dropped (max_log_lines)")
        parts.append("following" if self.follow else "paused (space to follow)")
        self.query_one("#log-bar", Static).update(" · ".join(parts))

    def watch_min_level(self) -> None:
        if self.is_mounted:
            self._rebuild()
            self._update_bar()

    def watch_follow(self, follow: bool) -> None:
        if self.is_mounted:
            view = self._rows_view
            view.follow = follow
            if follow:
                view.scroll_end(animate=False)
            self._update_bar()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow

    def action_cycle_filter(self) -> None:
        self.min_level = LEVELS[(LEVELS.index(self.min_level) + 1) % len(LEVELS)]

    def action_clear(self) -> None:
        self.clear()

    def action_scroll(self, where: str) -> None:
        view = self._rows_view
        if where in ("up", "pageup", "home", "left", "right"):
            self.follow = where in ("right", "left") and self.follow
        moves = {
            "up": lambda: view.scroll_up(animate=False),
            "down": lambda: view.scroll_down(animate=False),
            "pageup": lambda: view.scroll_page_up(animate=False),
            "pagedown": lambda: view.scroll_page_down(animate=False),
            "home": lambda: view.scroll_home(animate=False),
            "end": lambda: view.scroll_end(animate=False),
            "left": lambda: view.scroll_left(animate=False),
            "right": lambda: view.scroll_right(animate=False),
        }
        moves[where]()

    def action_copy(self) -> None:
        text = "\n".join(f"{line.level}\t{line.text}" for line in self.lines if self._visible(line))
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {text.count(chr(10)) + 1 if text else 0} log lines")
