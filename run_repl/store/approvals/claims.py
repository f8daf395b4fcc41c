"""The rules of claiming, starting, settling and recovering a batch of approvals.

Written once for every backend: a store supplies one transaction over its
approvals table (`ApprovalRows`: read by id or by batch, update, insert) and
inherits the operations. Each operation is one transaction, so two processes
(or two machines, on a shared server) see each other's claims whole.

The promise these rules keep: an approved call runs at most once, and a
decision is never lost. A resume passes a guard (`start_batch`) before any
host function runs live; from then on its approvals never go back to pending.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

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
    """ "free", "held" (a live claim) or "stuck" (a started resume whose claim ran out)."""
    for r in rows:
        if r.started and not r.claim_live(now):
            return "stuck", r
    for r in rows:
        if r.claim_live(now):
            return "held", r
    return "free", None


def stuck_message(row: PendingApproval, started: PendingApproval | None = None) -> str:
    """Why `row` cannot be decided: its batch's resume (`started`) never finished."""
    started = started or row
    return (
        f"Approval {row.id}: its run's resume by {started.claimed_by or 'another approver'} started "
        f"at {_when(started.executing_at)} and never finished, so its calls may have run. They will "
        f"not run again; `run-repl approvals recover {row.id}` records that and ends it."
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
        """Record these decisions and take their batch for one resume.

        A Claim when the batch was free (it carries every decision recorded on
        the batch, queued ones too); Queued when another resume holds it (the
        decisions are kept and applied by whoever resumes it next); Applied when
        `waiting` and another resume already carried them out. ApprovalConflict
        for an approval already decided by someone else, ApprovalStuck for a
        batch whose resume never finished, KeyError for an unknown id,
        ValueError for approvals of different runs."""
        ids = list(decisions)
        if not ids:
            raise ValueError("no approvals to decide")

        def work(rows: ApprovalRows) -> Claim | Queued | Applied:
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
            mine = [everything.get(i, found[i]) for i in ids]  # one object per row
            batch = _open(everything.values())
            state, holder = batch_state(batch, now)
            if waiting and all(r.final for r in mine):
                return Applied(approvals=mine)
            for r in mine:
                want = as_decision(decisions[r.id])
                if r.final:
                    if waiting and r.decision == want:
                        continue
                    raise ApprovalConflict(
                        f"Approval {r.id} is already {r.status}: it can be decided only once."
                    )
                if state == "stuck":
                    raise ApprovalStuck(stuck_message(r, holder))
                if r.decision is None or r.decision_id == claim_id:
                    continue
                if r.decision == want and (waiting or state == "free"):
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
                r.decided_by, r.decided_at, r.decision_id = decided_by, now, claim_id
                r.decided_via = decided_via
                changed.append(r)
            if state == "held":
                rows.update(changed)
                return Queued(
                    batch=mine[0].batch,
                    held_by=holder.claimed_by if holder else None,
                    approvals=mine,
                )
            for r in batch:
                r.status = "claimed"
                r.claim_id, r.claimed_by, r.claimed_at = claim_id, claimed_by, now
                r.claim_expires_at = now + ttl_s
                r.executing_at = None
            rows.update(batch)
            claimed = batch
            return Claim(
                claim_id=claim_id,
                claimed_by=claimed_by,
                batch=mine[0].batch,
                expires_at=now + ttl_s,
                approvals=claimed,
                decisions={r.id: r.decision == "approve" for r in claimed if r.decision},
            )

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
                        f"outcome unknown; it will not run again (recovered by {by})",
                    )
                    r.outcome = "unknown"
                elif r.status == "executing":
                    _final(
                        r,
                        "denied",
                        now,
                        None,
                        f"denied; its resume by {started_by} did not finish (recovered by {by})",
                    )
                else:
                    _final(
                        r,
                        "failed",
                        now,
                        None,
                        f"its run's resume by {started_by} started {started_at} and did not finish: "
                        f"the run cannot continue (recovered by {by})",
                    )
            rows.update(batch)
            return batch

        return self._approval_tx(work)


__all__ = ["ApprovalClaims", "ApprovalRows", "batch_state", "stuck_message"]
