"""What one history insert costs as the history grows: flat is the target.

    python bench/store_growth.py [--sizes 100,1000,10000,100000] [--runs 300]

For each size, fills a fresh store's history to that many rows (straight into
the table, past the store's API; on PostgreSQL the running counters are set once
and the tables vacuumed after, as a history grown run by run would be), then times `record_run` of `--runs` small runs
(the budget is not reached: this is the insert and its budget check, what every
run pays). Prints the median and mean milliseconds per insert, on SQLite, and on
PostgreSQL when RUN_REPL_TEST_PG_URL is set (a fresh schema, dropped after).
Also times `put_items` of a one-number value the same way (the values' budget).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from run_repl.sandbox.wire.result_store import StoredItems
from run_repl.sandbox.wire.value_window import chunk_texts
from run_repl.store import SqliteStore
from run_repl.store.records import RunRecord

FILL_ENVELOPE = '{"status":"ok","value":1}'


def fill_sqlite(path: Path, start: int, stop: int) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO runs (id, started_at, duration_ms, status, source, host, envelope, bytes) "
        "VALUES (?, ?, 1, 'ok', 'return 1', 'demo', ?, ?)",
        ((f"fill_{i}", i, FILL_ENVELOPE, 40) for i in range(start, stop)),
    )
    db.executemany(
        "INSERT INTO results (ref, kind, path, total, chunk_items, rest, run_id, bytes, "
        "created_at, used_at) VALUES (?, 'value', '$', 1, 1000, NULL, NULL, 3, ?, ?)",
        ((f"res_fill{i:012d}", time.time(), time.time()) for i in range(start, stop)),
    )
    db.execute("COMMIT")
    db.close()


def fill_postgres(url: str, schema: str, start: int, stop: int) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        # Without the byte counters' triggers, and the counters added once after: a
        # trigger per row of one statement would leave a version of the counter's row per
        # filled row, all dead at once (6 MB of them at 100,000), which no history grown
        # run by run has: each run's own update is pruned as the next one comes.
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "INSERT INTO runs (id, started_at, duration_ms, status, source, host, envelope, "
            "bytes) SELECT 'fill_' || i, i, 1, 'ok', 'return 1', 'demo', %s, 40 "
            "FROM generate_series(%s::int, %s::int) i",
            (FILL_ENVELOPE, start, stop - 1),
        )
        conn.execute(
            "INSERT INTO results (ref, kind, path, total, chunk_items, rest, run_id, bytes, "
            "created_at, used_at) SELECT 'res_fill' || lpad(i::text, 12, '0'), 'value', '$', "
            "1, 1000, NULL, NULL, 3, extract(epoch FROM now()), extract(epoch FROM now()) "
            "FROM generate_series(%s::int, %s::int) i",
            (start, stop - 1),
        )
        conn.execute("SET session_replication_role = DEFAULT")
        conn.execute(
            "UPDATE store_counters SET value = value + %s WHERE shard = 0 AND name = %s",
            (40 * (stop - start), "runs_bytes"),
        )
        conn.execute(
            "UPDATE store_counters SET value = value + %s WHERE shard = 0 AND name = %s",
            (3 * (stop - start), "results_bytes"),
        )
        # What autovacuum does to a table that grew over days: statistics, hint bits and
        # the visibility map (a fresh bulk load has none of them yet).
        conn.execute("VACUUM ANALYZE runs")
        conn.execute("VACUUM ANALYZE results")
        conn.execute("VACUUM ANALYZE store_counters")


def timed(action: Callable[[int], None], runs: int) -> tuple[float, float]:
    took = []
    for n in range(runs):
        t0 = time.perf_counter()
        action(n)
        took.append((time.perf_counter() - t0) * 1000)
    return statistics.median(took), statistics.mean(took)


def measure(
    name: str,
    store: object,
    fill: Callable[[int, int], None],
    sizes: list[int],
    runs: int,
) -> None:
    have = 0
    for size in sizes:
        fill(have, size)
        have = size
        tag = secrets.token_hex(3)

        def insert(n: int, tag: str = tag) -> None:
            store.record_run(  # type: ignore[attr-defined]
                RunRecord(
                    id=f"run_{tag}_{n}",
                    status="ok",
                    source="return 1",
                    envelope={"status": "ok", "value": n},
                )
            )

        def put(n: int, tag: str = tag) -> None:
            store.put_items(  # type: ignore[attr-defined]
                StoredItems(f"res_{tag}{n:010d}", "$", 1, chunk_texts([n]))
            )

        run_med, run_mean = timed(insert, runs)
        put_med, put_mean = timed(put, runs)
        have += runs
        print(
            f"{name:10} {size:>7} rows  record_run median {run_med:6.3f} ms mean {run_mean:6.3f}"
            f"   put_items median {put_med:6.3f} ms mean {put_mean:6.3f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run-repl.sqlite3"
        sqlite_store = SqliteStore(path)
        measure("sqlite", sqlite_store, lambda a, b: fill_sqlite(path, a, b), sizes, args.runs)
        sqlite_store.close()
    url = os.environ.get("RUN_REPL_TEST_PG_URL")
    if not url:
        print("postgres   skipped: RUN_REPL_TEST_PG_URL is not set")
        return
    import psycopg
    from psycopg import sql

    from run_repl.store.backends.postgres import PostgresStore

    schema = f"bench_growth_{secrets.token_hex(4)}"
    pg_store = PostgresStore(url, schema=schema)
    try:
        measure(
            "postgres",
            pg_store,
            lambda a, b: fill_postgres(url, schema, a, b),
            sizes,
            args.runs,
        )
    finally:
        pg_store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    main()
