"""The one pager: pages, offsets from 0 and numbers from 1, a value gone from the store."""

from __future__ import annotations

from typing import Any

from run_repl.present import ValuePager, expand_lines, item_lines, items_header, plain_lines
from run_repl.present.paging import FIRST_PAGE_ONLY, GONE
from run_repl.sandbox.result import RunResult, ValueWindow
from run_repl.sandbox.wire.nesting import MAX_DEPTH, ValueTooDeep
from run_repl.sandbox.wire.result_store import Page, ResultRefNotFound


class Store:
    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.reads: list[tuple[int, int]] = []
        self.lost = False
        self.too_deep: int | None = None

    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page:
        if self.lost:
            raise ResultRefNotFound(ref)
        if self.too_deep is not None and offset <= self.too_deep < offset + limit:
            raise ValueTooDeep(f"$[{self.too_deep}][0]")
        self.reads.append((offset, limit))
        chunk = self.items[offset : offset + limit]
        return Page(
            ref=ref,
            offset=offset,
            items=chunk,
            total=len(self.items),
            has_more=offset + len(chunk) < len(self.items),
            path="$",
        )


def result(shown: int, total: int, ref: str | None = "res_1") -> RunResult:
    return RunResult(
        status="ok",
        value_kind="array",
        value_ref=ref,
        shown=shown,
        total=total,
        value_window=ValueWindow(path="$", items=list(range(shown))),
    )


def test_headers_number_items_from_one() -> None:
    assert items_header("$", 0, 66, 300) == "$: items 1–66 of 300"
    assert items_header("$", 122, 1, 300) == "$: item 123 of 300"
    assert items_header("$", 400, 0, 300) == "$: no items from item 401 (there are 300)"


def test_pages_are_the_window_then_page_size_items() -> None:
    pager = ValuePager.of(result(66, 300))
    assert pager is not None and pager.page_size == 66 and pager.pages == 5
    assert [pager.page_offset(n) for n in (1, 2, 5)] == [0, 66, 264]
    assert pager.page_start(65) == 0 and pager.page_start(66) == 66 and pager.page_start(299) == 264
    assert pager.page_number(0) == 1 and pager.page_number(131) == 2 and pager.page_number(132) == 3


def test_a_page_size_apart_from_the_window() -> None:
    pager = ValuePager.of(result(30, 250), page_size=100)
    assert pager is not None
    assert pager.pages == 4  # 30, then 100, 100, 20
    assert [pager.page_offset(n) for n in (1, 2, 3, 4)] == [0, 30, 130, 230]
    assert pager.page_start(229) == 130


def test_reading_forward_has_no_gap_or_overlap() -> None:
    store = Store(list(range(300)))
    pager = ValuePager.of(result(66, 300))
    assert pager is not None and pager.has_more
    seen = list(pager.read(store, 0).items)  # the first page comes from the result itself
    assert store.reads == []
    while pager.has_more:
        seen += pager.read(store, pager.next_offset).items
    assert seen == list(range(300)) and not pager.has_more


def test_a_value_gone_from_the_store_says_so_once_and_stays_gone() -> None:
    store = Store(list(range(300)))
    pager = ValuePager.of(result(66, 300))
    assert pager is not None
    store.lost = True
    read = pager.read(store, 66)
    assert read.problem == GONE and pager.gone and read.items == []
    store.lost = False
    assert pager.read(store, 132).problem == GONE
    assert pager.read(store, 0).items == list(range(66))  # the first page is still at hand
    assert plain_lines(pager.page_lines(read)) == GONE


def test_first_page_only_when_the_value_was_not_stored() -> None:
    pager = ValuePager.of(result(66, 300, ref=None))
    assert pager is not None
    assert pager.read(Store([]), 66).problem == FIRST_PAGE_ONLY


def test_no_pager_for_errors_or_unstored_inline_values() -> None:
    assert ValuePager.of(RunResult(status="error")) is None
    assert ValuePager.of(RunResult(status="ok", value=1, value_kind="number")) is None


def test_item_lines_by_path() -> None:
    assert item_lines({"a": [1]}, "$") == ["{", '  "a": [', "    1", "  ]", "}"]
    assert item_lines({"key": "k", "value": {"x": 1}}, "$entries") == ['"k": {', '  "x": 1', "}"]
    assert item_lines("a line", "$lines") == ["a line"]


def test_expand_lines_say_both_numbers() -> None:
    page = Page(ref="res_9", offset=10, items=[10, 11], total=500, has_more=True, path="$")
    assert plain_lines(expand_lines(page)).splitlines() == [
        "$: items 11–12 of 500",
        "10",
        "11",
        "… 488 more from item 13: run-repl expand res_9 --offset 12",
    ]
    past = Page(ref="res_9", offset=500, items=[], total=500, has_more=False, path="$")
    assert plain_lines(expand_lines(past)).splitlines() == [
        "$: no items from item 501 (there are 500)",
        "offsets count from 0: the last item, 500, is --offset 499",
    ]


def test_a_page_with_an_item_too_deep_says_so_and_the_pager_goes_on() -> None:
    store = Store(list(range(300)))
    store.too_deep = 150
    pager = ValuePager.of(result(66, 300))
    assert pager is not None
    read = pager.read(store, 132)
    assert (
        read.items == [] and "$[150][0]" in read.problem and f"{MAX_DEPTH} levels" in read.problem
    )
    text = "".join(t for ln in pager.page_lines(read) for _, t in ln)  # shown, not raised
    assert "$[150][0]" in text
    assert pager.read(store, 198).items == list(range(198, 264))  # the next page reads
    assert not pager.gone
