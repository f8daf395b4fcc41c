"""Claims as leases: a heartbeat holds a live resume's claim; a resume that stopped before
its guard is taken over; one that stopped after it is `unfinished` as soon as anyone looks,
unless every call it started is idempotent (then it is taken over with the same
continuation, and nobody else may replay that token). Decisions recorded as data
(`record_decisions`) and carried out by whoever can (`resumable`, `resume_decided`).

On all three stores; the process stories (SIGKILL before and after the first live call)
on the two durable ones, with real processes."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from types import ModuleType
from typing import Any

import pytest
from store_kinds import execute, expire_claims, open_spec
from test_approval_faults import read_line, start_approver
from test_team_clock import TWO_HOURS, clock_off_by

from run_repl.sandbox.resume.continuation import token_digest
from run_repl.sandbox.runner import Runner
from run_repl.store import LEASE_S, ApprovalConflict, Claim, PendingApproval, Store
from run_repl.store.approvals.flow import (
    Heartbeat,
    Resolution,
    decide,
    resolve,
    resume_decided,
    save_interrupted,
    store_runner,
    wait_for_approvals_change,
)
from run_repl.store.records import REPLAY_GRANT, ResumeReport

SECRET = "s" * 40
HOST = "bank_host:HOSTS"
TAKEOVER_S = 10.0  # what the issue asks: a dead decider's resume moves on within this


def approval(approval_id: str, token: str = "tok-1", **fields: object) -> PendingApproval:
    return PendingApproval(
        id=approval_id,
        run_id="run_1",
        source="src",
        host="bank_host:HOSTS",
        path="bank.transfer",
        continuation=token,
        created_at=float(approval_id[-1]),
        **fields,  # type: ignore[arg-type]
    )


@pytest.fixture
def pair(store: Store) -> Store:
    store.add_approvals([approval("int_1"), approval("int_2")])
    return store


def take(store: Store, approval_id: str, who: str, ttl: float = LEASE_S) -> Claim:
    return store.claim_decided(approval_id, claim_id=f"clm_{who}", claimed_by=who, ttl_s=ttl)


# ---------------------------------------------------------------- decisions as data


def test_recorded_decisions_wait_unclaimed_and_are_listed_as_resumable(pair: Store) -> None:
    assert pair.resumable() == []
    before = pair.approvals_version()
    [one] = pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    assert pair.approvals_version() > before  # waiters hear the decision
    assert one.decision == "approve" and one.decided_by == "alice" and one.claim_id is None
    stored = pair.get_approval("int_1")
    assert stored.status == "pending" and stored.state() == "queued"
    assert [a.id for a in pair.resumable()] == ["int_1"]  # one per batch
    assert [a.id for a in pair.resumable(host="bank_host:HOSTS")] == ["int_1"]
    assert pair.resumable(host="other:HOSTS") == []
    with pytest.raises(ApprovalConflict, match="approve by alice"):
        pair.record_decisions({"int_1": False}, decided_by="bob", decision_id="dec_b")
    # The same decision again is no conflict; the other approval of the batch joins it.
    pair.record_decisions({"int_1": True, "int_2": False}, decided_by="bob", decision_id="dec_b")
    assert pair.get_approval("int_2").decision == "deny"
    assert [a.id for a in pair.resumable()] == ["int_1"]


def test_claim_decided_takes_the_recorded_decisions_once(pair: Store) -> None:
    with pytest.raises(ApprovalConflict, match="not decided yet"):
        take(pair, "int_1", "exec1")
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    got = take(pair, "int_1", "exec1")
    assert got.decisions == {"int_1": True} and not got.takeover
    assert {a.id for a in got.approvals} == {"int_1", "int_2"}
    assert pair.resumable() == []
    with pytest.raises(ApprovalConflict, match="being resumed by exec1"):
        take(pair, "int_2", "exec2")
    # Decided meanwhile: queued on the held batch, carried out by its holder.
    [queued] = pair.record_decisions({"int_2": True}, decided_by="bob", decision_id="dec_b")
    assert queued.decision == "approve" and pair.get_approval("int_2").status == "claimed"
    with pytest.raises(KeyError):
        take(pair, "int_9", "exec2")


def test_a_lease_that_lapsed_before_the_guard_is_taken_over_with_its_decisions(
    pair: Store, spec: str
) -> None:
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    first = take(pair, "int_1", "exec1")
    assert pair.renew_batch(first, lease_s=LEASE_S)
    expire_claims(spec, pair)  # exec1 died before its first live call
    assert [a.id for a in pair.resumable()] == ["int_1"]
    second = take(pair, "int_1", "exec2")
    assert second.decisions == {"int_1": True} and not second.takeover
    assert not pair.renew_batch(first, lease_s=LEASE_S)  # exec1, back, learns it lost it
    with pytest.raises(Exception, match="ran out"):
        pair.start_batch(first)  # and its guard refuses: nothing of it runs
    pair.start_batch(second)
    assert pair.get_approval("int_1").claimed_by == "exec2"


def test_renewal_keeps_a_live_claim_and_pushes_its_lease(pair: Store) -> None:
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    got = take(pair, "int_1", "exec1", ttl=0.5)
    pair.start_batch(got)
    assert pair.renew_batch(got, lease_s=120)
    held = pair.get_approval("int_1")
    assert held.state() == "executing" and held.claim_expires_at > time.time() + 100
    assert pair.settle_lapsed() == []
    with pytest.raises(ApprovalConflict, match="being resumed"):
        take(pair, "int_1", "exec2")


def test_a_lease_that_lapsed_after_the_guard_is_unfinished_at_once(pair: Store, spec: str) -> None:
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    got = take(pair, "int_1", "exec1")
    pair.start_batch(got)
    expire_claims(spec, pair)  # exec1 died after its first live call
    assert pair.resumable() == []  # never re-run blindly
    before = pair.approvals_version()
    settled = {a.id: a for a in pair.settle_lapsed()}
    assert pair.approvals_version() > before
    assert settled["int_1"].status == "unfinished" and settled["int_1"].outcome == "unknown"
    assert "exec1" in settled["int_1"].note and "lease ran out" in settled["int_1"].note
    assert settled["int_2"].status == "failed"
    assert pair.settle_lapsed() == []
    assert not pair.renew_batch(got, lease_s=LEASE_S)
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        take(pair, "int_1", "exec2")


def test_a_claim_settles_a_lapsed_batch_it_meets(pair: Store, spec: str) -> None:
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    pair.start_batch(take(pair, "int_1", "exec1"))
    expire_claims(spec, pair)
    with pytest.raises(ApprovalConflict, match=r"already unfinished.*lease ran out"):
        pair.claim_batch(
            {"int_1": True}, claim_id="clm_b", claimed_by="bob", decided_by="bob", ttl_s=6
        )
    assert pair.get_approval("int_1").status == "unfinished"  # kept: the claim settled it


def test_an_idempotent_batch_that_lapsed_after_the_guard_is_taken_over_once(
    store: Store, spec: str
) -> None:
    store.add_approvals([approval("int_1", idempotent=True)])
    store.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    first = take(store, "int_1", "exec1")
    store.start_batch(first)
    digest = token_digest("tok-1")
    assert store.consume_continuation(digest, time.time() + 3600)  # exec1's resume spent it
    expire_claims(spec, store)
    assert store.settle_lapsed() == []  # idempotent: free for a takeover, not unfinished
    assert [a.id for a in store.resumable()] == ["int_1"]
    second = take(store, "int_1", "exec2")
    assert second.takeover and second.decisions == {"int_1": True}
    assert "taken over by exec2" in (store.get_approval("int_1").note or "")
    # Before its guard grants it, not even the takeover may spend the token again.
    grant = REPLAY_GRANT.set(second.claim_id)
    try:
        assert not store.consume_continuation(digest, time.time() + 3600)
    finally:
        REPLAY_GRANT.reset(grant)
    store.start_batch(second)
    assert not store.consume_continuation(digest, time.time() + 3600)  # anyone else: no
    other = REPLAY_GRANT.set("clm_someone_else")
    try:
        assert not store.consume_continuation(digest, time.time() + 3600)
    finally:
        REPLAY_GRANT.reset(other)
    grant = REPLAY_GRANT.set(second.claim_id)
    try:
        assert store.consume_continuation(digest, time.time() + 3600)  # the takeover: once
        assert not store.consume_continuation(digest, time.time() + 3600)  # and only once
    finally:
        REPLAY_GRANT.reset(grant)
    assert store.get_approval("int_1").claimed_by == "exec2"


def test_a_batch_with_one_started_call_not_idempotent_is_never_taken_over(
    store: Store, spec: str
) -> None:
    store.add_approvals([approval("int_1", idempotent=True), approval("int_2")])
    store.record_decisions({"int_1": True, "int_2": True}, decided_by="alice", decision_id="dec_a")
    store.start_batch(take(store, "int_1", "exec1"))
    expire_claims(spec, store)
    assert store.resumable() == []
    assert {a.id: a.status for a in store.settle_lapsed()} == {
        "int_1": "unfinished",
        "int_2": "unfinished",
    }


async def test_a_heartbeat_holds_the_claim_past_several_leases_and_says_when_lost(
    pair: Store,
) -> None:
    pair.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
    got = take(pair, "int_1", "exec1", ttl=0.3)
    pair.start_batch(got)
    beat = Heartbeat(pair, got, lease_s=0.3).start()
    try:
        deadline = time.monotonic() + 60
        while beat.beats < 6:  # two leases' worth of renewals, however slow the machine
            assert time.monotonic() < deadline and beat.lost is None
            await asyncio.sleep(0.05)
        assert pair.settle_lapsed() == [] and pair.get_approval("int_1").state() == "executing"
        with pytest.raises(ApprovalConflict, match="being resumed"):
            take(pair, "int_1", "exec2")
        # Someone settles it anyway (an operator's recover once it lapsed): the beat says so.
        pair.finish_batch(got, ResumeReport(ended=False, why="test"), ttl_s=1)
        while beat.lost is None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        assert "was lost" in beat.lost
    finally:
        beat.stop()


async def test_resume_decided_carries_out_a_decision_recorded_elsewhere(
    store: Store, runner: Runner, bank: ModuleType, pause: Any
) -> None:
    [paused] = await pause("return await bank.transfer(5, 'elsewhere')")
    store.record_decisions({paused.id: True}, decided_by="alice", decision_id="dec_a")
    assert [a.id for a in store.resumable()] == [paused.id]
    done = await resume_decided(store, runner, bank.HOSTS, paused.id, resumer="srv1")
    assert done.result is not None and done.result.status == "ok", done.result
    assert done.result.value == 5 and not done.warnings
    [after] = done.approvals
    assert after.status == "approved" and after.decided_by == "alice"
    assert (after.claimed_by or "").startswith("srv1@")
    assert bank.rows() == [("elsewhere", 5)]
    with pytest.raises(ApprovalConflict, match="already approved"):
        await resume_decided(store, runner, bank.HOSTS, paused.id, resumer="srv2")
    assert store.resumable() == [] and bank.rows() == [("elsewhere", 5)]


# ---------------------------------------------------------------- a live resume keeps its claim


async def test_a_live_resume_whose_call_outlasts_several_leases_is_never_taken_over(
    store: Store, runner: Runner, bank: ModuleType, pause: Any
) -> None:
    [paused] = await pause("return await bank.transfer(4, 'long', 120)")
    lease = 1.0
    task = asyncio.create_task(
        resolve(store, runner, bank.HOSTS, {paused.id: True}, approver="al", lease_s=lease)
    )
    deadline = time.monotonic() + 60
    while not bank.rows("start", "long"):  # the approved call runs (a sync one, on a thread)
        assert time.monotonic() < deadline and not task.done()
        await asyncio.sleep(0.02)
    leases: set[float] = set()
    while len(leases) < 10:  # ten renewals seen: the call has outlasted three leases
        assert time.monotonic() < deadline + 60, leases
        held = await asyncio.to_thread(store.get_approval, paused.id)
        assert held.state() == "executing"
        leases.add(held.claim_expires_at or 0)
        with pytest.raises(ApprovalConflict, match="being resumed"):
            await asyncio.to_thread(take, store, paused.id, "thief", lease)
        assert await asyncio.to_thread(store.settle_lapsed) == []
        assert await asyncio.to_thread(store.resumable) == []
        await asyncio.sleep(0.1)
    bank.release("long")
    done = await task
    assert done.result is not None and done.result.status == "ok" and not done.warnings
    assert store.get_approval(paused.id).status == "approved"
    assert bank.rows() == [("long", 4)]


def test_a_machine_two_hours_fast_neither_steals_nor_stretches_a_lease(
    postgres_spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    right, fast = open_spec(postgres_spec), open_spec(postgres_spec)
    try:
        right.add_approvals([approval("int_1"), approval("int_3", token="tok-3")])
        right.record_decisions({"int_1": True}, decided_by="alice", decision_id="dec_a")
        live = take(right, "int_1", "right")
        right.start_batch(live)
        assert right.renew_batch(live, lease_s=LEASE_S)
        with clock_off_by(monkeypatch, TWO_HOURS):  # by its clock, that lease ran out 2 h ago
            assert fast.resumable() == [] and fast.settle_lapsed() == []
            with pytest.raises(ApprovalConflict, match="being resumed by right"):
                take(fast, "int_1", "fast")
            # Its own lease, renewed by its clock, would outlast every other machine's 2 h.
            fast.record_decisions({"int_3": True}, decided_by="bob", decision_id="dec_b")
            mine = take(fast, "int_3", "fast")
            assert fast.renew_batch(mine, lease_s=LEASE_S)
        with clock_off_by(monkeypatch, -TWO_HOURS):  # and a slow one's lease is no shorter
            assert fast.renew_batch(mine, lease_s=LEASE_S)
        held = right.get_approval("int_3")
        assert held.state() == "claimed"
        assert 0 < held.claim_expires_at - time.time() <= LEASE_S + 5
        assert right.get_approval("int_1").state() == "executing"
    finally:
        right.close()
        fast.close()


# ---------------------------------------------------------------- a decider killed (real processes)


async def paused_run(store: Store, runner: Runner, bank: ModuleType, source: str) -> Any:
    first = await runner.run(source, bank.HOSTS)
    assert first.status == "interrupted", first.error
    [saved] = save_interrupted(store, first, source=source, host=HOST)
    return saved


async def take_over(
    store: Store, runner: Runner, bank: ModuleType, approval_id: str, since: float
) -> tuple[Resolution, float]:
    """Resume it from this process as soon as the dead decider's lease lets anyone (refused
    while it holds); how long after `since` that was. Within 10 s, or the test fails."""
    while True:
        try:
            done = await resume_decided(store, runner, bank.HOSTS, approval_id, resumer="srv")
            return done, time.monotonic() - since
        except ApprovalConflict as exc:
            assert "being resumed" in str(exc), exc
            assert time.monotonic() - since < TAKEOVER_S, "not taken over within 10 s"
            await asyncio.sleep(0.1)


def wait_for_start(bank: ModuleType, tag: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not bank.rows("start", tag):  # the approved call has begun (and is held)
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.02)


def kill(proc: subprocess.Popen[str]) -> float:
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return time.monotonic()


@pytest.mark.slow
async def test_a_decider_killed_before_the_first_live_call_is_taken_over_within_10_s(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    approval = await paused_run(store, runner, bank, "return await bank.transfer(2, 'early')")
    proc = start_approver(durable_spec, approval.id, "alice", "held")
    try:
        assert read_line(proc) == "held"  # claimed, its resume stopped short of the call
        assert store.get_approval(approval.id).state() == "claimed"
    finally:
        killed = kill(proc)
    done, after = await take_over(store, runner, bank, approval.id, killed)
    assert done.result is not None and done.result.status == "ok", done.result
    [ended] = done.approvals
    assert ended.status == "approved" and ended.decided_by == "alice"  # her decision, kept
    assert bank.rows() == [("early", 2)]  # run once
    print(f"taken over {after:.1f} s after the decider was killed")


@pytest.mark.slow
async def test_a_decider_killed_after_the_first_live_call_is_unfinished_at_once_for_waiters(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    source = "return await bank.transfer(1, 'late', 60)"
    approval = await paused_run(store, runner, bank, source)
    proc = start_approver(durable_spec, approval.id, "alice")
    try:
        wait_for_start(bank, "late", proc)
        version = store.approvals_version()
    finally:
        killed = kill(proc)
    # Nobody lists or decides: the waiter's own watch settles the lapsed lease and hears it.
    while (seen := store.get_approval(approval.id)).status != "unfinished":
        assert time.monotonic() - killed < TAKEOVER_S, f"still {seen.state()} (not 95 s)"
        version = await wait_for_approvals_change(store, version, TAKEOVER_S)
    heard = time.monotonic() - killed
    assert seen.outcome == "unknown"
    assert "alice" in (seen.note or "") and "lease ran out" in (seen.note or "")
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        await resume_decided(store, runner, bank.HOSTS, approval.id, resumer="srv")
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        await decide(store, runner, bank.HOSTS, {approval.id: True}, approver="bob")
    assert store.resumable() == []
    assert bank.rows("start", "late") == [("late", 1)] and bank.rows() == []  # never re-run
    print(f"unfinished, heard by a waiter, {heard:.1f} s after the decider was killed")


@pytest.mark.slow
async def test_an_idempotent_call_killed_mid_call_is_taken_over_with_the_same_continuation(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    source = "return await bank.transfer(3, 'idem', 60)"
    approval = await paused_run(store, runner, bank, source)
    # What the host declares (`@requires_approval(idempotent=True)`), as the store keeps it.
    execute(durable_spec, "UPDATE approvals SET idempotent = true")
    proc = start_approver(durable_spec, approval.id, "alice")
    try:
        wait_for_start(bank, "idem", proc)
    finally:
        killed = kill(proc)
    bank.release("idem")  # the call, run again, finishes at once
    assert store.settle_lapsed() == []  # never made unfinished: it may run again
    done, after = await take_over(store, runner, bank, approval.id, killed)
    assert done.result is not None and done.result.status == "ok" and done.result.value == 3
    [ended] = done.approvals
    assert ended.status == "approved" and ended.outcome == "ok"
    assert ended.continuation == approval.continuation  # the token the killed decider spent
    assert bank.rows("start", "idem") == [("idem", 3), ("idem", 3)]  # called once more
    assert bank.rows() == [("idem", 3)]
    # Anyone else replaying that token is still refused, and nothing runs.
    replay = await store_runner(store, secret=SECRET).run(
        source,
        bank.HOSTS,
        continuation=approval.continuation,
        resolutions=[{"interruption_id": approval.id, "value": True}],
    )
    assert replay.error is not None and replay.error.code == "RUN_CONTINUATION_INVALID"
    assert "already used" in replay.error.message
    with pytest.raises(ApprovalConflict, match="already approved"):
        await resume_decided(store, runner, bank.HOSTS, approval.id, resumer="srv2")
    assert bank.rows("start", "idem") == [("idem", 3), ("idem", 3)]
    print(f"taken over {after:.1f} s after the decider was killed")


async def test_a_saved_approval_keeps_whether_it_is_idempotent_and_who_started_its_run(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    source = "await bank.transfer(1, 'a')\nreturn await bank.transfer(2, 'b')"
    first = await runner.run(source, bank.HOSTS)
    assert first.status == "interrupted" and first.interruptions
    # What the engine says of a call declared `@requires_approval(idempotent=True)`.
    object.__setattr__(first.interruptions[0], "idempotent", True)
    [saved] = save_interrupted(store, first, source=source, host=HOST, resume_by="exec_ide_1")
    assert saved.idempotent and saved.resume_by == "exec_ide_1"
    assert store.get_approval(saved.id).idempotent  # as the store keeps it
    done = await resolve(store, runner, bank.HOSTS, {saved.id: True})
    assert done.result is not None and done.result.status == "interrupted"
    [following] = [a for a in store.list_approvals("pending") if a.id != saved.id]
    # The run's next approval waits on the same process; whether it is idempotent is its own.
    assert following.resume_by == "exec_ide_1" and not following.idempotent
