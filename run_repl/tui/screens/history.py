"""Run history: search past runs, preview one, open its source or show its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import CellDoesNotExist
from textual.worker import get_current_worker

from ...present import formats
from ...present.history import HistoryRow, resume_fragments
from ...present.styled import plain
from ...store.records import RunRecord
from ..guest_text import safe_lines, safe_text
from ..themes import rich_colour, rich_syntax_theme


@dataclass(frozen=True)
class OpenSource:
    """The history's answer: open this run's source in a new editor buffer."""

    source: str
    title: str


@dataclass(frozen=True)
class ShowStored:
    """The history's answer: show this run's stored result in the panels."""

    envelope: dict[str, Any]
    source: str = ""


LIST_LIMIT = 200
PREVIEW_VALUE_LINES = 12
# Each names only the keys that work where the focus is.
SEARCH_HINT = "type to search · ↓ to the list · enter open in editor · esc close"
LIST_HINT = "enter/o open in editor · r show result · ↑↓ choose · / search · esc close"


class RunList(DataTable[Any]):
    """The runs; ↑ on the first one goes back to the search box."""

    class LeftAtTop(Message):
        """↑ was pressed on the first row."""

    def action_cursor_up(self) -> None:
        if self.cursor_row <= 0:
            self.post_message(self.LeftAtTop())
            return
        super().action_cursor_up()


class RunSource(Protocol):
    """What the history needs from the store."""

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]: ...
    def get_run(self, run_id: str) -> RunRecord | None: ...


def summarize_result(
    envelope: dict[str, Any], *, resumed: bool = False
) -> tuple[list[str], list[str], int]:
    """How the run ended, in three parts: fact lines (status first, then the error or
    what it waits for), the value's first pretty JSON lines, and how many lines were left
    out. `resumed`: a paused run that was resumed since (it waits for nothing now)."""
    status = envelope.get("status", "?")
    facts = [f"status: {status}"]
    if "duration_ms" in envelope:
        facts[0] += f" in {formats.format_ms(float(envelope['duration_ms']))}"
    calls = envelope.get("calls") or []
    logs_total = envelope.get("logs_total") or len(envelope.get("logs") or [])
    if calls or logs_total:
        facts.append(f"{len(calls)} host call(s), {logs_total} log line(s)")
    error = envelope.get("error")
    if isinstance(error, dict):
        where = ""
        if error.get("line") is not None:
            where = f" (line {error['line']}, column {error.get('column', '?')})"
        facts.append(f"{error.get('code', 'ERROR')}{where}: {error.get('message', '')}")
        return facts, [], 0
    if status == "interrupted":
        for item in envelope.get("interruptions") or []:
            facts.append(
                f"{'paused' if resumed else 'waiting'} for a decision on {item.get('path', '?')}()"
            )
        return facts, [], 0
    if status != "ok":
        return facts, [], 0
    if envelope.get("value_window"):
        window = envelope["value_window"]
        shown, total = envelope.get("shown"), envelope.get("total")
        facts.append(f"value: {shown} of {total} items at {window.get('path', '$')}")
        value: Any = window.get("items")
    elif envelope.get("value_kind") == "undefined":
        facts.append("value: undefined")
        return facts, [], 0
    else:
        value = envelope.get("value")
    value_lines = formats.pretty_json(value).splitlines()
    left_out = max(0, len(value_lines) - PREVIEW_VALUE_LINES)
    return facts, value_lines[:PREVIEW_VALUE_LINES], left_out


def result_summary(envelope: dict[str, Any]) -> str:
    """The summary as plain text."""
    facts, value_lines, left_out = summarize_result(envelope)
    more = [f"… {left_out} more lines (r shows it all)"] if left_out else []
    return "\n".join([*facts, *value_lines, *more])


class HistoryScreen(ModalScreen[OpenSource | ShowStored | None]):
    """Past runs, newest first. Type to search; Enter/o opens the source in the editor,
    r shows the stored result in the panels."""

    HELP = """\
## History

Past runs, newest first. Type to search the source, the status or the error code.

The search box has the focus first: type, then **↓** goes to the list (the run
on screen stays chosen), where these keys work:

- **Enter** or **o**: open the run's source in a new editor buffer (Enter also
  from the search box)
- **r**: show the run's stored result in the panels
- **↑/↓**: choose a run; **↑** from the first goes back to the search box, and so
  does **/** or any letter that is not a key of the list
- **Escape**: close
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="history.close"),
        Binding("o", "open", "Open in editor", id="history.open"),
        Binding("r", "show", "Show result", id="history.show"),
        Binding("down", "cursor(1)", "Next run", show=False, id="history.next"),
        Binding("up", "cursor(-1)", "Previous run", show=False, id="history.previous"),
        Binding("ctrl+f,slash", "focus_search", "Search", show=False, id="history.search"),
    ]

    DEFAULT_CSS = """
    HistoryScreen {
        align: center middle;
    }
    HistoryScreen > #history-dialog {
        width: 92%;
        height: 88%;
        border: thick $primary 60%;
        background: $surface;
        padding: 0 1;
    }
    HistoryScreen #history-title {
        text-style: bold;
        color: $text-primary;
        width: 1fr;
    }
    HistoryScreen #history-count {
        color: $text-muted;
        width: auto;
    }
    HistoryScreen #history-header {
        height: 1;
    }
    HistoryScreen #history-search {
        margin: 0 0 1 0;
    }
    HistoryScreen #history-runs {
        height: 1fr;
        min-height: 5;
    }
    HistoryScreen #history-preview {
        height: 1fr;
        min-height: 6;
    }
    HistoryScreen #history-source-scroll {
        width: 3fr;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
    }
    HistoryScreen #history-summary-scroll {
        width: 2fr;
        margin-left: 1;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
    }
    HistoryScreen #history-summary {
        padding: 0 1;
    }
    HistoryScreen #history-hint {
        color: $text-muted;
        height: 1;
    }
    """

    @dataclass
    class RunsLoaded(Message):
        """The search worker's answer for one query."""

        query: str
        runs: list[RunRecord]
        error: str | None = None

    def __init__(self, store: RunSource) -> None:
        super().__init__()
        self._store = store
        self._runs: dict[str, RunRecord] = {}
        self._query = ""
        self._selected: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="history-dialog"):
            with Horizontal(id="history-header"):
                yield Static("Run history", id="history-title")
                yield Static("", id="history-count")
            # Not selected on focus: a letter sent here from the list must not be
            # replaced by the next one.
            yield Input(
                placeholder="Search source, status or error code…",
                id="history-search",
                select_on_focus=False,
            )
            # The list gets the full width (sources are long); the preview sits below it.
            yield RunList(id="history-runs", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="history-preview"):
                with VerticalScroll(id="history-source-scroll") as source_scroll:
                    source_scroll.border_title = "Source"
                    source_scroll.can_focus = False
                    yield Static("", id="history-source")
                with VerticalScroll(id="history-summary-scroll") as summary_scroll:
                    summary_scroll.border_title = "Result"
                    summary_scroll.can_focus = False
                    yield Static("", id="history-summary")
            yield Static(SEARCH_HINT, id="history-hint")

    def on_mount(self) -> None:
        table = self.query_one("#history-runs", DataTable)
        table.add_column("When", key="when")
        table.add_column("Status", key="status")
        table.add_column("Time", key="duration")
        table.add_column("Error", key="error")
        table.add_column("Source", key="source")
        self.query_one("#history-search", Input).focus()
        # Highlighting follows the app theme, like the editor does.
        self.watch(self.app, "theme", self._theme_changed, init=False)
        self._search("")

    # ------------------------------------------------------------ search
    @on(Input.Changed, "#history-search")
    def _query_changed(self, event: Input.Changed) -> None:
        self._query = event.value.strip()
        self._search(self._query)

    @work(thread=True, exclusive=True, group="history-search")
    def _search(self, query: str) -> None:
        # A thread, so a large history (SQLite LIKE over every source) never blocks typing.
        try:
            runs = self._store.list_runs(limit=LIST_LIMIT, query=query or None)
        except Exception as exc:  # a broken store is shown in the screen, not raised
            if not get_current_worker().is_cancelled:
                self.post_message(self.RunsLoaded(query, [], f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.RunsLoaded(query, runs))

    @on(RunsLoaded)
    def _runs_loaded(self, event: RunsLoaded) -> None:
        if event.query != self._query:
            return  # an answer to an older query; a newer one is on its way
        table = self.query_one("#history-runs", DataTable)
        keep = self._selected
        table.clear()
        self._runs = {run.id: run for run in event.runs}
        for run in event.runs:
            table.add_row(*self._row(run), key=run.id)
        count = self.query_one("#history-count", Static)
        if event.error:
            count.update(Text(f"cannot read the history: {event.error}", style="bold red"))
        elif event.query:
            count.update(f"{len(event.runs)} matching")
        else:
            many = len(event.runs) >= LIST_LIMIT
            count.update(f"{'latest ' if many else ''}{len(event.runs)} runs")
        if keep in self._runs:
            table.move_cursor(row=table.get_row_index(keep))
        self._show_preview(self._current())

    def _row(self, run: RunRecord) -> tuple[RenderableType, ...]:
        row = HistoryRow.of(run)
        return (
            row.when,
            self._status_cell(run),
            Text(row.duration, justify="right"),
            Text(safe_text(row.code), style="dim"),
            Text(safe_text(row.title[:80])),
        )

    def _status_cell(self, run: RunRecord) -> Text:
        """The status, and what a resume links: `interrupted → ok` (what became of a
        paused run), `ok (a resume)` (a run that resumed one); the preview has the ids."""
        cell = Text(run.status, style=self._status_style(run.status))
        if run.resumed_from:
            cell.append(" (a resume)", style="dim")
        if run.resumed_as:
            then = run.resumed_status or "resumed"
            cell.append(" → ", style="dim")
            cell.append(then, style=self._status_style(then))
        return cell

    def _status_style(self, status: str) -> str:
        theme = self.app.current_theme
        colour = {
            "ok": rich_colour(theme.success) or "green",
            "error": rich_colour(theme.error) or "red",
            "interrupted": rich_colour(theme.warning) or "yellow",
        }.get(status)
        return f"bold {colour}" if colour else ""

    # ------------------------------------------------------------ preview
    def _current(self) -> RunRecord | None:
        table = self.query_one("#history-runs", DataTable)
        if not self._runs or table.row_count == 0:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except CellDoesNotExist:
            return None
        return self._runs.get(key) if key is not None else None

    @on(DataTable.RowHighlighted, "#history-runs")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_preview(self._runs.get(event.row_key.value or ""))

    def _show_preview(self, run: RunRecord | None) -> None:
        source = self.query_one("#history-source", Static)
        summary = self.query_one("#history-summary", Static)
        self._selected = run.id if run else None
        if run is None:
            empty = f"No runs match {self._query!r}." if self._query else "No runs yet."
            source.update(Text(empty, style="dim"))
            summary.update("")
            return
        source.update(self._highlighted_source(run.source))
        facts, value_lines, left_out = summarize_result(
            run.envelope or {"status": run.status}, resumed=run.resumed_as is not None
        )
        facts = [safe_text(fact) for fact in facts]
        parts: list[RenderableType] = [Text(facts[0], style=self._status_style(run.status))]
        resume = plain(resume_fragments(run))
        if resume:
            parts.append(Text(safe_text(resume), style="bold"))
        parts += [Text(line) for line in facts[1:]]
        if value_lines:
            parts.append(self._syntax(safe_lines("\n".join(value_lines)), "json"))
        if left_out:
            parts.append(Text(f"… {left_out} more lines (r shows it all)", style="dim"))
        summary.update(Group(*parts))

    def _highlighted_source(self, source: str) -> Syntax:
        return self._syntax(safe_lines(source.rstrip()), "typescript", line_numbers=True)

    def _syntax(self, code: str, lexer: str, line_numbers: bool = False) -> Syntax:
        return Syntax(
            code,
            lexer,
            theme=rich_syntax_theme(self.app.current_theme),
            line_numbers=line_numbers,
            word_wrap=True,
        )

    def _theme_changed(self) -> None:
        table = self.query_one("#history-runs", DataTable)
        for run in self._runs.values():
            table.update_cell(run.id, "status", self._row(run)[1])
        self._show_preview(self._current())

    # ------------------------------------------------------------ actions
    def action_close(self) -> None:
        self.dismiss(None)

    def action_cursor(self, step: int) -> None:
        # Reached from the search box (the list moves its own cursor): ↓ goes to the
        # list with the run on screen still chosen, so its keys act on what is shown.
        if step > 0:
            self.query_one("#history-runs", DataTable).focus()

    def action_focus_search(self) -> None:
        self.query_one("#history-search", Input).focus()

    @on(RunList.LeftAtTop)
    def _left_at_top(self) -> None:
        self.action_focus_search()

    @on(events.DescendantFocus)
    def _focus_moved(self) -> None:
        table = self.query_one("#history-runs", DataTable)
        self.query_one("#history-hint", Static).update(
            LIST_HINT if table.has_focus else SEARCH_HINT
        )

    def on_key(self, event: events.Key) -> None:
        """A letter typed on the list that is none of its keys is a search: it goes to
        the search box, never lost and never taken for something else."""
        table = self.query_one("#history-runs", DataTable)
        if not (table.has_focus and event.is_printable and event.character):
            return
        if event.key in self.active_bindings:
            return
        search = self.query_one("#history-search", Input)
        search.focus()
        search.insert_text_at_cursor(event.character)
        event.stop()
        event.prevent_default()

    @on(Input.Submitted, "#history-search")
    @on(DataTable.RowSelected, "#history-runs")
    def action_open(self) -> None:
        run = self._current()
        if run is None:
            self.app.bell()
            return
        self.dismiss(OpenSource(run.source, f"history-{run.id[:8]}.ts"))

    def action_show(self) -> None:
        run = self._current()
        if run is None:
            self.app.bell()
            return
        # The listed record may be trimmed by some stores; the stored one is whole.
        try:
            full = self._store.get_run(run.id) or run
        except Exception:
            full = run
        self.dismiss(ShowStored(full.envelope or {"status": full.status}, full.source))
