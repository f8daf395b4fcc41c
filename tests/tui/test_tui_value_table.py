"""Records as a table: arrays of objects with mostly the same keys, paged by item like the
lines, sortable within the page, with the JSON and the tree one key away."""

from __future__ import annotations

import json
from typing import Any

from test_tui_value_view import Harness, run, screen_text, windowed_like_engine
from tui_helpers import until

from run_repl.sandbox.result import RunResult
from run_repl.tui.components.value.model import Shown
from run_repl.tui.components.value.table import (
    OTHER,
    RecordsTable,
    cell_text,
    records_of,
    sort_key,
    sorted_rows,
    table_of,
)
from run_repl.tui.components.value.view import ValueView


def orders(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"ord_{i:04d}", "amount": (i * 37) % 101 + 0.5, "status": ["paid", "open"][i % 2]}
        for i in range(count)
    ]


# ---------------------------------------------------------------- the model
def test_objects_with_mostly_the_same_keys_are_records() -> None:
    found = table_of(orders(3), "$")
    assert found is not None and found.columns == ["id", "amount", "status"] and not found.other
    ragged = [{"a": 1, "b": 2}, {"a": 3, "b": 4, "note": "late"}, {"a": 5}]
    found = table_of(ragged, "$")
    assert found is not None and found.columns == ["a", "b"] and found.other


def test_what_is_not_a_table() -> None:
    assert table_of([], "$") is None
    assert table_of([{"i": 1}, {"i": 2}], "$") is None  # one key: the JSON reads as well
    assert table_of([{"a": 1, "b": 2}, 3], "$") is None  # not all objects
    sparse = [{"a": 1, "b": 2}, {"c": 1, "d": 2}, {"e": 1, "f": 2}, {"a": 1, "c": 2}]
    assert table_of(sparse, "$") is None  # no keys in common


def test_where_records_come_from() -> None:
    def inline(value: Any) -> Shown:
        shown = Shown.from_result(RunResult(status="ok", value=value, value_kind="object"))
        assert shown is not None
        return shown

    assert records_of(inline(orders(3)), [], 0).path == "$"
    found = records_of(inline({"total": 3, "rows": orders(3), "tags": ["a"]}), [], 0)
    assert found is not None and found.path == "$.rows" and found.path_of(1) == "$.rows[1]"
    assert records_of(inline({"odd key": orders(2)}), [], 0).path == '$["odd key"]'
    assert records_of(inline({"a": 1}), [], 0) is None
    result, _ = windowed_like_engine({"count": 500, "rows": orders(500)})
    shown = Shown.from_result(result)
    page = records_of(shown, orders(500)[100:200], 100)
    assert page is not None and page.path == "$.rows" and page.path_of(0) == "$.rows[100]"


def test_cells_and_sorting() -> None:
    assert cell_text("a\nb") == "a↵b" and cell_text(None) == "null" and cell_text(2.5) == "2.5"
    assert cell_text({"k": [1, 2]}) == '{"k": [1, 2]}'
    assert len(cell_text("x" * 500)) == 48
    values = ["b", None, 3, True, "A", {"x": 1}, 1.5]
    assert sorted(values, key=sort_key) == [None, True, 1.5, 3, "A", "b", {"x": 1}]
    found = table_of([{"a": 2, "b": 0}, {"a": 1, "b": 0}, {"b": 0}], "$")
    assert found is not None
    assert sorted_rows(found, "a", False) == [2, 1, 0]  # missing first
    assert sorted_rows(found, "a", True) == [0, 1, 2]
    assert sorted_rows(found, None, False) == [0, 1, 2]


# ---------------------------------------------------------------- the panel
async def test_records_page_as_a_table_and_r_switches_to_json() -> None:
    rows = orders(500)
    result, pager = windowed_like_engine({"count": 500, "rows": rows})
    shown = len(result.value_window.items)
    app = Harness(result, pager)
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        table = view.query_one(RecordsTable)
        assert view.view == "table" and table.display
        assert [str(c.label) for c in table.columns.values()] == ["id", "amount", "status"]
        assert table.row_count == shown
        text = screen_text(app)
        assert "table of" in text and "ord_0000" in text
        await pilot.press("r")
        assert view.view == "lines" and not table.display
        await until(pilot, lambda: '"id": "ord_0000"' in screen_text(app))  # painted next
        await pilot.press("r")
        assert view.view == "table"


async def test_paging_and_moving_in_the_table_follow_the_items() -> None:
    rows = orders(500)
    result, pager = windowed_like_engine(rows)
    first = len(result.value_window.items)
    app = Harness(result, pager)
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        table = view.query_one(RecordsTable)
        await pilot.press("n")
        assert view.page_offset == first and table.row_count == 100
        assert view.selected_number == first + 1
        await pilot.press("down", "down")
        assert view.selected_number == first + 3
        await pilot.press("end", "down")  # past the last row: the next page's first
        assert view.page_offset == first + 100 and view.selected_number == first + 101
        await pilot.press("up")  # before the first row: the previous page's last
        assert view.selected_number == first + 100
        view.jump_to(321)
        await pilot.pause()
        assert view.selected_number == 321 and table.selected == 321 - 1 - view.page_offset
        await pilot.press("y")
        assert json.loads(app.copied[-1]) == rows[320]


async def test_s_sorts_the_page_by_the_column_under_the_cursor() -> None:
    rows = orders(50)
    app = Harness(RunResult(status="ok", value=rows, value_kind="array"))
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        table = view.query_one(RecordsTable)
        await pilot.press("l", "s")  # to "amount", then sort
        amounts = [float(table.get_row_at(r)[1].plain) for r in range(table.row_count)]
        assert amounts == sorted(amounts)
        assert "sorted by amount ↑ (this page)" in screen_text(app)
        await pilot.press("s")
        amounts = [float(table.get_row_at(r)[1].plain) for r in range(table.row_count)]
        assert amounts == sorted(amounts, reverse=True)
        top = max(rows, key=lambda r: r["amount"])
        await pilot.press("home", "t")  # the tree shows the record under the cursor
        assert view.in_tree and f"$[{rows.index(top)}]" in screen_text(app)
        await pilot.press("escape")
        assert view.view == "table"
        await pilot.press("s")  # a third time: as the records came
        assert [table.get_row_at(r)[0].plain for r in range(3)] == [r["id"] for r in rows[:3]]


async def test_an_inline_objects_rows_are_a_table_and_y_copies_a_record() -> None:
    value = {"total": 3, "rows": orders(3)}
    app = Harness(RunResult(status="ok", value=value, value_kind="object"))
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        assert view.view == "table"
        assert "table of 3 records at $.rows" in screen_text(app)
        await pilot.press("down", "y")
        assert json.loads(app.copied[-1]) == value["rows"][1]
        await pilot.press("Y")  # the page: the whole value
        assert json.loads(app.copied[-1]) == value


async def test_extra_keys_go_in_one_column_and_one_key_objects_stay_json() -> None:
    rows = [{"a": 1, "b": 2}, {"a": 3, "b": 4, "note": "late"}, {"a": 5, "b": 6}]
    app = Harness(RunResult(status="ok", value=rows, value_kind="array"))
    async with run(app) as pilot:
        table = app.query_one(RecordsTable)
        assert [str(c.label) for c in table.columns.values()] == ["a", "b", OTHER]
        assert table.get_row_at(1)[2].plain == '{"note": "late"}'
    result, pager = windowed_like_engine([{"i": i} for i in range(1000)])
    app = Harness(result, pager)
    async with run(app) as pilot:
        view = app.query_one(ValueView)
        assert view.view == "lines" and view.records is None
        await pilot.press("r")  # nothing to switch to
        assert view.view == "lines"
