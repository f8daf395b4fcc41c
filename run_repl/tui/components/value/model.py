"""The value panel's model: which items of a run's value are on the page, and the text
of items to show, copy and export. Pure: no widget, tested without an app.

A windowed value can hold a million items: the model keeps only the page on
the screen and asks the run's pager (`Runner.expand`) for the next slice by
offset. Pages are the window's first items, then PAGE_ITEMS at a time, so going
forward, back or straight to an item always meets the same pages.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....present.export import Progress, Source, export
from ....present.formats import plural, pretty_json
from ....present.paging import FIRST_PAGE_ONLY, GONE, ValuePager, item_lines
from ....present.whole_value import Pager, stored_pages
from ....sandbox.result import RunResult
from ....sandbox.wire.result_store import Page
from ....sandbox.wire.value_window import field_path, itemize

PAGE_ITEMS = 100
# The item lines, JSON text and the words for what is missing are present/'s, as the
# CLI and the line REPL say them.
pretty = pretty_json


def value_size(result: RunResult) -> str:
    """The status bar's word for an ok result's value: `value: 7 keys`, `value: 5,000 items`,
    `value: 120 lines`, `value: string`."""
    window = result.value_window
    value = result.value
    if result.value_kind == "undefined":
        return "value: undefined"
    if window is not None:
        total = result.total or len(window.items)
        if window.path == "$entries":
            return f"value: {plural(total, 'key')}"
        if window.path == "$lines":
            return f"value: {plural(total, 'line')}"
        if window.path != "$":
            return f"value: {plural(total, 'item')} in {window.path}"
        return f"value: {plural(total, 'item')}"
    if isinstance(value, dict):
        return f"value: {plural(len(value), 'key')}"
    if isinstance(value, list):
        return f"value: {plural(len(value), 'item')}"
    if isinstance(value, str) and "\n" in value:
        return f"value: {plural(value.count(chr(10)) + 1, 'line')}"
    return f"value: {result.value_kind or type(value).__name__}"


def page_lines(items: list[Any], path: str) -> tuple[list[str], list[int], list[int]]:
    """A page as lines: each line's text, the item it belongs to, and each item's first line.

    `starts` ends with one more entry (the line count), so item i spans
    lines starts[i] to starts[i + 1]."""
    texts: list[str] = []
    owners: list[int] = []
    starts: list[int] = []
    for index, item in enumerate(items):
        lines = item_lines(item, path)
        starts.append(len(texts))
        texts.extend(lines)
        owners.extend([index] * len(lines))
    starts.append(len(texts))
    return texts, owners, starts


def item_value(item: Any, path: str) -> Any:
    """What a person means by an item: an entry is the one-key object it came from."""
    if path == "$entries" and isinstance(item, dict) and "key" in item:
        return {item["key"]: item.get("value")}
    return item


def copy_text(items: list[Any], path: str, *, whole: bool = True) -> str:
    """Items as text to copy: text lines as they are, else pretty JSON.

    A page (`whole`) is an array, or for entries one object; a single item is itself."""
    if path == "$lines":
        return "\n".join(i if isinstance(i, str) else json.dumps(i) for i in items)
    if path == "$entries":
        merged: dict[str, Any] = {}
        for item in items:
            merged.update(item_value(item, path))
        return pretty(merged)
    return pretty(items if whole else items[0])


@dataclass
class Shown:
    """What the panel shows, whatever it came from (a RunResult or a stored envelope)."""

    inline: bool
    value: Any
    kind: str | None
    ref: str | None
    path: str
    rest: dict[str, Any] | None
    first_items: list[Any]
    total: int

    @classmethod
    def from_result(cls, result: RunResult) -> Shown | None:
        """The value of an ok result (None for any other)."""
        if not result.ok:
            return None
        window = result.value_window
        if window is not None:
            return cls(
                inline=False,
                value=None,
                kind=result.value_kind,
                ref=result.value_ref,
                path=window.path or "$",
                rest=window.rest,
                first_items=list(window.items),
                total=int(result.total or len(window.items)),
            )
        return cls._inline(result.value, result.value_kind, result.value_ref)

    @classmethod
    def _inline(cls, value: Any, kind: str | None, ref: str | None) -> Shown:
        # The same path and count the engine pages an inline value by (`itemize`).
        itemized = itemize(value)
        return cls(
            inline=True,
            value=value,
            kind=kind,
            ref=ref,
            path=itemized.path,
            rest=None,
            first_items=[value],
            total=len(itemized.items),
        )


class PageUnavailable(Exception):
    """No items to show from an offset: the message says why (GONE, FIRST_PAGE_ONLY, an error)."""


class _Expand:
    """`runner.expand` (a function) as the pager's `Expander`."""

    def __init__(self, pager: Pager) -> None:
        self.pager = pager

    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page:
        return self.pager(ref, offset, limit)


@dataclass
class ValuePages:
    """The page of a value on the screen: its offset and items, the total, and what is missing.

    The arithmetic of pages (the window's items first, then PAGE_ITEMS at a time)
    and reading them is present/'s `ValuePager`, the one the CLI and the line REPL
    page with; this adds what the panel shows (an inline value, item paths, copies)."""

    shown: Shown | None = None
    pager: Pager | None = None
    offset: int = 0
    items: list[Any] = field(default_factory=list)
    notice: str | None = None
    """What the header says is missing (a gone ref, a first page only), if anything."""
    paging: ValuePager | None = None

    def set(self, shown: Shown | None, pager: Pager | None, notice: str | None = None) -> None:
        self.shown, self.pager, self.notice = shown, pager, notice
        self.offset, self.items = 0, [] if shown is None else shown.first_items
        self.paging = None
        if shown is not None and not shown.inline:
            self.paging = ValuePager(
                ref=shown.ref,
                path=shown.path,
                total=shown.total,
                first_items=shown.first_items,
                page_size=PAGE_ITEMS,
                rest=shown.rest,
                next_offset=len(shown.first_items),
                gone=notice == GONE,
            )

    @property
    def total(self) -> int:
        if self.paging is not None:
            return self.paging.total
        return 0 if self.shown is None else self.shown.total

    @property
    def gone(self) -> bool:
        return self.paging is not None and self.paging.gone

    def page_start(self, index: int) -> int:
        """The offset of the page holding item `index` (0-based)."""
        return 0 if self.paging is None else self.paging.page_start(index)

    def read(self, start: int) -> list[Any]:
        """The items of the page at `start` (raises PageUnavailable with the reason)."""
        if self.shown is None:
            raise PageUnavailable("no value")
        if self.paging is None:
            return self.shown.first_items
        expander = _Expand(self.pager) if self.pager is not None else None
        try:
            read = self.paging.read(expander, start)
        except Exception as error:  # any store failure is shown, never raised into the UI
            raise PageUnavailable(f"Could not read items from {start + 1:,}: {error}") from error
        if read.problem:
            self.notice = read.problem
            raise PageUnavailable(read.problem)
        if not read.items:
            raise PageUnavailable(f"no items from {start + 1:,}")
        return read.items

    def show(self, start: int, items: list[Any]) -> None:
        self.offset, self.items = start, items

    @property
    def windowed(self) -> bool:
        return self.shown is not None and not self.shown.inline

    @property
    def next_start(self) -> int | None:
        start = self.offset + len(self.items)
        return start if start < self.total else None

    @property
    def previous_start(self) -> int | None:
        return self.page_start(self.offset - 1) if self.offset > 0 else None

    def number(self, cursor: int) -> int | None:
        """The 1-based number of the item at `cursor` on the page (windowed values only)."""
        if not self.windowed or not 0 <= cursor < len(self.items):
            return None
        return self.offset + cursor + 1

    def item_path(self, cursor: int) -> str:
        """Where the item at `cursor` is in the value, as a person reads it."""
        shown = self.shown
        if shown is None or shown.inline or not 0 <= cursor < len(self.items):
            return "$"
        number = self.offset + cursor
        if shown.path == "$lines":
            return f"line {number + 1:,}"
        if shown.path == "$entries":
            item = self.items[cursor]
            return (
                field_path(str(item.get("key")))
                if isinstance(item, dict)
                else f"entry {number + 1:,}"
            )
        return f"{shown.path}[{number}]"

    def selected_value(self, cursor: int) -> Any:
        shown = self.shown
        if shown is None:
            return None
        if shown.inline:
            return shown.value
        if not 0 <= cursor < len(self.items):
            return None
        return item_value(self.items[cursor], shown.path)

    def copy_item(self, cursor: int) -> tuple[str, str] | None:
        """(text, what it is) of the item at `cursor`: the value itself when inline."""
        shown = self.shown
        if shown is None:
            return None
        if shown.inline:
            return pretty(shown.value), "the value"
        if not 0 <= cursor < len(self.items):
            return None
        text = copy_text([self.items[cursor]], shown.path, whole=False)
        return text, f"item {self.offset + cursor + 1:,}"

    def copy_page(self) -> tuple[str, str] | None:
        shown = self.shown
        if shown is None:
            return None
        if shown.inline:
            return pretty(shown.value), "the value"
        what = f"items {self.offset + 1:,}–{self.offset + len(self.items):,}"
        return copy_text(self.items, shown.path), what

    def default_export_path(self) -> str:
        shown = self.shown
        # The ref's first 8 hex digits name it (a name already taken asks before it is
        # replaced): short enough that the prompt shows it whole in a narrow panel.
        name = (shown.ref if shown and shown.ref else "value").removeprefix("res_")[:8]
        text = shown is not None and (shown.path == "$lines" and not shown.inline)
        return f"./value-{name}.{'txt' if text else 'json'}"

    def export_job(self, path: Path) -> ExportJob:
        """Everything an export needs (raises PageUnavailable when the value cannot be whole)."""
        shown = self.shown
        if shown is None:
            raise PageUnavailable("no value")
        if not shown.inline and shown.total > len(shown.first_items):
            if self.gone or self.pager is None or shown.ref is None:
                raise PageUnavailable(GONE if self.gone else FIRST_PAGE_ONLY)
        return ExportJob(path, shown, self.pager)


@dataclass
class ExportJob:
    """A whole value to write to a file, copied out of the panel so a thread can do it."""

    path: Path
    shown: Shown
    pager: Pager | None

    def run(
        self,
        cancelled: Callable[[], bool] = lambda: False,
        progress: Progress = lambda done, of: None,
    ) -> int:
        """Write the value to `path` (JSON, JSON Lines or CSV by its name; see
        present/export.py): items stream page by page through a temporary file beside it,
        renamed at the end. Returns the item count; raises ExportCancelled when
        `cancelled()` turns true (checked every page)."""
        return export(self.source, self.path, progress=progress, cancelled=cancelled)

    @property
    def source(self) -> Source:
        shown = self.shown
        if shown.inline:
            value = shown.value
            itemized = itemize(value)
            text_as_is = isinstance(value, str) and self.path.suffix.lower() != ".json"
            return Source(
                itemized.path,
                itemized.rest,
                len(itemized.items),
                lambda: iter([itemized.items]),
                text=value if text_as_is else pretty(value) + "\n",
            )
        if shown.total <= len(shown.first_items):
            first = shown.first_items
            return Source(shown.path, shown.rest, shown.total, lambda: iter([first]))
        pager, ref = self.pager, shown.ref
        assert pager is not None and ref is not None
        return Source(shown.path, shown.rest, shown.total, lambda: stored_pages(pager, ref))
