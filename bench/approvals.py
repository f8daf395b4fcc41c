"""Two people approving at once: concurrent two-person approvals of two-interruption runs.

    python bench/approvals.py [--runs 50] [--in-flight 8]

Makes `--runs` interrupted runs, each paused on two approvals
(`Promise.all([bank.transfer(1), bank.transfer(2)])`, then `bank.done()`), saved in
one SQLite store. Two approver processes, alice and bob, then decide at once:
alice approves the first approval of every run, bob the second, each with all
its decisions in flight together (a runner of `--in-flight` runs; a RUN_BUSY
resume leaves the approval pending and is decided again, as a person would).

Prints the wall time, the decisions per second, each decision's latency
(median, 95th percentile), how many had to wait for the other person's resume
(queued), how many came back RUN_BUSY, and the check: every run completed once,
every approved call ran exactly once, every approval ended `approved`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_repl import requires_approval
from run_repl.store import SqliteStore
from run_repl.store.approvals.flow import resolve, save_interrupted, store_runner

SECRET = "b" * 40
SOURCE = """
const [a, b] = await Promise.all([bank.transfer(1, {tag}), bank.transfer(2, {tag})])
await bank.done({tag})
return a + b
"""


def _ledger() -> sqlite3.Connection:
    conn = sqlite3.connect(os.environ["BANK_DB"], timeout=60, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS ledger (tag TEXT, what TEXT, amount INTEGER)")
    return conn


@requires_approval
def transfer(amount: int, tag: str) -> int:
    conn = _ledger()
    conn.execute("INSERT INTO ledger VALUES (?, 'transfer', ?)", (tag, amount))
    conn.close()
    return amount


def done(tag: str) -> str:
    conn = _ledger()
    conn.execute("INSERT INTO ledger VALUES (?, 'done', 0)", (tag,))
    conn.close()
    return "done"


HOSTS = {"bank": {"transfer": transfer, "done": done}}


async def approve_all(db: Path, name: str, ids: list[str], in_flight: int, start: Path) -> None:
    """One person: every decision at once; one JSON line per decision."""
    store = SqliteStore(db)
    runner = store_runner(store, secret=SECRET, max_runs_in_flight=in_flight)
    await runner.run("1")  # a warm worker pool, as in an app that has been running
    while not start.exists():
        await asyncio.sleep(0.001)

    async def one(approval_id: str) -> dict[str, object]:
        started = time.perf_counter()
        busy = 0
        while True:
            done = await resolve(store, runner, HOSTS, {approval_id: True}, approver=name)
            code = done.result.error.code if done.result and done.result.error else None
            if code != "RUN_BUSY":
                break
            busy += 1
            await asyncio.sleep(0.05 * min(busy, 10))
        return {
            "id": approval_id,
            "ms": (time.perf_counter() - started) * 1000,
            "queued": done.queued_behind is not None,
            "busy": busy,
            "status": done.result.status if done.result else None,
            "warnings": done.warnings,
        }

    for line in await asyncio.gather(*(one(i) for i in ids)):
        print(json.dumps(line), flush=True)
    store.close()


async def prepare(db: Path, runs: int) -> list[tuple[str, str]]:
    store = SqliteStore(db)
    runner = store_runner(store, secret=SECRET)
    pairs = []
    for k in range(runs):
        src = SOURCE.format(tag=json.dumps(f"run{k}"))
        first = await runner.run(src, HOSTS)
        assert first.status == "interrupted", first.error
        a, b = save_interrupted(store, first, source=src, host="bench")
        pairs.append((a.id, b.id))
    store.close()
    return pairs


def main(runs: int, in_flight: int) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="run-repl-bench-approvals-"))
    db = workdir / "run-repl.sqlite3"
    os.environ["BANK_DB"] = str(workdir / "bank.sqlite3")
    pairs = asyncio.run(prepare(db, runs))
    start = workdir / "start"
    procs = []
    for name, column in (("alice", 0), ("bob", 1)):
        ids = workdir / f"{name}.json"
        ids.write_text(json.dumps([p[column] for p in pairs]))
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--approver",
                    name,
                    "--dir",
                    str(workdir),
                    "--in-flight",
                    str(in_flight),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    time.sleep(3.0)  # both have started their worker pools
    began = time.perf_counter()
    start.touch()
    outs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - began
    if any(p.returncode for p in procs):
        print("an approver failed", file=sys.stderr)
        return 1
    lines = [json.loads(x) for out in outs for x in out.splitlines()]
    ms = sorted(float(x["ms"]) for x in lines)

    store = SqliteStore(db)
    conn = _ledger()
    transfers = dict(
        conn.execute(
            "SELECT tag || ':' || amount, COUNT(*) FROM ledger WHERE what = 'transfer' GROUP BY 1"
        ).fetchall()
    )
    dones = dict(
        conn.execute("SELECT tag, COUNT(*) FROM ledger WHERE what = 'done' GROUP BY 1").fetchall()
    )
    statuses = [store.get_approval(i).status for pair in pairs for i in pair]
    completed_once = sum(1 for k in range(runs) if dones.get(f"run{k}") == 1)
    exactly_once = sum(
        1 for k in range(runs) for amount in (1, 2) if transfers.get(f"run{k}:{amount}") == 1
    )
    extra = sum(n - 1 for n in transfers.values() if n > 1)
    approved = statuses.count("approved")

    print(f"{runs} runs x 2 approvals, 2 approver processes, {in_flight} resumes in flight each")
    print(f"wall time:               {wall:7.2f} s  ({len(lines) / wall:.1f} decisions/s)")
    print(
        f"decision latency:        median {statistics.median(ms):7.1f} ms, "
        f"p95 {ms[int(len(ms) * 0.95) - 1]:7.1f} ms, max {ms[-1]:7.1f} ms"
    )
    print(f"queued behind the other: {sum(bool(x['queued']) for x in lines)} of {len(lines)}")
    print(f"RUN_BUSY, decided again: {sum(int(x['busy']) for x in lines)}")
    print(f"warnings:                {sum(len(x['warnings']) for x in lines)}")
    print(f"runs completed once:     {completed_once} / {runs}")
    print(f"calls run exactly once:  {exactly_once} / {2 * runs} (extra executions: {extra})")
    print(f"approvals approved:      {approved} / {2 * runs}")
    ok = completed_once == runs and exactly_once == 2 * runs and extra == 0 and approved == 2 * runs
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--approver")
    parser.add_argument("--dir")
    args = parser.parse_args()
    if args.approver:
        workdir = Path(args.dir)
        os.environ["BANK_DB"] = str(workdir / "bank.sqlite3")
        ids = json.loads((workdir / f"{args.approver}.json").read_text())
        asyncio.run(
            approve_all(
                workdir / "run-repl.sqlite3", args.approver, ids, args.in_flight, workdir / "start"
            )
        )
    else:
        sys.exit(main(args.runs, args.in_flight))
