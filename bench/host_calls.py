"""What one host call costs, in CPU time, on each side of the pipe.

Wall-clock figures (bench/engine.py) move with everything else the machine
does; CPU time per call moves much less. Prints, for 2,000 sequential calls to
an async and to a sync host function:
  - the parent's CPU per call, with the reply spin off (the engine's own work:
    frames, records, the task, encoding, the answer);
  - the parent's CPU per call as shipped (spin on: it adds the polling);
  - the worker's CPU per call (spawned workers, so the parent can read their
    rusage; the fixed cost of an empty run is subtracted).

    python bench/host_calls.py
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session import channel
from run_repl.sandbox.session.pool import WorkerPool

CALLS = 2000
SOURCE = f"let s = 0; for (let i = 0; i < {CALLS}; i++) s += await h.f(i); return s"


async def f_async(x: int) -> int:
    return x


def f_sync(x: int) -> int:
    return x


def cpu_ms(who: int) -> float:
    used = resource.getrusage(who)
    return (used.ru_utime + used.ru_stime) * 1000


async def parent_per_call(runner: Runner, fn: Callable[..., Any], rounds: int = 5) -> float:
    samples = []
    for _ in range(rounds):
        before = cpu_ms(resource.RUSAGE_SELF)
        await runner.run(SOURCE, {"h": {"f": fn}})
        samples.append((cpu_ms(resource.RUSAGE_SELF) - before) / CALLS * 1000)
    return statistics.median(samples)


async def worker_per_call(runner: Runner, fn: Callable[..., Any], rounds: int = 5) -> float:
    async def children(source: str) -> float:
        time.sleep(0.3)
        before = cpu_ms(resource.RUSAGE_CHILDREN)
        for _ in range(rounds):
            await runner.run(source, {"h": {"f": fn}})
        time.sleep(1.0)  # let the spawned workers exit, so their time is counted
        runner.pool.close()
        time.sleep(0.3)
        return (cpu_ms(resource.RUSAGE_CHILDREN) - before) / rounds

    full = await children(SOURCE)
    runner.pool = WorkerPool(mode="spawn")
    empty = await children("return 1")
    return (full - empty) / CALLS * 1000


async def main() -> None:
    spin = channel.SPIN_SECONDS
    for label, fn in (("async", f_async), ("sync", f_sync)):
        runner = Runner()
        await runner.run("1")
        channel.SPIN_SECONDS = 0.0
        no_spin = await parent_per_call(runner, fn)
        channel.SPIN_SECONDS = spin
        shipped = await parent_per_call(runner, fn)
        spawned = Runner(pool=WorkerPool(mode="spawn"))
        await spawned.run("1")
        worker = await worker_per_call(spawned, fn)
        print(
            f"{label:>5} host function: parent {no_spin:5.1f} us/call (spin off), "
            f"{shipped:5.1f} us/call (as shipped); worker {worker:5.1f} us/call"
        )


if __name__ == "__main__":
    asyncio.run(main())
