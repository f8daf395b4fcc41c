"""The parent's event loop while a 256 KiB bomb is submitted beside a normal run.

    python bench/stall.py

A normal run awaits a 0.5 s host call (timeout 3 s); 0.2 s in, a bomb of
256 KiB is submitted on the same loop. A ticker measures the longest gap the
loop went without running it: before TypeScript stripping moved into the
worker, tree-sitter held the loop for up to ~80 s (issue 9, item 7). Target:
the longest stall under 50 ms, and the normal run unharmed.
"""

from __future__ import annotations

import asyncio
import time

from run_repl import Limits, create_runner

SIZE = 256 * 1024
BOMBS = {
    # No bomb: what this machine's scheduler alone costs the loop (the baseline).
    "(none: 1 + 1)": "1 + 1",
    # Caught by the nesting bound before tree-sitter: RUN_SYNTAX_ERROR at once.
    "parentheses": "(" * (SIZE // 2) + ")" * (SIZE // 2),
    "objects {a:{a:...}}": "{a:" * (SIZE // 4 - 1) + "1" + "}" * (SIZE // 4 - 1),
    "type arguments A<A<...>>": "let x: " + "A<" * (SIZE // 3 - 3) + "B" + ">" * (SIZE // 3 - 3),
    # Not nesting brackets, slow in tree-sitter: stripped in the worker until
    # the run's deadline stops it.
    "new new new ... x": "new " * (SIZE // 4 - 1) + "x",
}


class Ticker:
    """Records the longest time the loop took to come back to it."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.running = True

    async def run(self) -> None:
        while self.running:
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            self.longest = max(self.longest, time.perf_counter() - started - 0.001)


async def one(runner, name: str, bomb: str) -> tuple[str, float, str, str, float]:  # type: ignore[no-untyped-def]
    async def slow() -> int:
        await asyncio.sleep(0.5)
        return 1

    async def submit_bomb():  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.2)
        return await runner.run(bomb, limits=Limits(timeout_ms=1_000))

    ticker = Ticker()
    tick = asyncio.ensure_future(ticker.run())
    await asyncio.sleep(0.05)
    normal, bombed = await asyncio.gather(
        runner.run(
            "return await app.slow()", {"app": {"slow": slow}}, limits=Limits(timeout_ms=3_000)
        ),
        submit_bomb(),
    )
    ticker.running = False
    await tick
    normal_outcome = f"{normal.value}" if normal.status == "ok" else normal.error.code
    return (
        name,
        ticker.longest * 1000,
        normal_outcome,
        bombed.error.code if bombed.error else bombed.status,
        bombed.duration_ms,
    )


async def rounds(runner, name: str, bomb: str, times: int) -> tuple[str, float, str, str, float]:  # type: ignore[no-untyped-def]
    """The worst of a few tries (the figure is a worst case)."""
    tries = [await one(runner, name, bomb) for _ in range(times)]
    return max(tries, key=lambda t: t[1])


async def main() -> None:
    runner = create_runner()
    await runner.run("1")
    rows = [await rounds(runner, name, bomb, 3) for name, bomb in BOMBS.items()]
    print(
        f"{'bomb (256 KiB)':<26} {'longest stall':>14}  {'normal run':>10}  {'bomb':<18} {'bomb ms':>8}"
    )
    for name, stall, normal, bombed, duration in rows:
        print(f"{name:<26} {stall:>11.1f} ms  {normal:>10}  {bombed:<18} {duration:>8.1f}")
    print("the worst of 3 tries each; target: longest stall < 50 ms; the normal run returns 1")


if __name__ == "__main__":
    asyncio.run(main())
