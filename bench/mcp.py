"""MCP server benchmark: a trivial run through the server beside the engine's own, in one invocation.

    python bench/mcp.py [--rounds N] [--cpu-rounds N] [--decisions N] [--store URL] [--profile FILE]

Starts `run-repl mcp` (stdio, then `--http 127.0.0.1:0`) on a fresh data directory
with the demo host, and drives it with the `mcp` package's own client, on both
protocol revisions (2025-11-25: the handshake; 2026-07-28: one self-contained
request per call). Prints:

- the engine alone: `runner.run("1 + 1")` of a workspace on the same store, in this
  process: the median wall time (paced 50 ms apart, so a spare sandbox is ready, as
  between an agent's calls) and this process's CPU per run (back to back); also with
  the history write the server adds (`ws.remember`, as `run-repl run` does);
- the same trivial `run` tool call over stdio and over HTTP: the median round trip
  (paced the same), and the server process's CPU per call from /proc/PID/stat
  (utime + stime, over --cpu-rounds calls back to back: /proc counts in 10 ms ticks);
  `docs` (no sandbox);
- interleaved, one of each per round so that the three see the same load: the engine
  alone, stdio with the SDK's client, and stdio with a minimal client of this file's
  own (one JSON line written, lines read until the answer's): the server's share of
  the round trip, without the SDK client's (its pydantic models, its output-schema
  check, its reader thread), which the other figures include;
- interleaved too, for the HTTP target: CPU per trivial run of the engine alone and of
  a 2025-11-25 and a 2026-07-28 HTTP server, in blocks of 20 back to back taken in turn
  (--cpu-rounds / 20 blocks each): the ratio under the same load, where the figures
  above are taken minutes apart and move by a third with the machine's load;
- a decision: a `run` that publishes a draft waits for approval; this process decides
  it through the store's flow (as `run-repl approvals approve` does), which resumes the
  run here: from the decision, and from the store holding the outcome, to the call's return;
- the ratios against the targets: stdio round trip <= 1.3x the engine's trivial run;
  HTTP server CPU per run <= 2x the engine's; and where a run's server CPU goes, by
  difference: a tools/call answered without a run (`run` with a bad argument: the
  protocol and the server's dispatch), the engine, the history write, the rest.

CPU is the process's own (its sandbox workers are other processes, in both cases).
`--store URL` puts the server and the engine on a team's PostgreSQL store (in a
schema of their own, dropped at the end). `--profile FILE` then runs --cpu-rounds more
through a stdio server and through an HTTP server (2025-11-25) under cProfile (CPU time
of its event loop's thread, from the end of its warm-up; other threads are not
profiled), counts the collector's pauses, and prints both, by package and by function
(FILE-stdio.prof and FILE-http.prof stay for pstats).
Figures on a loaded machine are inflated: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

# This file is bench/mcp.py: run as a script, its directory would shadow the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import run_repl  # noqa: E402
from run_repl.host.demo import reset_demo  # noqa: E402
from run_repl.workspace import open_workspace  # noqa: E402

PUBLISH = 'return await documents.publish("draft_01")'
TRIVIAL = "1 + 1"
PACE_S = 0.05
REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
TARGET_STDIO_RATIO = 1.3
TARGET_HTTP_CPU_RATIO = 2.0


def cpu_s(pid: int | str = "self", *, reaped: bool = False) -> float:
    """utime + stime of one process, in seconds; `reaped`: with its ended children's
    (cutime + cstime: a template process's sandbox workers, once it has reaped them)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = int(fields[11]) + int(fields[12])
    return (own + (int(fields[13]) + int(fields[14]) if reaped else 0)) * TICK_S


def tree_cpu_s(pid: int | str, template: int) -> float:
    """A process's CPU with its sandbox's: its template and the workers it reaped."""
    return cpu_s(pid) + cpu_s(template, reaped=True)


def child_pid(pattern: str, parent: int | None = None) -> int:
    """The pid of a child of `parent` (this process) whose command line contains
    `pattern` (a server's sandbox template: "--control")."""
    me = str(parent if parent is not None else os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and pattern in cmdline:
            return int(entry.name)
    raise RuntimeError(f"no child process running {pattern!r}")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.2f} ms"


def median_ms(samples: list[float]) -> str:
    p90 = sorted(samples)[int(len(samples) * 0.9)]
    return f"median {ms(statistics.median(samples))}  (p90 {ms(p90)}, n={len(samples)})"


async def paced(once: Callable[[], Awaitable[Any]], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        await anyio.sleep(PACE_S)
        started = time.perf_counter()
        await once()
        samples.append(time.perf_counter() - started)
    return samples


async def cpu_per_call(
    once: Callable[[], Awaitable[Any]],
    rounds: int,
    pid: int | str,
    seen: dict[str, float] | None = None,
) -> float:
    """CPU seconds process `pid` spends per call, over `rounds` calls back to back (and
    this process's, the client's, in seen["client"])."""
    before, mine = cpu_s(pid), cpu_s()
    for _ in range(rounds):
        await once()
    if seen is not None:
        seen["client"] = (cpu_s() - mine) / rounds
    return (cpu_s(pid) - before) / rounds


def engine_run(ws: Any) -> Callable[[], Awaitable[Any]]:
    """A trivial run of the engine alone, in this process."""

    async def run() -> Any:
        result = await ws.runner.run(TRIVIAL, ws.host.functions)
        assert result.status == "ok", result.error
        return result

    return run


def tool_run(client: Client) -> Callable[[], Awaitable[None]]:
    """A trivial run through the server, as the `run` tool."""

    async def call() -> None:
        result = await client.call_tool("run", {"code": TRIVIAL})
        assert not result.is_error, result.content

    return call


# ------------------------------------------------------------------ the engine alone
async def engine_alone(data: Path, rounds: int, cpu_rounds: int) -> dict[str, Any]:
    with open_workspace(None, data_dir_override=str(data)) as ws:
        run = engine_run(ws)

        async def run_and_remember() -> None:
            result = await run()
            await asyncio.to_thread(ws.remember, result, TRIVIAL)

        for _ in range(3):
            await run()
        wall = await paced(run, rounds)
        cpu = await cpu_per_call(run, cpu_rounds, "self")
        wall_h = await paced(run_and_remember, rounds)
        cpu_h = await cpu_per_call(run_and_remember, cpu_rounds, "self")
    return {
        "wall": statistics.median(wall),
        "cpu": cpu,
        "wall_history": statistics.median(wall_h),
        "cpu_history": cpu_h,
        "samples": wall,
    }


# ------------------------------------------------------------------ servers
def environment(tmp: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "PYTHONPATH": str(Path(run_repl.__file__).resolve().parents[1]),
        "RUN_REPL_CONFIG_DIR": str(tmp / "config"),
    }
    if os.environ.get("RUN_REPL_STORE_URL"):
        env["RUN_REPL_STORE_URL"] = os.environ["RUN_REPL_STORE_URL"]
    return env


# The server as `python -c PROFILED mcp ...`: run_repl.cli as __main__, with cProfile (CPU
# time of the event loop's thread) and the collector's pauses counted from SIGUSR1 (after
# the warm-up) to the end, written to $BENCH_PROFILE (.prof, and .gc as text).
PROFILED = r"""
import atexit, cProfile, gc, os, runpy, signal, sys, time
out = os.environ["BENCH_PROFILE"]
prof = cProfile.Profile(time.thread_time)
gc_s = [0.0, 0.0, 0.0]; gc_n = [0, 0, 0]; began = [0.0]; on = [False]
def collected(phase, info):
    if phase == "start":
        began[0] = time.thread_time()
    elif on[0]:
        gc_s[info["generation"]] += time.thread_time() - began[0]; gc_n[info["generation"]] += 1
def start(*_):
    on[0] = True; prof.enable()
def dump():
    prof.disable(); prof.dump_stats(out + ".prof")
    with open(out + ".gc", "w") as f:
        f.write(f"{len(gc.get_objects())} objects tracked\n")
        for g in range(3): f.write(f"{g} {gc_n[g]} {gc_s[g]}\n")
gc.callbacks.append(collected); signal.signal(signal.SIGUSR1, start); atexit.register(dump)
sys.argv = ["run-repl", *sys.argv[1:]]
runpy.run_module("run_repl.cli", run_name="__main__", alter_sys=True)
"""


def server_args(data: Path, *extra: str, profiled: bool = False) -> list[str]:
    python = ["-c", PROFILED] if profiled else ["-m", "run_repl.cli"]
    return [*python, "mcp", "--data-dir", str(data), *extra]


@asynccontextmanager
async def stdio_session(
    tmp: Path, data: Path, mode: str, profile: str | None = None
) -> AsyncIterator[tuple[Client, int]]:
    env = environment(tmp)
    if profile:
        env["BENCH_PROFILE"] = profile
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(data, "--approval-wait", "120", profiled=profile is not None),
        env=env,
    )
    with (tmp / "stdio-stderr.txt").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client, child_pid("mcp --data-dir")


HTTP_TOKEN = "bench-token-of-at-least-twenty-four-characters"


@asynccontextmanager
async def http_session(
    tmp: Path, data: Path, mode: str, profile: str | None = None
) -> AsyncIterator[tuple[Client, int]]:
    env = {**environment(tmp), "RUN_REPL_MCP_TOKEN": HTTP_TOKEN}  # HTTP needs credentials
    if profile:
        env["BENCH_PROFILE"] = profile
    process = subprocess.Popen(
        [sys.executable, *server_args(data, "--http", "127.0.0.1:0", profiled=profile is not None)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    url = None
    for line in process.stderr:
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)$", line.rstrip())
        if found:
            url = found.group(1)
            break
    try:
        if url is None:
            raise RuntimeError(f"the HTTP server did not start (exit {process.wait()})")
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {HTTP_TOKEN}"})
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client, process.pid
    finally:
        process.send_signal(2)
        process.wait(timeout=30)
        process.stderr.close()


async def tool_figures(client: Client, pid: int, rounds: int, cpu_rounds: int) -> dict[str, Any]:
    trivial = tool_run(client)

    async def docs() -> None:
        result = await client.call_tool("docs", {})
        assert not result.is_error, result.content

    async def refused() -> None:  # a tools/call answered before any run: a bad argument
        result = await client.call_tool("run", {"code": 5})
        assert result.is_error, result.content

    async def ping() -> None:
        with warnings.catch_warnings():  # "ping is removed as of 2026-07-28": known
            warnings.simplefilter("ignore")
            await client.send_ping()

    await client.list_tools()
    for _ in range(3):
        await trivial()
    client_cpu: dict[str, float] = {}
    figures = {
        "version": client.protocol_version,
        "wall": await paced(trivial, rounds),
        "cpu": await cpu_per_call(trivial, cpu_rounds, pid, client_cpu),
        "docs": await paced(docs, rounds),
        "docs_cpu": await cpu_per_call(docs, cpu_rounds, pid),
        "refused_cpu": await cpu_per_call(refused, cpu_rounds, pid),
    }
    figures["client_cpu"] = client_cpu["client"]
    if client.protocol_version != "2026-07-28":  # no ping there
        figures["ping_cpu"] = await cpu_per_call(ping, cpu_rounds, pid)
    return figures


# ------------------------------------------------------------------ a minimal stdio client
@asynccontextmanager
async def raw_stdio(tmp: Path, data: Path) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """A trivial run through a stdio server driven by hand (JSON lines over the pipes,
    after the handshake), as a function to call."""
    import json

    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *server_args(data, "--approval-wait", "120"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=(tmp / "stdio-stderr.txt").open("a"),
        env=environment(tmp),
        limit=16 << 20,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def ask(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        line = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        stdin.write(json.dumps(line).encode() + b"\n")
        await stdin.drain()
        while True:
            answer = json.loads(await stdout.readline())
            if answer.get("id") == id:
                return answer

    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
        await ask(0, "initialize", {**hello, "clientInfo": {"name": "bench", "version": "1"}})
        stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"name": "run", "arguments": {"code": TRIVIAL}}
        ids = iter(range(1, 1 << 30))
        for _ in range(3):
            await ask(next(ids), "tools/call", call)

        async def once() -> None:
            answer = await ask(next(ids), "tools/call", call)
            assert not answer["result"].get("isError"), answer

        yield once
    finally:
        stdin.close()
        await process.wait()


async def interleaved(tmp: Path, data: Path, rounds: int) -> dict[str, list[float]]:
    """Round trips of the engine alone, of stdio with the SDK's client and of stdio with
    the minimal client, one of each per round (paced): on a machine whose load moves,
    the three see the same load."""
    samples: dict[str, list[float]] = {"engine": [], "sdk": [], "minimal": []}
    with open_workspace(None, data_dir_override=str(data)) as ws:
        engine = engine_run(ws)
        async with stdio_session(tmp, data, "legacy") as (client, _), raw_stdio(tmp, data) as raw:
            sdk_call = tool_run(client)
            for _ in range(3):
                await engine()
                await sdk_call()
            for _ in range(rounds):
                for name, once in (("engine", engine), ("sdk", sdk_call), ("minimal", raw)):
                    samples[name] += await paced(once, 1)
    return samples


async def interleaved_cpu(
    tmp: Path, data: Path, blocks: int, per_block: int = 20
) -> dict[str, dict[str, float]]:
    """CPU per trivial run of the engine alone (this process) and of each HTTP server
    (its process), in alternating blocks of `per_block` back to back: the ratio the
    target names, under the same load for the three, whatever the load does. Each also
    with its sandbox's (`tree`: the template process and the workers it forked)."""
    spent = {
        name: {"own": 0.0, "tree": 0.0} for name in ("engine", "http 2025-11-25", "http 2026-07-28")
    }
    with open_workspace(None, data_dir_override=str(data)) as ws:
        async with (
            http_session(tmp, data, "legacy") as (legacy, legacy_pid),
            http_session(tmp, data, "auto") as (modern, modern_pid),
        ):
            sides: list[tuple[str, Callable[[], Awaitable[Any]], int]] = [
                ("engine", engine_run(ws), os.getpid()),
                ("http 2025-11-25", tool_run(legacy), legacy_pid),
                ("http 2026-07-28", tool_run(modern), modern_pid),
            ]
            for _, once, _ in sides:
                for _ in range(3):
                    await once()
            # Each side's sandbox template, started by its warm-up runs.
            templates = {name: child_pid("--control", pid) for name, _, pid in sides}
            for _ in range(blocks):
                for name, once, pid in sides:
                    own, tree = cpu_s(pid), tree_cpu_s(pid, templates[name])
                    for _ in range(per_block):
                        await once()
                    spent[name]["own"] += (cpu_s(pid) - own) / per_block
                    spent[name]["tree"] += (tree_cpu_s(pid, templates[name]) - tree) / per_block
    return {name: {k: v / blocks for k, v in f.items()} for name, f in spent.items()}


# ------------------------------------------------------------------ a decision
async def one_decision(client: Client, ws: Any) -> tuple[float, float]:
    """A run waits for approval; decide it here; (decided -> returned, settled -> returned)."""
    waiting = anyio.Event()
    returned: dict[str, float] = {}

    async def progress(p: float, total: float | None, message: str | None) -> None:
        waiting.set()

    async def call() -> None:
        result = await client.call_tool("run", {"code": PUBLISH}, progress_callback=progress)
        returned["at"] = time.perf_counter()
        assert result.structured_content["status"] == "ok", result.content

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await waiting.wait()
        [approval] = ws.store.list_approvals("pending")
        decided = time.perf_counter()
        result = await ws.decide({approval.id: True})
        settled = time.perf_counter()
        assert result.status == "ok", result.error
    return returned["at"] - decided, returned["at"] - settled


async def decisions(client: Client, data: Path, rounds: int) -> tuple[list[float], list[float]]:
    whole: list[float] = []
    after_store: list[float] = []
    with open_workspace(None, data_dir_override=str(data)) as ws:
        for _ in range(rounds):
            reset_demo(data)
            a, b = await one_decision(client, ws)
            whole.append(a)
            after_store.append(b)
    return whole, after_store


# ------------------------------------------------------------------ the report
async def main(rounds: int, cpu_rounds: int, decision_rounds: int, profile: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="run-repl-bench-mcp-") as name:
        tmp = Path(name)
        data = tmp / "data"
        data.mkdir()
        (tmp / "config").mkdir()
        team = os.environ.get("RUN_REPL_STORE_URL")
        schema = "bench_mcp_" + secrets.token_hex(4)
        if team:
            (tmp / "config" / "config.toml").write_text(f'[store]\nschema = "{schema}"\n')
        os.environ["RUN_REPL_CONFIG_DIR"] = str(tmp / "config")
        os.environ["HOME"] = str(tmp)
        try:
            engine = await engine_alone(data, rounds, cpu_rounds)
            figures: dict[str, dict[str, Any]] = {}
            for revision, mode in REVISIONS.items():
                async with stdio_session(tmp, data, mode) as (client, pid):
                    figures[f"stdio {revision}"] = await tool_figures(
                        client, pid, rounds, cpu_rounds
                    )
                    if revision == "2025-11-25":
                        decided, settled = await decisions(client, data, decision_rounds)
                async with http_session(tmp, data, mode) as (client, pid):
                    figures[f"http {revision}"] = await tool_figures(
                        client, pid, rounds, cpu_rounds
                    )
            side = await interleaved(tmp, data, rounds)
            cpu_side = await interleaved_cpu(tmp, data, max(1, cpu_rounds // 20))
            if profile:
                await profiled_runs(tmp, data, profile, cpu_rounds)
        finally:
            if team:
                drop_schema(team, schema)

    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    print(
        f"trivial run `{TRIVIAL}`, {'PostgreSQL' if team else 'SQLite'} store; wall paced "
        f"{PACE_S * 1000:.0f} ms, n={rounds}; CPU per call over {cpu_rounds} back to back"
    )
    print(f"engine alone, runner.run:         {median_ms(engine['samples'])}")
    print(f"  + the history write (remember): median {ms(engine['wall_history'])}")
    print(
        f"  CPU per run (this process):     {ms(engine['cpu'])}, with the history write {ms(engine['cpu_history'])}"
    )
    for name, f in figures.items():
        print(f"{name} (negotiated {f['version']}):")
        print(f"  run round trip:   {median_ms(f['wall'])}")
        print(f"  docs round trip:  {median_ms(f['docs'])}")
        ping = f" / ping {ms(f['ping_cpu'])}" if "ping_cpu" in f else ""
        print(
            f"  server CPU per call: run {ms(f['cpu'])} / docs {ms(f['docs_cpu'])} / run refused "
            f"(bad argument) {ms(f['refused_cpu'])}{ping}"
        )
        print(f"  the client's CPU per run call (this process): {ms(f['client_cpu'])}")
    print("interleaved, one of each per round (the same load for the three):")
    print(f"  engine alone:                      {median_ms(side['engine'])}")
    print(f"  stdio 2025-11-25, the SDK client:  {median_ms(side['sdk'])}")
    print(
        f"  stdio 2025-11-25, a minimal client (JSON lines by hand): {median_ms(side['minimal'])}"
    )
    print("interleaved CPU per trivial run (blocks of 20 back to back, in turn):")
    for name, f in cpu_side.items():
        print(
            f"  {name + (' alone' if name == 'engine' else ' server'):<24} its process "
            f"{ms(f['own'])}, with its sandbox (template and workers) {ms(f['tree'])}"
        )
    print(f"decision -> tool returns:         {median_ms(decided)}  (includes the resume)")
    print(f"store settled -> tool returns:    {median_ms(settled)}")
    print("\ntargets (against the engine alone):")
    for name, f in figures.items():
        ratio = statistics.median(f["wall"]) / engine["wall"]
        cpu_ratio = f["cpu"] / engine["cpu"] if engine["cpu"] else float("inf")
        if name.startswith("stdio"):
            said = f"round trip {ratio:5.2f}x (target <= {TARGET_STDIO_RATIO}x: {_met(ratio, TARGET_STDIO_RATIO)}); server CPU {cpu_ratio:5.2f}x"
            if name == "stdio 2025-11-25":
                alone = statistics.median(side["engine"])
                sdk = statistics.median(side["sdk"]) / alone
                mine = statistics.median(side["minimal"]) / alone
                said += (
                    f"\n  {'':<17} interleaved: round trip {sdk:5.2f}x ({_met(sdk, TARGET_STDIO_RATIO)}),"
                    f" with the minimal client {mine:5.2f}x ({_met(mine, TARGET_STDIO_RATIO)})"
                )
        else:
            own = cpu_side[name]["own"] / cpu_side["engine"]["own"]
            tree = cpu_side[name]["tree"] / cpu_side["engine"]["tree"]
            said = (
                f"round trip {ratio:5.2f}x; server CPU {cpu_ratio:5.2f}x (target <= "
                f"{TARGET_HTTP_CPU_RATIO}x: {_met(cpu_ratio, TARGET_HTTP_CPU_RATIO)})\n"
                f"  {'':<17} interleaved: its process {own:5.2f}x ({_met(own, TARGET_HTTP_CPU_RATIO)}),"
                f" with the sandbox's {tree:5.2f}x ({_met(tree, TARGET_HTTP_CPU_RATIO)})"
            )
        print(f"  {name:<17} {said}")
    print("\nwhere a run's server CPU goes (by difference):")
    for name, f in figures.items():
        history = engine["cpu_history"] - engine["cpu"]
        rest = f["cpu"] - f["refused_cpu"] - engine["cpu_history"]
        print(
            f"  {name:<17} a tools/call answered without a run {ms(f['refused_cpu'])}"
            f" + the engine {ms(engine['cpu'])} + the history write {ms(history)}"
            f" + the rest {ms(rest)}"
        )
    if profile:
        profile_report(profile)


async def profiled_runs(tmp: Path, data: Path, profile: str, cpu_rounds: int) -> None:
    """Trivial runs through a stdio and an HTTP server under the profile launcher,
    after their warm-up."""
    for transport in ("stdio", "http"):
        out = f"{profile}-{transport}"
        session = (
            stdio_session(tmp, data, "legacy", profile=out)
            if transport == "stdio"
            else http_session(tmp, data, "legacy", profile=out)
        )
        async with session as (client, pid):
            await client.list_tools()
            for _ in range(5):
                await client.call_tool("run", {"code": TRIVIAL})
            os.kill(pid, signal.SIGUSR1)
            await anyio.sleep(0.2)
            for _ in range(cpu_rounds):
                result = await client.call_tool("run", {"code": TRIVIAL})
                assert not result.is_error, result.content
        for _ in range(100):  # it writes the profile as it exits
            if Path(out + ".gc").exists():
                break
            await anyio.sleep(0.1)
        Path(out + ".runs").write_text(str(cpu_rounds))


# Where a profiled function's own time is counted: the first of these in its file's path.
PACKAGES = (
    "run_repl/mcp",
    "run_repl/sandbox",
    "run_repl/store",
    "run_repl",
    "site-packages/mcp/",
    "mcp_types",
    "uvicorn",
    "starlette",
    "anyio",
    "sniffio",
    "pydantic",
    "asyncio",
    "concurrent",
    "threading",
    "json",
)


def by_package(stats: pstats.Stats, runs: int) -> None:
    own: dict[str, float] = {}
    calls: dict[str, int] = {}
    for (path, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        where = next((p for p in PACKAGES if p in path), None)
        if where is None:
            where = f"built-in {function}" if path == "~" else Path(path).name
        own[where] = own.get(where, 0.0) + row[2]
        calls[where] = calls.get(where, 0) + row[1]
    for where, seconds in sorted(own.items(), key=lambda kv: -kv[1])[:16]:
        print(f"    {seconds * 1000 / runs:6.3f} ms  {calls[where] / runs:6.1f} calls  {where}")


def profile_report(profile: str, top: int = 30) -> None:
    for transport in ("stdio", "http"):
        out = f"{profile}-{transport}"
        runs = int(Path(out + ".runs").read_text())
        lines = Path(out + ".gc").read_text().splitlines()
        print(
            f"\n{transport} server, {runs} trivial runs under cProfile (CPU time of its event "
            "loop's thread; the profiler's own cost inflates every figure):"
        )
        print(f"  the collector ({lines[0]}):")
        for line in lines[1:]:
            gen, count, seconds = line.split()
            print(
                f"    generation {gen}: {count} collections, {float(seconds) * 1000:.1f} ms in all"
            )
        stats = pstats.Stats(out + ".prof")
        print(
            f"  {stats.total_calls / runs:.0f} Python calls per run; own time by package, per run:"
        )  # type: ignore[attr-defined]
        by_package(stats, runs)
        print("  by own time:")
        stats.sort_stats("tottime").print_stats(top)
        print("by cumulative time:")
        stats.sort_stats("cumulative").print_stats(top)


def _met(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "NOT met"


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--cpu-rounds", type=int, default=200)
    parser.add_argument("--decisions", type=int, default=10)
    parser.add_argument("--store", help="a team's PostgreSQL store (default: SQLite)")
    parser.add_argument("--profile", help="write the stdio server's cProfile here, and show it")
    options = parser.parse_args()
    if options.store:
        os.environ["RUN_REPL_STORE_URL"] = options.store
    anyio.run(main, options.rounds, options.cpu_rounds, options.decisions, options.profile)
