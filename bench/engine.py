"""Engine benchmark: run-repl's figures beside npm `run`'s, from one invocation.

    (cd bench/node && npm ci)        # once: npm run 2.1.5, pinned
    python bench/engine.py [--rounds N] [--soak N] [--no-node]

Every figure goes through the public API (`Runner.run`), runs back to back
with no pause between them unless it says "pause". npm `run` goes through the
same scenarios in bench/node/engine.mjs, started from here, so both sets of
figures come from the same machine under the same load. Medians, and the best
run beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from run_repl import Limits, get_host_function_context
from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session.pool import WorkerPool, WorkerProcess

NODE_DIR = Path(__file__).with_name("node")
SECRET = "bench-secret-of-at-least-thirty-two-bytes!"


class Pool(WorkerPool):
    """The default pool, remembering the worker of the latest run."""

    latest: WorkerProcess | None = None

    def take(self) -> WorkerProcess:
        self.latest = super().take()
        return self.latest


async def timed(make: Callable[[], Awaitable[Any]], rounds: int) -> tuple[float, float]:
    samples: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        await make()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), min(samples)


def memory_of(pid: int) -> dict[str, int]:
    """RSS, PSS and USS (private) of a process, in bytes (Linux)."""
    out = {"rss": 0, "pss": 0, "uss": 0}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                kib = int(rest.split()[0]) * 1024 if rest.strip() else 0
                if key == "Rss":
                    out["rss"] = kib
                elif key == "Pss":
                    out["pss"] = kib
                elif key in ("Private_Clean", "Private_Dirty"):
                    out["uss"] += kib
    except (OSError, ValueError, IndexError):
        pass
    return out


def children_of(pid: int) -> list[tuple[int, str]]:
    """(pid, state) of each child of `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append((int(entry), fields[0]))
    return found


def cpu_and_faults(pid: int) -> tuple[float, float, int]:
    """(its own CPU s, its reaped children's CPU s, its reaped children's minor
    page faults) for a process (Linux)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    own = (int(fields[11]) + int(fields[12])) / tick
    children = (int(fields[13]) + int(fields[14])) / tick
    return own, children, int(fields[8])


async def cpu_per_run(
    check: Callable[[str], Awaitable[Any]], template: int, runs: int
) -> dict[str, float]:
    """Where the CPU of one trivial run goes, over `runs` back to back: this
    process, the template (a fork each), the children (reaped by the template)."""
    for _ in range(20):
        await check("return 1 + 1")
    own_before = time.process_time()
    template_before = cpu_and_faults(template)
    for _ in range(runs):
        await check("return 1 + 1")
    time.sleep(0.05)  # the last child reaped
    template_after = cpu_and_faults(template)
    return {
        "parent": (time.process_time() - own_before) * 1000 / runs,
        "template": (template_after[0] - template_before[0]) * 1000 / runs,
        "child": (template_after[1] - template_before[1]) * 1000 / runs,
        "child_faults": (template_after[2] - template_before[2]) / runs,
    }


def rss_now() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def node_figures(rounds: int, soak: int) -> tuple[dict[str, Any] | None, str]:
    node = shutil.which("node")
    if node is None:
        return None, "node is not installed"
    if not (NODE_DIR / "node_modules" / "run").is_dir():
        return None, "run `npm ci` in bench/node first"
    done = subprocess.run(
        [node, "--expose-gc", "engine.mjs", "--rounds", str(rounds), "--soak", str(soak)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode != 0:
        return None, "node failed: " + done.stderr.strip().splitlines()[-1:][0]
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


async def ours(rounds: int, soak: int) -> dict[str, Any]:
    limits = Limits(
        max_host_calls_in_flight=2048,
        timeout_ms=60_000,
        memory_bytes=512 << 20,
        max_value_bytes=64 << 20,
    )
    pool = Pool()
    runner = Runner(pool=pool, limits=limits, max_runs_in_flight=4, secret=SECRET)
    out: dict[str, Any] = {"mode": pool.mode}

    async def ident(x: int) -> int:
        return x

    def ident_sync(x: int) -> int:
        return x

    async def publish(draft: str) -> str:
        context = get_host_function_context()
        if context.resume is None:
            context.interrupt({"kind": "approval", "message": f"Publish {draft}?"})
        return f"published {draft}"

    memory: dict[str, dict[str, int]] = {}

    async def look() -> int:
        worker = pool.latest
        assert worker is not None
        memory["child"] = memory_of(worker.pid)
        return 1

    hosts = {"h": {"f": ident, "s": ident_sync, "look": look}, "docs": {"publish": publish}}

    async def check(source: str, **kw: Any) -> Any:
        result = await runner.run(source, hosts, **kw)
        if result.status not in ("ok", "interrupted"):
            raise SystemExit(f"benchmark snippet failed: {result.error}")
        return result

    await check("1")  # the template starts
    out["trivial"] = await timed(lambda: check("return 1 + 1"), rounds)

    async def warm_trivial() -> None:
        # A person or an agent between runs: the spare has waited, and warmed up.
        await asyncio.to_thread(pool.warm, 2.0)
        await asyncio.sleep(0.02)
        started = time.perf_counter()
        await check("return 1 + 1")
        warm.append((time.perf_counter() - started) * 1000)

    warm: list[float] = []
    for _ in range(rounds):
        await warm_trivial()
    out["trivial_warm"] = (statistics.median(warm), min(warm))

    approval = 'return await docs.publish("d1")'

    async def interrupt_resume() -> None:
        first = await check(approval)
        resolutions = [{"interruption_id": i.id, "value": True} for i in first.interruptions]
        done = await check(approval, continuation=first.continuation, resolutions=resolutions)
        assert done.value == "published d1", done

    out["interrupt_resume"] = await timed(interrupt_resume, rounds)

    seq = "let s = 0; for (let i = 0; i < 1000; i++) s += await h.f(i); return s"
    few = max(3, rounds // 4)
    out["calls_sequential_async"] = await timed(lambda: check(seq), few)
    out["calls_sequential_sync"] = await timed(lambda: check(seq.replace("h.f", "h.s")), few)
    conc = "const xs = await Promise.all(Array.from({ length: 1000 }, (_, i) => h.f(i))); return xs.length"
    out["calls_concurrent"] = await timed(lambda: check(conc), few)

    async def hundred_by_four() -> None:
        left = [100]

        async def lane() -> None:
            while left[0] > 0:
                left[0] -= 1
                await check("return 1 + 1")

        await asyncio.gather(*(lane() for _ in range(4)))

    out["runs_100_by_4"] = await timed(hundred_by_four, max(3, rounds // 8))

    objects = "return Array.from({ length: 10000 }, (_, i) => ({ id: i, name: 'item' + i, ok: i % 2 === 0 }))"
    out["objects"] = await timed(lambda: check(objects), few)

    cancels: list[float] = []
    for _ in range(few):
        cancel = asyncio.Event()
        task = asyncio.ensure_future(runner.run("while (true) {}", cancel=cancel))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        cancel.set()
        result = await task
        cancels.append((time.perf_counter() - started) * 1000)
        assert result.error is not None and result.error.code == "RUN_ABORTED"
    out["cancel"] = (statistics.median(cancels), min(cancels))

    if pool.template_pid is not None and sys.platform.startswith("linux"):
        out["cpu"] = await cpu_per_run(check, pool.template_pid, max(100, rounds * 5))

    # Memory: the template, a child serving a run, a spare at rest.
    await check("await h.look(); return 1")
    out["memory_child"] = memory["child"]
    template = pool.template_pid
    if template is not None:
        out["memory_template"] = memory_of(template)
    await asyncio.to_thread(pool.warm, 2.0)
    await asyncio.sleep(0.1)  # at rest: warmed up (see Worker.warm)
    if pool._ready:
        out["memory_spare"] = memory_of(pool._ready[0].pid)

    # Many runs back to back: does anything pile up?
    if soak:
        for _ in range(200):  # let caches and arenas settle first
            await check("return 1 + 1")
        rss_before, fds_before = rss_now(), fd_count()
        started = time.perf_counter()
        for _ in range(soak):
            await check("return 1 + 1")
        elapsed = time.perf_counter() - started
        # The last run's child may still be exiting, not yet reaped by the template
        # (it reaps on SIGCHLD): what counts is a zombie left once that is done.
        time.sleep(0.05)
        zombies = [p for p, state in children_of(os.getpid()) if state == "Z"]
        if template is not None:
            zombies += [p for p, state in children_of(template) if state == "Z"]
        out["soak"] = {
            "runs": soak,
            "per_run_ms": elapsed * 1000 / soak,
            "rss_before": rss_before,
            "rss_after": rss_now(),
            "fds_before": fds_before,
            "fds_after": fd_count(),
            "zombies": len(zombies),
        }
    pool.close()
    time.sleep(0.2)
    out["left_after_close"] = len(children_of(os.getpid())) + (
        len(children_of(template)) if template is not None else 0
    )
    return out


def spawned_worker_memory() -> dict[str, int]:
    """What a worker of the old design (a process of its own) holds, for comparison."""

    async def measure() -> dict[str, int]:
        pool = Pool(mode="spawn")
        runner = Runner(pool=pool)
        seen: dict[str, int] = {}

        async def look() -> None:
            assert pool.latest is not None
            seen.update(memory_of(pool.latest.pid))

        await runner.run("await h.look()", {"h": {"look": look}})
        pool.close()
        return seen

    return asyncio.run(measure())


def mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--soak", type=int, default=10_000, help="runs back to back (0: skip)")
    parser.add_argument("--no-node", action="store_true", help="leave npm run out")
    args = parser.parse_args()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"load average at start: {load:.2f} on {os.cpu_count()} cores; python {sys.version.split()[0]}"
    )
    py = asyncio.run(ours(args.rounds, args.soak))
    spawned = spawned_worker_memory()
    node, why = (
        (None, "left out (--no-node)") if args.no_node else node_figures(args.rounds, args.soak)
    )

    def cell(figures: dict[str, Any] | None, key: str) -> str:
        if figures is None or key not in figures:
            return "-"
        value = figures[key]
        med, best = (value["median"], value["best"]) if isinstance(value, dict) else value
        return f"{med:8.2f} ({best:6.2f})"

    rows = [
        ("trivial run, back to back", "trivial", "<= 2 ms (<= 0.4x npm)"),
        ("trivial run after a 20 ms pause", "trivial_warm", "-"),
        ("interrupt + resume, back to back", "interrupt_resume", "<= 6 ms (<= 0.3x npm)"),
        ("1000 sequential async host calls", "calls_sequential_async", "<= 45 ms"),
        ("1000 sequential sync host calls", "calls_sequential_sync", "<= 70 ms"),
        ("1000 concurrent host calls", "calls_concurrent", "<= 25 ms"),
        ("100 runs, 4 at a time (wall)", "runs_100_by_4", "<= 150 ms"),
        ("returning 10,000 small objects", "objects", "-"),
        ("cancel a spinning run (set -> result)", "cancel", "<= 10 ms"),
    ]
    print(f"\nworkers: {py['mode']}; figures in ms, median (best)")
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'run-repl':>17}  {'npm run 2.1.5':>17}  target")
    for name, key, target in rows:
        print(f"{name:<{width}}  {cell(py, key):>17}  {cell(node, key):>17}  {target}")
        if key == "trivial" and node and key in node:
            ratio = py[key][0] / node[key]["median"]
            print(f"{'  ratio to npm run':<{width}}  {ratio:>17.2f}")
        if key == "interrupt_resume" and node and key in node:
            ratio = py[key][0] / node[key]["median"]
            print(f"{'  ratio to npm run':<{width}}  {ratio:>17.2f}")
    if node is None:
        print(f"(npm run: {why})")

    cpu = py.get("cpu")
    if cpu:
        total = cpu["parent"] + cpu["template"] + cpu["child"]
        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
        print(
            f"\nCPU of one trivial run, back to back: {total:.2f} ms = this process {cpu['parent']:.2f}"
            f" + template {cpu['template']:.2f} (forking) + child {cpu['child']:.2f}"
            f" ({cpu['child_faults']:.0f} page faults)"
        )
        print(
            f"  so 100 runs need {100 * total / cores:.0f} ms on {cores} cores at the least,"
            " however many at a time"
        )

    print("\nmemory")
    template = py.get("memory_template", {})
    print(
        f"  template process          RSS {mib(template.get('rss', 0))}, PSS {mib(template.get('pss', 0))}"
    )
    for label, key in (
        ("child serving a run", "memory_child"),
        ("spare child at rest", "memory_spare"),
    ):
        m = py.get(key, {})
        print(
            f"  {label:<25} USS {mib(m.get('uss', 0))}, PSS {mib(m.get('pss', 0))}, RSS {mib(m.get('rss', 0))}"
        )
    print(
        f"  spawned worker (fallback)  USS {mib(spawned.get('uss', 0))}, PSS {mib(spawned.get('pss', 0))}, "
        f"RSS {mib(spawned.get('rss', 0))}"
    )
    if node is not None:
        print(f"  npm run: node process RSS {mib(node['rss']['value'])} (workers are threads)")

    soak = py.get("soak")
    if soak:
        growth = (soak["rss_after"] - soak["rss_before"]) / soak["rss_before"] * 100
        print(f"\n{soak['runs']:,} runs back to back ({soak['per_run_ms']:.2f} ms a run)")
        print(
            f"  parent RSS {mib(soak['rss_before'])} -> {mib(soak['rss_after'])} ({growth:+.1f} %, target ±10 %)"
        )
        print(
            f"  parent fds {soak['fds_before']} -> {soak['fds_after']}; "
            f"zombies 50 ms after the last run: {soak['zombies']}"
        )
        if node is not None and "soak" in node:
            ns = node["soak"]
            ngrowth = (ns["rss_after"] - ns["rss_before"]) / ns["rss_before"] * 100
            print(
                f"  npm run: {ns['per_run_ms']:.2f} ms a run; RSS {mib(ns['rss_before'])} -> "
                f"{mib(ns['rss_after'])} ({ngrowth:+.1f} %)"
            )
    print(f"processes left after close(): {py['left_after_close']}")


if __name__ == "__main__":
    main()
