"""Engine benchmark: prints medians for the figures the engine promises.

    python bench/engine.py [--rounds N]

Each figure is end to end through the public API (`Runner.run`), on a warm
runner whose spare worker has had time to start, unless it says otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from run_repl import Limits, create_runner
from run_repl.sandbox.worker_pool import default_pool


async def _settle_spare() -> None:
    # A "warm" run is one whose spare worker is up: wait until it is.
    await asyncio.to_thread(default_pool().warm, 2.0)


async def median_ms(
    make: Callable[[], Awaitable[Any]], rounds: int, *, warm: bool = True
) -> tuple[float, float]:
    samples: list[float] = []
    for _ in range(rounds):
        if warm:
            await _settle_spare()
        started = time.perf_counter()
        await make()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), min(samples)


def rss_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def main(rounds: int) -> None:
    limits = Limits(
        max_host_calls_in_flight=2048,
        timeout_ms=60_000,
        memory_bytes=512 << 20,
        max_value_bytes=64 << 20,
    )
    runner = create_runner(limits=limits, max_runs_in_flight=8)

    async def ident(x: int) -> int:
        return x

    def ident_sync(x: int) -> int:
        return x

    hosts = {"h": {"f": ident, "s": ident_sync}}

    async def check(source: str, **kw: Any) -> Any:
        result = await runner.run(source, hosts, **kw)
        if result.status != "ok":
            raise SystemExit(f"benchmark snippet failed: {result.error}")
        return result

    await check("1")  # first start: imports, worker spawn
    rows: list[tuple[str, float, float, str]] = []

    med, best = await median_ms(lambda: check("return 1+1"), rounds)
    rows.append(("warm trivial run (return 1+1)", med, best, "<= 2 ms"))

    med, best = await median_ms(lambda: check("return 1+1"), rounds, warm=False)
    rows.append(("back-to-back trivial runs (spare may still be starting)", med, best, "-"))

    seq_src = "let s = 0; for (let i = 0; i < 1000; i++) s += await h.f(i); return s"
    med, best = await median_ms(lambda: check(seq_src), max(3, rounds // 4))
    rows.append(("1000 sequential awaited host calls (async host fn)", med, best, "<= 50 ms"))

    seq_sync = seq_src.replace("h.f", "h.s")
    med, best = await median_ms(lambda: check(seq_sync), max(3, rounds // 4))
    rows.append(("1000 sequential awaited host calls (sync host fn, thread pool)", med, best, "-"))

    conc_src = "const xs = await Promise.all(Array.from({ length: 1000 }, (_, i) => h.f(i))); return xs.length"
    med, best = await median_ms(lambda: check(conc_src), max(3, rounds // 4))
    rows.append(("1000 concurrent host calls (async host fn)", med, best, "<= 30 ms"))

    conc_sync = conc_src.replace("h.f", "h.s")
    med, best = await median_ms(lambda: check(conc_sync), max(3, rounds // 4))
    rows.append(("1000 concurrent host calls (sync host fn, thread pool)", med, best, "-"))

    loop_src = "let s = 0; for (let i = 0; i < 10000000; i++) s += i; return s"
    med_loop, best_loop = await median_ms(lambda: check(loop_src), 3)
    rows.append(("10M-iteration loop in the sandbox", med_loop, best_loop, "raw +10%"))
    import _quickjs

    raw: list[float] = []
    for _ in range(3):
        ctx = _quickjs.Context()
        started = time.perf_counter()
        ctx.eval("(function () { " + loop_src + " })()")
        raw.append((time.perf_counter() - started) * 1000)
    rows.append(
        ("10M-iteration loop, raw QuickJS in-process", statistics.median(raw), min(raw), "-")
    )

    objects_src = "return Array.from({ length: 10000 }, (_, i) => ({ id: i, name: 'item' + i, ok: i % 2 === 0 }))"
    med, best = await median_ms(lambda: check(objects_src), rounds)
    rows.append(("returning 10,000 small objects", med, best, "<= 30 ms"))

    cancels: list[float] = []
    for _ in range(max(5, rounds // 4)):
        await _settle_spare()
        cancel = asyncio.Event()
        task = asyncio.ensure_future(runner.run("while (true) {}", cancel=cancel))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        cancel.set()
        result = await task
        cancels.append((time.perf_counter() - started) * 1000)
        assert result.error is not None and result.error.code == "RUN_ABORTED"
    rows.append(
        (
            "cancel of a spinning run (set -> result)",
            statistics.median(cancels),
            min(cancels),
            "<= 10 ms",
        )
    )

    await _settle_spare()
    pool = default_pool()
    with pool._lock:
        spare = pool._ready[0] if pool._ready else None
    if spare is not None:
        await asyncio.sleep(0.2)
        rows.append(
            ("worker memory at rest (spare RSS, MiB)", rss_of(spare.pid) / (1 << 20), 0.0, "-")
        )

    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'median':>10}  {'best':>10}  target")
    for name, med, best, target in rows:
        unit = "" if "MiB" in name else " ms"
        print(f"{name:<{width}}  {med:>9.2f}{unit:3}  {best:>7.2f}{unit:3}  {target}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(main(args.rounds))
