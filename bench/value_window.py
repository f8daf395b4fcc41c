"""Value window benchmark: a run returning 1,000,000 small objects.

    python bench/value_window.py [--items N] [--store memory|sqlite]

Prints: first window end to end (run() call to RunResult), expand of a page of
100 items (median over random offsets), and the parent's peak memory growth
during the run against the value's JSON size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from run_repl import Limits, create_runner
from run_repl.sandbox.session.pool import default_pool


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    # Writing 5 to clear_refs resets the peak resident size (VmHWM) on Linux.
    Path("/proc/self/clear_refs").write_text("5")


async def main(items: int, store_kind: str, rounds: int) -> None:
    store = None
    if store_kind == "sqlite":
        from run_repl.store import SqliteStore

        store = SqliteStore(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    limits = Limits(timeout_ms=120_000, memory_bytes=2048 << 20, max_value_bytes=1024 << 20)
    runner = create_runner(limits=limits, store=store)
    source = f"const out = []; for (let i = 0; i < {items}; i++) out.push({{ id: i, name: 'item' + i }}); return out"
    await runner.run("1")
    firsts: list[float] = []
    growth: list[int] = []
    result = None
    for _ in range(rounds):
        await asyncio.to_thread(default_pool().warm, 2.0)
        _reset_peak()
        before = _status("VmRSS")
        started = time.perf_counter()
        result = await runner.run(source)
        firsts.append((time.perf_counter() - started) * 1000)
        growth.append(_status("VmHWM") - before)
        assert result.status == "ok", result.error
        runner.flush()
    assert result is not None and result.value_ref is not None
    json_bytes = result.stats.value_bytes or 0
    pages: list[float] = []
    rng = random.Random(1)
    for _ in range(200):
        offset = rng.randrange(0, items - 100)
        started = time.perf_counter()
        page = runner.expand(result.value_ref, offset, 100)
        pages.append((time.perf_counter() - started) * 1000)
        assert len(page.items) == 100 and page.items[0]["id"] == offset
    # A fresh runner on the same store pages from disk, as another process would.
    if store is not None:
        other = create_runner(store=store)
        disk: list[float] = []
        for _ in range(200):
            offset = rng.randrange(0, items - 100)
            started = time.perf_counter()
            other.expand(result.value_ref, offset, 100)
            disk.append((time.perf_counter() - started) * 1000)
    print(f"items: {items:,}   value JSON: {json_bytes / 1e6:.1f} MB   store: {store_kind}")
    print(
        f"first window, end to end:   median {statistics.median(firsts):8.1f} ms   (target <= 1500 ms)"
    )
    print(
        f"  shown {result.shown} of {result.total:,} at {result.value_window.path if result.value_window else '-'}"
    )
    print(
        f"expand 100 items:           median {statistics.median(pages):8.3f} ms   (target <= 5 ms)"
    )
    if store is not None:
        print(f"expand 100 items from disk: median {statistics.median(disk):8.3f} ms")
    peak = max(growth)
    print(
        f"parent peak RSS growth:     {peak / 1e6:8.1f} MB = {peak / max(json_bytes, 1):.2f}x the JSON (target < 3x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--store", choices=["memory", "sqlite"], default="memory")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.items, args.store, args.rounds))
