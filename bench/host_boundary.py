"""How fast a host result over max_host_result_bytes is refused (issue 12: under 100 ms).

The host function builds its value before the timer starts (it is cached), so the
figure is the engine's: encode until the running size passes the limit, refuse,
answer the guest, end the run.

    python bench/host_boundary.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from run_repl import create_runner

BIG_STRING = "x" * (100 << 20)
MANY_ROWS = [{"id": i, "name": f"customer {i}", "tags": ["a", "b"]} for i in range(1_000_000)]
JUST_OVER = "y" * ((4 << 20) + 1)


async def measure(runner: Any, label: str, value: Any, repeat: int = 7) -> None:
    hosts = {"h": {"get": lambda: value}}
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = await runner.run("await h.get()", hosts)
        times.append((time.perf_counter() - started) * 1000)
        assert result.error is not None and result.error.code == "RUN_HOST_RESULT_TOO_LARGE"
        refused = result.calls[0].duration_ms or 0.0
    print(
        f"{label:<48} run median {statistics.median(times):7.1f} ms  "
        f"(the call itself: {refused:6.1f} ms)"
    )


async def main() -> None:
    runner = create_runner()
    await runner.run("1")  # a warm spare
    await measure(runner, "100 MiB string", BIG_STRING)
    await measure(runner, "1,000,000 rows (~60 MB as JSON)", MANY_ROWS)
    await measure(runner, "a string 1 byte over 4 MiB", JUST_OVER)


if __name__ == "__main__":
    asyncio.run(main())
