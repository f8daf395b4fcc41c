"""Approvals and history in words: whole arguments, commands to decide later, aligned rows."""

from __future__ import annotations

import time
from pathlib import Path

from run_repl.present import (
    CALLS_MADE_SHOWN,
    SessionApprovals,
    approval_detail_lines,
    approval_list_lines,
    approval_message,
    approve_command,
    argument_lines,
    calls_made_lines,
    history_lines,
    not_saved_hint,
    plain,
    plain_lines,
    saved_hint,
)
from run_repl.present.approvals import default_data_dir_flag
from run_repl.present.history import format_when
from run_repl.store.records import PendingApproval, RunRecord


def test_approval_message_falls_back_to_the_path() -> None:
    assert approval_message({"message": "Publish?"}, "docs.publish") == "Publish?"
    assert (
        approval_message({"message": ""}, "docs.publish")
        == "docs.publish is waiting for a decision"
    )
    assert approval_message(None, "x.y") == "x.y is waiting for a decision"


def test_argument_lines_are_whole_with_types_sizes_and_blank_runs() -> None:
    args = ["a" + " " * 30 + "b", {"to": "mallory   x"}, 1_000_000, "a   b"]
    text = plain_lines(argument_lines(args, indent=""))
    assert text.splitlines() == [
        "arg 1 of 4 (string, 32 characters; 30 blanks in a row):",
        '  "a⟨30 spaces⟩b"',
        "arg 2 of 4 (object, 1 key):",
        "  {",
        '    "to": "mallory   x"',  # three blanks are read as they are
        "  }",
        "arg 3 of 4 (number: 1,000,000):",
        "  1000000",
        "arg 4 of 4 (string, 5 characters):",
        '  "a   b"',
    ]
    assert plain_lines(argument_lines([])) == "  no arguments"


def test_blank_runs_and_invisible_characters_are_marked_inside_strings_only() -> None:
    lines = argument_lines([{"k": ["x\u00a0\u00a0\u00a0\u00a0y\u200bz"]}], indent="")
    text = plain_lines(lines)
    assert '"x⟨4 blanks⟩y⟨U+200B⟩z"' in text
    assert "(object, 1 key; 4 blanks in a row)" in text
    # The JSON's own indentation (4 spaces deep here) is not the guest's: never marked.
    assert '    "x' in text
    marks = [t for x in lines for style, t in x if style == "mark"]
    assert marks == ["⟨4 blanks⟩", "⟨U+200B⟩"]


def test_approve_command_names_what_is_not_default(tmp_path: Path) -> None:
    assert approve_command("int_1") == "run-repl approvals approve int_1"
    assert (
        approve_command("int_1", host="my host.py", data_dir=tmp_path / "d d", action="deny")
        == f"run-repl approvals deny int_1 --host 'my host.py' --data-dir '{tmp_path}/d d'"
    )
    assert default_data_dir_flag(tmp_path, tmp_path) is None
    assert default_data_dir_flag(tmp_path / "x", tmp_path) == tmp_path / "x"


def test_saved_and_not_saved_hints() -> None:
    assert plain(saved_hint("int_1", "run-repl approvals approve int_1")) == (
        "saved pending approval int_1: run-repl approvals approve int_1  (or deny)"
    )
    text = plain_lines(not_saved_hint("int_1", "the store is in memory only"))
    assert text.startswith("approval int_1 was NOT saved: the store is in memory only")


def test_session_approvals() -> None:
    session = SessionApprovals()
    assert "a.b" not in session and len(session) == 0
    session.add("a.b")
    assert "a.b" in session and len(session) == 1


def approval(**fields: object) -> PendingApproval:
    base: dict[str, object] = {
        "id": "int_1",
        "run_id": "run_1",
        "source": "// list\nawait docs.publish('d1')",
        "host": "demo",
        "path": "docs.publish",
        "args": ["d1"],
        "message": "Publish d1?",
        "continuation": "tok",
    }
    return PendingApproval.model_validate({**base, **fields})


def test_approval_list_lines_line_up() -> None:
    rows = [
        plain(x)
        for x in approval_list_lines(
            [
                approval(),
                approval(id="int_22", status="approved", host="my.py", path="a.b", args=[1, "x"]),
            ]
        )
    ]
    assert rows == [
        'int_1   pending   demo   docs.publish("d1")  — Publish d1?',
        'int_22  approved  my.py  a.b(1, "x")  — Publish d1?',
    ]


def test_approval_detail_lines_show_the_numbered_snippet() -> None:
    text = plain_lines(approval_detail_lines(approval()))
    assert '  call: docs.publish("d1")' in text
    assert "  1 | // list\n  2 | await docs.publish('d1')" in text


def test_history_lines_line_up() -> None:
    now = time.time()
    runs = [
        RunRecord(id="run_a", started_at=now, duration_ms=3.2, status="ok", source="1 + 1"),
        RunRecord(
            id="run_bb",
            started_at=now,
            duration_ms=1234.0,
            status="error",
            error_code="RUN_EXCEPTION",
            source="\n  throw x",
        ),
        RunRecord(id="run_c", started_at=now, duration_ms=12.0, status="interrupted", source=""),
    ]
    rows = [plain(x) for x in history_lines(runs, now=now)]
    when = format_when(now, now)
    assert rows == [
        f"{when}  run_a   ok                           3.2 ms  1 + 1",
        f"{when}  run_bb  error        RUN_EXCEPTION   1.23 s  throw x",
        f"{when}  run_c   interrupted                 12.0 ms  (empty)",
    ]
    assert [plain(x) for x in history_lines(runs[:1], ids=False, now=now)] == [
        f"{when}  ok  3.2 ms  1 + 1"
    ]


def test_history_lines_say_what_became_of_a_paused_run_and_what_a_resume_resumed() -> None:
    now = time.time()
    runs = [
        RunRecord(
            id="run_b",
            started_at=now,
            duration_ms=5.0,
            status="ok",
            source="x",
            resumed_from="run_a",
        ),
        RunRecord(
            id="run_a",
            started_at=now,
            duration_ms=2.0,
            status="interrupted",
            source="x",
            resumed_as="run_b",
            resumed_status="ok",
        ),
        RunRecord(id="run_c", started_at=now, duration_ms=1.0, status="interrupted", source="y"),
    ]
    when = format_when(now, now)
    assert [plain(x) for x in history_lines(runs, now=now)] == [
        f"{when}  run_b  ok           5.0 ms  resumes run_a" + " " * 9 + "x",
        f"{when}  run_a  interrupted  2.0 ms  resumed as run_b: ok  x",
        f"{when}  run_c  interrupted  1.0 ms  " + " " * 22 + "y",
    ]
    # Without ids (the line REPL's :history), in words alone.
    assert [plain(x) for x in history_lines(runs[:2], ids=False, now=now)] == [
        f"{when}  ok           5.0 ms  a resume" + " " * 5 + "x",
        f"{when}  interrupted  2.0 ms  resumed: ok  x",
    ]


def test_format_when() -> None:
    now = time.mktime((2025, 3, 4, 12, 0, 0, 0, 0, -1))
    assert format_when(now - 3600, now) == "11:00:00"
    assert format_when(now - 3 * 86400, now) == "2025-03-01 12:00"


def _call(seq: int, path: str, decision: str | None = None) -> dict[str, object]:
    return {
        "seq": seq,
        "path": path,
        "args_preview": "()",
        "ok": None if decision == "pending" else True,
        "duration_ms": 0.5,
        "decision": decision,
    }


def test_calls_made_lines_list_a_short_run_whole() -> None:
    calls = [_call(1, "documents.listDrafts"), _call(2, "documents.publish", "pending")]
    lines = [plain(x) for x in calls_made_lines(calls)]
    assert lines[0] == "  calls already made (1):"
    assert len(lines) == 2 and "#1  documents.listDrafts()" in lines[1]
    assert plain(calls_made_lines([_call(1, "a.b", "pending")])[1]).strip() == (
        "none: this call is the run's first"
    )


def test_calls_made_lines_count_the_earlier_calls_of_a_long_run() -> None:
    # An approval asked after thousands of calls: its detail lists the latest whole and
    # counts the rest by function, so it stays a glance (and quick to draw) at any size.
    calls = [_call(i, "documents.listDrafts") for i in range(1, 2998)]
    calls += [_call(2998, "crm.getAccount"), _call(2999, "crm.getAccount")]
    calls += [_call(3000, "documents.publish", "pending")]
    lines = [plain(x) for x in calls_made_lines(calls)]
    assert lines[0] == "  calls already made (2,999):"
    assert lines[1] == (
        f"    … {2999 - CALLS_MADE_SHOWN:,} earlier: documents.listDrafts ×{2999 - CALLS_MADE_SHOWN:,}"
    )
    shown = lines[2:]
    assert len(shown) == CALLS_MADE_SHOWN
    assert f"#{3000 - CALLS_MADE_SHOWN}  documents.listDrafts()" in shown[0]
    assert "#2999  crm.getAccount()" in shown[-1]


def test_calls_made_lines_name_the_most_made_earlier_calls_first() -> None:
    calls = [_call(i, f"ns.f{i % 6}") for i in range(1, 61)]
    calls += [_call(i, "ns.often") for i in range(61, 161)]
    calls += [_call(i, "ns.last") for i in range(161, 161 + CALLS_MADE_SHOWN)]
    summary = plain(calls_made_lines(calls)[1])
    assert summary == (
        "    … 160 earlier: ns.often ×100, ns.f0 ×10, ns.f1 ×10, ns.f2 ×10 and 3 more functions"
    )


def test_calls_made_lines_skip_records_they_cannot_read() -> None:
    calls: list[object] = ["not a record", {"seq": "x"}, _call(3, "a.b")]
    lines = [plain(x) for x in calls_made_lines(calls)]
    assert lines[0] == "  calls already made (1):" and "#3  a.b()" in lines[1]


def test_calls_made_lines_say_when_the_history_kept_only_the_first_calls() -> None:
    # The history keeps the first calls of a long list: the latest it has are not the
    # run's latest, and the count must not pass for the run's.
    kept = [_call(i, "documents.listDrafts") for i in range(1, 1001)]
    lines = [plain(x) for x in calls_made_lines(kept, total=9001)]
    assert lines[0] == (
        "  calls already made (the history kept the first 1,000 of the run's 9,001 calls):"
    )
    assert lines[-1] == "    … 8,001 later, which the history did not keep"
    assert len([x for x in lines if x.startswith("    #")]) == CALLS_MADE_SHOWN
    assert plain(calls_made_lines(kept, total=1000)[0]) == "  calls already made (1,000):"
