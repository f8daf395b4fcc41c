"""The claim rules on both stores: batches, queued decisions, claims that end, the guard,
settling from each call's record, stuck batches and their recovery, consume-once tokens."""

from __future__ import annotations

import time

import pytest
from store_kinds import expire_claims

from run_repl.present.approvals import describe_state
from run_repl.store import (
    Applied,
    ApprovalConflict,
    Claim,
    ClaimLost,
    PendingApproval,
    Queued,
    Store,
)
from run_repl.store.records import CallFacts, ResumeReport


def approval(approval_id: str, token: str = "tok-1", **fields: object) -> PendingApproval:
    return PendingApproval(
        id=approval_id,
        run_id="run_1",
        source="src",
        path="bank.transfer",
        continuation=token,
        created_at=float(approval_id[-1]),
        **fields,  # type: ignore[arg-type]
    )


def claim(
    store: Store, decisions: dict[str, bool], who: str = "alice", ttl: float = 60, **kw: object
) -> Claim | Queued | Applied:
    return store.claim_batch(
        decisions, claim_id=f"clm_{who}", claimed_by=who, decided_by=who, ttl_s=ttl, **kw
    )


def status(store: Store, *ids: str) -> list[str]:
    return [store.get_approval(i).status for i in ids]


def ran(ok: bool | None = True, code: str | None = None) -> CallFacts:
    return CallFacts(decision="approved", ok=ok, error_code=code)


@pytest.fixture
def pair(store: Store) -> Store:
    store.add_approvals([approval("int_1"), approval("int_2")])
    return store


def test_a_claim_takes_the_whole_batch(pair: Store) -> None:
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    assert {a.id for a in got.approvals} == {"int_1", "int_2"} and got.decisions == {"int_1": True}
    assert status(pair, "int_1", "int_2") == ["claimed", "claimed"]
    assert pair.get_approval("int_1").decided_by == "alice"
    assert pair.list_approvals() == []  # nothing to decide while it is being resumed


def test_a_second_decision_on_a_held_batch_is_queued_and_carried_on(pair: Store) -> None:
    first = claim(pair, {"int_1": True})
    assert isinstance(first, Claim)
    queued = claim(pair, {"int_2": True}, who="bob")
    assert isinstance(queued, Queued) and queued.held_by == "alice"
    assert pair.get_approval("int_2").state() == "claimed"
    assert describe_state(pair.get_approval("int_2")).startswith("claimed by alice (approve by bob")
    pair.start_batch(first)
    report = ResumeReport(
        ended=True,
        run_id="run_2",
        status="interrupted",
        calls={"int_1": ran()},
        next_continuation="tok-2",
        next_run_id="run_2",
        next_approvals=[approval("int_2", "tok-2")],
    )
    after = pair.finish_batch(first, report, ttl_s=60)
    # alice's flow goes on with bob's decision, on the run's new continuation
    assert isinstance(after, Claim) and after.decisions == {"int_2": True}
    assert after.claim_id == "clm_alice" and after.first.continuation == "tok-2"
    assert pair.get_approval("int_1").status == "approved"
    pair.start_batch(after)
    done = ResumeReport(ended=True, run_id="run_3", status="ok", calls={"int_2": ran()})
    assert pair.finish_batch(after, done, ttl_s=60) is None
    final = pair.get_approval("int_2")
    assert (final.status, final.decided_by, final.resumed_run_id) == ("approved", "bob", "run_3")
    again = claim(pair, {"int_2": True}, who="bob", waiting=True)
    assert isinstance(again, Applied)  # bob's flow, waiting, learns it was done


def test_one_approval_is_decided_once(pair: Store) -> None:
    assert isinstance(claim(pair, {"int_1": True}), Claim)
    with pytest.raises(ApprovalConflict, match="already claimed"):
        claim(pair, {"int_1": False}, who="bob")
    assert isinstance(claim(pair, {"int_2": False}, who="bob"), Queued)
    with pytest.raises(ApprovalConflict, match="deny by bob"):
        claim(pair, {"int_2": True}, who="carol")


def test_deciding_a_run_whose_approvals_moved_on_meanwhile_is_a_conflict(pair: Store) -> None:
    # bob's inbox listed int_1 and int_2 together; alice's resume answered int_1 and the
    # run moved int_2 to its next continuation before bob pressed "decide all".
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    pair.start_batch(got)
    moved = ResumeReport(
        ended=True,
        run_id="run_2",
        status="interrupted",
        calls={"int_1": ran()},
        next_continuation="tok-2",
        next_run_id="run_2",
        next_approvals=[approval("int_2", "tok-2")],
    )
    pair.finish_batch(got, moved, ttl_s=60)
    with pytest.raises(ApprovalConflict, match="int_1 is already approved"):
        claim(pair, {"int_1": True, "int_2": False}, who="bob")
    assert pair.get_approval("int_2").state() == "pending"  # nothing of bob's was recorded


def test_unknown_ids_and_mixed_runs_are_refused(pair: Store) -> None:
    pair.add_approvals([approval("int_3", "tok-other")])
    with pytest.raises(KeyError):
        claim(pair, {"int_9": True})
    with pytest.raises(ValueError, match="different runs"):
        claim(pair, {"int_1": True, "int_3": True})


def test_a_claim_that_ran_out_before_its_resume_started_is_free_again(pair: Store) -> None:
    dead = claim(pair, {"int_1": True}, ttl=0.001)
    assert isinstance(dead, Claim)
    time.sleep(0.01)
    seen = pair.get_approval("int_1")
    assert seen.status == "pending" and seen.state() == "queued"  # alice's decision is kept
    assert [a.id for a in pair.list_approvals()] == ["int_1", "int_2"]
    with pytest.raises(ApprovalConflict, match="approve by alice"):
        claim(pair, {"int_1": False}, who="bob")
    taken = claim(pair, {"int_1": True}, who="bob")  # the same decision: taken over, carried out
    assert isinstance(taken, Claim) and taken.decisions == {"int_1": True}
    with pytest.raises(ClaimLost):
        pair.start_batch(dead)  # alice's guard, late: her claim is gone, nothing of hers runs
    pair.start_batch(taken)
    assert status(pair, "int_1") == ["executing"]


def test_a_claim_run_out_but_not_taken_still_starts(pair: Store) -> None:
    late = claim(pair, {"int_1": True}, ttl=0.001)
    assert isinstance(late, Claim)
    time.sleep(0.01)
    pair.start_batch(late)
    assert status(pair, "int_1", "int_2") == ["executing", "claimed"]


def test_a_started_batch_never_goes_back_to_pending(pair: Store) -> None:
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    pair.start_batch(got)
    pair.finish_batch(got, ResumeReport(ended=False, why="Ctrl-C"), ttl_s=60)
    one, two = pair.get_approval("int_1"), pair.get_approval("int_2")
    assert (one.status, one.outcome) == ("unfinished", "unknown") and "Ctrl-C" in one.note
    assert two.status == "failed" and "cannot continue" in two.note


def test_not_started_is_released_and_only_this_flows_decisions_are_cleared(pair: Store) -> None:
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    assert isinstance(claim(pair, {"int_2": False}, who="bob"), Queued)
    busy = ResumeReport(ended=True, status="error", error_code="RUN_BUSY", error_message="busy")
    assert pair.finish_batch(got, busy, ttl_s=60) is None
    one, two = pair.get_approval("int_1"), pair.get_approval("int_2")
    assert (one.status, one.decision) == ("pending", None) and "RUN_BUSY" in one.note
    assert (two.status, two.decision, two.decided_by) == ("pending", "deny", "bob")  # kept


@pytest.mark.parametrize(
    ("fact", "ended", "expected"),
    [
        (ran(True), ("ok", None), ("approved", "ok", None)),
        (
            ran(False, "RUN_HOST_FUNCTION_ERROR"),
            ("error", "RUN_HOST_FUNCTION_ERROR"),
            ("approved", "error", "RUN_HOST_FUNCTION_ERROR"),
        ),
        (ran(None), ("error", "RUN_WORKER_CRASHED"), ("approved", "unknown", None)),
        # the guard stopped it after marking the batch (the token was already used): final,
        # and it did not run
        (
            CallFacts(
                decision="approved", ok=False, error_code="RUN_CONTINUATION_INVALID", not_run=True
            ),
            ("error", "RUN_CONTINUATION_INVALID"),
            ("failed", None, None),
        ),
        # a host's own error that happens to carry that code: it ran
        (
            CallFacts(decision="approved", ok=False, error_code="RUN_CONTINUATION_INVALID"),
            ("error", "RUN_CONTINUATION_INVALID"),
            ("approved", "error", "RUN_CONTINUATION_INVALID"),
        ),
        (None, ("error", "RUN_TIMEOUT"), ("failed", None, None)),
    ],
    ids=["ok", "host-error", "crashed-while-running", "guard-refused", "host-code", "not-reached"],
)
def test_a_started_approval_is_decided_from_its_own_call(
    pair: Store,
    fact: CallFacts | None,
    ended: tuple[str, str | None],
    expected: tuple[str, str | None, str | None],
) -> None:
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    pair.start_batch(got)
    report = ResumeReport(
        ended=True,
        run_id="run_2",
        status=ended[0],
        error_code=ended[1],
        error_message="whatever the run said",
        calls={"int_1": fact} if fact else {},
    )
    pair.finish_batch(got, report, ttl_s=60)
    one = pair.get_approval("int_1")
    assert (one.status, one.outcome, one.outcome_code) == expected
    assert pair.get_approval("int_2").status == "superseded"


def test_a_started_batch_whose_lease_ran_out_is_unfinished_once_listed_and_never_runs(
    pair: Store, spec: str
) -> None:
    # The old rule: stuck (listed as such, refused) until someone ran `recover`.
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    pair.start_batch(got)
    with pytest.raises(ApprovalConflict, match="being resumed by alice"):
        pair.recover_batch("int_1", by="ops")
    expire_claims(spec, pair)  # alice's process died; her lease runs out
    assert pair.get_approval("int_1").state() == "stuck"  # nobody has looked yet
    before = pair.approvals_version()
    assert pair.list_approvals("stuck") == []  # the listing settles it first
    assert pair.approvals_version() > before  # so everyone waiting hears it
    one, two = pair.get_approval("int_1"), pair.get_approval("int_2")
    assert one.status == "unfinished" and one.outcome == "unknown"
    assert "alice" in one.note and "lease ran out" in one.note and "not run again" in one.note
    assert two.status == "failed"
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        claim(pair, {"int_1": True}, who="bob")
    assert pair.list_approvals("open") == []
    with pytest.raises(ApprovalConflict, match="nothing to recover"):
        pair.recover_batch("int_1", by="ops")


def test_recover_still_ends_a_lapsed_batch_nobody_has_looked_at(pair: Store, spec: str) -> None:
    got = claim(pair, {"int_1": True})
    assert isinstance(got, Claim)
    pair.start_batch(got)
    expire_claims(spec, pair)
    ended = {a.id: a for a in pair.recover_batch("int_2", by="ops")}
    assert ended["int_1"].status == "unfinished" and "recovered by ops" in ended["int_1"].note
    assert ended["int_2"].status == "failed"


def test_recover_releases_a_claim_that_never_started_and_refuses_a_plain_pending_one(
    pair: Store,
) -> None:
    with pytest.raises(ApprovalConflict, match="pending: nothing to recover"):
        pair.recover_batch("int_1", by="ops")
    claim(pair, {"int_1": True}, ttl=0.001)
    time.sleep(0.01)
    pair.recover_batch("int_1", by="ops")
    one = pair.get_approval("int_1")
    assert one.status == "pending" and one.claim_id is None and "nothing ran" in one.note


def test_a_denial_answered_without_the_guard_spends_the_batch(pair: Store) -> None:
    got = claim(pair, {"int_1": False})
    assert isinstance(got, Claim)
    report = ResumeReport(
        ended=True,
        run_id="run_2",
        status="error",
        error_code="RUN_APPROVAL_DENIED",
        calls={"int_1": CallFacts(decision="denied", ok=False, error_code="RUN_APPROVAL_DENIED")},
    )
    pair.finish_batch(got, report, ttl_s=60)
    assert status(pair, "int_1", "int_2") == ["denied", "superseded"]


def test_known_approvals_are_not_replaced(store: Store) -> None:
    store.add_approvals([approval("int_1")])
    claim(store, {"int_1": True})
    store.add_approvals([approval("int_1", "tok-new")])
    kept = store.get_approval("int_1")
    assert kept.status == "claimed" and kept.continuation == "tok-1"


def test_a_continuation_is_consumed_once(store: Store) -> None:
    later = time.time() + 3600
    assert store.consume_continuation("d1", later) is True
    assert store.consume_continuation("d1", later) is False
    assert store.consume_continuation("d2", later) is True
    # Spent ones are forgotten once the token itself has expired (the engine refuses it then).
    assert store.consume_continuation("old", time.time() - 1) is True
    assert store.consume_continuation("old", time.time() - 1) is True
    assert store.consume_continuation("d1", later) is False
