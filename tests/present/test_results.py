"""A run's result in words: status, logs, calls, errors (with the caret), values."""

from __future__ import annotations

from typing import Any

import pytest

from run_repl.present import (
    call_line,
    call_state,
    error_lines,
    interruption_lines,
    log_line,
    log_lines,
    plain,
    plain_lines,
    snippet_excerpt,
    status_line,
    value_document,
    value_lines,
    value_text,
    window_note,
)
from run_repl.sandbox.result import (
    CallRecord,
    Interruption,
    LogLine,
    NextAction,
    RunErrorInfo,
    RunResult,
    ValueWindow,
)


def test_status_line() -> None:
    assert status_line("ok", 12.34) == [("ok", "ok"), ("dim", " in 12.3 ms")]
    assert plain(status_line("interrupted", 1500)) == "interrupted in 1.50 s"
    assert plain(status_line("cancelled", None)) == "cancelled"


def test_log_line_has_time_level_and_text() -> None:
    text = plain(log_line(LogLine(level="warn", text="careful", at_ms=3.25)))
    assert text == "    3.2 ms warn  careful"
    assert ("log.warn", "warn ") in log_line(LogLine(level="warn", text="x", at_ms=0))


def test_log_lines_point_at_the_rest_and_the_dropped() -> None:
    result = RunResult(
        status="ok",
        logs=[LogLine(level="log", text="a", at_ms=0)],
        logs_total=600,
        logs_dropped=100,
        logs_ref="res_logs",
    )
    text = plain_lines(log_lines(result))
    assert "… 499 more log lines: run-repl expand res_logs --offset 1" in text
    assert "… 100 log lines dropped (max_log_lines)" in text


@pytest.mark.parametrize(
    ("call", "state"),
    [
        ({"ok": None}, "running"),
        ({"ok": None, "decision": "pending"}, "waiting for approval"),
        ({"ok": True}, "ok"),
        ({"ok": True, "replayed": True, "decision": "approved"}, "ok replayed approved"),
        (
            {"ok": False, "error_code": "RUN_APPROVAL_DENIED", "decision": "denied"},
            "RUN_APPROVAL_DENIED denied",
        ),
        ({"ok": False}, "error"),
        ({"ok": None, "settled": False}, "unsettled: its effect is unknown"),
    ],
)
def test_call_state(call: dict[str, Any], state: str) -> None:
    record = CallRecord(seq=1, path="a.b", args_preview="()", **call)
    assert plain(call_state(record)) == state


def test_call_line() -> None:
    record = CallRecord(
        seq=2, path="crm.get", args_preview='("c1")', ok=True, duration_ms=0.42, wait_ms=1500
    )
    assert plain(call_line(record)) == '#2  crm.get("c1")  0.4 ms  ok  waited 1.50 s for approval'


def test_snippet_excerpt_puts_the_caret_under_the_column() -> None:
    source = "const a = 1\nconst b = ;\n"
    lines = [plain(x) for x in snippet_excerpt(source, 2, 11)]
    assert lines == ["  2 | const b = ;", "    |           ^"]
    assert lines[1].index("^") == lines[0].index(";")


def test_excerpt_caret_follows_tabs_wide_characters_and_escapes() -> None:
    source = "\tx = '世界\x1b' + y"
    column = source.index("y") + 1
    code, caret = (plain(x) for x in snippet_excerpt(source, 1, column))
    assert "\\u001b" in code  # shown escaped, and the caret still lines up
    gutter = len("  1 | ")
    prefix = code[gutter : gutter + code[gutter:].index("y")]
    pad = caret[gutter : caret.index("^")]
    assert pad.startswith("\t") and len(pad) == len(prefix) + 2  # 世界: two cells each


def test_excerpt_of_a_long_line_is_a_window_around_the_column() -> None:
    source = "a" * 5000 + "!" + "b" * 5000
    code, caret = (plain(x) for x in snippet_excerpt(source, 1, 5001))
    assert len(code) < 200 and code[caret.index("^")] == "!"
    assert "…" in code


def test_excerpt_out_of_range_is_empty() -> None:
    assert snippet_excerpt("x", 3, 1) == []


def test_error_lines() -> None:
    error = RunErrorInfo(
        code="RUN_UNKNOWN_MEMBER",
        message="crm.getAcount is not a host function\nsecond line",
        line=1,
        column=7,
        did_you_mean=["crm.getAccount"],
        next_actions=[NextAction(type="edit_request", why="Use crm.getAccount.")],
    )
    text = plain_lines(error_lines(error, "await crm.getAcount(1)"))
    assert text.splitlines() == [
        "RUN_UNKNOWN_MEMBER at line 1, column 7: crm.getAcount is not a host function",
        "  second line",
        "  1 | await crm.getAcount(1)",
        "    |       ^",
        "  did you mean: crm.getAccount",
        "  next: Use crm.getAccount.",
    ]


def test_error_stack_for_exceptions_only() -> None:
    stack = "Error: x\n    at f (snippet:1:1)\n    at g (snippet:2:1)"
    thrown = RunErrorInfo(code="RUN_EXCEPTION", message="x", stack=stack)
    assert "at f (snippet:1:1)" in plain_lines(error_lines(thrown))
    timeout = RunErrorInfo(code="RUN_TIMEOUT", message="x", stack=stack)
    assert "snippet:1:1" not in plain_lines(error_lines(timeout))


def test_interruption_shows_message_and_every_argument_whole() -> None:
    hidden = "savings" + " " * 420
    it = Interruption(
        id="int_1",
        path="bank.transfer",
        args=[hidden, 1_000_000, "to: mallory"],
        payload={"message": "Transfer?"},
    )
    text = plain_lines(interruption_lines(it))
    assert "waiting for approval: bank.transfer  (id int_1)" in text
    assert "Transfer?" in text and "1000000" in text and '"to: mallory"' in text
    assert '"savings⟨420 spaces⟩"' in text  # the blanks, counted, where they are
    assert "arg 1 of 3 (string, 427 characters; 420 blanks in a row)" in text
    assert "arg 2 of 3 (number: 1,000,000)" in text


def test_interruption_without_message_says_what_waits() -> None:
    it = Interruption(id="int_2", path="docs.publish", args=[], payload=None)
    assert "docs.publish is waiting for a decision" in plain_lines(interruption_lines(it))


def windowed(
    path: str, items: list[Any], total: int, rest: dict[str, Any] | None = None
) -> RunResult:
    return RunResult(
        status="ok",
        value_kind="object" if path != "$" else "array",
        value_ref="res_1",
        shown=len(items),
        total=total,
        value_window=ValueWindow(path=path, items=items, rest=rest),
    )


def test_value_lines_inline_undefined_and_windowed() -> None:
    assert (
        plain_lines(value_lines(RunResult(status="ok", value={"a": 1}, value_kind="object")))
        == '{\n  "a": 1\n}'
    )
    assert plain_lines(value_lines(RunResult(status="ok", value_kind="undefined"))) == "undefined"
    text = plain_lines(value_lines(windowed("$.rows", [1, 2], 10, {"n": 10})))
    assert text.splitlines() == ["$.rows: items 1–2 of 10", 'rest: {"n": 10}', "1", "2"]


@pytest.mark.parametrize(
    ("result", "document"),
    [
        (RunResult(status="ok", value=[1], value_kind="array"), ([1],)),
        (RunResult(status="ok", value=None, value_kind="null"), (None,)),
        (RunResult(status="ok", value_kind="undefined"), None),
        (RunResult(status="error"), None),
        (windowed("$", [1, 2], 9), ([1, 2],)),
        (windowed("$.rows", [1], 9, {"n": 9}), ({"n": 9, "rows": [1]},)),
        (windowed('$["odd key"]', [1], 9, {}), ({"odd key": [1]},)),
        (windowed("$entries", [{"key": "a", "value": 1}], 9), ({"a": 1},)),
        (windowed("$lines", ["one", "two"], 9), ("one\ntwo",)),
    ],
)
def test_value_document_keeps_the_value_shape(result: RunResult, document: Any) -> None:
    assert value_document(result) == document


def test_value_text_and_window_note() -> None:
    result = windowed("$", list(range(3)), 500)
    assert value_text(result) == "[\n  0,\n  1,\n  2\n]"
    note = plain_lines(window_note(result))
    assert note.splitlines() == [
        "value: $: items 1–3 of 500 (the rest is stored)",
        "… 497 more from item 4: run-repl expand res_1 --offset 3",
    ]
    assert value_text(RunResult(status="ok", value_kind="undefined")) is None


def test_the_snippets_own_code_is_shown_apart_from_the_engines() -> None:
    error = RunErrorInfo(code="RUN_EXCEPTION", message="nope", guest_code="E_QUOTA")
    assert plain_lines(error_lines(error)).splitlines()[0] == (
        "RUN_EXCEPTION: nope  (the snippet's own code: E_QUOTA)"
    )


def test_fields_left_out_of_the_window_are_named() -> None:
    result = windowed("$.rows", [1], 9, {"n": 9})
    assert result.value_window is not None
    result.value_window.rest_omitted = ["notes", "blob"]
    assert "fields not shown here (too long): notes, blob" in plain_lines(value_lines(result))
    assert "notes, blob: run-repl expand res_1 shows them whole in rest" in plain_lines(
        window_note(result)
    )
