"""The store in memory: what the front ends use when the SQLite file cannot be.

Same interface as the SQLite store; nothing survives the process."""

from __future__ import annotations

import threading
import time

from ..sandbox.result_store import MemoryResultStore
from .records import ApprovalConflict, PendingApproval, RunRecord


class MemoryStore(MemoryResultStore):
    def __init__(self, location: str = "memory") -> None:
        super().__init__()
        self.location = location
        self._runs: dict[str, RunRecord] = {}
        self._approvals: dict[str, PendingApproval] = {}
        self._alock = threading.Lock()

    def record_run(self, run: RunRecord) -> None:
        self._runs[run.id] = run

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        runs = sorted(self._runs.values(), key=lambda r: r.started_at, reverse=True)
        if query:
            q = query.lower()
            runs = [
                r
                for r in runs
                if q in r.source.lower() or q in r.status or q in (r.error_code or "").lower()
            ]
        return runs[:limit]

    def get_run(self, run_id: str) -> RunRecord | None:
        return self._runs.get(run_id)

    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        with self._alock:
            for a in approvals:
                self._approvals[a.id] = a.model_copy()

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        items = sorted(self._approvals.values(), key=lambda a: a.created_at)
        return [a.model_copy() for a in items if status is None or a.status == status]

    def get_approval(self, approval_id: str) -> PendingApproval | None:
        found = self._approvals.get(approval_id)
        return found.model_copy() if found else None

    def claim_approvals(self, ids: list[str]) -> list[PendingApproval]:
        with self._alock:
            found = [self._approvals[i] for i in ids]
            for a in found:
                if a.status != "pending":
                    raise ApprovalConflict(
                        f"Approval {a.id} is already {a.status}: it can be decided only once."
                    )
            for a in found:
                a.status = "claimed"
            return [a.model_copy() for a in found]

    def release_approvals(self, ids: list[str]) -> None:
        with self._alock:
            for i in ids:
                if i in self._approvals and self._approvals[i].status == "claimed":
                    self._approvals[i].status = "pending"

    def finish_approvals(self, decisions: dict[str, str], resumed_run_id: str | None) -> None:
        with self._alock:
            for i, status in decisions.items():
                a = self._approvals[i]
                a.status = status  # type: ignore[assignment]
                a.decided_at = time.time()
                a.resumed_run_id = resumed_run_id

    def replace_continuation(self, ids: list[str], continuation: str, run_id: str) -> None:
        with self._alock:
            for i in ids:
                a = self._approvals[i]
                if a.status in ("pending", "claimed"):
                    a.continuation, a.run_id, a.status = continuation, run_id, "pending"
