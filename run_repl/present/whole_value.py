"""A stored value written out whole, page by page from the store: the IDE's export and
`run-repl run > file` write it this way, so memory stays flat whatever its size.

Items are written as they come, one a line, in the shape they were cut from:
`$` an array, `$.<field>` the object (its other fields first) with that array,
`$entries` an object, `$lines` the text (a JSON string when `as_json`). The
closing bracket is written only after the last item, so a stream that fails
part way leaves a document no JSON reader takes for the whole value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice, repeat
from typing import Any, Protocol

from ..sandbox.wire.result_store import MAX_PAGE, Page

Pager = Callable[[str, int, int], Page]
"""`runner.expand(ref, offset, limit)`: items [offset, offset + limit) of a stored value."""


class Sink(Protocol):
    """Where a value is written: a text file, stdout, or a sanitizing stream."""

    def write(self, text: str, /) -> object: ...


def array_field(path: str) -> str | None:
    """The field name of a `$.<field>` or `$["<field>"]` path, else None."""
    if path.startswith("$."):
        return path[2:]
    if path.startswith('$["') and path.endswith('"]'):
        return json.loads(path[2:-1])
    return None


def _c_encoder() -> Callable[[Any, int], Any] | None:
    """The C encoder `json.dumps(value, ensure_ascii=False)` builds for every value, built
    once: a million items spend more time building it than encoding. None where this
    Python has none, or it does not write what json.dumps writes."""
    try:
        from json.encoder import (  # type: ignore[attr-defined]  # C accelerator, not in the stubs
            c_make_encoder,
            encode_basestring,
        )

        if c_make_encoder is None:
            return None
        made = c_make_encoder(
            None,
            json.JSONEncoder().default,
            encode_basestring,
            None,
            ": ",
            ", ",
            False,
            False,
            True,
        )
        probe = [{"a": [1, 2.5, None, "é\u202e"], "b": {"c": True}}, "x", 3, -0.0]
        same = all("".join(made(v, 0)) == json.dumps(v, ensure_ascii=False) for v in probe)
        return made if same else None
    except (ImportError, TypeError, ValueError):
        return None


_MADE = _c_encoder()


def encode_items(values: list[Any]) -> list[str]:
    """Each value as one-line JSON, characters as they are (`json.dumps(v, ensure_ascii=False)`)."""
    if _MADE is not None:
        return list(map("".join, map(_MADE, values, repeat(0))))
    return [json.dumps(v, ensure_ascii=False) for v in values]


def dumps(value: Any) -> str:
    return encode_items([value])[0]


def _write_joined(out: Sink, pages: Iterable[Iterable[str]], sep: str) -> None:
    """Write every page's pieces with `sep` between them, a page at a time."""
    first = True
    for pieces in pages:
        text = sep.join(pieces)
        if text or not first:  # an empty page adds nothing
            out.write(text if first else sep + text)
            first = False


def write_pages(
    out: Sink,
    path: str,
    rest: dict[str, Any] | None,
    pages: Iterable[list[Any]],
    *,
    as_json: bool = True,
) -> int:
    """Write a value from its pages of items, in the shape they were cut from; returns
    the item count. Pages taken before a failure of `pages` are written before it propagates."""
    count = 0

    def counted(pieces: Callable[[list[Any]], Iterable[str]]) -> Iterator[Iterable[str]]:
        nonlocal count
        for page in pages:
            if page:
                count += len(page)
                yield pieces(page)

    if path == "$lines":
        if not as_json:
            _write_joined(out, counted(lambda p: map(str, p)), "\n")
            return count
        out.write('"')
        _write_joined(
            out, counted(lambda p: (t[1:-1] for t in encode_items(list(map(str, p))))), "\\n"
        )
        out.write('"\n')
        return count
    field = array_field(path)
    if field is not None:
        out.write("{\n  ")
        for key, value in (rest or {}).items():
            out.write(f"{dumps(key)}: {dumps(value)},\n  ")
        out.write(f"{dumps(field)}: [\n    ")
        _write_joined(out, counted(encode_items), ",\n    ")
        out.write("\n  ]\n}\n")
        return count
    if path == "$entries":

        def entries(page: list[Any]) -> Iterable[str]:
            keys = encode_items([item["key"] for item in page])
            values = encode_items([item.get("value") for item in page])
            return map(": ".join, zip(keys, values, strict=True))

        out.write("{\n  ")
        _write_joined(out, counted(entries), ",\n  ")
        out.write("\n}\n")
        return count
    out.write("[\n  ")
    _write_joined(out, counted(encode_items), ",\n  ")
    out.write("\n]\n")
    return count


def write_value(
    out: Sink,
    path: str,
    rest: dict[str, Any] | None,
    items: Iterator[Any],
    *,
    as_json: bool = True,
) -> int:
    """`write_pages` for items one by one (taken MAX_PAGE at a time)."""
    pages = iter(lambda: list(islice(items, MAX_PAGE)), [])
    return write_pages(out, path, rest, pages, as_json=as_json)


def stored_pages(pager: Pager, ref: str) -> Iterator[list[Any]]:
    """Every item of a stored value, a page of MAX_PAGE at a time."""
    offset = 0
    while True:
        page = pager(ref, offset, MAX_PAGE)
        if page.items:
            yield page.items
        offset += len(page.items)
        if not page.has_more or not page.items:
            return


def pages_of(pager: Pager, ref: str) -> Iterator[Any]:
    """Every item of a stored value, fetched MAX_PAGE at a time."""
    return chain.from_iterable(stored_pages(pager, ref))
