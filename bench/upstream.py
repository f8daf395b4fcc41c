"""Upstream MCP tools through a snippet, beside the same calls made directly with the
`mcp` client, from one invocation.

    python bench/upstream.py [--rounds N]

The upstream is tests/host/upstream_server.py over stdio (its `echo` tool), one process
shared by both sides. Figures (medians, best in brackets):
- direct: one `call_tool` with the `mcp` client on the upstream loop;
- through run-repl: a run of `await up.echo(...)`, and the same run's cost less a run
  that calls nothing (what the call itself adds);
- 100 calls: `Promise.all` over 100 calls in one snippet, against 100 direct calls
  gathered at once.
Target: a call through run-repl costs at most 1.2x the direct call plus 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# bench/mcp.py would shadow the `mcp` package for a script started from this folder.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from run_repl.host.upstream.connection import UpstreamLoop  # noqa: E402
from run_repl.host.upstream.hosts import close_all, connection_for, with_upstreams  # noqa: E402
from run_repl.host.upstream.spec import UpstreamSpec  # noqa: E402
from run_repl.sandbox.runner import create_runner  # noqa: E402

SERVER = ROOT / "tests" / "host" / "upstream_server.py"


async def timed(fn: Callable[[], Awaitable[Any]], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def figure(ms: list[float]) -> str:
    return f"{statistics.median(ms):7.2f} ms ({min(ms):.2f})"


async def main(rounds: int) -> None:
    state = Path(tempfile.mkdtemp(prefix="bench-upstream-"))
    spec = UpstreamSpec(
        name="up", command=sys.executable, args=(str(SERVER),), env={"UPSTREAM_STATE": str(state)}
    )
    host = with_upstreams(None, [spec], state / "logs")
    conn = connection_for(spec, state / "logs")
    loop = UpstreamLoop.shared()
    runner = create_runner(secret="bench-secret-of-at-least-thirty-two-bytes!")

    async def direct() -> None:
        async def call() -> None:
            client = await conn.client()
            await client.call_tool("echo", {"text": "x"})

        await loop.run(call())

    async def direct_100() -> None:
        async def calls() -> None:
            client = await conn.client()
            await asyncio.gather(*(client.call_tool("echo", {"text": "x"}) for _ in range(100)))

        await loop.run(calls())

    async def snippet(source: str) -> Callable[[], Awaitable[Any]]:
        async def go() -> None:
            result = await runner.run(source, host.functions)
            assert result.status == "ok", result.error

        return go

    one = await snippet("return await up.echo({text: 'x'})")
    none = await snippet("return 1")
    ten = await snippet(
        "let n = 0; for (let i = 0; i < 10; i++) n += (await up.echo({text: 'x'})).text.length; return n"
    )

    async def direct_10() -> None:
        async def calls() -> None:
            client = await conn.client()
            for _ in range(10):
                await client.call_tool("echo", {"text": "x"})

        await loop.run(calls())

    echo = host.functions["up"]["echo"]

    async def host_fn_10() -> None:  # the host function alone, as the engine calls it
        for _ in range(10):
            await echo({"text": "x"})

    async def slowish(arguments: Any = None) -> int:
        await asyncio.sleep(0.0013)  # about an upstream call's time, and nothing else
        return 1

    local = {"up": {"slowish": slowish}}

    async def engine_10() -> None:
        result = await runner.run(
            "for (let i = 0; i < 10; i++) await up.slowish(); return 1", local
        )
        assert result.status == "ok", result.error

    async def engine_1() -> None:
        result = await runner.run("return await up.slowish()", local)
        assert result.status == "ok", result.error

    async def sleeps_10() -> None:
        for _ in range(10):
            await slowish()

    hundred = await snippet(
        "return (await Promise.all(Array.from({length: 100}, () => up.echo({text: 'x'})))).length"
    )
    for fn in (direct, one, none, direct_10, ten, direct_100, hundred):  # warm every path
        await timed(fn, 3)
    d = await timed(direct, rounds)
    r = await timed(one, rounds)
    n = await timed(none, rounds)
    h10 = await timed(host_fn_10, max(5, rounds // 4))
    e10 = await timed(engine_10, max(5, rounds // 4))
    s10 = await timed(sleeps_10, max(5, rounds // 4))
    e1 = await timed(engine_1, rounds)
    d10 = await timed(direct_10, max(5, rounds // 4))
    r10 = await timed(ten, max(5, rounds // 4))
    d100 = await timed(direct_100, max(5, rounds // 10))
    r100 = await timed(hundred, max(5, rounds // 10))
    added = [a - b for a, b in zip(sorted(r), sorted(n), strict=True)]
    target = 1.2 * statistics.median(d) + 1.0
    print(f"upstream echo over stdio, {rounds} rounds (median, best)")
    print(f"  direct call_tool                 {figure(d)}")
    print(f"  run of one call                  {figure(r)}")
    print(f"  run of no call                   {figure(n)}")
    print(f"  what the call adds to a run      {statistics.median(added):7.2f} ms")
    print(
        f"  target (1.2x direct + 1 ms)      {target:7.2f} ms  -> "
        f"{'met' if statistics.median(added) <= target else 'missed'}"
    )
    seq = (statistics.median(r10) - statistics.median(n)) / 10
    seq_target = 1.2 * statistics.median(d10) / 10 + 1.0
    print(f"  10 direct calls, one by one      {figure(d10)}")
    print(f"  10 calls one by one in a snippet {figure(r10)}")
    print(
        f"  per call in a snippet, less the run: {seq:.2f} ms vs direct "
        f"{statistics.median(d10) / 10:.2f} ms -> target {seq_target:.2f} ms "
        f"{'met' if seq <= seq_target else 'missed'}"
    )
    per = statistics.median(d10) / 10
    print(
        f"  the host function alone, per call {statistics.median(h10) / 10:.2f} ms vs direct "
        f"{per:.2f} ms -> target {1.2 * per + 1:.2f} ms "
        f"{'met' if statistics.median(h10) / 10 <= 1.2 * per + 1 else 'missed'}"
    )
    print(
        f"  the engine's own cost of a 1.3 ms async call: "
        f"{(statistics.median(e10) - statistics.median(n) - statistics.median(s10)) / 10:.2f} ms "
        "per call (a plain asyncio.sleep host function, no upstream)"
    )
    print(
        f"  a run of one 1.3 ms async call (no upstream) costs "
        f"{statistics.median(e1) - statistics.median(n):.2f} ms more than a run of none"
    )
    print(f"  100 direct calls, gathered       {figure(d100)}")
    print(f"  100 calls in one snippet         {figure(r100)}")
    print(
        f"  per call, snippet vs direct      {statistics.median(r100) / 100:.3f} ms vs "
        f"{statistics.median(d100) / 100:.3f} ms"
    )
    await runner.aclose() if hasattr(runner, "aclose") else None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="upstream calls through run-repl vs direct")
    parser.add_argument("--rounds", type=int, default=200)
    asyncio.run(main(parser.parse_args().rounds))
    close_all()
