"""What the budgets count is a running counter, kept in the same transaction as each
write (never a scan of the table per run), and refusals are counted, not kept as runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
from psycopg import sql
from store_kinds import open_spec, pg_url

from run_repl.sandbox.errors import ErrorCode
from run_repl.sandbox.result import RunResult, plain_error
from run_repl.sandbox.wire.result_store import StoredItems
from run_repl.sandbox.wire.value_window import chunk_texts
from run_repl.store import SqliteStore, Store
from run_repl.store.approvals.flow import record_run
from run_repl.store.records import RunRecord


def sums(spec: str) -> dict[str, tuple[int, int]]:
    """For runs and results: (the counter, the table's sum), read straight from the tables."""
    kind, _, where = spec.partition(":")
    found: dict[str, tuple[int, int]] = {}
    for table in ("runs", "results"):
        counter = f"SELECT COALESCE(SUM(value), 0) FROM store_counters WHERE name = '{table}_bytes'"
        total = f"SELECT COALESCE(SUM(bytes), 0) FROM {table}"
        if kind == "sqlite":
            db = sqlite3.connect(where)
            found[table] = (db.execute(counter).fetchone()[0], db.execute(total).fetchone()[0])
            db.close()
        else:
            with psycopg.connect(pg_url() or "", autocommit=True) as conn:
                conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(where)))
                c = conn.execute(counter).fetchone()  # type: ignore[arg-type]
                t = conn.execute(total).fetchone()  # type: ignore[arg-type]
                assert c is not None and t is not None
                found[table] = (int(c[0]), int(t[0]))
    return found


def run(n: int, size: int) -> RunRecord:
    return RunRecord(
        id=f"run_{n:03d}",
        status="ok",
        source="s",
        started_at=n,
        envelope={"status": "ok", "value": "v" * size},
    )


def test_the_byte_counters_follow_every_insert_replacement_and_eviction(durable_spec: str) -> None:
    store = open_spec(durable_spec, max_history_bytes=100_000, max_bytes=50_000)
    for n in range(30):  # past the budget: the oldest go
        store.record_run(run(n, 7_000))
    store.record_run(run(29, 100))  # the same run again, smaller
    store.record_run(run(28, 9_000))  # and larger
    for n in range(8):
        store.put_items(StoredItems(f"res_{n:016d}", "$", 1, chunk_texts(["x" * 9_000])))
    store.put_items(StoredItems(f"res_{7:016d}", "$", 1, chunk_texts(["y" * 10])))
    store.settle()  # PostgreSQL evicts off the write's path, on a thread of its own
    found = sums(durable_spec)
    assert found["runs"][0] == found["runs"][1] == store.history_bytes()
    assert 0 < store.history_bytes() <= 100_000
    assert found["results"][0] == found["results"][1] == store.stored_bytes()
    assert 0 < store.stored_bytes() <= 50_000
    store.close()


def test_a_run_is_recorded_without_summing_the_history(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "run-repl.sqlite3")
    for n in range(5):
        store.record_run(run(n, 10))
    statements: list[str] = []
    store._conn().set_trace_callback(statements.append)
    store.record_run(run(9, 10))
    store.put_items(StoredItems("res_0000000000000001", "$", 1, chunk_texts([1])))
    assert statements and not [s for s in statements if "SUM(" in s.upper()]
    store.close()


def test_a_refusal_is_counted_not_kept_as_a_run(store: Store) -> None:
    busy = RunResult(status="error", error=plain_error(ErrorCode.RUN_BUSY, "busy; retry"))
    record_run(store, busy, source="return 1", host="demo")
    record_run(store, busy, source="return 2", host="demo")
    assert store.list_runs() == []
    assert store.refused_runs() == {"RUN_BUSY": 2}
