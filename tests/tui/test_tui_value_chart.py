"""The value panel's chart: what can be charted (numbers, records with a numeric column,
an object's counts) and why not, the key that shows it, the column chosen from the
header, paging like the table, and what it looks like."""

from __future__ import annotations

from typing import Any

import pytest
from test_tui_value_view import (
    SIZE,
    FakePager,
    Harness,
    run,
    screen_text,
    windowed,
    windowed_like_engine,
)
from textual_plotext import PlotextPlot

from run_repl.sandbox.result import RunResult
from run_repl.tui.components.value.chart import Chart, ChartPlot, NotChartable, chart_of
from run_repl.tui.components.value.model import Shown
from run_repl.tui.components.value.view import ValueView

STATUSES = ("paid", "open", "refunded")
ORDERS = [
    {"id": f"ord_{i:05d}", "status": STATUSES[i % 3], "amount": (i * 37) % 500 / 4, "qty": i % 7}
    for i in range(2_000)
]


def inline(value: Any) -> Shown:
    kinds = {list: "array", dict: "object", str: "string"}
    shown = Shown.from_result(RunResult(status="ok", value=value, value_kind=kinds[type(value)]))
    assert shown is not None
    return shown


def paged(items: list[Any], path: str = "$") -> Shown:
    shown = Shown.from_result(windowed(items, 10, path))
    assert shown is not None
    return shown


# ---------------------------------------------------------------------- what is chartable
def test_records_chart_their_numeric_columns_labelled_by_the_first_text_column() -> None:
    chart = chart_of(paged(ORDERS), ORDERS[100:200], 100)
    assert isinstance(chart, Chart)
    assert chart.columns == ["amount", "qty"]  # the header's numeric columns, in order
    assert chart.label_column == "id"
    assert chart.labels[0] == "ord_00100" and len(chart.labels) == 100
    assert chart.values["amount"][:2] == [ORDERS[100]["amount"], ORDERS[101]["amount"]]


def test_a_column_with_text_in_it_is_no_numeric_column_and_nulls_are_gaps() -> None:
    rows = [
        {"k": f"r{i}", "n": i, "mixed": i if i else "x", "gap": None if i % 2 else i}
        for i in range(6)
    ]
    chart = chart_of(inline(rows), [rows], 0)
    assert isinstance(chart, Chart)
    assert chart.columns == ["n", "gap"]
    labels, values = chart.points("gap")
    assert labels == ["r0", "r2", "r4"] and values == [0, 2, 4]


def test_numbers_are_labelled_by_their_item_numbers() -> None:
    numbers = [i * 0.5 for i in range(300)]
    chart = chart_of(paged(numbers), numbers[10:110], 10)
    assert isinstance(chart, Chart)
    assert chart.columns == ["value"] and chart.label_column is None
    assert chart.labels[:2] == ["11", "12"] and chart.values["value"][0] == 5.0


def test_an_objects_counts_chart_by_key() -> None:
    counts = {"paid": 12, "open": 5, "refunded": 1}
    chart = chart_of(inline(counts), [counts], 0)
    assert isinstance(chart, Chart)
    assert chart.labels == ["paid", "open", "refunded"] and chart.values["value"] == [12, 5, 1]
    per_status = {"paid": {"count": 12, "sum": 99.5}, "open": {"count": 5, "sum": 10}}
    chart = chart_of(inline(per_status), [per_status], 0)
    assert isinstance(chart, Chart)
    assert chart.columns == ["count", "sum"] and chart.labels == ["paid", "open"]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (["a", "b", "c"], "not all numbers"),
        ([True, False], "not all numbers"),
        ("one\ntwo", "text"),
        ("just text", "one string"),
        ([{"a": "x", "b": "y"}, {"a": "z", "b": "w"}], "no column of these records holds numbers"),
        ({"a": "x", "b": [1]}, "not numbers"),
    ],
)
def test_what_cannot_be_charted_says_why(value: Any, words: str) -> None:
    chart = chart_of(inline(value), [value], 0)
    assert isinstance(chart, NotChartable)
    assert words in chart.reason


# ---------------------------------------------------------------------- the panel
def bars(view: ValueView) -> list[float]:
    """The values of the bars the chart drew."""
    return view.chart.drawn[1]


async def test_shift_c_shows_the_chart_and_goes_back_to_the_table() -> None:
    result, pager = windowed_like_engine(ORDERS)
    app = Harness(result, pager)
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        assert view.in_table
        await pilot.press("C")
        await pilot.pause()
        assert view.in_chart and not view.in_table
        assert view.query_one(PlotextPlot).display and view.chart.reason is None
        text = screen_text(app)
        assert "amount by id · column 1 of 2 (left/right) · items 1–" in text and "█" in text
        shown = len(view.page_items)
        assert bars(view) == [o["amount"] for o in ORDERS[:shown]]
        assert view.query_one(ChartPlot).kind == "bars"
        await pilot.press("C")
        await pilot.pause()
        assert view.in_table and not view.in_chart
        await pilot.press("C", "escape")
        await pilot.pause()
        assert view.in_table


async def test_the_column_is_chosen_from_the_header() -> None:
    result, pager = windowed_like_engine(ORDERS)
    app = Harness(result, pager)
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        # The table's cursor on qty (the fourth column): the chart starts there.
        await pilot.press("right", "right", "right", "C")
        await pilot.pause()
        assert view.chart.column == "qty"
        await pilot.press("right")
        assert view.chart.column == "amount"
        assert "column 1 of 2" in screen_text(app)
        await pilot.press("left")
        await pilot.pause()
        assert view.chart.column == "qty" and "qty by id" in screen_text(app)
        shown = len(view.page_items)
        assert bars(view) == [o["qty"] for o in ORDERS[:shown]]


async def test_the_chart_pages_like_the_table() -> None:
    result, pager = windowed_like_engine(ORDERS)
    app = Harness(result, pager)
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        await pilot.press("C")
        first = len(view.page_items)
        await pilot.press("n")
        await pilot.pause()
        assert view.in_chart and view.page_offset == first
        assert f"items {first + 1}–{first + 100} of 2,000" in screen_text(app)
        assert bars(view) == [o["amount"] for o in ORDERS[first : first + 100]]
        # A hundred bars would not fit a hundred columns apart: the page is a line.
        assert view.query_one(ChartPlot).kind == "line"
        await pilot.press("g")
        view.query_one("#value-prompt-input").value = "1999"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert view.in_chart and view.page_items[-1] == ORDERS[-1]
        assert bars(view)[-1] == ORDERS[-1]["amount"]


async def test_a_value_that_cannot_be_charted_says_why_on_screen() -> None:
    items = [{"name": f"n{i}", "city": "Oslo"} for i in range(300)]
    app = Harness(windowed(items, 40), FakePager(items))
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        await pilot.press("C")
        await pilot.pause()
        assert view.in_chart
        assert not view.query_one(PlotextPlot).display
        text = screen_text(app)
        assert "Nothing to chart: no column of these records holds numbers" in text
        assert "█" not in text


async def test_the_chart_key_can_be_rebound_and_its_hint_follows() -> None:
    result, pager = windowed_like_engine(ORDERS)
    app = Harness(result, pager)
    async with run(app) as pilot:
        app.set_keymap({"value.chart": "ctrl+g", "value.scroll_right": "full_stop"})
        await pilot.pause()
        view = app.query_one(ValueView)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert view.in_chart and view.chart.column == "amount"
        await pilot.press("full_stop")
        assert view.chart.column == "qty"
        await pilot.press("ctrl+g")
        assert not view.in_chart


# ---------------------------------------------------------------------- snapshot
class ChartApp(Harness):
    """A page of orders, or an inline object of counts per status."""

    def __init__(self, value: Any) -> None:
        if isinstance(value, dict):
            super().__init__(RunResult(status="ok", value=value, value_kind="object"), None)
        else:
            super().__init__(*windowed_like_engine(value))


def test_snapshot_chart_of_a_page_of_orders(snap_compare: Any) -> None:
    assert snap_compare(ChartApp(ORDERS), terminal_size=SIZE, press=["C"])


def test_snapshot_chart_of_counts_per_status(snap_compare: Any) -> None:
    counts = {"paid": 1204, "open": 311, "refunded": 52, "disputed": 7}
    assert snap_compare(ChartApp(counts), terminal_size=SIZE, press=["C"])
