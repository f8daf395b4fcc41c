"""The guest's clock and randomness are the same in every round of a resumed run.

Each round re-runs the snippet from the top; what it read from `Date.now()`,
`new Date()` and `Math.random()` before and after each call must be what it read
the first time that part ran, or its later calls no longer match the record
(RUN_REPLAY_MISMATCH) and a person's second approval breaks the run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from run_repl import create_runner, get_host_function_context

SECRET = "t" * 40

# Time and randomness read around every call, and passed to the next one.
TRACE = """
const t0 = Date.now();
const a = await tools.pause(1);
const t1 = Date.now();
const d1 = new Date().getTime();
const r1 = Math.random();
await tools.record([t0, t1, d1, r1]);
const b = await tools.pause(2);
const t2 = Date.now();
await tools.record([t2, new Date().toISOString(), Math.random(), crypto.randomUUID()]);
const c = await tools.pause(3);
const t3 = Date.now();
await tools.record([t3, Math.random()]);
return [a, b, c, Number.isInteger(t1) && Number.isInteger(t2) && Number.isInteger(t3)];
"""


def _hosts(kind: str, recorded: list[Any]) -> dict[str, Any]:
    def pause_sync(n: int) -> Any:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"n": n})
        time.sleep(0.003)  # time passes while the resumed call runs
        return ctx.resume.resolution

    async def pause_async(n: int) -> Any:
        ctx = get_host_function_context()
        if ctx.resume is None:
            ctx.interrupt({"n": n})
        await asyncio.sleep(0.003)
        return ctx.resume.resolution

    def record_sync(values: list[Any]) -> int:
        recorded.append(values)
        time.sleep(0.002)
        return len(values)

    async def record_async(values: list[Any]) -> int:
        recorded.append(values)
        await asyncio.sleep(0.002)
        return len(values)

    if kind == "sync":
        return {"tools": {"pause": pause_sync, "record": record_sync}}
    return {"tools": {"pause": pause_async, "record": record_async}}


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_time_and_randomness_hold_over_three_resumes(kind: str) -> None:
    runner = create_runner(secret=SECRET)
    for attempt in range(6):
        recorded: list[Any] = []
        hosts = _hosts(kind, recorded)
        result = await runner.run(TRACE, hosts)
        for round_no, answer in enumerate(["A", "B", "C"], start=1):
            assert result.status == "interrupted", (attempt, round_no, result.error)
            result = await runner.run(
                TRACE,
                hosts,
                continuation=result.continuation,
                resolutions=[{"interruption_id": result.interruptions[0].id, "value": answer}],
            )
        assert result.status == "ok", (attempt, result.error)
        assert result.value == ["A", "B", "C", True]
        # Each record call ran live once; replays never ran it again.
        assert len(recorded) == 3
        assert all(call.replayed for call in result.calls[:-1] if call.path == "tools.record")


async def test_two_resumes_with_time_read_between_calls() -> None:
    """The peers' case: t1 is read right after the first resumed call."""
    runner = create_runner(secret=SECRET)
    source = (
        "const t0 = Date.now(); const a = await tools.pause(1); const t1 = Date.now();"
        " await tools.record([t0, t1]); const b = await tools.pause(2); return [a, b]"
    )
    for attempt in range(10):
        recorded: list[Any] = []
        hosts = _hosts("async" if attempt % 2 else "sync", recorded)
        first = await runner.run(source, hosts)
        second = await runner.run(
            source,
            hosts,
            continuation=first.continuation,
            resolutions=[{"interruption_id": first.interruptions[0].id, "value": 1}],
        )
        assert second.status == "interrupted", second.error
        third = await runner.run(
            source,
            hosts,
            continuation=second.continuation,
            resolutions=[{"interruption_id": second.interruptions[0].id, "value": 2}],
        )
        assert third.status == "ok", (attempt, third.error)
        assert third.value == [1, 2]
        assert len(recorded) == 1


async def test_the_clock_reads_whole_milliseconds_and_moves_with_calls() -> None:
    async def wait() -> None:
        await asyncio.sleep(0.01)

    result = await create_runner().run(
        "const a = Date.now(); await h.wait(); const b = Date.now(); "
        "return [Number.isInteger(a), Number.isInteger(b), b - a >= 10]",
        {"h": {"wait": wait}},
    )
    assert result.value == [True, True, True]
