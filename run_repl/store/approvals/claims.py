"""The rules of claiming, starting, settling and recovering a batch of approvals.

Written once for every backend: a store supplies one transaction over its
approvals table (`ApprovalRows`: read by id or by batch, update, insert) and
inherits the operations. Each operation is one transaction, so two processes
(or two machines, on a shared server) see each other's claims whole.

The promise these rules keep: an approved call runs at most once, and a
decision is never lost. A resume passes a guard (`start_batch`) before any
host function runs live; from then on its approvals never go back to pending.

A claim is a lease (`LEASE_S`) that its resume renews on a heartbeat
(`renew_batch`, one conditional statement on the store's clock). A lease that
lapses before the guard leaves the batch free with its decisions kept: anyone
eligible takes it over (`claim_decided`, `resumable`). One that lapses after the
guard is settled `unfinished` by whoever looks next (`settle_lapsed`, claims,
listings, the watch), unless every call it started is idempotent: then it is
free again, and the takeover's guard lets its spent continuation through once
more for that claim alone (`grant_replay`, `records.REPLAY_GRANT`).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from ...sandbox.resume.continuation import token_digest
from ..records import (
    Applied,
    ApprovalConflict,
    ApprovalStuck,
    CallFacts,
    Claim,
    ClaimLost,
    PendingApproval,
    Queued,
    ResumeReport,
    as_decision,
    continuation_batch,
)

LEASE_S = 6.0
"""How long a claim lasts unless its resume renews it (every LEASE_S / 3): a dead
resume's batch is free, or settled, this long after its last heartbeat."""


class ApprovalRows(Protocol):
    """The approvals table inside one transaction."""

    def by_ids(self, ids: list[str]) -> dict[str, PendingApproval]: ...
    def of_batch(self, batch: str) -> list[PendingApproval]: ...
    def update(self, approvals: Iterable[PendingApproval]) -> None: ...
    def insert(self, approvals: Iterable[PendingApproval]) -> None:
        """Add new approvals; an id already present is left as it is."""

    def now(self) -> float:
        """The clock claims are read against (a shared server's own, for many machines);
        the operations read it after their first `by_ids`, once the locks are held."""

    def grant_replay(self, digest: str, claim_id: str) -> None:
        """Let the continuation `digest` (spent by the resume this claim takes over) be
        consumed once more, by claim `claim_id` only (`records.grant_key`)."""


T = TypeVar("T")

# A call that failed with one of these may still have been running when its run ended.
_STILL_RUNNING = frozenset(
    {"RUN_TIMEOUT", "RUN_ABORTED", "RUN_WORKER_CRASHED", "RUN_MEMORY_EXCEEDED"}
)


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _when(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment)) if moment else "?"


def _open(rows: Iterable[PendingApproval]) -> list[PendingApproval]:
    return [r for r in rows if not r.final]


def batch_state(rows: list[PendingApproval], now: float) -> tuple[str, PendingApproval | None]:
    """ "free", "held" (a live claim) or "stuck" (a started resume whose lease ran out:
    free for a takeover when `takeable`, else unfinished once someone looks)."""
    for r in rows:
        if r.started and not r.claim_live(now):
            return "stuck", r
    for r in rows:
        if r.claim_live(now):
            return "held", r
    return "free", None


def takeable(rows: list[PendingApproval]) -> bool:
    """A started batch whose every started call is idempotent: calling them again with
    the same key is safe, so a takeover may resume it from its continuation again."""
    started = [r for r in rows if r.status == "executing"]
    return bool(started) and all(r.idempotent for r in started)


def _stop_started(
    batch: list[PendingApproval], holder: PendingApproval | None, now: float, why: str
) -> None:
    """End a started batch whose resume stopped, running nothing: what started is
    `unfinished` (outcome unknown, never runs again), a denial denied, the rest failed."""
    started_by = holder.claimed_by if holder else "another approver"
    started_at = _when(holder.executing_at if holder else None)
    for r in batch:
        if r.status == "executing" and r.decision != "deny":  # approved, or not known
            _final(
                r,
                "unfinished",
                now,
                None,
                f"its resume by {started_by} started {started_at} and did not finish; "
                f"outcome unknown; it will not run again ({why})",
            )
            r.outcome = "unknown"
        elif r.status == "executing":
            _final(
                r, "denied", now, None, f"denied; its resume by {started_by} did not finish ({why})"
            )
        else:
            _final(
                r,
                "failed",
                now,
                None,
                f"its run's resume by {started_by} started {started_at} and did not finish: "
                f"the run cannot continue ({why})",
            )


def pick_resumable(rows: Iterable[PendingApproval], now: float) -> list[PendingApproval]:
    """Of open approvals, one per batch that has recorded decisions and is free to
    claim (never claimed, lapsed before its guard, or lapsed after it with only
    idempotent calls started): its oldest decided one, oldest first."""
    batches: dict[str, list[PendingApproval]] = {}
    for r in rows:
        if not r.final:
            batches.setdefault(r.batch, []).append(r)
    picked = []
    for batch in batches.values():
        batch.sort(key=lambda a: (a.created_at, a.id))
        decided = [r for r in batch if r.decision is not None]
        if not decided:
            continue
        state, _ = batch_state(batch, now)
        if state == "free" or (state == "stuck" and takeable(batch)):
            picked.append(decided[0])
    return sorted(picked, key=lambda a: (a.created_at, a.id))


def stuck_message(row: PendingApproval, started: PendingApproval | None = None) -> str:
    """Why `row` cannot be decided: its batch's resume (`started`) never finished."""
    started = started or row
    head = (
        f"Approval {row.id}: its run's resume by {started.claimed_by or 'another approver'} started "
        f"at {_when(started.executing_at)} and never finished, so its calls may have run."
    )
    if row.idempotent:
        return (
            f"{head} Its call is idempotent: a process with its host takes the resume over and "
            f"calls it again with the same key; `run-repl approvals recover {row.id}` ends it instead."
        )
    return (
        f"{head} They will not run again; `run-repl approvals recover {row.id}` records that and "
        "ends it."
    )


def _release(row: PendingApproval, claim_id: str, note: str) -> None:
    """Back to pending: nothing of this resume ran. Decisions this flow made are
    cleared (its person is told and decides again); queued ones stay."""
    row.status = "pending"
    row.executing_at = None
    row.claim_id = row.claim_expires_at = None  # a guard still on its way now finds no claim
    row.note = note
    if row.decision_id == claim_id:
        row.decision = row.decided_by = row.decided_via = row.decided_at = row.decision_id = None


def _unclaim(row: PendingApproval) -> None:
    row.status = "pending"
    row.claim_id = row.claim_expires_at = row.executing_at = None


def _final(
    row: PendingApproval, status: str, now: float, run_id: str | None, note: str | None
) -> None:
    row.status = status  # type: ignore[assignment]  # callers pass final statuses
    row.finished_at = now
    row.claim_expires_at = None
    if run_id is not None:
        row.resumed_run_id = run_id
    row.note = note


def _settle_resolved(
    row: PendingApproval,
    fact: CallFacts | None,
    report: ResumeReport,
    spent: bool,
    claim_id: str,
    now: float,
) -> None:
    """An approval this resume answered: decided from its own call's record."""
    approve = row.decision == "approve"
    run_id = report.run_id
    if fact is not None and fact.not_run:
        fact = None
    if fact is not None and fact.decision == "denied":
        _final(row, "denied", now, run_id, None)
        return
    if fact is not None and fact.decision == "refused":
        _final(row, "failed", now, run_id, "the approval policy refused the call: it did not run")
        return
    if fact is not None:  # it ran (an approved call, or a host's own interrupt given its answer)
        _final(row, "approved" if approve else "denied", now, run_id, None)
        row.outcome = "ok" if fact.ok is True else "error" if fact.ok is False else "unknown"
        row.outcome_code = fact.error_code if fact.ok is False else None
        if fact.ok is None or fact.error_code in _STILL_RUNNING:
            row.note = "it started; the run ended while it was running, so it may have finished"
        return
    if not report.ended:
        if not spent:
            _release(row, claim_id, f"not resumed: {report.why} before anything ran; decide again")
        elif approve:
            _final(
                row,
                "unfinished",
                now,
                run_id,
                f"its resume started {_when(row.executing_at)}; outcome unknown ({report.why}); "
                "it will not run again",
            )
            row.outcome = "unknown"
        else:
            _final(row, "denied", now, run_id, f"denied; the resume was interrupted ({report.why})")
        return
    why = _short(
        f"{report.error_code}: {report.error_message}" if report.error_code else str(report.status)
    )
    if spent or report.status == "ok":
        if approve:
            _final(
                row,
                "failed",
                now,
                run_id,
                f"its run's resume ended before this call ran ({why}): it did not run",
            )
        else:
            _final(row, "denied", now, run_id, None)
        return
    _release(row, claim_id, f"not resumed ({why}); nothing ran; decide again")


def _settle_other(
    row: PendingApproval,
    report: ResumeReport,
    spent: bool,
    continuing: set[str],
    claim_id: str,
    now: float,
) -> None:
    """An approval of the batch this resume did not answer (undecided, or queued after the claim)."""
    if row.id in continuing:
        if report.next_continuation:
            row.continuation = report.next_continuation
            row.batch = continuation_batch(report.next_continuation)
        row.run_id = report.next_run_id or row.run_id
        row.note = None
        _unclaim(row)
        return
    if not report.ended:
        if spent:
            _final(
                row,
                "failed",
                now,
                None,
                f"its run's resume was interrupted ({report.why}): the run cannot continue",
            )
        else:
            _unclaim(row)
        return
    if spent or report.status in ("ok", "interrupted"):
        why = f" ({report.error_code})" if report.error_code else ""
        _final(
            row,
            "superseded",
            now,
            report.run_id,
            f"its run ended without reaching this call again{why}",
        )
        return
    _unclaim(row)


class ApprovalClaims(ABC):
    """The approval operations of a store, over its `_approval_rows()` transaction."""

    @abstractmethod
    def _approval_rows(self) -> AbstractContextManager[ApprovalRows]:
        """One write transaction over the approvals table (durable on commit)."""

    def _approval_tx(self, work: Callable[[ApprovalRows], T]) -> T:
        """Run one operation in one `_approval_rows` transaction; its result.

        A backend whose commit can be lost on the way back (a server) overrides
        this to learn whether it happened, rather than guess."""
        with self._approval_rows() as rows:
            return work(rows)

    # ---------------------------------------------------------------- what a backend adds
    def _lapsed_batches(self) -> list[str]:
        """Batches with a started, non-idempotent call whose lease ran out (a cheap read,
        outside any write transaction): what `settle_lapsed` ends."""
        raise NotImplementedError

    def _open_rows(self, host: str | None) -> tuple[list[PendingApproval], float]:
        """Every open approval (of `host`, when given) and the store's clock."""
        raise NotImplementedError

    def _renew(self, claim_id: str, ids: list[str], until_s: float) -> set[str]:
        """Push the lease of claim `claim_id` on these approvals to the store's now plus
        `until_s`, where it still holds them (one conditional statement); the ids renewed."""
        raise NotImplementedError

    # ---------------------------------------------------------------- leases
    def renew_batch(self, claim: Claim, *, lease_s: float = LEASE_S) -> bool:
        """The heartbeat: the claim lasts `lease_s` more, on the store's clock. False
        when the claim is lost (taken over, settled, released): it is not renewed."""
        ids = [a.id for a in claim.approvals]
        return self._renew(claim.claim_id, ids, lease_s) == set(ids)

    def settle_lapsed(self) -> list[PendingApproval]:
        """Settle every batch whose resume passed its guard and stopped renewing its lease:
        `unfinished` (outcome unknown), never run again; what it just settled. A batch
        whose started calls are all idempotent is left free for a takeover."""
        batches = self._lapsed_batches()
        return self._settle_batches(batches) if batches else []

    def _settle_batches(self, batches: Iterable[str]) -> list[PendingApproval]:
        def work(rows: ApprovalRows) -> list[PendingApproval]:
            settled: list[PendingApproval] = []
            for key in sorted(set(batches)):
                batch = _open(rows.of_batch(key))
                now = rows.now()
                state, holder = batch_state(batch, now)
                if state != "stuck" or takeable(batch):
                    continue
                ran_out = _when(holder.claim_expires_at if holder else None)
                _stop_started(batch, holder, now, f"its lease ran out at {ran_out}")
                rows.update(batch)
                settled += batch
            return settled

        return self._approval_tx(work)

    def resumable(self, host: str | None = None) -> list[PendingApproval]:
        """One approval per batch that has recorded decisions and is free to claim (never
        claimed, lapsed before its guard, or lapsed after it with only idempotent calls
        started), oldest first; `host`: only that host's."""
        rows, now = self._open_rows(host)
        return pick_resumable(rows, now)

    # ---------------------------------------------------------------- deciding
    def claim_batch(
        self,
        decisions: Mapping[str, object],
        *,
        claim_id: str,
        claimed_by: str,
        decided_by: str,
        ttl_s: float,
        waiting: bool = False,
        decided_via: str | None = None,
    ) -> Claim | Queued | Applied:
        """Record these decisions and take their batch for one resume (a lease of
        `ttl_s`, which its resume renews).

        A Claim when the batch was free (it carries every decision recorded on
        the batch, queued ones too; a takeover when its resume had started and
        every call it started is idempotent); Queued when another resume holds it
        (the decisions are kept and applied by whoever resumes it next); Applied when
        `waiting` and another resume already carried them out. ApprovalConflict
        for an approval already decided by someone else (or settled unfinished:
        its resume stopped after its guard), ApprovalStuck for a batch whose resume
        stopped meanwhile, KeyError for an unknown id, ValueError for approvals of
        different runs."""
        ids = list(decisions)
        if not ids:
            raise ValueError("no approvals to decide")
        # A resume that stopped after its guard is settled first (its own transaction, so
        # the conflict that follows keeps it): anyone who looks settles what they see.
        self.settle_lapsed()

        def work(rows: ApprovalRows) -> Claim | Queued | Applied:
            got = _record(
                rows,
                decisions,
                decision_id=claim_id,
                decided_by=decided_by,
                decided_via=decided_via,
                waiting=waiting,
            )
            if isinstance(got, Applied):
                return got
            mine, batch, state, holder, now = got
            if state == "held":
                return Queued(
                    batch=mine[0].batch,
                    held_by=holder.claimed_by if holder else None,
                    approvals=mine,
                )
            return _take(rows, batch, claim_id, claimed_by, now, ttl_s, takeover=state == "stuck")

        return self._approval_tx(work)

    def record_decisions(
        self,
        decisions: Mapping[str, object],
        *,
        decided_by: str,
        decided_via: str | None = None,
        decision_id: str,
    ) -> list[PendingApproval]:
        """Record these decisions without claiming their batch: whoever resumes it next
        (the process that started the run, a server with its host, `claim_decided`)
        carries them out. The approvals as recorded. Conflicts as `claim_batch` raises
        them; a held batch gets them queued, as `claim_batch` would."""
        ids = list(decisions)
        if not ids:
            raise ValueError("no approvals to decide")
        # A resume that stopped after its guard is settled first (its own transaction, so
        # the conflict that follows keeps it): anyone who looks settles what they see.
        self.settle_lapsed()

        def work(rows: ApprovalRows) -> list[PendingApproval]:
            got = _record(
                rows,
                decisions,
                decision_id=decision_id,
                decided_by=decided_by,
                decided_via=decided_via,
                waiting=False,
            )
            assert not isinstance(got, Applied)  # only when waiting
            return got[0]

        return self._approval_tx(work)

    def claim_decided(
        self, approval_id: str, *, claim_id: str, claimed_by: str, ttl_s: float = LEASE_S
    ) -> Claim:
        """Take the batch of `approval_id` for one resume of the decisions recorded on it
        (a takeover when its resume had started and every call it started is idempotent).
        ApprovalConflict when another resume holds it, it is final (or settled now:
        its resume stopped after its guard), or nothing on it is decided yet;
        KeyError for an unknown id."""
        self.settle_lapsed()  # as claim_batch does

        def work(rows: ApprovalRows) -> Claim:
            found = rows.by_ids([approval_id]).get(approval_id)
            now = rows.now()
            if found is None:
                raise KeyError(approval_id)
            if found.final:
                raise ApprovalConflict(
                    f"Approval {approval_id} is already {found.status}: there is nothing to resume."
                )
            batch = _open(rows.of_batch(found.batch))
            now = rows.now()
            state, holder = batch_state(batch, now)
            if state == "held":
                raise ApprovalConflict(
                    f"Approval {approval_id} is being resumed by "
                    f"{holder.claimed_by if holder else 'someone'}: it resumes once."
                )
            if state == "stuck" and not takeable(batch):
                raise ApprovalStuck(stuck_message(found, holder))
            if not any(r.decision for r in batch):
                raise ApprovalConflict(
                    f"Approval {approval_id} is not decided yet: there is nothing to resume."
                )
            return _take(rows, batch, claim_id, claimed_by, now, ttl_s, takeover=state == "stuck")

        return self._approval_tx(work)

    def start_batch(self, claim: Claim) -> None:
        """The guard: before anything of the resume runs live, mark it started.

        Conditional on the claim: one that expired and was taken by someone
        else (or recovered) raises ClaimLost, and nothing runs."""

        def work(rows: ApprovalRows) -> None:
            current = rows.by_ids([a.id for a in claim.approvals])
            now = rows.now()
            # "pending" here is this claim run out with nobody taking it: still ours.
            held = [
                r
                for r in current.values()
                if r.claim_id == claim.claim_id
                and r.status in ("claimed", "pending")
                and r.executing_at is None
            ]
            if {r.id for r in held} != {a.id for a in claim.approvals}:
                raise ClaimLost(
                    "the claim on these approvals ran out and another approver took them: "
                    "this resume does not run"
                )
            for r in held:
                r.executing_at = now
                r.status = "executing" if r.id in claim.decisions else "claimed"
            rows.update(held)
            if claim.takeover:  # its continuation was spent by the resume it takes over
                rows.grant_replay(token_digest(claim.first.continuation), claim.claim_id)

        return self._approval_tx(work)

    def finish_batch(self, claim: Claim, report: ResumeReport, *, ttl_s: float) -> Claim | None:
        """Settle a claimed batch from what its resume did (or did not see happen).

        Each answered approval is decided from its own call's record; nothing
        the run reports otherwise (its error code) changes that. A batch whose
        resume passed the guard is never pending again. Approvals the resumed
        run waits on move to its new continuation; if decisions are queued on
        that new batch, this flow keeps it (the Claim to resume next)."""

        def work(rows: ApprovalRows) -> Claim | None:
            current = rows.by_ids([a.id for a in claim.approvals])
            now = rows.now()
            mine = [
                r
                for r in current.values()
                if r.claim_id == claim.claim_id and r.status in ("claimed", "executing", "pending")
            ]
            # Spent: its resume passed the guard, or answered a call (a denial
            # needs no guard). Then the old continuation is never used again.
            spent = any(r.executing_at is not None for r in mine) or any(
                not f.not_run for i, f in report.calls.items() if i in claim.decisions
            )
            continuing = {a.id for a in report.next_approvals}
            for r in mine:
                if r.id in claim.decisions and r.decision is not None:
                    _settle_resolved(r, report.calls.get(r.id), report, spent, claim.claim_id, now)
                else:
                    _settle_other(r, report, spent, continuing, claim.claim_id, now)
            rows.update(mine)
            known = rows.by_ids([a.id for a in report.next_approvals])
            rows.insert(a for a in report.next_approvals if a.id not in known)
            if not report.next_approvals:
                return None
            batch = _open(rows.of_batch(report.next_approvals[0].batch))
            state, _ = batch_state(batch, now)
            if state != "free" or not any(r.decision for r in batch):
                return None
            for r in batch:  # decisions queued while this resume ran: this flow goes on with them
                r.status = "claimed"
                r.claim_id, r.claimed_by, r.claimed_at = claim.claim_id, claim.claimed_by, now
                r.claim_expires_at = now + ttl_s
                r.executing_at = None
            rows.update(batch)
            return Claim(
                claim_id=claim.claim_id,
                claimed_by=claim.claimed_by,
                batch=batch[0].batch,
                expires_at=now + ttl_s,
                approvals=batch,
                decisions={r.id: r.decision == "approve" for r in batch if r.decision},
            )

        return self._approval_tx(work)

    def recover_batch(self, approval_id: str, *, by: str) -> list[PendingApproval]:
        """End a stuck batch without running anything: what started is
        `unfinished` (outcome unknown, never runs again), the rest `failed`.
        A claim that ran out before its resume started is simply released.
        ApprovalConflict while a live resume holds it; KeyError for an unknown id."""

        def work(rows: ApprovalRows) -> list[PendingApproval]:
            found = rows.by_ids([approval_id]).get(approval_id)
            now = rows.now()
            if found is None:
                raise KeyError(approval_id)
            if found.final:
                raise ApprovalConflict(
                    f"Approval {approval_id} is already {found.status}: there is nothing to recover."
                )
            batch = _open(rows.of_batch(found.batch))
            state, holder = batch_state(batch, now)
            if state == "held":
                raise ApprovalConflict(
                    f"Approval {approval_id} is being resumed by {holder.claimed_by if holder else 'someone'} "
                    f"(claim until {_when(holder.claim_expires_at if holder else None)}): wait for it."
                )
            if state == "free":
                released = [r for r in batch if r.claim_id is not None]
                if not released:
                    raise ApprovalConflict(
                        f"Approval {approval_id} is {found.state(now)}: nothing to recover "
                        "(approve or deny it)."
                    )
                for r in released:
                    _unclaim(r)
                    r.note = f"its claim ran out before the resume started (nothing ran); released by {by}"
                rows.update(released)
                return batch
            _stop_started(batch, holder, now, f"recovered by {by}")
            rows.update(batch)
            return batch

        return self._approval_tx(work)


def _record(
    rows: ApprovalRows,
    decisions: Mapping[str, object],
    *,
    decision_id: str,
    decided_by: str,
    decided_via: str | None,
    waiting: bool,
) -> (
    Applied
    | tuple[list[PendingApproval], list[PendingApproval], str, PendingApproval | None, float]
):
    """Record decisions on their batch (one transaction, rows locked): Applied when
    `waiting` and another resume carried them out, else the decided approvals, their
    open batch, its state and holder, and the clock. Conflicts raise."""
    ids = list(decisions)
    found = rows.by_ids(ids)  # locks the rows (a server's store: their batches)
    now = rows.now()  # read once the locks are held
    for i in ids:
        if i not in found:
            raise KeyError(i)
    if len({found[i].batch for i in ids}) != 1:
        # Of one run once, some were decided by someone else meanwhile (they stay
        # behind) and the rest moved on with the run: a conflict, not a mistake.
        if waiting and all(found[i].final for i in ids):
            return Applied(approvals=[found[i] for i in ids])
        for i in ids:
            if found[i].final:
                raise ApprovalConflict(
                    f"Approval {i} is already {found[i].status}: it can be decided only once."
                )
        raise ValueError(
            "these approvals belong to different runs: decide each run's approvals on their own"
        )
    everything = {r.id: r for r in rows.of_batch(found[ids[0]].batch)}
    now = rows.now()
    mine = [everything.get(i, found[i]) for i in ids]  # one object per row
    batch = _open(everything.values())
    state, holder = batch_state(batch, now)
    if state == "stuck" and takeable(batch):
        state = "free_takeover"
    if waiting and all(r.final for r in mine):
        return Applied(approvals=mine)
    free = state in ("free", "free_takeover")
    for r in mine:
        want = as_decision(decisions[r.id])
        if r.final:
            if waiting and r.decision == want:
                continue
            note = f" ({r.note})" if r.status == "unfinished" and r.note else ""
            raise ApprovalConflict(
                f"Approval {r.id} is already {r.status}: it can be decided only once.{note}"
            )
        if state == "stuck":
            raise ApprovalStuck(stuck_message(r, holder))
        if r.decision is None or r.decision_id == decision_id:
            continue
        if r.decision == want and (waiting or free):
            continue  # the same decision, waiting on this batch: carried out together
        who = f"{r.decision} by {r.decided_by or 'someone'} at {_when(r.decided_at)}"
        if state == "held" and holder is not None and holder.claim_id == r.decision_id:
            raise ApprovalConflict(
                f"Approval {r.id} is already claimed ({who}); it is being resumed: "
                "it can be decided only once."
            )
        raise ApprovalConflict(
            f"Approval {r.id} was already decided ({who}) and waits for its run to resume: "
            "it can be decided only once."
        )
    changed = []
    for r in mine:
        if r.final or r.decision is not None:
            continue
        r.decision = as_decision(decisions[r.id])
        r.decided_by, r.decided_at, r.decision_id = decided_by, now, decision_id
        r.decided_via = decided_via
        changed.append(r)
    rows.update(changed)
    return mine, batch, "stuck" if state == "free_takeover" else state, holder, now


def _take(
    rows: ApprovalRows,
    batch: list[PendingApproval],
    claim_id: str,
    claimed_by: str,
    now: float,
    ttl_s: float,
    *,
    takeover: bool,
) -> Claim:
    """Claim a free batch (or take over a lapsed idempotent one) for one resume."""
    for r in batch:
        if takeover and r.status == "executing":
            r.note = (
                f"taken over by {claimed_by}: its resume by {r.claimed_by or 'another process'} "
                "stopped; its idempotent call runs again with the same key"
            )
        r.status = "claimed"
        r.claim_id, r.claimed_by, r.claimed_at = claim_id, claimed_by, now
        r.claim_expires_at = now + ttl_s
        r.executing_at = None
    rows.update(batch)
    return Claim(
        claim_id=claim_id,
        claimed_by=claimed_by,
        batch=batch[0].batch,
        expires_at=now + ttl_s,
        approvals=batch,
        decisions={r.id: r.decision == "approve" for r in batch if r.decision},
        takeover=takeover,
    )


__all__ = [
    "LEASE_S",
    "ApprovalClaims",
    "ApprovalRows",
    "batch_state",
    "pick_resumable",
    "stuck_message",
    "takeable",
]
