"""The value window: what a person or a model sees of a run's value at once.

The window's rules. A value whose pretty-printed JSON (2-space indent) fits
200 lines is shown inline and whole. Otherwise the window holds the leading
whole items that fit the same budget, counted as

    $          an array's elements
    $.<field>  for an object, the elements of its largest top-level array,
               with the object's other fields whole in `rest`
    $entries   else an object's entries, as {key, value}
    $lines     a string's lines

The budget counts the lines of `rest`, two lines of brackets, and each
item's lines; a window always holds at least one item. So that `rest` can
never push a window over the budget, other fields that take more than half of
it (REST_LINES) stay out of the window: `rest_omitted` names them, and every
page `expand` returns carries them whole in its `rest`. A string is measured
by its own lines (its JSON is one line however long it is).

The whole value is kept by item, in chunks of CHUNK_ITEMS, so `expand` can
page through it later without running the snippet again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .nesting import MAX_DEPTH, ValueTooDeep, check_depth, key_step, loads, path_in_text

BUDGET_LINES = 200
REST_LINES = BUDGET_LINES // 2  # at most this much of the window for an object's other fields
CHUNK_ITEMS = 1000


def pretty_lines(value: Any, cap: int = 1 << 62) -> int:
    """Lines of `json.dumps(value, indent=2)`, counting no further than `cap`.

    A scalar or an empty container is one line; a non-empty container is its
    opening and closing lines plus its members' lines."""
    count = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if v:
                count += 2
                stack.extend(v.values())
            else:
                count += 1
        elif isinstance(v, list):
            if v:
                count += 2
                stack.extend(v)
            else:
                count += 1
        else:
            count += 1
        if count > cap:
            return count
    return count


def field_path(key: str) -> str:
    return "$" + key_step(key)


def largest_array_field(obj: dict[str, Any]) -> str | None:
    """The key of the object's largest top-level array (the first, on a tie)."""
    best: str | None = None
    size = -1
    for key, v in obj.items():
        if isinstance(v, list) and len(v) > size:
            best, size = key, len(v)
    return best


@dataclass
class Itemized:
    """A value seen as items: where they live, the items, and the rest."""

    path: str
    items: list[Any]
    rest: dict[str, Any] | None = None


def itemize(value: Any) -> Itemized:
    """The items of a value by the window's rules (a scalar is one item)."""
    if isinstance(value, list):
        return Itemized("$", value)
    if isinstance(value, dict):
        key = largest_array_field(value)
        if key is not None:
            rest = {k: v for k, v in value.items() if k != key}
            return Itemized(field_path(key), value[key], rest)
        return Itemized("$entries", [{"key": k, "value": v} for k, v in value.items()])
    if isinstance(value, str):
        return Itemized("$lines", value.split("\n"))
    return Itemized("$", [value])


def fits_inline(value: Any) -> bool:
    if isinstance(value, str):
        return value.count("\n") + 1 <= BUDGET_LINES
    return pretty_lines(value, BUDGET_LINES) <= BUDGET_LINES


def shown_rest(rest: dict[str, Any] | None) -> tuple[dict[str, Any] | None, list[str] | None]:
    """The other fields as the window shows them: whole, or (over REST_LINES) only named."""
    if rest is None or pretty_lines(rest, REST_LINES) <= REST_LINES:
        return rest, None
    return None, list(rest)


def leading_items(items: Iterable[Any], rest: dict[str, Any] | None) -> list[Any]:
    """The leading whole items that fit the budget (always at least one)."""
    budget = BUDGET_LINES - 2 - (pretty_lines(rest, BUDGET_LINES) if rest else 0)
    shown: list[Any] = []
    used = 0
    for item in items:
        lines = pretty_lines(item, BUDGET_LINES)
        if shown and used + lines > budget:
            break
        shown.append(item)
        used += lines
        if used >= budget:
            break
    return shown


def chunk_texts(items: list[Any]) -> list[str]:
    return [
        json.dumps(items[i : i + CHUNK_ITEMS], ensure_ascii=False)
        for i in range(0, len(items), CHUNK_ITEMS)
    ]


@dataclass
class Window:
    """How a value is shown, and how it is stored for paging."""

    inline: bool
    value: Any
    path: str
    items: list[Any]
    rest: dict[str, Any] | None  # all the other fields (stored, and returned by expand)
    shown: int
    total: int
    chunks: list[str] = field(default_factory=list, repr=False)  # JSON arrays of CHUNK_ITEMS items
    window_rest: dict[str, Any] | None = None  # the other fields the window itself shows
    rest_omitted: list[str] | None = None  # the ones it leaves out (too long), by name


def window_of_value(value: Any) -> Window:
    """The window of a value that arrived whole (as decoded JSON)."""
    itemized = itemize(value)
    total = len(itemized.items)
    chunks = chunk_texts(itemized.items)
    if fits_inline(value):
        return Window(True, value, itemized.path, [], itemized.rest, total, total, chunks)
    window_rest, omitted = shown_rest(itemized.rest)
    shown = leading_items(itemized.items, window_rest)
    return Window(
        False,
        None,
        itemized.path,
        shown,
        itemized.rest,
        len(shown),
        total,
        chunks,
        window_rest,
        omitted,
    )


def _levels_above(path: str) -> int:
    """Levels of the whole value around an item of a large value at `path`:
    its array, and the object that holds the array."""
    return 1 if path in ("$", "$lines", "$entries") else 2


def load_chunk(text: str, path: str, offset: int) -> list[Any]:
    """A chunk's items (the first is item `offset` of the value at `path`),
    refused with ValueTooDeep if one nests too deep for json itself to read."""
    try:
        items: list[Any] = json.loads(text)
        return items
    except RecursionError:
        inner = path_in_text(text, MAX_DEPTH - _levels_above(path) + 1)
        raise ValueTooDeep(_item_path(inner, path, offset)) from None


def check_items(items: list[Any], path: str, offset: int, text: str | None = None) -> None:
    """Raise ValueTooDeep if an item of a large value (at `path`, from `offset`)
    makes the whole value nest more than MAX_DEPTH levels."""
    try:
        # The items' list stands for the array they are in.
        check_depth(items, MAX_DEPTH - _levels_above(path) + 1, text=text)
    except ValueTooDeep as deep:
        raise ValueTooDeep(_item_path(deep.path, path, offset)) from None


def _item_path(inner: str, path: str, offset: int) -> str:
    """A path `$[k]...` in a chunk or page that starts at item `offset`, as a path in the value."""
    k, _, below = inner[2:].partition("]")
    return f"{path}[{offset + int(k)}]{below}"


def window_of_chunks(path: str, total: int, chunks: list[str], rest_text: str | None) -> Window:
    """The window of a large value the guest sent as chunks of items.

    Only the first chunk is decoded: a window never holds more than
    BUDGET_LINES items, and a chunk holds CHUNK_ITEMS."""
    rest = loads(rest_text) if rest_text else None
    first = load_chunk(chunks[0], path, 0) if chunks else []
    check_items(first, path, 0, chunks[0] if chunks else None)  # the others as they are read
    window_rest, omitted = shown_rest(rest)
    shown = leading_items(first, window_rest)
    return Window(False, None, path, shown, rest, len(shown), total, chunks, window_rest, omitted)
