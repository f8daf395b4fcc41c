"""The call audit on its own (session/audit.py): lazy records, and calls the run
gave up on that end later."""

from __future__ import annotations

from run_repl.sandbox.result import CallRecord
from run_repl.sandbox.session.audit import CallAudit


def _audit() -> tuple[CallAudit, list[CallRecord]]:
    heard: list[CallRecord] = []
    return CallAudit(lambda: 10.0, heard.append), heard


def test_a_deferred_call_is_recorded_once_when_first_needed() -> None:
    audit, heard = _audit()
    audit.defer(1, "h.f", 'J["a"]', ["a"], 2.0)
    assert 1 in audit and audit.get(1) is None and heard == []
    record = audit.ensure(1)
    assert audit.ensure(1) is record
    assert (record.path, record.args_preview, record.started_at_ms) == ("h.f", '("a")', 2.0)
    audit.finish(record, ok=True, result_text="1")
    assert [(r.ok, r.duration_ms) for r in heard] == [(None, None), (True, 8.0)]
    assert heard[0] is not record  # each listener gets its own copy


def test_a_call_given_up_on_and_then_ended_says_how_it_ended() -> None:
    audit, heard = _audit()
    record = audit.make(1, "h.f", "J[]", [], 0.0)
    audit.abandon(1, "the run was cancelled while it ran")
    assert record.settled is False and "whether it took effect is unknown" in str(
        record.error_message
    )
    audit.finish(record, ok=True)
    assert (record.settled, record.ok, record.error_message) == (True, True, None)
    assert len(heard) == 2


def test_ordered_makes_the_lazy_records_and_sorts_by_seq() -> None:
    audit, _ = _audit()
    audit.defer(3, "h.c", "J[]", [], 1.0)
    audit.make(2, "h.b", "J[]", [], 0.5)
    audit.refused(1, "h.a", "RUN_BRIDGE_LIMIT", "too many")
    assert [r.seq for r in audit.ordered()] == [1, 2, 3]
    assert audit.unrecorded == {}
