"""The round trip a sync host call makes: event loop -> thread -> event loop.

Compares the engine's host threads (the thread idle last takes the next
call) with a `ThreadPoolExecutor` (its idle threads take calls in turn), the
same way the engine uses them: the work is handed over, and its result comes
back through `call_soon_threadsafe`. Rounds alternate, so both see the same
machine; prints the median and the best of the rounds, in microseconds a trip.

    python bench/host_threads.py [--rounds N] [--trips N]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import statistics
import time
from collections.abc import Callable
from typing import Any

from run_repl.sandbox.session.host_threads import HostThreads

Submit = Callable[[Callable[[], None]], Any]


async def trip(loop: asyncio.AbstractEventLoop, submit: Submit) -> int:
    future: asyncio.Future[int] = loop.create_future()

    def work() -> None:
        loop.call_soon_threadsafe(future.set_result, 1)

    submit(work)
    return await future


async def measure(rounds: int, trips: int) -> dict[str, list[float]]:
    loop = asyncio.get_running_loop()
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=128)
    threads = HostThreads()
    ways: dict[str, Submit] = {
        "host threads": threads.submit,
        "ThreadPoolExecutor": executor.submit,
    }
    # Both with several threads started, as after a burst of concurrent calls.
    for submit in ways.values():
        await asyncio.gather(*(trip(loop, submit) for _ in range(8)))
    out: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, submit in ways.items():
            for _ in range(trips // 10):
                await trip(loop, submit)
            started = time.perf_counter()
            for _ in range(trips):
                await trip(loop, submit)
            out[name].append((time.perf_counter() - started) / trips * 1e6)
    executor.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--trips", type=int, default=2000)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.rounds, args.trips))
    print(f"loop -> thread -> loop, us a trip, median (best) of {args.rounds} rounds")
    for name, values in figures.items():
        print(f"  {name:20s} {statistics.median(values):7.1f} ({min(values):5.1f})")


if __name__ == "__main__":
    main()
