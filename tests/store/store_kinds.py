"""The stores the suite runs against, named by a spec a child process can open too.

    sqlite:/tmp/x/run-repl.sqlite3     a file
    postgres:t_gw0_1a2b3c              a schema on the test server (RUN_REPL_TEST_PG_URL)
    memory:                            this process only

The server's URL (it holds a password) travels in the environment, never on a
command line. `execute` runs one SQL statement on a store's own tables: how a
test makes time pass (claims run out) without waiting for it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Sequence
from typing import Any

from run_repl.store import MemoryStore, SqliteStore, Store

PG_URL_ENV = "RUN_REPL_TEST_PG_URL"
CI_ENV = "RUN_REPL_CI"  # set by .ci/run: there, PostgreSQL is required, never skipped
DURABLE = ("sqlite", "postgres")
ALL = ("sqlite", "memory", "postgres")


def pg_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None


def new_schema() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"t_{worker}_{secrets.token_hex(6)}"


def open_spec(spec: str, **budgets: Any) -> Store:
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        return SqliteStore(where, **budgets)
    if kind == "postgres":
        from run_repl.store.backends.postgres import PostgresStore

        url = pg_url()
        assert url, f"{PG_URL_ENV} is not set"
        return PostgresStore(url, schema=where, **budgets)
    if kind == "memory":
        return MemoryStore(**budgets)
    raise ValueError(spec)


def execute(spec: str, statement: str) -> None:
    """One statement (no parameters: the same SQL on both engines) on the store's tables."""
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        import sqlite3

        db = sqlite3.connect(where, isolation_level=None, timeout=30)
        try:
            db.execute(statement)
        finally:
            db.close()
        return
    if kind == "postgres":
        import psycopg
        from psycopg import sql

        with psycopg.connect(pg_url() or "", autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(where)))
            conn.execute(statement)  # type: ignore[arg-type]
        return
    raise ValueError(f"no SQL on a {kind} store")


def expire_claims(spec: str, store: Store) -> None:
    """Time passes: every claim runs out (what a test does instead of waiting)."""
    if spec.startswith("memory"):
        with store._lock:  # type: ignore[attr-defined]
            for a in store._approvals.values():  # type: ignore[attr-defined]
                if a.claim_expires_at is not None:
                    a.claim_expires_at = 0
        return
    execute(spec, "UPDATE approvals SET claim_expires_at = 0 WHERE claim_expires_at IS NOT NULL")


def drop(spec: str) -> None:
    kind, _, where = spec.partition(":")
    if kind != "postgres" or not pg_url():
        return
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url() or "", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(where)))


# What a child process runs first to open the store it was given (argv[1]: the spec).
CHILD_PRELUDE = """
import sys
sys.path.insert(0, {here!r})
from store_kinds import open_spec
"""

# What a child process runs where it must act at the same moment as its siblings: it says
# it is ready (imports done, store open), then waits for the test's word.
AT_ONCE = """
print("ready", flush=True)
sys.stdin.readline()
"""


def release_together(procs: Sequence[subprocess.Popen[str]]) -> None:
    """Wait until every child (spawned with stdin and stdout pipes, running AT_ONCE) is
    ready, then let them all go at once: a barrier, where a start time on the clock had to
    guess how long a loaded machine takes to start them (and made every run wait that long)."""
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.wait(timeout=60)
            stderr = proc.stderr.read() if proc.stderr is not None else ""
            raise AssertionError(f"a child ended before it was ready: {line!r} {stderr}")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
