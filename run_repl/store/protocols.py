"""What a store is, in four narrow parts; a front end asks only for the part it uses.

    ValueStore         values by item (the engine's ResultStore): `expand` pages them
    RunHistory         runs, newest first, searchable; rows listed without whole envelopes
    ApprovalStore      approvals and the claims that resume them exactly once
    ContinuationStore  consume-once continuations (the runner's `continuation_store`)

`Store` is all four plus `location` and `close()`: SQLite (embedded default),
PostgreSQL (a team's server: `PostgresStore`) and memory implement it. A store
that can tell of approval changes also has `watch_approvals(callback, on_error)`
and `wait_approvals_change(since, timeout_s)` (PostgreSQL's LISTEN/NOTIFY; SQLite's
one reading thread, `approvals.watch.PollingWatch`);
`approvals.flow.wait_for_approvals_change` uses them, or polls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..sandbox.runner import ContinuationStore
from ..sandbox.wire.result_store import ResultStore, StoredItems
from .executors import ExecutorRegistry
from .records import Applied, Claim, PendingApproval, Queued, ResumeReport, RunKey, RunRecord

ValueStore = ResultStore  # the engine's protocol: put_items, get_items, get_chunks
# ContinuationStore is the engine's too: consume_continuation(digest, expires_at) -> bool.


@runtime_checkable
class RunHistory(Protocol):
    def record_run(self, run: RunRecord, values: Sequence[StoredItems] = ()) -> None:
        """Keep a run (its envelope cut to the history's byte budget; old runs
        leave when the history is over its total budget), and `values` (what its
        result names: its value and logs) in the same transaction."""

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        """Newest first; `query` matches source, status or error code. Rows
        carry a preview envelope (`partial`) when the stored one is large."""

    def get_run(self, run_id: str) -> RunRecord | None: ...

    def owner_of_run(self, run_id: str) -> str | None:
        """The principal that owns run `run_id` (None: nobody, or no such run)."""

    def owner_of_ref(self, ref: str) -> str | None:
        """The principal that owns the run whose value (or logs) `ref` holds."""

    def count_refused(self, code: str) -> None:
        """Count a run refused before it started (RUN_BUSY): nothing ran, so the
        history keeps no row for it (refusals under load outnumbered the runs)."""

    def refused_runs(self) -> dict[str, int]:
        """How many runs were refused before they started, by error code."""


@runtime_checkable
class RunKeys(Protocol):
    """The `run` tool's idempotency keys: a retry with a key finds the first call's run."""

    def reserve_run_key(
        self, owner: str, key: str, digest: str, *, holder: str, max_age_s: float
    ) -> RunKey:
        """The key's row: new, with `holder`, unless one younger than `max_age_s` exists."""

    def get_run_key(self, owner: str, key: str) -> RunKey | None: ...

    def settle_run_key(self, owner: str, key: str, *, holder: str, run_id: str | None) -> None:
        """Name the reserved key's run, or (`run_id` None) give back a key whose run never ran."""


@runtime_checkable
class ApprovalStore(Protocol):
    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        """Keep new pending approvals; an id already known is left as it is."""

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        """Oldest first. `status`: a stored status; "pending" (decidable: also
        claims that ran out before their resume started); "open" (not final);
        "stuck"; None for all."""

    def get_approval(self, approval_id: str) -> PendingApproval | None: ...

    def get_approvals(self, approval_ids: Iterable[str]) -> dict[str, PendingApproval]:
        """Those of `approval_ids` the store has, by id, in one read."""
        ...

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
    ) -> Claim | Queued | Applied: ...

    def record_decisions(
        self,
        decisions: Mapping[str, object],
        *,
        decided_by: str,
        decided_via: str | None = None,
        decision_id: str,
    ) -> list[PendingApproval]:
        """Record decisions on a free batch without claiming it (a held one gets them
        queued); conflicts as `claim_batch` raises them."""

    def claim_decided(
        self, approval_id: str, *, claim_id: str, claimed_by: str, ttl_s: float = ...
    ) -> Claim:
        """Take the batch of `approval_id` to carry out the decisions recorded on it."""

    def renew_batch(self, claim: Claim, *, lease_s: float = ...) -> bool:
        """The heartbeat: the claim's lease lasts `lease_s` more on the store's clock;
        False when the claim was lost."""

    def resumable(self, host: str | None = None) -> list[PendingApproval]:
        """One approval per batch with recorded decisions that is free to claim, oldest first."""

    def settle_lapsed(self) -> list[PendingApproval]:
        """Make `unfinished` every batch whose resume stopped after its guard (not all
        idempotent); what it settled."""

    def start_batch(self, claim: Claim) -> None: ...

    def finish_batch(self, claim: Claim, report: ResumeReport, *, ttl_s: float) -> Claim | None: ...

    def recover_batch(self, approval_id: str, *, by: str) -> list[PendingApproval]: ...

    def approvals_version(self) -> int:
        """A number that grows with every change to the approvals, from any process
        (an inbox or a waiting agent compares it with the one it last saw). A store
        that can push changes also has `wait_approvals_change(since, timeout_s)`."""


@runtime_checkable
class Store(
    ResultStore, RunHistory, RunKeys, ApprovalStore, ContinuationStore, ExecutorRegistry, Protocol
):
    """Everything the front ends keep: values, history, approvals, spent continuations, and
    the processes that can resume runs (`executors.py`)."""

    location: str
    durable: bool  # False: nothing kept outlives this process (the memory fallback)

    def close(self) -> None: ...


__all__ = [
    "ApprovalStore",
    "ContinuationStore",
    "ExecutorRegistry",
    "RunHistory",
    "RunKeys",
    "Store",
    "ValueStore",
]
