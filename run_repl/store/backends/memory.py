"""The store in memory: what the front ends use when the SQLite file cannot be.

The same protocols as the SQLite store, with the same approval rules (one
lock stands for the transaction); nothing survives the process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from ...sandbox.wire.result_store import MemoryResultStore, StoredItems
from ..approvals.claims import ApprovalClaims
from ..budgets import (
    DEFAULT_ENVELOPE_BYTES,
    DEFAULT_HISTORY_BYTES,
    PREVIEW_BYTES,
    low_water,
    over_budget,
)
from ..executors import MemoryExecutors
from ..json_budget import dumps, fit_envelope
from ..records import (
    FINAL_STATUSES,
    REPLAY_GRANT,
    PendingApproval,
    RunKey,
    RunRecord,
    as_read,
    grant_key,
)

GRANT_KEPT_S = 24 * 3600  # a takeover's grant to spend a token again, if never used


class _Rows:
    """Reads copies, writes on commit: an exception inside leaves the table as it was."""

    def __init__(self, table: dict[str, PendingApproval]) -> None:
        self.table = table
        self.changes: dict[str, PendingApproval] = {}
        self.grants: dict[str, float] = {}  # consumed-continuation rows, written on commit

    def _now(self, approval: PendingApproval) -> PendingApproval:
        return as_read(self.changes.get(approval.id, approval).model_copy(deep=True))

    def by_ids(self, ids: list[str]) -> dict[str, PendingApproval]:
        return {
            i: self._now(self.changes.get(i) or self.table[i])
            for i in ids
            if i in self.table or i in self.changes
        }

    def of_batch(self, batch: str) -> list[PendingApproval]:
        merged = {**self.table, **self.changes}
        rows = [self._now(a) for a in merged.values() if a.batch == batch]
        return sorted(rows, key=lambda a: (a.created_at, a.id))

    def update(self, approvals: Iterable[PendingApproval]) -> None:
        for a in approvals:
            self.changes[a.id] = a.model_copy(deep=True)

    def now(self) -> float:
        return time.time()

    def insert(self, approvals: Iterable[PendingApproval]) -> None:
        for a in approvals:
            if a.id not in self.table and a.id not in self.changes:
                self.changes[a.id] = a.model_copy(deep=True)

    def grant_replay(self, digest: str, claim_id: str) -> None:
        self.grants[grant_key(claim_id, digest)] = time.time() + GRANT_KEPT_S


class MemoryStore(ApprovalClaims, MemoryExecutors):
    """Values (a MemoryResultStore), history and approvals in this process."""

    durable = False  # nothing here outlives the process: say so before saying "saved"

    def __init__(
        self,
        location: str = "memory",
        *,
        values: MemoryResultStore | None = None,
        max_history_bytes: int = DEFAULT_HISTORY_BYTES,
        max_envelope_bytes: int = DEFAULT_ENVELOPE_BYTES,
    ) -> None:
        self.location = location
        self.values = values if values is not None else MemoryResultStore()
        self.max_history_bytes = max_history_bytes
        self.max_envelope_bytes = max_envelope_bytes
        self._runs: dict[str, tuple[RunRecord, int]] = {}
        self._approvals: dict[str, PendingApproval] = {}
        self._consumed: dict[str, float] = {}
        self._run_keys: dict[tuple[str, str], RunKey] = {}
        self._history_bytes = 0
        self._refused: dict[str, int] = {}
        self._approvals_version = 0
        self._lock = threading.RLock()
        MemoryExecutors.__init__(self)

    def close(self) -> None:
        pass

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ values
    def put_items(self, stored: StoredItems) -> None:
        self.values.put_items(stored)

    def settle(self, timeout_s: float = 60.0) -> None:
        """Nothing to wait for: this store evicts in the transaction of the write."""

    def get_items(self, ref: str) -> StoredItems | None:
        return self.values.get_items(ref)

    def get_chunks(self, ref: str, first: int, last: int) -> tuple[StoredItems, list[str]] | None:
        return self.values.get_chunks(ref, first, last)

    # ------------------------------------------------------------------ runs
    def record_run(self, run: RunRecord, values: Sequence[StoredItems] = ()) -> None:
        for stored in values:  # nothing here outlives the process: no transaction to share
            self.values.put_items(stored)
        envelope, cut = fit_envelope(run.envelope, self.max_envelope_bytes)
        kept = run.model_copy(
            update={
                "envelope": envelope,
                "envelope_cut": cut or run.envelope_cut,
                "resumed_status": None,  # read with the row, never kept with it
            }
        )
        size = len(dumps(envelope)) + len(run.source)
        with self._lock:
            before = self._runs.get(run.id)
            if before is not None and kept.resumed_as is None:
                kept.resumed_as = before[0].resumed_as  # as the SQL stores' upsert keeps it
            self._runs[run.id] = (kept, size)
            paused = self._runs.get(run.resumed_from or "")
            if paused is not None and run.resumed_from != run.id:
                # The paused run it resumed says what it became.
                paused[0].resumed_as = run.id
            self._history_bytes += size - (before[1] if before else 0)
            if self._history_bytes <= self.max_history_bytes:
                return
            oldest = sorted(self._runs.values(), key=lambda e: e[0].started_at)
            for gone in over_budget(
                ((r.id, s) for r, s in oldest),
                self._history_bytes,
                low_water(self.max_history_bytes),
                keep=run.id,
            ):
                self._history_bytes -= self._runs.pop(gone)[1]

    def history_bytes(self) -> int:
        """What the history holds, in bytes (what its budget counts)."""
        with self._lock:
            return self._history_bytes

    def count_refused(self, code: str) -> None:
        """A run refused before it started (RUN_BUSY): counted, never kept as a run."""
        with self._lock:
            self._refused[code] = self._refused.get(code, 0) + 1

    def refused_runs(self) -> dict[str, int]:
        """How many runs were refused before they started, by error code."""
        with self._lock:
            return dict(self._refused)

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        with self._lock:
            runs = sorted(
                (r for r, _ in self._runs.values()), key=lambda r: r.started_at, reverse=True
            )
        if query:
            q = query.lower()
            runs = [
                r
                for r in runs
                if q in r.source.lower() or q in r.status or q in (r.error_code or "").lower()
            ]
        listed = []
        for r in runs[:limit]:
            if len(dumps(r.envelope)) > PREVIEW_BYTES:
                r = r.model_copy(
                    update={"envelope": fit_envelope(r.envelope, PREVIEW_BYTES)[0], "partial": True}
                )
            listed.append(self._with_resumed_status(r))
        return listed

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._lock:
            found = self._runs.get(run_id)
        return self._with_resumed_status(found[0]) if found else None

    def _with_resumed_status(self, run: RunRecord) -> RunRecord:
        """The run as listed: with how the run that resumed it ended (a copy: never kept)."""
        with self._lock:
            resumed = self._runs.get(run.resumed_as or "")
        status = resumed[0].status if resumed else None
        return run.model_copy(update={"resumed_status": status})

    def owner_of_run(self, run_id: str) -> str | None:
        found = self.get_run(run_id)
        return found.owner if found else None

    def owner_of_ref(self, ref: str) -> str | None:
        stored = self.values.get_items(ref)
        return self.owner_of_run(stored.run_id) if stored and stored.run_id else None

    # ------------------------------------------------------------------ idempotency keys
    def reserve_run_key(
        self, owner: str, key: str, digest: str, *, holder: str, max_age_s: float
    ) -> RunKey:
        now = time.time()
        with self._lock:
            for old in [k for k, v in self._run_keys.items() if v.created_at < now - max_age_s]:
                del self._run_keys[old]
            found = self._run_keys.setdefault(
                (owner, key),
                RunKey(owner=owner, key=key, digest=digest, holder=holder, created_at=now),
            )
            return found.model_copy(update={"age_s": now - found.created_at})

    def get_run_key(self, owner: str, key: str) -> RunKey | None:
        with self._lock:
            found = self._run_keys.get((owner, key))
            return (
                found.model_copy(update={"age_s": time.time() - found.created_at})
                if found
                else None
            )

    def settle_run_key(self, owner: str, key: str, *, holder: str, run_id: str | None) -> None:
        with self._lock:
            found = self._run_keys.get((owner, key))
            if found is None or found.holder != holder:
                return
            if run_id is None:
                if found.run_id is None:
                    del self._run_keys[(owner, key)]
            else:
                found.run_id = run_id

    # ------------------------------------------------------------------ approvals
    @contextmanager
    def _approval_rows(self) -> Iterator[_Rows]:
        with self._lock:
            rows = _Rows(self._approvals)
            yield rows
            self._consumed.update(rows.grants)
            if rows.changes:  # an operation that only read changes nothing anyone watches
                self._approvals.update(rows.changes)
                self._approvals_version += 1

    def approvals_version(self) -> int:
        """A number that grows with every change to the approvals."""
        with self._lock:
            return self._approvals_version

    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        with self._approval_rows() as rows:
            rows.insert(approvals)

    def _lapsed_batches(self) -> list[str]:
        now = time.time()
        with self._lock:
            return sorted(
                {
                    a.batch
                    for a in self._approvals.values()
                    if a.status == "executing"
                    and not a.idempotent
                    and (a.claim_expires_at or 0) <= now
                }
            )

    def _open_rows(self, host: str | None) -> tuple[list[PendingApproval], float]:
        now = time.time()
        with self._lock:
            rows = [
                as_read(a.model_copy(deep=True), now)
                for a in self._approvals.values()
                if a.status not in FINAL_STATUSES and (host is None or a.host == host)
            ]
        return rows, now

    def _renew(self, claim_id: str, ids: list[str], until_s: float) -> set[str]:
        now = time.time()
        renewed = set()
        with self._lock:
            for i in ids:
                a = self._approvals.get(i)
                if (
                    a is not None
                    and a.claim_id == claim_id
                    and a.status in ("claimed", "executing")
                ):
                    a.claim_expires_at = now + until_s
                    renewed.add(i)
        return renewed

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        self.settle_lapsed()  # a resume that stopped after its guard reads unfinished now
        now = time.time()
        with self._lock:
            items = [as_read(a.model_copy(deep=True), now) for a in self._approvals.values()]
        items.sort(key=lambda a: (a.created_at, a.id))

        def wanted(a: PendingApproval) -> bool:
            if status is None:
                return True
            if status == "open":
                return a.status not in FINAL_STATUSES
            if status == "stuck":
                return a.state(now) == "stuck"
            return a.status == status

        return [a for a in items if wanted(a)]

    def get_approval(self, approval_id: str) -> PendingApproval | None:
        with self._lock:
            found = self._approvals.get(approval_id)
            return as_read(found.model_copy(deep=True)) if found else None

    def get_approvals(self, approval_ids: Iterable[str]) -> dict[str, PendingApproval]:
        with self._lock:
            found = [self._approvals.get(i) for i in set(approval_ids)]
            return {a.id: as_read(a.model_copy(deep=True)) for a in found if a is not None}

    # ------------------------------------------------------------------ continuations
    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        now = time.time()
        takeover = REPLAY_GRANT.get()
        with self._lock:
            for spent in [d for d, exp in self._consumed.items() if exp < now]:
                del self._consumed[spent]
            if digest in self._consumed:
                # Spent before, by the resume this claim took over: once more, for it alone.
                grant = grant_key(takeover, digest) if takeover is not None else None
                return grant is not None and self._consumed.pop(grant, None) is not None
            self._consumed[digest] = expires_at
            return True


__all__ = ["MemoryStore"]
