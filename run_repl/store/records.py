"""What the store keeps besides values: runs (history) and pending approvals."""

from __future__ import annotations

import time
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ..sandbox.result_store import StoredItems

# superseded: its run was resumed through another approval and ended without reaching this call again
ApprovalStatus = Literal["pending", "claimed", "approved", "denied", "failed", "superseded"]


class RunRecord(BaseModel):
    """One run in the history."""

    id: str
    started_at: float = Field(default_factory=time.time)
    duration_ms: float = 0.0
    status: str
    source: str
    host: str = ""
    error_code: str | None = None
    value_ref: str | None = None
    logs_ref: str | None = None
    envelope: dict[str, Any] = Field(default_factory=dict)
    resumed_from: str | None = None

    @property
    def title(self) -> str:
        for line in self.source.splitlines():
            if line.strip():
                return line.strip()[:120]
        return "(empty)"


class PendingApproval(BaseModel):
    """One interrupted call waiting for a person: approve or deny, then resume."""

    id: str  # the interruption id
    run_id: str
    source: str
    host: str = ""
    path: str
    args: Any = None
    payload: Any = None
    message: str = ""
    continuation: str
    status: ApprovalStatus = "pending"
    created_at: float = Field(default_factory=time.time)
    decided_at: float | None = None
    resumed_run_id: str | None = None


class ApprovalConflict(RuntimeError):
    """The approval was already decided (or is being resumed) by someone else."""


@runtime_checkable
class Store(Protocol):
    """The store the front ends use: values by item, run history, approvals."""

    location: str

    def put_items(self, stored: StoredItems) -> None: ...
    def get_items(self, ref: str) -> StoredItems | None: ...
    def get_chunks(
        self, ref: str, first: int, last: int
    ) -> tuple[StoredItems, list[str]] | None: ...

    def record_run(self, run: RunRecord) -> None: ...
    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]: ...
    def get_run(self, run_id: str) -> RunRecord | None: ...

    def add_approvals(self, approvals: list[PendingApproval]) -> None: ...
    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]: ...
    def get_approval(self, approval_id: str) -> PendingApproval | None: ...
    def claim_approvals(self, ids: list[str]) -> list[PendingApproval]: ...
    def finish_approvals(self, decisions: dict[str, str], resumed_run_id: str | None) -> None: ...
    def release_approvals(self, ids: list[str]) -> None: ...
    def replace_continuation(self, ids: list[str], continuation: str, run_id: str) -> None: ...
