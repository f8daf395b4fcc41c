"""The store of the front ends: SQLite in the user data directory, else memory.

    store, warning = open_store()        # warning: why it fell back to memory

A corrupt or unwritable store never stops the program: it runs in memory and
says so once. The protocols (`ValueStore`, `RunHistory`, `ApprovalStore`,
`ContinuationStore`, and `Store`, all four) are in `protocols.py`; the way
from an interrupted run to its resume is `approval_flow.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import data_dir
from .memory_store import MemoryStore
from .protocols import ApprovalStore, ContinuationStore, RunHistory, Store, ValueStore
from .records import (
    Applied,
    ApprovalConflict,
    ApprovalStuck,
    Claim,
    ClaimLost,
    PendingApproval,
    Queued,
    RunRecord,
)
from .sqlite_store import DEFAULT_MAX_AGE_S, DEFAULT_MAX_BYTES, SqliteStore, StoreError

STORE_FILE = "run-repl.sqlite3"


def open_store(
    data_dir_override: str | os.PathLike[str] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_age_s: float = DEFAULT_MAX_AGE_S,
) -> tuple[Store, str | None]:
    path = Path(data_dir(data_dir_override)) / STORE_FILE
    try:
        return SqliteStore(path, max_bytes=max_bytes, max_age_s=max_age_s), None
    except StoreError as exc:
        warning = (
            f"{exc}. Running with an in-memory store: results, history and approvals will not be kept "
            f"after this process. Move the file aside or pass --data-dir to fix this."
        )
        return MemoryStore(location=f"memory (could not open {path})"), warning


__all__ = [
    "Applied",
    "ApprovalConflict",
    "ApprovalStore",
    "ApprovalStuck",
    "Claim",
    "ClaimLost",
    "ContinuationStore",
    "MemoryStore",
    "PendingApproval",
    "Queued",
    "RunHistory",
    "RunRecord",
    "SqliteStore",
    "Store",
    "StoreError",
    "ValueStore",
    "open_store",
]
