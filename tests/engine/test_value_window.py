"""The value window's rules, checked on worked examples and end to end."""

from __future__ import annotations

import json

import pytest

from run_repl import create_runner
from run_repl.sandbox.wire.result_store import ResultRefNotFound
from run_repl.sandbox.wire.value_window import (
    BUDGET_LINES,
    itemize,
    leading_items,
    pretty_lines,
    window_of_value,
)


@pytest.mark.parametrize(
    "value",
    [
        None,
        1,
        "text",
        [],
        {},
        [1, 2, 3],
        {"a": 1, "b": [1, 2, {"c": []}], "d": {}},
        [[[]], [{}], {"x": [1, {"y": 2}]}],
        {"k": "a\nb"},
    ],
)
def test_pretty_lines_is_the_line_count_of_indented_json(value: object) -> None:
    assert pretty_lines(value) == len(json.dumps(value, indent=2).splitlines())


def test_pretty_lines_stops_counting_at_the_cap() -> None:
    huge = list(range(1_000_000))
    assert BUDGET_LINES < pretty_lines(huge, BUDGET_LINES) <= BUDGET_LINES + 2


def rule_window(items: list[object], rest: dict[str, object] | None) -> int:
    """How many leading items fit, computed independently from the rule's words."""
    budget = BUDGET_LINES - 2 - (len(json.dumps(rest, indent=2).splitlines()) if rest else 0)
    used = 0
    for n, item in enumerate(items):
        lines = len(json.dumps(item, indent=2).splitlines())
        if n > 0 and used + lines > budget:
            return n
        used += lines
    return len(items)


def test_small_value_is_inline_and_whole() -> None:
    value = [{"id": i} for i in range(66)]  # 66 * 3 + 2 = 200 lines: fits exactly
    w = window_of_value(value)
    assert w.inline and w.value == value and w.shown == w.total == 66


def test_one_line_over_is_windowed() -> None:
    value = [{"id": i} for i in range(67)]  # 203 lines
    w = window_of_value(value)
    assert not w.inline and w.value is None
    assert w.path == "$"
    assert w.shown == rule_window(value, None) == 66
    assert w.items == value[:66]
    assert w.total == 67


def test_array_of_scalars() -> None:
    value = list(range(1000))
    w = window_of_value(value)
    assert w.shown == rule_window(value, None) == 198
    assert w.items == list(range(198))


def test_object_with_rows_keeps_other_fields_whole_in_rest() -> None:
    value = {"columns": ["id", "name"], "rows": [[i, f"n{i}"] for i in range(500)], "count": 500}
    w = window_of_value(value)
    assert w.path == "$.rows"
    assert w.rest == {"columns": ["id", "name"], "count": 500}
    expected = rule_window(value["rows"], w.rest)
    assert w.shown == expected
    # rest is 7 lines, brackets 2, each row 4 lines: (200 - 9) // 4
    assert expected == 47
    assert w.total == 500


def test_largest_array_wins_and_odd_keys_use_brackets() -> None:
    value = {"small": [1, 2], "the rows": list(range(300)), "other": list(range(10))}
    w = window_of_value(value)
    assert w.path == '$["the rows"]'
    assert w.rest == {"small": [1, 2], "other": list(range(10))}


def test_object_without_arrays_is_windowed_by_entries() -> None:
    value = {f"k{i}": {"v": i} for i in range(100)}
    w = window_of_value(value)
    assert w.path == "$entries"
    entries = [{"key": k, "value": v} for k, v in value.items()]
    assert w.items == entries[: rule_window(entries, None)]
    assert w.shown == 33  # each {key, value: {v}} entry is 6 lines: 198 // 6
    assert w.total == 100


def test_string_is_windowed_by_its_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(500))
    w = window_of_value(text)
    assert w.path == "$lines" and not w.inline
    assert w.items == [f"line {i}" for i in range(198)]
    assert w.total == 500
    assert window_of_value("one\ntwo").inline


def test_a_single_huge_item_is_still_shown() -> None:
    value = [list(range(500)), 1]
    w = window_of_value(value)
    assert w.shown == 1 and w.items == [list(range(500))]


def test_window_never_splits_an_item() -> None:
    value = [{"id": i, "tags": list(range(i % 7))} for i in range(300)]
    w = window_of_value(value)
    assert w.items == value[: w.shown]
    assert sum(pretty_lines(i) for i in w.items) + 2 <= BUDGET_LINES
    assert sum(pretty_lines(i) for i in value[: w.shown + 1]) + 2 > BUDGET_LINES


def test_itemize_scalars_are_one_item() -> None:
    assert itemize(5).items == [5]
    assert leading_items([], None) == []


# ------------------------------------------------------------------ end to end


async def test_run_returns_window_and_pages_to_the_end_without_gap_or_overlap() -> None:
    runner = create_runner()
    result = await runner.run("Array.from({ length: 2345 }, (_, i) => ({ i }))")
    assert result.status == "ok"
    assert "value" not in result.model_dump()
    assert result.value_window is not None and result.value_window.path == "$"
    assert result.shown == 66 and result.total == 2345
    assert (
        result.value_ref is not None
        and result.value_ref.startswith("res_")
        and len(result.value_ref) == 20
    )
    seen: list[int] = [item["i"] for item in result.value_window.items]
    offset = result.shown
    while True:
        page = runner.expand(result.value_ref, offset=offset, limit=250)
        seen += [item["i"] for item in page.items]
        offset += len(page.items)
        if not page.has_more:
            break
    assert seen == list(range(2345))
    empty = runner.expand(result.value_ref, offset=5000, limit=10)
    assert empty.items == [] and not empty.has_more


async def test_large_values_arrive_in_chunks_with_the_same_rules() -> None:
    runner = create_runner()
    source = "({ total: 5000, rows: Array.from({ length: 5000 }, (_, i) => [i, 'r' + i]) })"
    result = await runner.run(source)
    assert result.value_window is not None
    assert result.value_window.path == "$.rows"
    assert result.value_window.rest == {"total": 5000}
    assert result.shown == rule_window([[0, "r0"]] * 5000, {"total": 5000})
    page = runner.expand(result.value_ref, 4990, 100)
    assert page.items[-1] == [4999, "r4999"] and page.rest == {"total": 5000}


async def test_entries_and_lines_in_chunks() -> None:
    runner = create_runner()
    entries = await runner.run(
        "Object.fromEntries(Array.from({ length: 1500 }, (_, i) => ['k' + i, i]))"
    )
    assert entries.value_window.path == "$entries"
    assert entries.total == 1500
    assert runner.expand(entries.value_ref, 1499, 5).items == [{"key": "k1499", "value": 1499}]
    lines = await runner.run("Array.from({ length: 3000 }, (_, i) => 'l' + i).join('\\n')")
    assert lines.value_window.path == "$lines" and lines.total == 3000
    assert runner.expand(lines.value_ref, 2998, 5).items == ["l2998", "l2999"]


async def test_inline_values_are_stored_too() -> None:
    runner = create_runner()
    result = await runner.run("({ a: [1, 2, 3] })")
    assert result.value == {"a": [1, 2, 3]}
    assert result.shown == result.total == 3
    page = runner.expand(result.value_ref)
    assert page.items == [1, 2, 3] and page.path == "$.a"


async def test_unknown_ref_is_a_clear_error_with_next_action() -> None:
    runner = create_runner()
    with pytest.raises(ResultRefNotFound) as err:
        runner.expand("res_0000000000000000")
    assert err.value.code == "RESULT_REF_NOT_FOUND"
    assert err.value.next_actions[0]["type"] == "run_again"


@pytest.mark.parametrize("offset, limit", [(-1, 10), (0, 0), (0, 1001), ("1", 10)])
async def test_expand_validates_its_arguments(offset: object, limit: object) -> None:
    runner = create_runner()
    result = await runner.run("[1, 2]")
    with pytest.raises(ValueError):
        runner.expand(result.value_ref, offset, limit)  # type: ignore[arg-type]


async def test_logs_past_fifty_go_under_logs_ref() -> None:
    runner = create_runner()
    result = await runner.run("for (let i = 0; i < 120; i++) console.log('n', i)")
    assert len(result.logs) == 50
    assert result.logs_total == 120
    assert result.logs_ref is not None
    page = runner.expand(result.logs_ref, 50, 100)
    assert [line["text"] for line in page.items] == [f"n {i}" for i in range(50, 120)]


async def test_undefined_value_is_marked() -> None:
    runner = create_runner()
    result = await runner.run("let x = 1")
    dumped = result.model_dump()
    assert dumped["value"] is None and dumped["value_kind"] == "undefined"
