"""A stored value exported to a file: JSON, JSON Lines or CSV, page by page from the
store, written to a temporary file beside the target and renamed over it at the end.

Memory stays flat whatever the size: a page (MAX_PAGE items) at a time is read,
encoded and written. A cancelled or failed export removes its temporary file, so
it leaves no half file and an old file of that name as it was.

The format is the file name's ending:
- `.json` (and any other ending): the value whole, in the shape it was cut from
  (`whole_value.write_pages`, the writer of `run-repl run > file`); text lines are
  the text itself unless the name ends `.json`.
- `.jsonl` / `.ndjson`: one JSON document a line, one an item: an array's items,
  an object's entries as `{"key": value}`, a text's lines as JSON strings. For an
  object cut at one of its arrays (`$.rows`) the lines are that array's items;
  the object's other fields are not in the file (the JSON export has them).
- `.csv` (RFC 4180: rows end CRLF): a row an item. The header is the union of the items' keys, in the order
  they first appear, found by a first pass over the stored items (a key first met
  on the last page still gets its column; the pass reads the store again, but
  holds only the keys). An item that is not an object is one cell, under `value`;
  an object's entries are `key`,`value`. A cell is text as it is, a number or
  true/false as JSON, an object or array as JSON, null or a missing key empty.
  A text cell or header that a spreadsheet would run as a formula (it starts with
  `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`, so it opens as
  the text it is: the value came from a snippet, and `=HYPERLINK(...)` must not run.
"""

from __future__ import annotations

import csv
import errno
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .whole_value import encode_items, write_pages

Format = Literal["json", "jsonl", "csv"]
PagesOf = Callable[[], Iterator[list[Any]]]
"""A fresh pass over the value's items, a page at a time (CSV takes two)."""
Progress = Callable[[int, int], None]
"""(done, of): items written so far (for CSV, read and written: two per item)."""

VALUE_COLUMN = "value"


class ExportCancelled(RuntimeError):
    """The person cancelled the export: nothing was written."""

    def __init__(self) -> None:
        super().__init__("export cancelled")


def format_of(target: Path) -> Format:
    suffix = target.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "json"


@dataclass
class Source:
    """What is exported: the shape the items were cut from, and how to read them."""

    path: str
    """`$`, `$.<field>`, `$entries` or `$lines` (as the store keeps values)."""
    rest: dict[str, Any] | None
    total: int
    pages: PagesOf
    text: str | None = None
    """A small value's own text (its JSON, or a string as it is), written as it is when
    the export is JSON (JSON Lines and CSV write its items)."""


def steps(source: Source, fmt: Format) -> int:
    """How many items the progress counts to: a CSV of more than a page reads them twice."""
    return source.total * 2 if fmt == "csv" else source.total


def export(
    source: Source,
    target: Path,
    *,
    progress: Progress = lambda done, of: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> int:
    """Write `source` to `target` in the format its name says; returns the item count.

    Raises ExportCancelled when `cancelled()` turns true (checked every page), or
    the error that stopped it; either way `target` is as it was."""
    fmt = format_of(target)
    of = steps(source, fmt)
    done = 0

    def counted(pages: Iterable[list[Any]]) -> Iterator[list[Any]]:
        nonlocal done
        for page in pages:
            if cancelled():
                raise ExportCancelled
            yield page
            done += len(page)
            progress(done, of)

    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    # Created with the mode any new file gets here (umask applies), and never over
    # an existing file: a name of the person's is never the temporary one.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "w", encoding="utf-8", newline="") as out:
            if fmt == "csv":
                columns = csv_columns(counted(source.pages()), source.path)
                count = write_csv(out, columns, counted(source.pages()), source.path)
            elif fmt == "jsonl":
                count = write_jsonl(out, counted(source.pages()), source.path)
            elif source.text is not None:
                out.write(source.text)
                count = source.total
            else:
                as_json = target.suffix.lower() == ".json"
                count = write_pages(
                    out, source.path, source.rest, counted(source.pages()), as_json=as_json
                )
            if cancelled():
                raise ExportCancelled
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    progress(of, of)
    return count


def jsonl_items(page: list[Any], path: str) -> list[Any]:
    if path == "$entries":
        return [{item["key"]: item.get("value")} for item in page]
    return page


def write_jsonl(out: Any, pages: Iterable[list[Any]], path: str) -> int:
    count = 0
    for page in pages:
        lines = encode_items(jsonl_items(page, path))
        out.write("\n".join(lines) + "\n")
        count += len(page)
    return count


def row_of(item: Any) -> dict[str, Any]:
    return item if isinstance(item, dict) else {VALUE_COLUMN: item}


def csv_columns(pages: Iterable[list[Any]], path: str) -> list[str]:
    """The union of the items' keys, in the order they first appear."""
    columns: dict[str, None] = {}
    for page in pages:
        for item in page:
            columns.update(dict.fromkeys(row_of(item)))
    return list(columns)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text(text: str) -> str:
    """`text` as a spreadsheet shows it, never run as a formula (OWASP's CSV injection)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return as_text(value)
    return encode_items([value])[0]  # a number, true/false, JSON: never read as a formula


def write_csv(out: Any, columns: list[str], pages: Iterable[list[Any]], path: str) -> int:
    # RFC 4180's CRLF: a cell holding a lone \r (or \n) is then quoted, so it stays one cell.
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([as_text(c) for c in columns])
    count = 0
    for page in pages:
        writer.writerows([cell(row_of(item).get(c)) for c in columns] for item in page)
        count += len(page)
    return count


_WORDS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOENT: "no such directory",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "that name is a directory",
    errno.ENAMETOOLONG: "the name is too long",
}


def describe_error(error: BaseException, target: Path) -> str:
    """One line saying why an export to `target` failed, and what to do."""
    if isinstance(error, OSError) and error.errno in _WORDS:
        words = _WORDS[error.errno]
        where = error.filename or target
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return f"{words} (writing {target}): free some space or choose another disk"
        if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return f"{words}: cannot write in {Path(where).parent}: choose another folder"
        return f"{words} ({where}): choose another file name"
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else 'no details'}"
