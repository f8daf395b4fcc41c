"""The value panel: a run's value, whole when it is small, else a page of items at a time.

The panel is composition and keys; what is on the page is `model.ValuePages`
(pure), the lines are drawn by `ValueLines` (Line API), one item as a tree by
`ValueTree`, and an export is an `ExportJob` run in a thread. What it shows
(`view`: lines, table, tree or chart) and what it asks over that (`prompt`: the
go-to or export question) are two reactives; their one watcher sets the classes
and the header, and refreshes the bindings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Static

from ....present.formats import plural
from ....sandbox.result import RunResult
from ....sandbox.wire.result_store import ResultRefNotFound
from ...guest_text import safe_text
from .chart import ValueChart
from .export_progress import ExportFinished as _ExportFinished
from .export_progress import ExportProgress
from .lines import ValueLines, cut
from .model import (
    FIRST_PAGE_ONLY,
    GONE,
    Pager,
    PageUnavailable,
    Shown,
    ValuePages,
    page_lines,
    pretty,
)
from .table import Records, RecordsTable, records_of
from .tree import TreeItem, ValueTree

View = Literal["lines", "table", "tree", "chart"]
Base = Literal["lines", "table"]
Prompt = Literal["jump", "export", "replace"]


CHART_ACTIONS = frozenset(
    {"toggle_chart", "next_page", "previous_page", "jump", "copy_page", "export"}
    | {"scroll_left", "scroll_right"}  # the charted column, as they are the table's
)
"""What the panel's keys do over a chart (the rest are the lines' and the table's)."""

TYPING_GAP_S = 0.6
"""Keys closer together than this, after one that is none of the panel's, are typing."""


class ValueView(Widget, can_focus=True):
    """A run's value: inline and whole, or a windowed value a page at a time."""

    HELP: ClassVar[str] = """\
## Value

A small value shows whole. A big one shows a page of items at a time,
fetched from the stored result; the header says which items you see.

| Key | Does |
|---|---|
| `n` / `pagedown` | next page |
| `p` / `pageup` | previous page |
| `down` `j` / `up` `k` | next / previous item (across pages) |
| `home` / `end` | first / last item of the page |
| `left` `h` / `right` `l` | scroll long lines sideways (in the table: the column) |
| `g` | go to item number (1-based) |
| `t` / `enter` | the selected item as a tree (`enter`/`space` fold; `t` or `escape` back) |
| `r` | records: a table (a row a record, a column a key) or the JSON lines |
| `s` | in the table: sort the page by the column under the cursor (again: the other way; a third time: as it came); or click a column's title |
| `C` | a chart of the page: bars of a numeric column (`left`/`right` choose it), labelled by the first text column; `C` or `escape` back |
| `y` | copy the selected item (in the tree: the node) as JSON |
| `Y` | copy the page as JSON |
| `ctrl+e` | export the whole value to a file, page by page (asks before replacing one): JSON, JSON Lines (`.jsonl`) or CSV (`.csv`) by the name's ending, with a progress bar; `escape` cancels |

Text typed here by mistake does nothing: after a key that is none of the panel's
(a letter that is no key here, a space, a bracket), the letters that come with it
are taken for typing and ignored, and the panel says so once. A key pressed on
its own, or keys pressed one after another, still act.

An array of objects with mostly the same keys (or an object's array of them,
like `$.rows`) shows as a table, a page at a time like the lines.

A result kept in history may be gone from the store: then only its first
page is shown, and the header says so.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,pagedown", "next_page", "Next page", id="value.next_page"),
        Binding("p,pageup", "previous_page", "Previous page", id="value.previous_page"),
        Binding("g", "jump", "Go to item", id="value.jump"),
        Binding("t,enter", "toggle_tree", "Tree", id="value.tree"),
        Binding("r", "toggle_table", "Table/JSON", id="value.table"),
        Binding("s", "sort", "Sort", id="value.sort"),
        # A capital: code typed here by mistake starts `const …`, and a lone first key acts.
        Binding("C", "toggle_chart", "Chart", id="value.chart"),
        Binding("y", "copy_item", "Copy item", id="value.copy_item"),
        Binding("Y", "copy_page", "Copy page", id="value.copy_page"),
        # Not a letter: a word typed here by mistake must never write a file.
        Binding("ctrl+e", "export", "Export", id="value.export"),
        Binding("down,j", "next_item", "Next item", id="value.next_item", show=False),
        Binding("up,k", "previous_item", "Previous item", id="value.previous_item", show=False),
        Binding("home", "first_item", "First item", id="value.first_item", show=False),
        Binding("end", "last_item", "Last item", id="value.last_item", show=False),
        Binding("left,h", "scroll_left", "Scroll left", id="value.scroll_left", show=False),
        Binding("right,l", "scroll_right", "Scroll right", id="value.scroll_right", show=False),
        # Before back: a running export is what a person sees, and stops first.
        Binding("escape", "cancel_export", "Cancel export", id="value.cancel_export"),
        Binding("escape", "back", "Back", id="value.back", show=False),
    ]

    DEFAULT_CSS = """
    ValueView {
        height: 1fr;
        layout: vertical;
        #value-header {
            height: auto;
            max-height: 2;
            padding: 0 1;
            background: $panel;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        #value-tree {
            display: none;
            height: 1fr;
            background: $surface;
        }
        &.-tree #value-tree { display: block; }
        &.-tree ValueLines { display: none; }
        #value-table { display: none; height: 1fr; background: $surface; }
        &.-table #value-table { display: block; }
        &.-table ValueLines { display: none; }
        &.-tree #value-table { display: none; }
        #value-chart { display: none; }
        &.-chart #value-chart { display: block; }
        &.-chart ValueLines { display: none; }
        #value-table > .datatable--cursor { background: $foreground 12%; }
        &:focus #value-table > .datatable--cursor { background: $accent 20%; color: $text; }
        /* The question above its answer: the answer (a file name) gets the panel's
           whole width, so it shows whole instead of its end alone. */
        #value-prompt {
            display: none;
            layout: vertical;
            height: auto;
            background: $panel;
        }
        &.-prompt #value-prompt { display: block; }
        #value-prompt Label { padding: 0 1; color: $text-accent; width: 1fr; }
        #value-prompt Input { border: none; height: 1; padding: 0 1; width: 1fr; }
        .value-view--key { color: $text-primary; }
        .value-view--string { color: $text-success; }
        .value-view--number { color: $text-warning; }
        .value-view--literal { color: $text-secondary; text-style: italic; }
        .value-view--punct { color: $text-muted; }
        .value-view--gutter { color: $text-muted; }
        .value-view--gutter-cursor { color: $text-muted; text-style: bold; }
        .value-view--cursor { background: $foreground 7%; }
        &:focus .value-view--gutter-cursor { color: $text-accent; }
        .value-view--placeholder { color: $text-muted; text-style: italic; }
        &:focus .value-view--cursor { background: $accent 10%; }
    }
    """

    view: reactive[View] = reactive("lines", bindings=True)
    """What the panel shows: the page's lines or table, one item as a tree, or a chart."""

    prompt: reactive[Prompt | None] = reactive(None, bindings=True)
    """What the panel asks over the view (go to an item, export, replace a file), if anything."""

    @dataclass
    class PageChanged(Message):
        """The visible page changed (count 0 and path "": nothing is shown)."""

        offset: int
        count: int
        total: int
        path: str

    ExportFinished: ClassVar[type[_ExportFinished]] = _ExportFinished
    """An export ended (posted by the export's progress bar, which runs it)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.model = ValuePages()
        self.clock: Callable[[], float] = time.monotonic
        self._typed_at: float | None = None
        """When the last key of text typed here by mistake came (None: no such burst)."""
        self._header = Static(id="value-header")
        self._lines = ValueLines(id="value-lines")
        self._tree = ValueTree("value", id="value-tree")
        self._table = RecordsTable(id="value-table")
        self._chart = ValueChart(id="value-chart")
        self._records: Records | None = None
        self.prefer_table = True
        """Records show as a table (r switches; the choice holds for the next values)."""
        self._prompt_label = Label(id="value-prompt-label")
        self._prompt_input = Input(id="value-prompt-input")
        self._replacing: Path | None = None
        self._header_lines = 0
        self.export_progress = ExportProgress(id="value-export")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._lines
        yield self._table
        yield self._chart
        yield self._tree
        with Horizontal(id="value-prompt"):
            yield self._prompt_label
            yield self._prompt_input
        yield self.export_progress

    def on_mount(self) -> None:
        # A value given before mount (or none: the empty panel says how to get one) is
        # drawn once mounted: during on_mount `is_mounted` is not true yet. The model is
        # read when the call runs, so a value shown meanwhile is the one drawn.
        self.call_later(self._draw_model)

    def _draw_model(self) -> None:
        items = self.model.items
        self._show_page(self.model.offset, items, cursor=0 if items else -1, announce=False)

    # ------------------------------------------------------------------ public API
    def show_result(self, result: RunResult | None, pager: Pager | None) -> None:
        """Show a run's value (None, or a result that is not ok, clears the panel)."""
        self._set(None if result is None else Shown.from_result(result), pager)

    def show_stored(self, result: RunResult, pager: Pager | None) -> None:
        """Show a run's stored result (from the history), whose ref may be gone by now."""
        shown = Shown.from_result(result)
        notice = None
        if shown is not None and not shown.inline and shown.total > len(shown.first_items):
            if pager is None or shown.ref is None:
                notice = FIRST_PAGE_ONLY
            else:
                # One tiny read now, so the header says at once what paging can do.
                try:
                    pager(shown.ref, 0, 1)
                except ResultRefNotFound:
                    notice = GONE
                except Exception:
                    pass  # any other failure is reported by the page read that meets it
        self._set(shown, pager, notice)

    @property
    def page_offset(self) -> int:
        """The offset of the page on screen (0 for an inline value)."""
        return self.model.offset

    @property
    def page_items(self) -> tuple[Any, ...]:
        """The items of the page on screen (an inline value is one item: itself)."""
        return tuple(self.model.items)

    @property
    def selected_number(self) -> int | None:
        """The 1-based number of the selected item of a windowed value, else None."""
        return self.model.number(self.cursor)

    @property
    def cursor(self) -> int:
        """The item selected on the page (its index), in the lines or the table."""
        if self._base == "table" and self.model.windowed:
            selected = self._table.selected
            return -1 if selected is None else selected
        return self._lines.cursor

    @property
    def _base(self) -> Base:
        """The page's own view, under a tree or a chart: its records' table, or its lines."""
        return "table" if self._records is not None and self.prefer_table else "lines"

    @property
    def in_table(self) -> bool:
        """The page shows as a table (also under the go-to prompt)."""
        return self.view == "table"

    @property
    def records(self) -> Records | None:
        """The page's records, when they make a table (shown as one or not)."""
        return self._records

    @property
    def in_chart(self) -> bool:
        """The page shows as a chart (also under the go-to prompt)."""
        return self.view == "chart"

    @property
    def chart(self) -> ValueChart:
        return self._chart

    @property
    def in_tree(self) -> bool:
        return self.view == "tree"

    @property
    def notice(self) -> str | None:
        """What the header says is missing (a gone ref, a first page only), if anything."""
        return self.model.notice

    # ------------------------------------------------------------------ state
    def watch_view(self) -> None:
        self._state_changed()

    def watch_prompt(self) -> None:
        self._state_changed()

    def _set(self, shown: Shown | None, pager: Pager | None, notice: str | None = None) -> None:
        self._close_prompt()
        self._close_tree()
        self._table.sort_column, self._table.sort_reverse = None, False  # a new value
        self.model.set(shown, pager, notice)
        items = self.model.items
        self._show_page(0, items, cursor=0 if items else -1)

    def _show_page(
        self,
        offset: int,
        items: list[Any],
        *,
        cursor: int,
        top: bool = False,
        announce: bool = True,
    ) -> None:
        """Make `items` (starting at item `offset`) the page on screen, and say so
        (unless `announce` is false: drawing what was already the page is no change)."""
        self.model.show(offset, items)
        if not self.is_mounted:
            return
        shown = self.model.shown
        if shown is None:
            self._lines.show_lines(
                [],
                [],
                [0],
                first_number=None,
                plain=True,
                cursor=-1,
                placeholder=f"No value yet: {self._run_keys()} runs the snippet.",
            )
        elif shown.inline:
            value = shown.value
            if shown.kind == "undefined":
                texts, plain = ["undefined"], True
            elif isinstance(value, str) and "\n" in value:
                texts, plain = value.split("\n"), True
            else:
                texts, plain = pretty(value).split("\n"), False
            self._lines.show_lines(
                texts, [0] * len(texts), [0, len(texts)], first_number=None, plain=plain, cursor=-1
            )
        else:
            texts, owners, starts = page_lines(items, shown.path)
            self._lines.show_lines(
                texts,
                owners,
                starts,
                first_number=offset + 1,
                plain=shown.path == "$lines",
                cursor=cursor,
            )
            if cursor >= 0:
                self._lines.reveal(cursor, top=top)
        self._show_table(shown, items, offset, cursor)
        if self.in_chart:
            self._draw_chart()
        self._state_changed()
        self.refresh_bindings()
        if not announce:
            return
        if shown is None:
            self.post_message(self.PageChanged(0, 0, 0, ""))
        elif shown.inline:
            self.post_message(self.PageChanged(0, shown.total, shown.total, shown.path))
        else:
            self.post_message(self.PageChanged(offset, len(items), self.model.total, shown.path))

    def _show_table(self, shown: Shown | None, items: list[Any], offset: int, cursor: int) -> None:
        """The page as a table when its records make one (and the person wants it)."""
        records = None if shown is None else records_of(shown, items, offset)
        self._records = records
        if self._base == "table" and records is not None:
            assert shown is not None
            self._table.show(records, first_number=records.first + 1)
            if cursor >= 0 and not shown.inline:
                self._table.select(cursor)
        self._restore_base()

    def _restore_base(self) -> None:
        """Back to the page's own view (lines or table) if that is what is shown."""
        if self.view in ("lines", "table"):
            self.view = self._base

    def _selected(self) -> tuple[str, Any] | None:
        """(where it is, the value) of what is selected: an item, or a record of the table."""
        model = self.model
        if model.shown is None:
            return None
        if self._base == "table" and model.shown.inline and self._records is not None:
            index = self._table.selected
            if index is None:
                return None
            return self._records.path_of(index), self._records.rows[index]
        cursor = self.cursor
        return model.item_path(cursor), model.selected_value(cursor)

    def _state_changed(self) -> None:
        """What is drawn around the page follows the view, the prompt and the page: the
        classes that show the view's widget and the prompt, and the header."""
        self.set_class(self.in_tree, "-tree")
        self.set_class(self.in_table, "-table")
        self.set_class(self.in_chart, "-chart")
        self.set_class(self.prompt is not None, "-prompt")
        if self.is_mounted:
            self._set_header(self._header_line())

    def _header_line(self) -> Content:
        model = self.model
        shown = model.shown
        if shown is None:
            return Content("")
        if self.in_tree:
            where = self._selected()
            line = Content.assemble(
                (safe_text(where[0] if where else "$"), "$text-accent"),
                " · tree · ",
                ("t", "bold"),
                " or ",
                ("escape", "bold"),
                " goes back",
            )
        elif shown.inline:
            value = shown.value
            kind = shown.kind or "value"
            size = ""
            if isinstance(value, list):
                size = f" · {plural(len(value), 'item')}"
            elif isinstance(value, dict):
                size = f" · {plural(len(value), 'key')}"
            elif isinstance(value, str) and "\n" in value:
                size = f" · {plural(value.count(chr(10)) + 1, 'line')}"
            line = Content.assemble((kind, "$text-accent"), f"{size} · inline")
        else:
            first, last = model.offset + 1, model.offset + len(model.items)
            span = (
                f"items {first:,}–{last:,} of {model.total:,}"
                if model.items
                else f"no items (of {model.total:,})"
            )
            parts: list[str | tuple[str, str]] = [
                (safe_text(shown.path), "$text-accent"),
                f" · {span}",
            ]
            if shown.rest:
                rest = safe_text(cut(json.dumps(shown.rest, ensure_ascii=False), 120))
                parts.append(f" · rest: {rest}")
            line = Content.assemble(*parts)
        if self.in_table and self._records is not None:
            table = self._table
            what = f" · table of {plural(len(self._records.rows), 'record')}"
            if shown.inline and self._records.path != "$":
                what += f" at {self._records.path}"
            if table.sort_column is not None:
                arrow = "↓" if table.sort_reverse else "↑"
                what += f" · sorted by {safe_text(table.sort_column)} {arrow} (this page)"
            line = Content.assemble(line, what)
        if model.notice:
            style = "$text-error" if model.notice == GONE else "$text-warning"
            line = Content("\n").join([line, Content.assemble((model.notice, style))])
        return line

    def _set_header(self, line: Content) -> None:
        # A layout pass only when the header's height changes: paging stays a repaint.
        lines = line.plain.count("\n") + 1
        self._header.update(line, layout=lines != self._header_lines)
        self._header_lines = lines

    # ------------------------------------------------------------------ paging
    def _go(self, start: int, cursor: int, *, top: bool = False, last: bool = False) -> bool:
        try:
            items = self.model.read(start)
        except PageUnavailable as missing:
            if str(missing) in (GONE, FIRST_PAGE_ONLY):
                self._state_changed()  # the header says what is missing
                self.refresh_bindings()
                self.app.bell()
            else:
                self.notify(str(missing), title="Value", severity="error", markup=False)
            return False
        cursor = len(items) - 1 if last else max(0, min(cursor, len(items) - 1))
        self._show_page(start, items, cursor=cursor, top=top)
        return True

    # ------------------------------------------------------------------ typing by mistake
    def on_key(self, event: events.Key) -> None:
        """A printable key that is none of the panel's starts (or goes on with) a burst of
        typing: the panel's letter keys that come with it do nothing (see `_typing`), and
        the panel says once where typing goes. Harlequin's and posting's panels ignore
        text typed into them; here the letters are keys, so text must not reach them."""
        if not (event.is_printable and event.character) or isinstance(self.app.focused, Input):
            return
        if event.key in self.screen.active_bindings:
            return  # a key of the panel (or its tree or table): its action asks `_typing`
        now = self.clock()
        starting = self._typed_at is None or now - self._typed_at >= TYPING_GAP_S
        self._typed_at = now
        if starting:
            self.notify(
                "That looks like typing: the Value panel has the focus, and its letters are "
                "keys (n p g t r s y Y C, enter), so they were ignored. ctrl+o e goes to the "
                "editor.",
                title="Value",
                severity="warning",
                markup=False,
            )

    def _typing(self) -> bool:
        """Whether a key of the panel is part of typing (it then does nothing)."""
        now = self.clock()
        if self._typed_at is not None and now - self._typed_at < TYPING_GAP_S:
            self._typed_at = now
            return True
        return False

    def action_next_page(self) -> None:
        if self._typing():
            return
        start = self.model.next_start
        if start is None:
            self.app.bell()
            return
        self._go(start, 0)

    def action_previous_page(self) -> None:
        if self._typing():
            return
        start = self.model.previous_start
        if start is None:
            self.app.bell()
            return
        self._go(start, 0)

    def _table_step(self, step: int) -> bool:
        """In the table: the cursor to the next (previous) row, across pages; False when
        the page is not a table."""
        if self._base != "table" or self.view == "tree":
            return False
        table = self._table
        row = table.cursor_row + step
        if 0 <= row < table.row_count:
            table.move_cursor(row=row, animate=False)
        elif self.model.windowed and step > 0 and self.model.next_start is not None:
            self._go(self.model.next_start, 0)
        elif self.model.windowed and step < 0 and self.model.previous_start is not None:
            self._go(self.model.previous_start, 0, last=True)
        return True

    def action_next_item(self) -> None:
        if self._typing():
            return
        if self._table_step(1):
            return
        if not self.model.windowed:
            self._lines.scroll_down(animate=False)
            return
        cursor = self._lines.cursor
        if cursor + 1 < len(self.model.items):
            self._select(cursor + 1)
        elif self.model.next_start is not None:
            self._go(self.model.next_start, 0)

    def action_previous_item(self) -> None:
        if self._typing():
            return
        if self._table_step(-1):
            return
        if not self.model.windowed:
            self._lines.scroll_up(animate=False)
            return
        cursor = self._lines.cursor
        if cursor > 0:
            self._select(cursor - 1)
        elif self.model.previous_start is not None:
            self._go(self.model.previous_start, 0, last=True)

    def action_first_item(self) -> None:
        if self._base == "table":
            self._table.move_cursor(row=0, animate=False)
        elif self.model.windowed and self.model.items:
            self._select(0)
        else:
            self._lines.scroll_home(animate=False)

    def action_last_item(self) -> None:
        if self._base == "table":
            self._table.move_cursor(row=self._table.row_count - 1, animate=False)
        elif self.model.windowed and self.model.items:
            self._select(len(self.model.items) - 1)
        else:
            self._lines.scroll_end(animate=False)

    def action_scroll_left(self) -> None:
        if self._typing():
            return
        if self.view == "chart":
            if not self._chart.cycle(-1):
                self.app.bell()
        elif self._base == "table":
            self._table.action_cursor_left()
        else:
            self._lines.scroll_left(animate=False)

    def action_scroll_right(self) -> None:
        if self._typing():
            return
        if self.view == "chart":
            if not self._chart.cycle(1):
                self.app.bell()
        elif self._base == "table":
            self._table.action_cursor_right()
        else:
            self._lines.scroll_right(animate=False)

    def _select(self, index: int, *, top: bool = False) -> None:
        self._lines.set_cursor(index, top=top)
        if self._base == "table":
            self._table.select(index)

    # ------------------------------------------------------------------ table
    def action_toggle_table(self) -> None:
        """r: the page's records as a table, or as JSON lines (the choice holds)."""
        if self._typing():
            return
        if self._records is None:
            return
        if self._base == "table":
            selected = self._table.selected
            self.prefer_table = False
            if self.model.windowed and selected is not None:
                self._lines.set_cursor(selected)
        else:
            self.prefer_table = True
            self._table.show(self._records, first_number=self._records.first + 1)
            if self.model.windowed and self._lines.cursor >= 0:
                self._table.select(self._lines.cursor)
        self._restore_base()  # the view follows, and with it the header

    def action_sort(self) -> None:
        """s: sort the page by the column under the cursor (again: reversed; again: as it came)."""
        if self._typing():
            return
        column = self._table.column_key
        if self._base != "table" or column is None:
            self.app.bell()
            return
        self._sort(column)

    def _sort(self, column: str) -> None:
        self._table.sort_by(column)
        self._state_changed()  # the header says which column sorts the page

    @on(DataTable.HeaderSelected, "#value-table")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        key = event.column_key.value
        if key is not None:
            self._table.move_cursor(column=event.column_index, animate=False)
            self._sort(key)

    @on(DataTable.CellHighlighted, "#value-table")
    def _cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        if self.view == "table" and self.prompt is None:
            selected = self._table.selected if self.model.windowed else None
            self._lines.set_cursor(-1 if selected is None else selected)

    def jump_to(self, number: int) -> bool:
        """Show the page holding item `number` (1-based) with that item selected."""
        index = number - 1
        total = self.model.total
        if not self.model.windowed or not 0 <= index < total:
            self.notify(
                f"No item {number:,}: items are 1–{total:,}.",
                title="Value",
                severity="warning",
            )
            return False
        start = self.model.page_start(index)
        if start == self.model.offset and self.model.items:
            self._select(index - start, top=True)
            return True
        return self._go(start, index - start, top=True)

    @on(ValueLines.ItemClicked)
    def _clicked(self, event: ValueLines.ItemClicked) -> None:
        event.stop()
        if self.model.windowed:
            self._select(event.index)

    # ------------------------------------------------------------------ tree
    def action_toggle_tree(self) -> None:
        if self._typing():
            return
        if self.view == "tree":
            self._close_tree()
            self.focus()
            return
        model = self.model
        if model.shown is None or (model.windowed and not model.items):
            return
        selected = self._selected()
        if selected is None:
            return
        self._tree.show_value(*selected)
        self.view = "tree"
        self._tree.focus()

    def _close_tree(self) -> None:
        if self.in_tree:
            self._tree.clear()
            self.view = self._base

    def action_back(self) -> None:
        if self.prompt is not None:
            self._close_prompt()
        elif self.view == "tree":
            self._close_tree()
        elif self.view == "chart":
            self.view = self._base
        self.focus()

    # ------------------------------------------------------------------ chart
    def action_toggle_chart(self) -> None:
        """C: the page as a chart of a numeric column, or back to the lines or table."""
        if self._typing():
            return
        if self.view == "chart":
            self.view = self._base
            return
        self._chart.cycle_keys = (
            f"{self._key('value.scroll_left', 'left')}/{self._key('value.scroll_right', 'right')}"
        )
        self.view = "chart"
        self._draw_chart()

    def _draw_chart(self) -> None:
        model = self.model
        if model.windowed:
            span = (
                f"items {model.offset + 1:,}–{model.offset + len(model.items):,} of {model.total:,}"
            )
        else:
            span = "the whole value"
        prefer = self._table.column_key if self._base == "table" else None
        self._chart.show_page(model.shown, model.items, model.offset, span, prefer)

    def _key(self, binding_id: str, default: str) -> str:
        hints = getattr(self.app, "key_hints", None)
        return hints.keys(binding_id, first=True) if hints is not None else default

    # ------------------------------------------------------------------ copy
    def action_copy_item(self) -> None:
        if self._typing():
            return
        if self.view == "tree":
            node = self._tree.cursor_node
            data = node.data if node is not None else None
            if not isinstance(data, TreeItem):
                return
            copied: tuple[str, str] | None = (pretty(data.value), data.key)
        elif self._base == "table" and self.model.shown is not None and self.model.shown.inline:
            selected = self._selected()
            copied = (pretty(selected[1]), selected[0]) if selected else None
        else:
            copied = self.model.copy_item(self.cursor)
        self._copy(copied)

    def action_copy_page(self) -> None:
        if self._typing():
            return
        self._copy(self.model.copy_page())

    def _copy(self, copied: tuple[str, str] | None) -> None:
        if copied is None:
            return
        text, what = copied
        self.app.copy_to_clipboard(text)
        self.notify(
            f"Copied {what} ({text.count(chr(10)) + 1:,} lines).", title="Value", markup=False
        )

    # ------------------------------------------------------------------ prompt
    def _open_prompt(self, kind: Prompt, label: str, value: str) -> None:
        self._prompt_label.update(label)
        self._prompt_input.value = value
        self._prompt_input.cursor_position = len(value)
        self.prompt = kind
        self._prompt_input.focus()

    def _close_prompt(self) -> None:
        self.prompt = None

    def action_jump(self) -> None:
        if self._typing():
            return
        if self.model.windowed:
            self._open_prompt("jump", f"Go to item (1–{self.model.total:,}):", "")

    @on(Input.Submitted, "#value-prompt-input")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        kind, text = self.prompt, event.value.strip()
        self._close_prompt()
        (self._tree if self.view == "tree" else self).focus()
        if kind == "jump" and text:
            try:
                number = int(text.replace(",", "").replace("_", ""))
            except ValueError:
                self.notify(
                    f"Not an item number: {text!r}.",
                    title="Value",
                    severity="warning",
                    markup=False,
                )
                return
            self.jump_to(number)
        elif kind in ("export", "replace") and text:
            path = Path(text).expanduser()
            if path.exists() and not (kind == "replace" and path == self._replacing):
                # Replacing a file takes a second, deliberate enter on the same name.
                self._replacing = path
                self._open_prompt("replace", f"{path} exists: enter replaces it:", text)
                return
            self.export_to(path)

    def _run_keys(self) -> str:
        """The keys that run now (the app's keymap), for the empty panel's hint."""
        hints = getattr(self.app, "key_hints", None)
        return hints.keys("app.run", first=True) if hints is not None else "F5"

    # ------------------------------------------------------------------ export
    def action_export(self) -> None:
        if self.model.shown is not None:
            self._open_prompt(
                "export", "Export the whole value to:", self.model.default_export_path()
            )

    def export_to(self, path: Path) -> None:
        """Write the whole value to `path` in a thread, page by page, with a progress bar
        and a Cancel button; ExportFinished says how it went."""
        if self.export_progress.running:
            self.notify(
                "An export is running: wait for it, or cancel it (escape).",
                title="Export",
                severity="warning",
            )
            return
        try:
            job = self.model.export_job(path)
        except PageUnavailable as missing:
            self.notify(
                f"Cannot export: {missing}.", title="Export", severity="error", markup=False
            )
            return
        self.export_progress.start(job)

    def action_cancel_export(self) -> None:
        self.export_progress.cancel()

    @on(_ExportFinished)
    def _export_finished(self, event: _ExportFinished) -> None:
        if event.cancelled:
            self.notify(
                f"Export to {event.path} cancelled: nothing was written "
                "(a file of that name is as it was).",
                title="Export",
                markup=False,
            )
        elif event.error:
            self.notify(
                f"Export to {event.path} failed: {event.error}",
                title="Export",
                severity="error",
                markup=False,
            )
        else:
            self.notify(
                f"Exported {event.items:,} items to {event.path}", title="Export", markup=False
            )

    # ------------------------------------------------------------------ bindings
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_export":
            return self.export_progress.running and self.prompt is None
        if action == "back":
            return self.prompt is not None or self.view not in ("lines", "table")
        if self.prompt is not None or self.model.shown is None:
            return False
        if self.view == "tree":
            return action in {"toggle_tree", "copy_item", "copy_page", "export"}
        if self.view == "chart" and action not in CHART_ACTIONS:
            return False
        if action in {"next_page", "previous_page", "jump"}:
            return self.model.windowed
        if action == "toggle_table":
            return self._records is not None
        if action == "sort":
            return self.view == "table"
        return True
