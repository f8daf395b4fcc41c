"""Exporting a stored value to JSON, JSON Lines or CSV: the content of each format, a
cancelled or failed export leaving no half file and an old file as it was, and the
one line an error is reported in."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from run_repl.present.export import (
    ExportCancelled,
    Source,
    describe_error,
    export,
    format_of,
)
from run_repl.sandbox.wire.value_window import itemize

PAGE = 1000


def source_of(value: Any, page: int = PAGE) -> tuple[Source, list[int]]:
    """A value as the store pages it; the list records each page read (its offset)."""
    itemized = itemize(value)
    items = itemized.items
    reads: list[int] = []

    def pages() -> Iterator[list[Any]]:
        for offset in range(0, len(items), page):
            reads.append(offset)
            yield items[offset : offset + page]

    return Source(itemized.path, itemized.rest, len(items), pages), reads


def only_file(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_the_format_is_the_names_ending() -> None:
    assert format_of(Path("a.JSONL")) == "jsonl" and format_of(Path("a.ndjson")) == "jsonl"
    assert format_of(Path("a.csv")) == "csv"
    assert format_of(Path("a.json")) == "json" and format_of(Path("a.txt")) == "json"


@pytest.mark.parametrize(
    "value",
    [
        [{"i": i, "s": "é" * (i % 3)} for i in range(2_500)],
        {"count": 2_500, "rows": [{"i": i} for i in range(2_500)]},
        {f"k{i}": {"i": i} for i in range(1_200)},
    ],
    ids=["array", "rows", "entries"],
)
def test_json_is_the_whole_value(value: Any, tmp_path: Path) -> None:
    source, reads = source_of(value)
    assert export(source, tmp_path / "v.json") == source.total
    assert json.loads((tmp_path / "v.json").read_text(encoding="utf-8")) == value
    assert len(reads) == -(-source.total // PAGE)  # one pass, a page at a time


def test_json_lines_one_item_a_line(tmp_path: Path) -> None:
    rows = [{"i": i, "tags": ["a"]} for i in range(2_500)]
    source, _ = source_of({"count": 2_500, "rows": rows})
    export(source, tmp_path / "rows.jsonl")
    lines = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == rows
    source, _ = source_of({"paid": 3, "open": 5})
    export(source, tmp_path / "counts.ndjson")
    lines = (tmp_path / "counts.ndjson").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"paid": 3}, {"open": 5}]
    source, _ = source_of("one\ntwo \u2028three")
    export(source, tmp_path / "text.jsonl")
    lines = (tmp_path / "text.jsonl").read_text(encoding="utf-8").split("\n")
    assert [json.loads(line) for line in lines if line] == ["one", "two \u2028three"]


def test_csv_header_is_the_union_of_keys_and_nested_values_are_json(tmp_path: Path) -> None:
    records: list[Any] = [{"id": i, "name": f"n{i}", "amount": i / 4} for i in range(2_500)]
    records[0]["note"] = None  # null: an empty cell
    records[2_400]["extra"] = {"a": [1, "x"]}  # a key first met on the last page
    records[2_401] = {"id": 2_401, "name": 'quote " and, comma\nnewline', "ok": True}
    source, reads = source_of(records)
    assert export(source, tmp_path / "v.csv") == 2_500
    assert len(reads) == 2 * 3  # the keys' pass, then the rows'
    with (tmp_path / "v.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "name", "amount", "note", "extra", "ok"]
    assert rows[1] == ["0", "n0", "0.0", "", "", ""]
    assert rows[2_401][4] == '{"a": [1, "x"]}'
    assert rows[2_402] == ["2401", 'quote " and, comma\nnewline', "", "", "", "true"]
    assert len(rows) == 2_501


def test_csv_of_numbers_and_of_an_objects_entries(tmp_path: Path) -> None:
    source, _ = source_of([1, 2.5, None, "x"])
    export(source, tmp_path / "n.csv")
    # A row of one empty cell is `""`: a blank line would be no row to a CSV reader.
    assert (tmp_path / "n.csv").read_text() == 'value\n1\n2.5\n""\nx\n'
    source, _ = source_of({"paid": 3, "open": {"n": 1}})
    export(source, tmp_path / "e.csv")
    assert (tmp_path / "e.csv").read_text() == 'key,value\npaid,3\nopen,"{""n"": 1}"\n'


def test_a_csv_cell_or_header_a_spreadsheet_would_run_as_a_formula_is_kept_as_text(
    tmp_path: Path,
) -> None:
    # A snippet's value is untrusted: opened in a spreadsheet, `=HYPERLINK(...)` or
    # `=cmd|...` would run. A leading quote keeps it text; numbers stay numbers.
    records: list[Any] = [
        {"=cmd|' /C calc'!A0": 1, "a": '=HYPERLINK("http://x")', "b": "+1+1", "c": -5},
        {"a": "-2+3", "b": "@SUM(A1)", "c": "\t=1", "d": "\r=1"},
        {"a": "plain - text", "b": "", "c": 2.5, "d": "a=b"},
    ]
    source, _ = source_of(records)
    export(source, tmp_path / "f.csv")
    with (tmp_path / "f.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["'=cmd|' /C calc'!A0", "a", "b", "c", "d"]
    assert rows[1] == ["1", '\'=HYPERLINK("http://x")', "'+1+1", "-5", ""]
    assert rows[2] == ["", "'-2+3", "'@SUM(A1)", "'\t=1", "'\r=1"]
    assert rows[3] == ["", "plain - text", "", "2.5", "a=b"]


@pytest.mark.parametrize("name", ["v.json", "v.jsonl", "v.csv"])
def test_cancel_leaves_nothing_and_the_old_file_as_it_was(name: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text("the old file\n")
    source, reads = source_of([{"i": i} for i in range(10_000)])
    with pytest.raises(ExportCancelled):
        export(source, tmp_path / name, cancelled=lambda: len(reads) >= 3)
    assert only_file(tmp_path) == [name]  # no temporary file left
    assert (tmp_path / name).read_text() == "the old file\n"


def test_a_failing_store_leaves_the_old_file_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "v.jsonl").write_text("old\n")

    def pages() -> Iterator[list[Any]]:
        yield [{"i": 1}] * PAGE
        raise ConnectionError("the store went away")

    with pytest.raises(ConnectionError):
        export(Source("$", None, 5_000, pages), tmp_path / "v.jsonl")
    assert only_file(tmp_path) == ["v.jsonl"]
    assert (tmp_path / "v.jsonl").read_text() == "old\n"


def unwritable(tmp_path: Path) -> Path:
    """A directory no one here can create a file in (root ignores permission bits)."""
    if os.geteuid() == 0:
        return Path("/sys")
    directory = tmp_path / "read-only"
    directory.mkdir()
    directory.chmod(0o555)
    return directory


def test_an_unwritable_directory_is_one_clear_line(tmp_path: Path) -> None:
    directory = unwritable(tmp_path)
    target = directory / "v.csv"
    source, _ = source_of([{"i": 1, "j": 2}])
    with pytest.raises(OSError) as raised:
        export(source, target)
    line = describe_error(raised.value, target)
    assert line == f"permission denied: cannot write in {directory}: choose another folder"
    assert not target.exists()
    assert "\n" not in line


def test_error_lines() -> None:
    target = Path("/data/v.json")
    full = OSError(errno.ENOSPC, "No space left on device")
    assert describe_error(full, target) == (
        "the disk is full (writing /data/v.json): free some space or choose another disk"
    )
    not_dir = NotADirectoryError(errno.ENOTDIR, "Not a directory", "/data/file/v.json")
    assert describe_error(not_dir, target).startswith("a part of the path is a file")
    assert describe_error(ValueError("bad\nsecond line"), target) == "ValueError: bad"


def test_progress_counts_to_the_end(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    source, _ = source_of(list(range(2_500)))
    export(source, tmp_path / "v.csv", progress=lambda done, of: seen.append((done, of)))
    assert seen[0] == (1_000, 5_000) and seen[-1] == (5_000, 5_000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert io.StringIO((tmp_path / "v.csv").read_text()).readline() == "value\n"
