"""The store of the front ends: SQLite in the user data directory, a team's
PostgreSQL server when given its URL, else memory.

    store, warning = open_store()                                 # SQLite
    store, warning = open_store(url="postgresql://db/runrepl")    # the team's server
    # warning: why it fell back to memory (the URL's password masked)

A store that cannot be used never stops the program: it runs in memory and
says so once (and a front end then says approvals are NOT saved). The protocols (`ValueStore`, `RunHistory`, `ApprovalStore`,
`ContinuationStore`, and `Store`, all four) are in `protocols.py`; the way
from an interrupted run to its resume is `approvals/flow.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import data_dir
from .approvals.claims import LEASE_S
from .approvals.policy import Deciders
from .backends.memory import MemoryStore
from .backends.sqlite import SqliteStore
from .budgets import DEFAULT_MAX_AGE_S, DEFAULT_MAX_BYTES
from .protocols import ApprovalStore, ContinuationStore, RunHistory, Store, ValueStore
from .records import (
    Applied,
    ApprovalConflict,
    ApprovalRefused,
    ApprovalStuck,
    Claim,
    ClaimLost,
    PendingApproval,
    Queued,
    RunKey,
    RunRecord,
)
from .store_error import StoreError
from .store_url import DEFAULT_SCHEMA, StoreUrlError, check_url, mask

STORE_FILE = "run-repl.sqlite3"
POSTGRES_EXTRA = "pip install 'run-repl[postgres]'"


def open_server_store(
    url: str,
    *,
    schema: str = DEFAULT_SCHEMA,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_age_s: float = DEFAULT_MAX_AGE_S,
) -> Store:
    """The team store at `url` (PostgreSQL). StoreError, with the password masked, when
    it cannot be used: not a PostgreSQL URL, psycopg missing, unreachable, refused,
    or made by a newer run-repl."""
    try:
        url = check_url(url)
    except StoreUrlError as exc:
        raise StoreError(str(exc), "unusable") from None
    try:
        from .backends.postgres import PostgresStore
    except ImportError as exc:
        raise StoreError(
            f"The team store at {mask(url)} needs PostgreSQL support, which is not installed "
            f"({exc.name or exc}): {POSTGRES_EXTRA}",
            "unusable",
        ) from None
    return PostgresStore(url, schema=schema, max_bytes=max_bytes, max_age_s=max_age_s)


def open_store_or_memory(
    data_dir_override: str | os.PathLike[str] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_age_s: float = DEFAULT_MAX_AGE_S,
    url: str | None = None,
    schema: str = DEFAULT_SCHEMA,
) -> tuple[Store, StoreError | None]:
    """The store (a server's with `url`, else SQLite in the data directory) and None;
    when it cannot be used, one in memory and the StoreError that says why (and what
    to do). The file or server it could not use is left as it was."""
    if url:
        try:
            return open_server_store(
                url, schema=schema, max_bytes=max_bytes, max_age_s=max_age_s
            ), None
        except StoreError as exc:
            return MemoryStore(location=f"memory (could not open {mask(url)})"), exc
    path = Path(data_dir(data_dir_override)) / STORE_FILE
    try:
        return SqliteStore(path, max_bytes=max_bytes, max_age_s=max_age_s), None
    except StoreError as exc:
        return MemoryStore(location=f"memory (could not open {path})"), exc


def memory_warning(problem: StoreError, *, team: bool = False) -> str:
    """What a front end says once when it runs on memory because of `problem`."""
    text = str(problem).rstrip(". ")
    if team:
        return (
            f"{text}. Running with an in-memory store: results, history and approvals are "
            "NOT saved to the team store, and are lost when this process ends."
        )
    # Busy passes by itself, and a newer store already says to use another --data-dir.
    advice = "" if problem.problem in ("busy", "newer") else " Or pass --data-dir to use another."
    return (
        f"{text}. Running with an in-memory store: results, history and approvals will not "
        f"be kept after this process.{advice}"
    )


def open_store(
    data_dir_override: str | os.PathLike[str] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_age_s: float = DEFAULT_MAX_AGE_S,
    url: str | None = None,
    schema: str = DEFAULT_SCHEMA,
) -> tuple[Store, str | None]:
    """The store (a server's with `url`, else SQLite in the data directory) and, when
    it could not be used, a warning: then the store is in memory."""
    store, problem = open_store_or_memory(
        data_dir_override, max_bytes=max_bytes, max_age_s=max_age_s, url=url, schema=schema
    )
    return store, memory_warning(problem, team=bool(url)) if problem else None


__all__ = [
    "LEASE_S",
    "Applied",
    "ApprovalConflict",
    "ApprovalRefused",
    "ApprovalStore",
    "ApprovalStuck",
    "Claim",
    "ClaimLost",
    "ContinuationStore",
    "Deciders",
    "MemoryStore",
    "PendingApproval",
    "Queued",
    "RunHistory",
    "RunKey",
    "RunRecord",
    "SqliteStore",
    "Store",
    "StoreError",
    "ValueStore",
    "memory_warning",
    "open_server_store",
    "open_store",
    "open_store_or_memory",
]
