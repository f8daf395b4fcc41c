"""The team store on PostgreSQL: a big value, claims under contention, live changes.

    python bench/store.py [--url postgresql://...] [--items 1000000] [--deciders 8]

Without --url (or RUN_REPL_STORE_URL) it starts a throwaway server (initdb in a
temporary directory, loopback, fsync on: PostgreSQL's defaults) and removes it
after. Each figure uses a fresh schema, dropped at the end. Prints:

- first window: run() of a snippet returning N small objects, to its RunResult
  (the runner writes the value to the store behind the result), and how long
  until the whole value is in PostgreSQL;
- expand page: 100 items at random offsets, by a fresh runner (nothing cached:
  every page is read from the server), median and p95;
- approvals claimed per second: D processes race over A pending approvals, each
  trying every one (claim, guard, settle; the losers are refused);
- notify to inbox: from an approval's commit in one process to a waiting
  inbox in another waking up (LISTEN/NOTIFY), median, p95 and max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "store"))

from run_repl import Limits, create_runner  # noqa: E402
from run_repl.store.backends.postgres import PostgresStore  # noqa: E402
from run_repl.store.records import PendingApproval  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def drop(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


# ---------------------------------------------------------------- a big value


async def big_value(url: str, items: int, rounds: int) -> None:
    schema = "bench_value_" + secrets.token_hex(4)
    store = PostgresStore(url, schema=schema, max_bytes=8 << 30)
    limits = Limits(timeout_ms=120_000, memory_bytes=2048 << 20, max_value_bytes=1024 << 20)
    runner = create_runner(limits=limits, store=store)
    source = (
        f"const out = []; for (let i = 0; i < {items}; i++) "
        "out.push({ id: i, name: 'item' + i }); return out"
    )
    await runner.run("1")
    firsts, stored = [], []
    ref = None
    for _ in range(rounds):
        started = time.perf_counter()
        result = await runner.run(source)
        firsts.append(time.perf_counter() - started)
        assert result.status == "ok", result.error
        await asyncio.to_thread(runner.flush)
        stored.append(time.perf_counter() - started)
        ref = result.value_ref
    assert ref is not None
    fresh = create_runner(store=store)  # nothing in memory: every page from the server
    fresh.expand(ref, 0, 100)
    pages = []
    for _ in range(200):
        offset = random.randrange(0, items - 100)
        started = time.perf_counter()
        page = fresh.expand(ref, offset, 100)
        pages.append((time.perf_counter() - started) * 1000)
        assert page.items[0]["id"] == offset
    mb = store.stored_bytes() / 1e6 / rounds
    print(
        f"first window ({items:,} items, {mb:.0f} MB of JSON stored per value): "
        f"median {statistics.median(firsts):.2f} s, worst {max(firsts):.2f} s over {rounds} runs"
    )
    print(
        f"  whole value in PostgreSQL after: median {statistics.median(stored):.2f} s "
        "(written behind the result)"
    )
    print(
        f"expand page (100 items, random offsets, fresh runner): median {statistics.median(pages):.2f} ms, "
        f"p95 {pct(pages, 95):.2f} ms, max {max(pages):.2f} ms over {len(pages)} pages"
    )
    store.close()
    drop(url, schema)


# ---------------------------------------------------------------- claims under contention

DECIDER = """
import json, os, random, sys, time
from run_repl.store.backends.postgres import PostgresStore
from run_repl.store.records import CallFacts, Claim, ResumeReport, ApprovalConflict
store = PostgresStore(os.environ["BENCH_URL"], schema=sys.argv[1])
ids = json.loads(sys.argv[2]); start = float(sys.argv[3]); me = sys.argv[4]
random.Random(me).shuffle(ids)
won = lost = 0
while time.time() < start:
    time.sleep(0.001)
for i in ids:
    try:
        got = store.claim_batch({i: True}, claim_id="clm_" + me + i, claimed_by=me, decided_by=me, ttl_s=60)
    except ApprovalConflict:
        lost += 1
        continue
    if not isinstance(got, Claim):
        lost += 1
        continue
    store.start_batch(got)
    store.finish_batch(got, ResumeReport(ended=True, status="ok", run_id="run_" + i,
                       calls={i: CallFacts(decision="approved", ok=True)}), ttl_s=60)
    won += 1
print(json.dumps({"won": won, "lost": lost, "end": time.time()}))
store.close()
"""


def claims(url: str, approvals: int, deciders: int) -> None:
    schema = "bench_claims_" + secrets.token_hex(4)
    store = PostgresStore(url, schema=schema)
    ids = [f"int_{n:06d}" for n in range(approvals)]
    for start in range(0, approvals, 500):
        store.add_approvals(
            [
                PendingApproval(
                    id=i,
                    run_id="run_" + i,
                    source="return 1",
                    path="bank.transfer",
                    continuation="tok-" + i,  # a batch each
                )
                for i in ids[start : start + 500]
            ]
        )
    begin = time.time() + 2.0
    env = {**os.environ, "BENCH_URL": url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DECIDER, schema, json.dumps(ids), str(begin), f"d{n}"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(deciders)
    ]
    reports = [json.loads(p.communicate(timeout=3600)[0]) for p in procs]
    end = max(r["end"] for r in reports)
    won = sum(r["won"] for r in reports)
    lost = sum(r["lost"] for r in reports)
    final = store.list_approvals(status=None)
    decided_once = sum(1 for a in final if a.status == "approved")
    seconds = end - begin
    print(
        f"approvals claimed: {won} of {approvals} by {deciders} processes in {seconds:.2f} s = "
        f"{won / seconds:.0f} claims/s (claim + guard + settle; {lost} refused tries, "
        f"{(won + lost) / seconds:.0f} tries/s); approved once each: {decided_once == approvals == won}"
    )
    store.close()
    drop(url, schema)


# ---------------------------------------------------------------- notify to inbox

INBOX = """
import asyncio, json, os, sys, time
from run_repl.store.backends.postgres import PostgresStore
from run_repl.store.approvals.flow import wait_for_approvals_change
store = PostgresStore(os.environ["BENCH_URL"], schema=sys.argv[1])
want = int(sys.argv[2])

async def main():
    since = store.approvals_version()
    assert await wait_for_approvals_change(store, since, 0.5) == since  # listening
    print("ready", flush=True)
    for _ in range(want):
        since = await wait_for_approvals_change(store, since, 30)
        print(json.dumps({"version": since, "at": time.time()}), flush=True)

asyncio.run(main())
store.close()
"""


def notify_latency(url: str, changes: int) -> None:
    schema = "bench_notify_" + secrets.token_hex(4)
    store = PostgresStore(url, schema=schema)
    env = {**os.environ, "BENCH_URL": url}
    inbox = subprocess.Popen(
        [sys.executable, "-c", INBOX, schema, str(changes)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert inbox.stdout is not None
    assert inbox.stdout.readline().strip() == "ready"
    committed: dict[int, float] = {}
    for n in range(changes):
        time.sleep(0.05)
        store.add_approvals(
            [
                PendingApproval(
                    id=f"int_{n}", run_id="r", source="1", path="a.b", continuation=f"t{n}"
                )
            ]
        )
        committed[store.approvals_version()] = time.time()  # right after the commit returned
    out, _ = inbox.communicate(timeout=120)
    seen = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    lags = [(s["at"] - committed[s["version"]]) * 1000 for s in seen if s["version"] in committed]
    print(
        f"notify to inbox ({len(lags)} changes, another process): median {statistics.median(lags):.2f} ms, "
        f"p95 {pct(lags, 95):.2f} ms, max {max(lags):.2f} ms"
    )
    store.close()
    drop(url, schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("RUN_REPL_STORE_URL"))
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--approvals", type=int, default=2000)
    parser.add_argument("--deciders", type=int, default=8)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--only", choices=["value", "claims", "notify"])
    args = parser.parse_args()
    server = None
    url = args.url
    if not url:
        from pg_server import PgServer

        server = PgServer(Path(tempfile.mkdtemp(prefix="run-repl-bench-pg-")))
        url = server.start()
        print("server: a throwaway PostgreSQL on 127.0.0.1 (fsync on)")
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} at the start")
    try:
        if args.only in (None, "value"):
            asyncio.run(big_value(url, args.items, args.rounds))
        if args.only in (None, "claims"):
            claims(url, args.approvals, args.deciders)
        if args.only in (None, "notify"):
            notify_latency(url, args.changes)
    finally:
        if server is not None:
            server.stop()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
