"""The store of the front ends: SQLite in the user data directory, else memory.

    store, warning = open_store()        # warning: why it fell back to memory

A corrupt or unwritable store never stops the program: it runs in memory and
says so once.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import config_dir, data_dir
from .memory_store import MemoryStore
from .records import ApprovalConflict, PendingApproval, RunRecord, Store
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
    "ApprovalConflict",
    "MemoryStore",
    "PendingApproval",
    "RunRecord",
    "SqliteStore",
    "Store",
    "StoreError",
    "config_dir",
    "data_dir",
    "open_store",
]
