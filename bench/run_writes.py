"""What one run costs the team store: PostgreSQL statements, server time and CPU per run.

    python bench/run_writes.py [--runs 300]

Starts its own PostgreSQL (initdb in a temporary directory, loopback, fsync on,
pg_stat_statements loaded with track=all; stopped at the end), then for each kind of
run does it RUNS times, one after another, through a workspace (what the CLI, the
line REPL, the IDE and, with the same calls, an MCP server do: run, then keep the run
in the history), and prints per run:

- statements: top-level statements the server ran (BEGIN, COMMIT, COPY included),
  and all statements (with those a trigger or a function ran: track=all);
- server ms: the time PostgreSQL spent executing them (pg_stat_statements);
- server CPU ms: the postmaster's processes' user + system time (/proc);
- client CPU ms: this process's CPU time (the run's worker is another process,
  the same on every build);
- the kinds: `return 1` (one number), a value of 5,000 items (~50 KiB: chunked),
  and a run with 60 log lines (a logs ref beside its value).

To compare with an older build, run the same file against it:
`PYTHONPATH=/path/to/old/checkout python bench/run_writes.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "store"))

import psycopg  # noqa: E402

from run_repl.config import Settings  # noqa: E402
from run_repl.host.loader import load_host  # noqa: E402
from run_repl.store.approvals.flow import store_runner  # noqa: E402
from run_repl.store.backends.postgres import PostgresStore  # noqa: E402
from run_repl.workspace import Workspace  # noqa: E402

KINDS = {
    "one number": "return 1",
    "5000 items": "return Array.from({ length: 5000 }, (_, i) => 'item ' + i)",
    "60 log lines": "for (let i = 0; i < 60; i++) console.log('line ' + i); return 2",
}


def server_cpu_s(data: Path) -> float:
    """User + system seconds of the postmaster and its children (one server, ours)."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == postmaster or ppid == postmaster:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def stats(url: str) -> tuple[int, int, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT COALESCE(sum(calls) FILTER (WHERE toplevel), 0), COALESCE(sum(calls), 0), "
            "COALESCE(sum(total_exec_time), 0) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query NOT ILIKE '%pg_stat_statements%'"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), float(row[2])


def reset(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


async def measure(url: str, data: Path, tmp: Path, source: str, runs: int) -> dict[str, float]:
    store = PostgresStore(url, schema="bench_" + os.urandom(4).hex(), pool_size=2)
    ws = Workspace(Settings(), store, load_host("demo"), store_runner(store), tmp)
    try:
        for _ in range(20):  # warm: the pool's connections, the worker, prepared plans
            await ws.run(source)
        reset(url)
        cpu0, server0 = time.process_time(), server_cpu_s(data)
        for _ in range(runs):
            result = await ws.run(source)
            assert result.status == "ok", result.error
        cpu1, server1 = time.process_time(), server_cpu_s(data)
        top, every, exec_ms = stats(url)
    finally:
        store.close()
    return {
        "statements": top / runs,
        "all statements": every / runs,
        "server ms": exec_ms / runs,
        "server CPU ms": (server1 - server0) * 1000 / runs,
        "client CPU ms": (cpu1 - cpu0) * 1000 / runs,
    }


async def main(args: argparse.Namespace) -> int:
    from pg_server import STATEMENT_COUNTS, PgServer, ServerUnavailable

    tmp = Path(tempfile.mkdtemp(prefix="run-repl-writes-"))
    os.chmod(tmp, 0o755)  # the server's own user (postgres, as root) walks into it
    pg = PgServer(tmp / "pg", options=STATEMENT_COUNTS)
    try:
        base = pg.start(die_with=os.getpid())
    except ServerUnavailable as exc:
        print(f"run_writes: no PostgreSQL: {exc}", file=sys.stderr)
        return 2
    try:
        url = base.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        print(f"{args.runs} runs of each kind, one after another, through a workspace")
        header = ("statements", "all statements", "server ms", "server CPU ms", "client CPU ms")
        print(f"{'kind':<14}" + "".join(f"{h:>16}" for h in header))
        for kind, source in KINDS.items():
            figures = await measure(url, pg.data, tmp, source, args.runs)
            print(f"{kind:<14}" + "".join(f"{figures[h]:>16.2f}" for h in header), flush=True)
    finally:
        pg.stop()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    sys.exit(asyncio.run(main(parser.parse_args())))
