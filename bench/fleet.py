"""A team's benchmark: N `run-repl mcp --http` servers on one PostgreSQL, K agents, 3 deciders.

    python bench/fleet.py [--servers 1,2,4] [--agents 8] [--seconds 20] [--faults]

Starts its own PostgreSQL (initdb in a temporary directory, loopback only, fsync on,
pg_stat_statements loaded; stopped at the end whatever ends this script), then for
each configuration a database of its own, N servers (each its own data directory,
one shared RUN_REPL_SECRET, `--no-auth` on loopback), 3 decider processes (each a
person: they watch the store's approvals and decide them as `run-repl approvals
approve` does, recorded for the server that started the run, which resumes it; 85 %
approve, half of the time all three going for the oldest one at once), and K agents (the `mcp` package's
client, 2026-07-28 protocol, each call to a server picked at random: a balancer with
no stickiness). An agent's mix: 55 % a read run, 15 % a big value then `expand_result`
of it on another server, 30 % a run whose write needs approval (the write puts one
row, named by a token of the agent's, into a table of this script's, then takes
--write-ms).

Per configuration it prints: runs/s; p50/p95/p99 of a run call (from sending to
the final answer; a write's includes the person's decision); decision → the agent's
final result (p50/p95, from the decider's clock to the agent's, one machine);
server CPU per run (each server's process tree, from /proc, its sandbox workers
included); PostgreSQL statements per run (pg_stat_statements, the host's own
writes left out); and the invariants, counted in the database at the end:
- approved writes that ran twice, approved writes that never ran, writes nobody
  approved (the approval promise: at most once, nothing lost);
- approvals left open once the agents and the deciders are done;
- `expand_result` of a value made on another server that failed;
- runs an agent was answered with that the history does not have.

`--faults` adds one configuration of 3 servers where, in turn: a server is
killed (SIGKILL) mid-phase and started again; the process running a resume (a
server) is killed while inside the approved write (the next write is held in flight,
announcing its token and pid in a table, and killed there: it always lands); PostgreSQL
is stopped for 10 s. The same invariants must hold, and the killed write's approval
must end `unfinished` (outcome unknown) with its row written once; it prints how long
each killed process's work took to be taken over or settled.

Exits 1 when an invariant breaks, 2 when the setup fails. Bounded in time: each
phase ends at --seconds, then at most --settle-s for what is still in flight.
Figures on a loaded machine are inflated: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# This file is bench/fleet.py: run as a script, its directory would shadow the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "store"))

import psycopg  # noqa: E402

TOP_STATEMENTS = 0  # --top-statements
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
APPROVE_SHARE = 0.85
DECIDER_NAMES = ("alice", "bob", "carol")
DECIDED = ("recorded", "ok", "RUN_APPROVAL_DENIED", "interrupted")  # a decider's win
READ = "const a = await read(1); const b = await read(2); return a + b;"
BIG = "return await big(3000);"
WRITE = 'return await write("{token}");'

HOST = '''"""The fleet benchmark's host: reads, a big value, and a write that needs approval."""
import os
import time

import psycopg

from run_repl import requires_approval

_URL = os.environ["FLEET_WRITES_URL"]
_WRITE_S = float(os.environ.get("FLEET_WRITE_MS", "200")) / 1000


def read(n: int) -> int:
    return n * 2


def big(n: int) -> list:
    return [{"i": i, "text": "row " + str(i)} for i in range(n)]


@requires_approval
def write(token: str) -> str:
    """One row per call, committed before the call goes on (a kill after it keeps it).

    When the fault asks for a write to catch (a row in fleet_catch), the first write to
    take that row announces itself in flight (fleet_inflight: its token and pid) and
    holds there until the fault kills its process: the kill lands inside a write."""
    with psycopg.connect(_URL, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO fleet_writes (token, pid, at) VALUES (%s, %s, %s)",
            (token, os.getpid(), time.time()),
        )
        caught = conn.execute("DELETE FROM fleet_catch RETURNING 1").fetchone()
        if caught:
            conn.execute(
                "INSERT INTO fleet_inflight (token, pid, at) VALUES (%s, %s, %s)",
                (token, os.getpid(), time.time()),
            )
    if caught:
        held_until = time.time() + 60  # a bound: the fault kills this process long before
        while time.time() < held_until:
            time.sleep(0.05)
    time.sleep(_WRITE_S)
    return token
'''


# ------------------------------------------------------------------ processes
def proc_cpu_s(pid: int) -> float:
    """A process's CPU and its reaped children's, plus its live children's, recursively."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15]) * TICK_S  # utime stime cutime cstime
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError, ValueError):
        return total
    return total + sum(proc_cpu_s(int(c)) for c in children)


@dataclass
class Server:
    index: int
    process: subprocess.Popen[str]
    url: str
    log: Path
    args: list[str]
    env: dict[str, str]


def drain(stream: Any, path: Path) -> None:
    """Copy what a process writes to its log, so a full pipe never stops it."""

    def copy() -> None:
        with path.open("a") as out:
            for line in stream:
                out.write(line)
                out.flush()

    threading.Thread(target=copy, daemon=True).start()


async def restart(victim: Server) -> Server:
    """The killed server again, on its own port (the agents' balancer knows that one),
    started off the event loop (the agents go on meanwhile)."""
    port = victim.url.rsplit(":", 1)[1].split("/", 1)[0]
    args = [f"127.0.0.1:{port}" if a == "127.0.0.1:0" else a for a in victim.args]
    for _ in range(50):  # the dead server's socket may linger a moment
        try:
            return await asyncio.to_thread(start_server, victim.index, args, victim.env, victim.log)
        except SystemExit:
            await asyncio.sleep(0.2)
    return await asyncio.to_thread(start_server, victim.index, victim.args, victim.env, victim.log)


def start_server(index: int, args: list[str], env: dict[str, str], log: Path) -> Server:
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    url = None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    for line in process.stderr:
        seen.append(line)
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", line)
        if found:
            url = found.group(1)
            break
        if time.monotonic() > deadline:
            break
    log.write_text("".join(seen))
    if url is None:
        process.kill()
        raise SystemExit(f"server {index} did not start:\n{''.join(seen)[-2000:]}")
    drain(process.stderr, log)
    return Server(index, process, url, log, args, env)


def stop(process: subprocess.Popen[Any], sig: int = signal.SIGINT, wait_s: float = 20) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ------------------------------------------------------------------ a decider
def decider_main(name: str, host: str, data: str, log: str, seed: int) -> None:
    """One person: decide what the store shows open, until SIGTERM. A line per decision
    (JSON) to `log`: the approval, the token, approve or deny, when, how it went."""
    from run_repl.store.approvals.flow import wait_for_approvals_change
    from run_repl.workspace import open_workspace

    rng = random.Random(seed)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())

    async def loop() -> None:
        with open_workspace(host, data_dir_override=data) as ws:
            seen = 0
            out = open(log, "a")
            while not stopping.is_set():
                open_ones = [
                    a
                    for a in await asyncio.to_thread(ws.store.list_approvals, "pending")
                    if a.decision is None
                ]
                if not open_ones:
                    seen = await wait_for_approvals_change(ws.store, seen, 0.5)
                    continue
                open_ones.sort(key=lambda a: a.created_at)
                pick = open_ones[0] if rng.random() < 0.5 else rng.choice(open_ones)
                approve = rng.random() < APPROVE_SHARE
                await asyncio.sleep(rng.uniform(0.05, 0.3))  # a person reads the question
                at = time.time()
                try:
                    # As `run-repl approvals approve` decides: recorded for the process
                    # that started the run (the server holding the agent's call), which
                    # resumes it; resumed here only when no one else can.
                    done = await ws.dispatch({pick.id: approve}, approver=name)
                    result = done.result
                    if done.executor is not None:
                        how = "recorded"
                    elif result is None:
                        how = "settled elsewhere"
                    else:
                        how = result.status if result.error is None else str(result.error.code)
                except Exception as exc:  # another person was first: what a team sees
                    how = type(exc).__name__
                token = pick.args[0] if isinstance(pick.args, list) and pick.args else None
                out.write(
                    json.dumps(
                        {"id": pick.id, "token": token, "approve": approve, "at": at, "how": how}
                    )
                    + "\n"
                )
                out.flush()

    asyncio.run(loop())


# ------------------------------------------------------------------ agents
@dataclass
class Tally:
    calls: list[tuple[str, float, str]] = field(default_factory=list)  # kind, seconds, outcome
    write_done: dict[str, float] = field(default_factory=dict)  # token -> answered at
    run_ids: set[str] = field(default_factory=set)
    expands: int = 0
    expand_failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    killed_writes: list[str] = field(default_factory=list)  # tokens killed inside the write


def outcome_of(result: Any) -> tuple[str, dict[str, Any]]:
    data = result.structured_content or {}
    if result.is_error:
        error = data.get("error") or {}
        return str(error.get("code") or "TOOL_ERROR"), data
    return str(data.get("status") or "ok"), data


async def agent(
    number: int, urls: list[str], deadline: float, tally: Tally, write_wait_s: float
) -> None:
    rng = random.Random(number)
    while time.monotonic() < deadline:
        try:
            await _agent_calls(rng, number, urls, deadline, tally, write_wait_s)
        except Exception as exc:
            # A killed server ends the client's session with it, and that ends every
            # client of this agent: a balancer's agent connects again and goes on.
            tally.errors[f"reconnect:{type(exc).__name__}"] += 1
            await asyncio.sleep(0.2)


async def _agent_calls(
    rng: random.Random,
    number: int,
    urls: list[str],
    deadline: float,
    tally: Tally,
    write_wait_s: float,
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=write_wait_s + 30))
        clients: dict[str, Any] = {}
        for url in urls:  # the stack leaves them in the reverse order, as their scopes need
            client = Client(streamable_http_client(url, http_client=http), mode="auto")
            clients[url] = await stack.enter_async_context(client)
        while time.monotonic() < deadline:
            url = rng.choice(urls)
            pick = rng.random()
            began = time.perf_counter()
            try:
                if pick < 0.55:
                    kind, code = "read", READ
                elif pick < 0.70:
                    kind, code = "big", BIG
                else:
                    kind = "write"
                    token = f"a{number}_{secrets.token_hex(6)}"
                    code = WRITE.format(token=token)
                result = await clients[url].call_tool("run", {"code": code})
                outcome, data = outcome_of(result)
                seconds = time.perf_counter() - began
                tally.calls.append((kind, seconds, outcome))
                if data.get("run_id"):
                    tally.run_ids.add(str(data["run_id"]))
                if outcome not in ("ok",):
                    tally.errors[f"{kind}:{outcome}"] += 1
                if kind == "write":
                    tally.write_done[token] = time.time()
                if kind == "big" and data.get("value_ref"):
                    other = rng.choice([u for u in urls if u != url] or urls)
                    page = await clients[other].call_tool(
                        "expand_result", {"value_ref": data["value_ref"], "offset": 100}
                    )
                    tally.expands += 1
                    if page.is_error:
                        tally.expand_failed += 1
                        tally.errors[f"expand:{outcome_of(page)[0]}"] += 1
            except Exception as exc:  # a cut connection (a killed server): a balancer retries
                tally.errors[f"{type(exc).__name__}"] += 1
                await asyncio.sleep(0.2)


# ------------------------------------------------------------------ one configuration
@dataclass
class Fleet:
    pg: Any
    base_url: str
    tmp: Path
    host_file: Path
    secret: str
    write_ms: int

    def db_url(self, name: str) -> str:
        return self.base_url.rsplit("/", 1)[0] + "/" + name

    def new_database(self, name: str) -> str:
        with psycopg.connect(self.db_url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = self.db_url(name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.execute("CREATE TABLE fleet_writes (token text, pid int, at double precision)")
            # The fault's hook into a write in flight (see the host's `write`).
            conn.execute("CREATE TABLE fleet_catch (wanted int)")
            conn.execute("CREATE TABLE fleet_inflight (token text, pid int, at double precision)")
        return url

    def env(self, url: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp),
            "PYTHONPATH": str(ROOT),
            "RUN_REPL_CONFIG_DIR": str(self.tmp / "config"),
            "RUN_REPL_SECRET": self.secret,
            "RUN_REPL_STORE_URL": url,  # not --store: a password on a command line is seen
            "FLEET_WRITES_URL": url,
            "FLEET_WRITE_MS": str(self.write_ms),
        }


def statements(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query NOT ILIKE '%fleet_writes%' AND query NOT ILIKE '%pg_stat_statements%'"
        ).fetchone()
    return int(row[0]) if row else 0


def top_statements(url: str, n: int) -> list[str]:
    """The n statements run most often (calls, mean ms, the query's start)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT calls, mean_exec_time, query FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query NOT ILIKE '%%pg_stat_statements%%' ORDER BY calls DESC LIMIT %s",
            (n,),
        ).fetchall()
    return [f"{c:6d} x {ms:6.2f} ms  {' '.join(q.split())[:150]}" for c, ms, q in rows]


def reset_statements(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def invariants(url: str, tally: Tally) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        approvals = conn.execute(
            "SELECT id, status, args FROM run_repl.approvals WHERE path = 'write'"
        ).fetchall()
        writes = dict(
            conn.execute("SELECT token, count(*) FROM fleet_writes GROUP BY token").fetchall()
        )
        known = {r[0] for r in conn.execute("SELECT id FROM run_repl.runs").fetchall()}
    by_token: dict[str, list[str]] = {}
    open_ones = 0
    for _id, status, args in approvals:
        parsed = json.loads(args) if isinstance(args, str) else args
        token = parsed[0] if isinstance(parsed, list) and parsed else None
        by_token.setdefault(str(token), []).append(status)
        if status not in ("approved", "denied", "failed", "unfinished", "superseded"):
            open_ones += 1
    twice = sum(1 for n in writes.values() if n > 1)
    lost = sum(
        1 for token, states in by_token.items() if "approved" in states and not writes.get(token)
    )
    unapproved = sum(
        1
        for token in writes
        if not any(s in ("approved", "unfinished") for s in by_token.get(token, []))
    )
    killed_wrong = sum(
        1
        for token in tally.killed_writes
        # Not idempotent: outcome unknown, never run again (the row stays the one written).
        if by_token.get(token) != ["unfinished"] or writes.get(token) != 1
    )
    return {
        "approved writes run twice": twice,
        "approved writes lost": lost,
        "writes nobody approved": unapproved,
        "approvals left open": open_ones,
        "cross-server expand_result failed": tally.expand_failed,
        "answered runs missing from the history": len(tally.run_ids - known),
        "writes killed in flight not left unfinished once": killed_wrong,
    }


def status_of(url: str, approval: str) -> tuple[Any, ...] | None:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT status FROM run_repl.approvals WHERE id = %s", (approval,)
        ).fetchone()


def open_count(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM run_repl.approvals WHERE status NOT IN "
            "('approved', 'denied', 'failed', 'unfinished', 'superseded')"
        ).fetchone()
    return int(row[0]) if row else 0


def pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


STAGES = (
    ("decide", "the decider's dispatch: its clock to the decision recorded"),
    ("claim", "recorded to claimed by the resuming server"),
    ("replay", "claimed to the guard (executing): the replay up to the approved call"),
    ("call", "the guard to the host's write beginning"),
    ("write", "the write (its --write-ms included) and the outcome recorded"),
    ("answer", "the outcome recorded to the agent holding the answer"),
)


def decision_stages(url: str, decided: list[dict[str, Any]], tally: Tally) -> str:
    """Where decision -> result goes, stage by stage, from the approvals' own times
    (the store's clock: one machine) and the writes' rows (the host's clock, the same)."""
    done = {d["id"]: d for d in decided if d["how"] in DECIDED and d["token"] in tally.write_done}
    if not done:
        return "-"
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT a.id, a.decided_at, a.claimed_at, a.executing_at, a.finished_at,"
            " (SELECT min(w.at) FROM fleet_writes w WHERE w.token = a.args::jsonb ->> 0)"
            " FROM run_repl.approvals a WHERE a.id = ANY(%s)",
            (list(done),),
        ).fetchall()
    spans: dict[str, list[float]] = {name: [] for name, _ in STAGES}
    whole: list[tuple[float, list[float]]] = []
    for approval_id, decided_at, claimed, executing, finished, began in rows:
        d = done[approval_id]
        marks = [d["at"], decided_at, claimed, executing, began, finished]
        marks.append(tally.write_done[d["token"]])
        if any(m is None for m in marks):
            continue
        steps = [b - a for a, b in itertools.pairwise(marks)]
        for (name, _), step in zip(STAGES, steps, strict=True):
            spans[name].append(step)
        whole.append((marks[-1] - marks[0], steps))
    # The slowest twentieth (what makes the p95): where their time went, on average.
    whole.sort(key=lambda w: w[0])
    tail = whole[-max(1, len(whole) // 20) :]
    slowest = [sum(w[1][i] for w in tail) / len(tail) for i in range(len(STAGES))]
    return (
        " · ".join(
            f"{name} {round(pct(v, 0.5) * 1000)}/{round(pct(v, 0.95) * 1000)}"
            for name, v in spans.items()
        )
        + " (the slowest 5 %: "
        + " · ".join(f"{n} {round(m * 1000)}" for (n, _), m in zip(STAGES, slowest, strict=True))
        + ")"
    )


async def run_configuration(
    fleet: Fleet,
    n: int,
    agents: int,
    seconds: float,
    settle_s: float,
    faults: bool = False,
) -> dict[str, Any]:
    name = f"fleet_{n}{'_faults' if faults else ''}_{secrets.token_hex(3)}"
    url = fleet.new_database(name)
    env = fleet.env(url)
    work = fleet.tmp / name
    work.mkdir()
    (fleet.tmp / "config").mkdir(exist_ok=True)
    servers = []
    for i in range(n):
        args = [
            sys.executable,
            "-m",
            "run_repl.cli",
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--no-auth",
            "--host",
            str(fleet.host_file),
            "--data-dir",
            str(work / f"server{i}"),
            "--approval-wait",
            str(int(seconds + settle_s)),
        ]
        servers.append(start_server(i, args, env, work / f"server{i}.log"))
    decision_log = work / "decisions.jsonl"
    decision_log.touch()
    deciders = [
        subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--decider",
                who,
                "--host",
                str(fleet.host_file),
                "--data-dir",
                str(work / f"decider-{who}"),
                "--log",
                str(decision_log),
                "--seed",
                str(k),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(work / f"decider-{who}.log").open("w"),
        )
        for k, who in enumerate(DECIDER_NAMES)
    ]
    fault_notes: list[str] = []
    try:
        urls = [s.url for s in servers]
        warm = Tally()
        await agent(10_000, urls, time.monotonic() + 1.0, warm, seconds + settle_s)
        reset_statements(url)
        cpu0 = sum(proc_cpu_s(s.process.pid) for s in servers)
        tally = Tally()
        began = time.monotonic()
        deadline = began + seconds
        tasks = [
            asyncio.ensure_future(agent(i, urls, deadline, tally, seconds + settle_s))
            for i in range(agents)
        ]
        if faults:
            fault_notes = await inject_faults(fleet, servers, deciders, url, seconds, tally)
        await asyncio.wait(tasks, timeout=seconds + settle_s + 30)
        for t in tasks:
            t.cancel()
        elapsed = time.monotonic() - began
        cpu = sum(proc_cpu_s(s.process.pid) for s in servers if s.process.poll() is None) - cpu0
        calls = statements(url)
        if TOP_STATEMENTS:
            print("\n".join(top_statements(url, TOP_STATEMENTS)), flush=True)
        settle_until = time.monotonic() + settle_s
        while await asyncio.to_thread(open_count, url) and time.monotonic() < settle_until:
            await asyncio.sleep(0.5)
    finally:
        for d in deciders:
            stop(d, signal.SIGTERM)
        for s in servers:
            stop(s.process)
    decided = [json.loads(line) for line in decision_log.read_text().splitlines() if line]
    latency = [
        tally.write_done[d["token"]] - d["at"]
        for d in decided
        if d["token"] in tally.write_done and d["how"] in DECIDED
    ]
    stages = await asyncio.to_thread(decision_stages, url, decided, tally)
    runs = [c for c in tally.calls if c[2] not in ("RUN_BUSY",)]
    run_s = [c[1] for c in runs]
    figures = {
        "servers": n,
        "runs": len(runs),
        "runs/s": len(runs) / elapsed,
        "run call p50/p95/p99 ms": tuple(round(pct(run_s, q) * 1000) for q in (0.5, 0.95, 0.99)),
        "read p50 ms": round(pct([c[1] for c in runs if c[0] == "read"], 0.5) * 1000),
        "RUN_BUSY refusals": sum(1 for c in tally.calls if c[2] == "RUN_BUSY"),
        "decisions (a second decider refused)": (
            sum(1 for d in decided if d["how"] in DECIDED),
            sum(1 for d in decided if d["how"] in ("ApprovalConflict", "ApprovalStuck")),
        ),
        "decision -> result p50/p95 ms": (
            round(pct(latency, 0.5) * 1000),
            round(pct(latency, 0.95) * 1000),
        ),
        "decision -> result by stage, p50/p95 ms": stages,
        "server CPU per run ms": round(cpu / max(1, len(runs)) * 1000, 1),
        "PG statements per run": round(calls / max(1, len(runs)), 1),
        "errors": dict(tally.errors.most_common(8)),
        "invariants": invariants(url, tally),
        "faults": fault_notes,
    }
    return figures


async def kill_inside_a_write(
    servers: list[Server], url: str, within_s: float, tally: Tally
) -> list[str]:
    """Ask for the next approved write to be held in flight, kill the process running it
    (the executor resuming its run: a server, or a decider when one resumed it), and see
    its approval settle: `unfinished`, outcome unknown, its row written once."""
    notes: list[str] = []

    def sql(statement: str, *args: Any) -> Any:
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(statement, args)
            return cur.fetchone() if cur.description is not None else None

    await asyncio.to_thread(sql, "INSERT INTO fleet_catch (wanted) VALUES (1)")
    until = time.monotonic() + within_s  # writes wait for a person: give one time to come
    found = None
    while found is None and time.monotonic() < until:  # off the loop: the agents go on
        found = await asyncio.to_thread(sql, "SELECT token, pid FROM fleet_inflight LIMIT 1")
        if found is None:
            await asyncio.sleep(0.05)
    if found is None:
        left = await asyncio.to_thread(sql, "SELECT count(*) FROM fleet_catch")
        began = await asyncio.to_thread(
            sql, "SELECT count(*) FROM fleet_writes WHERE at > %s", time.time() - within_s
        )
        await asyncio.to_thread(sql, "DELETE FROM fleet_catch")
        notes.append(
            f"no approved write began within {within_s:.0f} s (nothing killed; "
            f"{began[0]} writes meanwhile, catch rows left {left[0]})"
        )
        return notes
    token, pid = str(found[0]), int(found[1])
    row = await asyncio.to_thread(
        sql,
        "SELECT id, claimed_by FROM run_repl.approvals WHERE path = 'write' "
        "AND args::jsonb ->> 0 = %s",
        token,
    )
    approval, holder = (row[0], row[1]) if row else ("?", "?")
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    tally.killed_writes.append(token)
    victim = next((s for s in servers if s.process.pid == pid), None)
    what = f"server {victim.index}" if victim is not None else f"pid {pid}"
    notes.append(f"killed {what} ({holder}) inside the approved write of {approval}")
    if victim is not None:
        victim.process.wait()
        servers[servers.index(victim)] = await restart(victim)
        notes.append(f"server {victim.index} started again")
    settled = None
    while time.monotonic() - killed < 120:
        got = await asyncio.to_thread(status_of, url, approval)
        if got and got[0] in ("approved", "denied", "failed", "unfinished"):
            settled = (got[0], time.monotonic() - killed)
            break
        await asyncio.sleep(0.1)
    notes.append(
        f"its approval settled as {settled[0]} {settled[1]:.1f} s after the kill"
        if settled
        else "its approval was still open 120 s after the kill"
    )
    return notes


async def inject_faults(
    fleet: Fleet,
    servers: list[Server],
    deciders: list[subprocess.Popen[bytes]],
    url: str,
    seconds: float,
    tally: Tally,
) -> list[str]:
    """In turn: a server killed and started again, the executor of an approved write
    killed inside it, PostgreSQL stopped for 10 s; what each left behind, and when it
    settled."""
    notes: list[str] = []
    step = seconds / 4
    await asyncio.sleep(step)
    victim = servers[-1]
    killed_at = time.time()
    victim.process.kill()
    victim.process.wait()
    notes.append(f"server {victim.index} killed at +{step:.0f} s")
    await asyncio.sleep(3)
    servers[-1] = await restart(victim)
    notes.append(f"server {victim.index} started again after {time.time() - killed_at:.1f} s")
    await asyncio.sleep(step / 2)
    notes.extend(await kill_inside_a_write(servers, url, 2 * step, tally))
    await asyncio.sleep(1)
    began = time.monotonic()
    await asyncio.to_thread(fleet.pg.restart_after, 10)
    notes.append(f"PostgreSQL stopped for 10 s (back after {time.monotonic() - began:.1f} s)")
    return notes


# ------------------------------------------------------------------ the report
def report(results: list[dict[str, Any]]) -> int:
    broken = 0
    rows = [k for k in results[0] if k not in ("invariants", "faults", "errors")]
    print()
    print("| " + " | ".join(["", *(f"{r['servers']} servers" for r in results)]) + " |")
    print("|" + "---|" * (len(results) + 1))
    for key in rows[1:]:
        print("| " + " | ".join([key, *(fmt(r[key]) for r in results)]) + " |")
    for key in results[0]["invariants"]:
        values = [r["invariants"][key] for r in results]
        broken += sum(1 for v in values if v)
        print("| " + " | ".join([key, *(str(v) for v in values)]) + " |")
    for r in results:
        if r["errors"]:
            print(f"errors ({r['servers']} servers): {r['errors']}")
        for note in r["faults"]:
            print(f"fault ({r['servers']} servers): {note}")
    print("invariants:", "all held" if not broken else f"{broken} BROKEN")
    return 1 if broken else 0


def fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, tuple):
        return " / ".join(str(v) for v in value)
    return str(value)


async def main(args: argparse.Namespace) -> int:
    from pg_server import STATEMENT_COUNTS, PgServer, ServerUnavailable

    tmp = Path(tempfile.mkdtemp(prefix="run-repl-fleet-"))
    os.chmod(tmp, 0o755)  # the server's own user (postgres, as root) walks into it
    pg = PgServer(tmp / "pg", options=STATEMENT_COUNTS)
    try:
        base = pg.start(die_with=os.getpid())
    except ServerUnavailable as exc:
        print(f"fleet: no PostgreSQL: {exc}", file=sys.stderr)
        return 2
    host_file = tmp / "fleet_host.py"
    host_file.write_text(HOST)
    fleet = Fleet(pg, base, tmp, host_file, secrets.token_hex(32), args.write_ms)
    results = []
    try:
        for n in args.servers:
            print(f"{n} server(s), {args.agents} agents, {args.seconds:g} s ...", flush=True)
            results.append(
                await run_configuration(fleet, n, args.agents, args.seconds, args.settle_s)
            )
        if args.faults:
            print(
                f"faults: 3 servers, {args.agents} agents, {max(args.seconds, 30):g} s ...",
                flush=True,
            )
            results.append(
                await run_configuration(
                    fleet, 3, args.agents, max(args.seconds, 30), args.settle_s, faults=True
                )
            )
    finally:
        pg.stop()
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return report(results)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="1,2,4", help="configurations, comma-separated")
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20, help="each phase's length")
    parser.add_argument("--settle-s", type=float, default=60, help="bound on the wait after it")
    parser.add_argument("--write-ms", type=int, default=200, help="how long a write takes")
    parser.add_argument("--faults", action="store_true", help="add the faults configuration")
    parser.add_argument(
        "--top-statements", type=int, default=0, metavar="N", help="print the N most run"
    )
    # A decider process (this script starts them).
    parser.add_argument("--decider", help=argparse.SUPPRESS)
    parser.add_argument("--host", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.servers = [int(x) for x in str(args.servers).split(",") if x.strip()]
    return args


if __name__ == "__main__":
    options = parse(sys.argv[1:])
    if options.decider:
        decider_main(options.decider, options.host, options.data_dir, options.log, options.seed)
        sys.exit(0)
    TOP_STATEMENTS = options.top_statements
    sys.exit(asyncio.run(main(options)))
