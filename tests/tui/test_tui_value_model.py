"""The value panel's model without an app: pages, item paths, copy and export text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from run_repl.sandbox.result import RunResult, ValueWindow
from run_repl.sandbox.wire.result_store import Page, ResultRefNotFound
from run_repl.tui.components.value.model import (
    FIRST_PAGE_ONLY,
    GONE,
    PAGE_ITEMS,
    PageUnavailable,
    Shown,
    ValuePages,
    value_size,
)

REF = "res_00ff"


class ListPager:
    """`runner.expand` over a list; `gone` makes the ref unknown, as an expired result."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.gone = False

    def __call__(self, ref: str, offset: int, limit: int) -> Page:
        if self.gone or ref != REF:
            raise ResultRefNotFound(ref)
        part = self.items[offset : offset + limit]
        return Page(
            ref=ref,
            path="$",
            offset=offset,
            items=part,
            total=len(self.items),
            has_more=offset + len(part) < len(self.items),
        )


def stored(envelope: dict[str, Any]) -> RunResult:
    """A result as the history keeps it (a dict), read back as the app does."""
    return RunResult.model_validate(envelope)


def windowed(count: int, first: int = 49, path: str = "$") -> tuple[ValuePages, ListPager]:
    items = [{"i": i} for i in range(count)]
    pager = ListPager(items)
    result = RunResult(
        status="ok",
        value_ref=REF,
        total=count,
        value_window=ValueWindow(path=path, items=items[:first]),
    )
    pages = ValuePages()
    pages.set(Shown.from_result(result), pager)
    return pages, pager


def test_pages_are_the_window_then_page_items_at_a_time() -> None:
    pages, _ = windowed(1000)
    assert pages.windowed and pages.total == 1000 and len(pages.items) == 49
    assert pages.next_start == 49
    assert [pages.page_start(i) for i in (0, 48, 49, 148, 149, 999)] == [0, 0, 49, 49, 149, 949]
    pages.show(49, pages.read(49))
    assert pages.items[0] == {"i": 49} and len(pages.items) == PAGE_ITEMS
    assert pages.previous_start == 0 and pages.next_start == 149
    pages.show(949, pages.read(949))
    assert pages.next_start is None and len(pages.items) == 51


def test_item_numbers_and_paths() -> None:
    pages, _ = windowed(1000)
    pages.show(49, pages.read(49))
    assert pages.number(0) == 50 and pages.number(100) is None
    assert pages.item_path(1) == "$[50]"
    assert pages.selected_value(1) == {"i": 50}


def test_a_gone_ref_and_a_first_page_only_say_why() -> None:
    pages, pager = windowed(1000)
    pager.gone = True
    with pytest.raises(PageUnavailable, match="no longer stored"):
        pages.read(49)
    assert pages.notice == GONE and pages.gone
    with pytest.raises(PageUnavailable):
        pages.export_job(Path("x.json"))
    pages.set(pages.shown, None)
    with pytest.raises(PageUnavailable):
        pages.read(49)
    assert pages.notice == FIRST_PAGE_ONLY


def test_inline_values_entries_and_lines() -> None:
    inline = ValuePages()
    inline.set(
        Shown.from_result(stored({"status": "ok", "value": {"a": 1}, "value_kind": "object"})), None
    )
    assert not inline.windowed and inline.copy_item(0) == ('{\n  "a": 1\n}', "the value")
    entries = ValuePages()
    entries.set(
        Shown.from_result(
            stored(
                {
                    "status": "ok",
                    "value_ref": REF,
                    "total": 2,
                    "value_window": {"path": "$entries", "items": [{"key": "a b", "value": 1}]},
                }
            )
        ),
        None,
    )
    assert entries.item_path(0) == '$["a b"]'
    assert entries.copy_item(0) == ('{\n  "a b": 1\n}', "item 1")
    lines = ValuePages()
    lines.set(
        Shown.from_result(
            stored(
                {
                    "status": "ok",
                    "value_ref": REF,
                    "total": 2,
                    "value_window": {"path": "$lines", "items": ["one", "two"]},
                }
            )
        ),
        None,
    )
    assert lines.item_path(1) == "line 2"
    assert lines.copy_page() == ("one\ntwo", "items 1–2")
    assert lines.default_export_path() == "./value-00ff.txt"


def test_an_export_job_streams_every_page_to_the_file(tmp_path: Path) -> None:
    pages, _ = windowed(1234)
    target = tmp_path / "out.json"
    assert pages.export_job(target).run() == 1234
    assert json.loads(target.read_text()) == [{"i": i} for i in range(1234)]
    assert not (tmp_path / "out.json.part").exists()


def test_a_cancelled_export_leaves_no_file(tmp_path: Path) -> None:
    pages, _ = windowed(5000)
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError, match="cancelled"):
        pages.export_job(target).run(lambda: True)
    assert list(tmp_path.iterdir()) == []


def test_the_status_bar_names_the_value_by_its_shape() -> None:
    def ok(**fields: Any) -> RunResult:
        return RunResult(status="ok", **fields)

    assert value_size(ok(value={"a": 1, "b": 2}, value_kind="object")) == "value: 2 keys"
    assert value_size(ok(value={"a": 1}, value_kind="object")) == "value: 1 key"
    assert value_size(ok(value=[1, 2, 3], value_kind="array")) == "value: 3 items"
    assert value_size(ok(value="a\nb", value_kind="string")) == "value: 2 lines"
    assert value_size(ok(value=7, value_kind="number")) == "value: number"
    assert value_size(ok(value=None, value_kind="undefined")) == "value: undefined"
    rows = ok(value_ref=REF, total=5000, value_window=ValueWindow(path="$.rows", items=[1]))
    assert value_size(rows) == "value: 5,000 items in $.rows"
    entries = ok(value_ref=REF, total=300, value_window=ValueWindow(path="$entries", items=[]))
    assert value_size(entries) == "value: 300 keys"
