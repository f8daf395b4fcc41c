"""The parent stays bounded while a snippet floods host calls with big arguments.

Prints the parent's peak RSS (resource.getrusage, MB) for:
  - the red-team flood: a 20 MB string resent to a host function until the deadline;
  - the same with 1 MiB arguments (just under max_host_argument_bytes), until the
    per-run budget (max_host_argument_bytes_per_run) stops it;
  - four such runs at once.
Target (issue 9): under 200 MB.

    python bench/flood.py
"""

from __future__ import annotations

import asyncio
import resource
import time

from run_repl import Limits, create_runner


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def sink(s: str) -> int:
    return len(s)


async def main() -> None:
    hosts = {"app": {"sink": sink}}
    runner = create_runner(limits=Limits(timeout_ms=30_000), max_runs_in_flight=4)
    await runner.run("1")
    print(f"parent RSS at start: {peak_mb():.0f} MB")
    scenarios = [
        (
            "20 MB argument, resent until refused",
            "const s = 'x'.repeat(20e6); for (;;) await app.sink(s)",
            1,
        ),
        (
            "1 MiB arguments until the per-run budget",
            "const s = 'x'.repeat((1 << 20) - 8); for (;;) await app.sink(s)",
            1,
        ),
        (
            "1 MiB arguments, four runs at once",
            "const s = 'x'.repeat((1 << 20) - 8); for (;;) await app.sink(s)",
            4,
        ),
    ]
    for label, source, n in scenarios:
        started = time.perf_counter()
        results = await asyncio.gather(*(runner.run(source, hosts) for _ in range(n)))
        took = time.perf_counter() - started
        codes = sorted({str(r.error.code) if r.error else r.status for r in results})
        calls = sum(len(r.calls) for r in results)
        print(
            f"{label:<45} {took:6.2f} s  {calls:>5} calls  ended {', '.join(codes):<24} "
            f"parent peak RSS {peak_mb():6.0f} MB"
        )


if __name__ == "__main__":
    asyncio.run(main())
