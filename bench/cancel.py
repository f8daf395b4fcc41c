"""How long a cancelled run takes to answer, with host calls in flight.

    python bench/cancel.py [--rounds N]

From `cancel.set()` to the result, through the public API, for a run that
awaits: an async host function (`await asyncio.sleep(10)`), a sync one blocked
on its thread, and both side by side. The target is 100 ms (the grace a
timeout gives calls, 5 s by default, is not waited out). Medians and maxima.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from typing import Any

from run_repl import create_runner


async def one(runner: Any, source: str, hosts: dict[str, Any], started: Any) -> float:
    cancel = asyncio.Event()
    task = asyncio.ensure_future(runner.run(source, hosts, cancel=cancel))
    await started()
    t0 = time.perf_counter()
    cancel.set()
    result = await task
    took = (time.perf_counter() - t0) * 1000
    assert result.error is not None and result.error.code == "RUN_ABORTED", result.error
    return took


SOURCES = {
    "async": "await h.slow()",
    "sync": "await h.blocked()",
    "both": "await Promise.all([h.slow(), h.blocked()])",
}


async def round_of(runner: Any, name: str, release: threading.Event) -> float:
    in_task = asyncio.Event()
    on_thread = threading.Event()

    async def slow() -> None:
        in_task.set()
        await asyncio.sleep(10)

    def blocked() -> None:
        on_thread.set()
        release.wait(30)

    async def started() -> None:
        if name in ("async", "both"):
            await in_task.wait()
        if name in ("sync", "both"):
            await asyncio.to_thread(on_thread.wait, 10)

    hosts = {"h": {"slow": slow, "blocked": blocked}}
    return await one(runner, SOURCES[name], hosts, started)


async def main(rounds: int) -> None:
    runner = create_runner()
    release = threading.Event()
    results: dict[str, list[float]] = {}
    for name in SOURCES:
        samples: list[float] = []
        for _ in range(rounds):
            samples.append(await round_of(runner, name, release))
            release.set()  # let the blocked thread go before the next round
            await asyncio.sleep(0.01)
            release.clear()
        results[name] = samples
    print(f"cancel -> result, {rounds} rounds each (target: <= 100 ms)")
    for name, samples in results.items():
        print(
            f"  {name:>5} host call in flight: median {statistics.median(samples):7.2f} ms,"
            f" max {max(samples):7.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    asyncio.run(main(parser.parse_args().rounds))
