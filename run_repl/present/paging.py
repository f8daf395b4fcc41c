"""Paging a big value by item: one model for the CLI, the line REPL and the IDE.

A windowed result shows its first items; the whole value stays in the store
under `value_ref`, and `runner.expand(ref, offset, limit)` returns any slice.
Two numberings meet here, and this module says both the same way everywhere:
people read items numbered from 1 (`items 11–20 of 500`), commands take
offsets counted from 0 (`--offset 20` is item 21), and a hint that gives a
command names the item it starts at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..sandbox.result import RunResult
from ..sandbox.wire.nesting import ValueTooDeep
from ..sandbox.wire.result_store import MAX_PAGE, Page, ResultRefNotFound
from . import formats
from .styled import Line, line, styled

GONE = "this result is no longer stored: run the snippet again"
FIRST_PAGE_ONLY = "only the first page was stored: run the snippet again for more"


class Expander(Protocol):
    """What reads a stored value: `Runner.expand`."""

    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page: ...


def items_header(path: str, offset: int, count: int, total: int) -> str:
    """`$.rows: items 11–20 of 500` (offset counts from 0, the text from 1)."""
    if count <= 0:
        return f"{path}: no items from item {offset + 1:,} (there are {total:,})"
    if count == 1:
        return f"{path}: item {offset + 1:,} of {total:,}"
    return f"{path}: items {offset + 1:,}–{offset + count:,} of {total:,}"


def item_lines(item: Any, path: str) -> list[str]:
    """The lines an item shows as: pretty JSON, an entry as `"key": value`, a text line as is."""
    if path == "$lines":
        return [item if isinstance(item, str) else formats.json_text(item)]
    if path == "$entries" and isinstance(item, dict) and "key" in item:
        lines = formats.pretty_json(item.get("value")).split("\n")
        lines[0] = f"{formats.json_text(item['key'])}: {lines[0]}"
        return lines
    return formats.pretty_json(item).split("\n")


def _field_key(path: str) -> str | None:
    """The key of `$.rows` or `$["odd key"]`."""
    if path.startswith("$."):
        return path[2:]
    if path.startswith("$[") and path.endswith("]"):
        try:
            key = json.loads(path[2:-1])
        except ValueError:
            return None
        return key if isinstance(key, str) else None
    return None


def value_document(result: RunResult) -> tuple[Any] | None:
    """The value as far as the result holds it, in the value's own shape, or None
    when there is no value (status not ok, or undefined).

    Inline: the value. Windowed: an array's first elements; the object with its
    largest array cut to the window (`rest` holds the other fields); the first
    entries of an object; the first lines of a string."""
    if result.status != "ok":
        return None
    window = result.value_window
    if window is None:
        return None if result.value_kind == "undefined" else (result.value,)
    if window.path == "$entries":
        return ({e["key"]: e.get("value") for e in window.items if isinstance(e, dict)},)
    if window.path == "$lines":
        return ("\n".join(str(x) for x in window.items),)
    key = _field_key(window.path)
    if key is not None:
        return ({**(window.rest or {}), key: window.items},)
    return (window.items,)


@dataclass
class PageRead:
    """What reading a page gave: its items, or why there are none (`problem`)."""

    offset: int
    items: list[Any]
    total: int
    problem: str | None = None


@dataclass
class ValuePager:
    """A stored value's pages: the window's items first, then `page_size` at a time.

    Going forward, back or straight to an item always meets the same pages, so
    page 1 is what the run showed and `next` continues with no gap or overlap."""

    ref: str | None  # None: nothing beyond the first page was stored
    path: str
    total: int
    first_items: list[Any] = field(default_factory=list)
    page_size: int = 100
    rest: dict[str, Any] | None = None
    next_offset: int = 0  # the first item not shown yet
    gone: bool = False  # the store no longer has the value

    @classmethod
    def of(cls, result: RunResult, page_size: int | None = None) -> ValuePager | None:
        """The pager of an ok result whose value is stored by item, else None.
        `page_size` defaults to the window's size, at most MAX_PAGE."""
        if result.status != "ok" or result.total is None:
            return None
        window = result.value_window
        if not result.value_ref and window is None:
            return None
        first = list(window.items) if window is not None else []
        shown = result.shown if result.shown is not None else len(first) or result.total
        size = page_size or min(max(shown, 1), MAX_PAGE)
        return cls(
            ref=result.value_ref,
            path=window.path if window is not None else "$",
            total=result.total,
            first_items=first,
            page_size=max(1, min(size, MAX_PAGE)),
            rest=window.rest if window is not None else None,
            next_offset=shown,
        )

    @property
    def has_more(self) -> bool:
        return self.next_offset < self.total

    @property
    def first_size(self) -> int:
        return len(self.first_items) or self.page_size

    @property
    def pages(self) -> int:
        """How many pages there are (the first page, then `page_size` at a time)."""
        first = min(self.first_size, self.total)
        return 1 + max(0, -(-(self.total - first) // self.page_size))

    def page_start(self, index: int) -> int:
        """The offset of the page that holds item `index` (counted from 0)."""
        first = self.first_size
        if index < first:
            return 0
        return first + (index - first) // self.page_size * self.page_size

    def page_offset(self, number: int) -> int:
        """The offset of page `number` (counted from 1)."""
        return 0 if number <= 1 else self.first_size + (number - 2) * self.page_size

    def page_number(self, offset: int) -> int:
        """The number (from 1) of the page that starts at or holds `offset`."""
        first = self.first_size
        return 1 if offset < first else 2 + (offset - first) // self.page_size

    def page_length(self, offset: int) -> int:
        return self.first_size if offset == 0 else self.page_size

    def read(self, expander: Expander | None, offset: int, limit: int | None = None) -> PageRead:
        """Items from `offset` (the page's own length unless `limit`); marks the
        pager gone when the store has lost the value, and moves `next_offset`."""
        limit = self.page_length(offset) if limit is None else limit
        if offset == 0 and self.first_items and limit <= len(self.first_items):
            items = self.first_items[:limit]
        elif self.gone or self.ref is None or expander is None:
            return PageRead(offset, [], self.total, GONE if self.gone else FIRST_PAGE_ONLY)
        else:
            try:
                page = expander.expand(self.ref, offset, min(limit, MAX_PAGE))
            except ResultRefNotFound:
                self.gone = True
                return PageRead(offset, [], self.total, GONE)
            except ValueTooDeep as deep:
                return PageRead(offset, [], self.total, deep.message)
            self.total = page.total
            items = page.items
        self.next_offset = offset + len(items)
        return PageRead(offset, items, self.total)

    def page_lines(self, read: PageRead) -> list[Line]:
        """A page for reading: its header, `rest` on the first page, its items."""
        if read.problem:
            return [styled("warn", read.problem)]
        out = [styled("dim", items_header(self.path, read.offset, len(read.items), read.total))]
        if read.offset == 0 and self.rest:
            out.append(line(("dim", "rest: "), formats.json_text(self.rest)))
        for item in read.items:
            out += [line(t) for t in item_lines(item, self.path)]
        return out


def expand_lines(page: Page) -> list[Line]:
    """`run-repl expand`'s text: header, `rest` on the first page, the items, and
    the command for the next page."""
    out = [styled("dim", items_header(page.path, page.offset, len(page.items), page.total))]
    if not page.items and page.total:
        out.append(
            styled(
                "hint",
                f"offsets count from 0: the last item, {page.total:,}, is --offset {page.total - 1}",
            )
        )
    if page.rest and page.offset == 0:
        out.append(line(("dim", "rest: "), formats.json_text(page.rest)))
    for item in page.items:
        out += [line(t) for t in item_lines(item, page.path)]
    end = page.offset + len(page.items)
    if page.has_more and end < page.total:
        out.append(
            styled(
                "dim",
                f"… {page.total - end:,} more from item {end + 1:,}: "
                f"run-repl expand {page.ref} --offset {end}",
            )
        )
    return out
