"""Records as a table: when a value (or its `$.rows`) is an array of objects with mostly
the same keys, the value panel shows the page's records as rows and their keys as
columns (Textual's DataTable: a page holds at most a hundred rows, and sorting is
within the page, so nothing here needs a faster table).

The model (`Records`: which records, which columns, cell text, sort keys) is pure
and tested without an app; `RecordsTable` draws it and never takes the focus: the
value panel keeps the keys and moves its cursor.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.widgets import DataTable

from ....present import formats
from ...guest_text import safe_text
from .model import Shown

MIN_COLUMNS = 2
"""Records have a few fields: a list of one-key objects reads as well as JSON."""
MAX_COLUMNS = 40
COMMON = 0.5
"""A key is a column when at least this share of the records has it."""
MOSTLY = 0.6
"""...and the records are a table when their cells are at least this full."""
CELL_CHARS = 48  # a longer cell is cut on screen (copy, the tree and the detail are whole)
OTHER = "…"
"""The column of the keys that are not columns, for the records that have some."""


@dataclass(frozen=True)
class Records:
    """The records of a page (or of an inline value), and the columns they share."""

    rows: list[dict[str, Any]]
    columns: list[str]
    path: str
    """Where the records are in the value: `$`, `$.rows`."""
    first: int
    """The number (from 0) of the first record in that array."""
    other: bool
    """Some records have keys that are not columns (shown together in OTHER)."""

    def path_of(self, index: int) -> str:
        return f"{self.path}[{self.first + index}]"


def table_of(items: Sequence[Any], path: str, first: int = 0) -> Records | None:
    """`items` as records if they are objects with mostly the same keys, else None."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    rows: list[dict[str, Any]] = list(items)
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(row.keys())
    order: dict[str, None] = {}
    for row in rows:
        for key in row:
            order.setdefault(key, None)
    columns = [k for k in order if counts[k] >= COMMON * len(rows)][:MAX_COLUMNS]
    if len(columns) < MIN_COLUMNS:
        return None
    filled = sum(1 for row in rows for key in columns if key in row)
    if filled < MOSTLY * len(rows) * len(columns):
        return None
    chosen = set(columns)
    other = any(set(row) - chosen for row in rows)
    return Records(rows, columns, path, first, other)


def records_of(shown: Shown, items: Sequence[Any], offset: int) -> Records | None:
    """The records the panel can show as a table: a page of a windowed array (`$`) or
    of an object's array (`$.rows`); an inline array of objects, or an inline
    object's largest array of objects."""
    if shown.inline:
        value = shown.value
        if isinstance(value, list):
            return table_of(value, "$")
        if isinstance(value, dict):
            arrays = [(k, v) for k, v in value.items() if isinstance(v, list) and v]
            for key, array in sorted(arrays, key=lambda kv: -len(kv[1])):
                found = table_of(array, "$" + _member(key))
                if found is not None:
                    return found
        return None
    if shown.path in ("$entries", "$lines"):
        return None
    return table_of(items, shown.path, offset)


def _member(key: str) -> str:
    return f".{key}" if key.isidentifier() else f"[{json.dumps(key, ensure_ascii=False)}]"


def cell_text(value: Any, limit: int = CELL_CHARS) -> str:
    """A cell as a person reads it: text without quotes, numbers and literals as JSON,
    objects and arrays as one-line JSON, cut to `limit`."""
    if isinstance(value, str):
        text = value.replace("\n", "↵")
    elif value is None:
        text = "null"
    else:
        text = formats.json_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def other_text(row: dict[str, Any], columns: Sequence[str]) -> str:
    extra = {k: v for k, v in row.items() if k not in columns}
    return cell_text(extra) if extra else ""


def sort_key(value: Any) -> tuple[int, Any]:
    """Orders any JSON values: missing and null first, then booleans, numbers, text, the rest."""
    if value is _MISSING or value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int | float):
        return (2, value)
    if isinstance(value, str):
        return (3, value.casefold())
    return (4, formats.json_text(value))


_MISSING = object()


def sorted_rows(records: Records, column: str | None, reverse: bool) -> list[int]:
    """The order (indexes into `records.rows`) by `column`, or as they came (None)."""
    order = list(range(len(records.rows)))
    if column is None:
        return order
    return sorted(
        order,
        key=lambda i: sort_key(records.rows[i].get(column, _MISSING)),
        reverse=reverse,
    )


class RecordsTable(DataTable[Text], can_focus=False):
    """The records of the page: a row a record, numbered as its item; a column a key."""

    COMPONENT_CLASSES: ClassVar[set[str]] = DataTable.COMPONENT_CLASSES

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="cell", zebra_stripes=True, show_row_labels=True)
        self.records: Records | None = None
        self.sort_column: str | None = None
        self.sort_reverse = False
        self.order: list[int] = []
        self.first_number = 1

    def show(self, records: Records, *, first_number: int, keep_sort: bool = True) -> None:
        """Draw `records` (the first numbered `first_number`), sorted as before if asked."""
        column = self.cursor_column
        self.records, self.first_number = records, first_number
        if not keep_sort or self.sort_column not in records.columns:
            self.sort_column, self.sort_reverse = None, False
        self.clear(columns=True)
        for key in records.columns:
            self.add_column(self._label(key), key=key)
        if records.other:
            self.add_column(OTHER, key=OTHER)
        self.order = sorted_rows(records, self.sort_column, self.sort_reverse)
        for index in self.order:
            row = records.rows[index]
            cells = [self._cell(row.get(key, _MISSING)) for key in records.columns]
            if records.other:
                cells.append(Text(safe_text(other_text(row, records.columns)), style="dim"))
            self.add_row(*cells, key=str(index), label=Text(str(first_number + index), style="dim"))
        width = len(records.columns) + (1 if records.other else 0)
        self.move_cursor(row=0, column=min(column, max(width - 1, 0)), animate=False)

    def _label(self, key: str) -> Text:
        label = Text(safe_text(key), style="bold")
        if key == self.sort_column:
            label.append(" ↓" if self.sort_reverse else " ↑")
        return label

    @staticmethod
    def _cell(value: Any) -> Text:
        if value is _MISSING:
            return Text("")
        text = Text(safe_text(cell_text(value)), no_wrap=True, overflow="ellipsis")
        if value is None:
            text.stylize("dim italic")
        elif isinstance(value, bool):
            text.stylize("italic")
        elif isinstance(value, int | float):
            text.justify = "right"
        return text

    @property
    def selected(self) -> int | None:
        """The index (into the records) of the row under the cursor."""
        if self.records is None or not self.row_count:
            return None
        return self.order[self.cursor_row] if 0 <= self.cursor_row < len(self.order) else None

    def select(self, index: int) -> None:
        """Put the cursor on the row of record `index`, wherever sorting put it."""
        if index in self.order:
            self.move_cursor(row=self.order.index(index), animate=False)

    def sort_by(self, column: str) -> None:
        """Sort by `column`; again: the other way; a third time: as the records came."""
        if self.records is None or column not in self.records.columns:
            return
        selected = self.selected
        if self.sort_column != column:
            self.sort_column, self.sort_reverse = column, False
        elif not self.sort_reverse:
            self.sort_reverse = True
        else:
            self.sort_column, self.sort_reverse = None, False
        self.show(self.records, first_number=self.first_number)
        if selected is not None:
            self.select(selected)

    @property
    def column_key(self) -> str | None:
        """The key of the column under the cursor (None on the OTHER column)."""
        if self.records is None:
            return None
        columns = self.records.columns
        return columns[self.cursor_column] if 0 <= self.cursor_column < len(columns) else None
