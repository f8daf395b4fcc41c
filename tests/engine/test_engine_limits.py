"""Every limit: its failure, with its code, and then a run that works."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import ValidationError

from run_repl import Limits, create_runner, get_host_function_context, run


async def works() -> None:
    result = await run("1 + 1")
    assert result.status == "ok" and result.value == 2


def test_limit_defaults_match_the_design() -> None:
    limits = Limits()
    assert limits.timeout_ms == 30_000
    assert limits.memory_bytes == 64 << 20
    assert limits.stack_bytes == 1 << 20
    assert limits.max_source_bytes == 256 << 10
    assert limits.max_value_bytes == 4 << 20
    assert limits.max_host_calls == 10_000
    assert limits.max_host_calls_in_flight == 256
    assert (limits.max_log_lines, limits.max_log_line_bytes) == (500, 2048)


def test_limits_are_validated() -> None:
    with pytest.raises(ValidationError):
        Limits(timeout_ms=0)
    with pytest.raises(ValidationError):
        Limits(memory_bytes=10)
    with pytest.raises(ValidationError):
        Limits(nonsense=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "source", ["while (true) {}", "for (;;) { try { while (true) {} } catch (e) {} }"]
)
async def test_timeout_kills_spinning_code(source: str) -> None:
    started = time.perf_counter()
    result = await run(source, limits=Limits(timeout_ms=300))
    elapsed = time.perf_counter() - started
    assert result.error.code == "RUN_TIMEOUT"
    assert elapsed >= 0.3  # never before the deadline (how soon after: bench/engine.py)
    assert result.error.next_actions[0].type == "edit_request"
    await works()


async def test_a_call_still_running_after_the_grace_is_unsettled_not_failed() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    result = await run(
        "await h.forever()",
        {"h": {"forever": forever}},
        limits=Limits(timeout_ms=1000, host_call_grace_ms=50),  # a grace it never uses
    )
    assert result.error.code == "RUN_TIMEOUT"
    await asyncio.wait_for(cancelled.wait(), 10)  # told, given the grace, then stopped
    call = result.calls[0]
    assert call.ok is None and call.settled is False and call.error_code is None
    assert "unknown" in (call.error_message or "")
    assert call.model_dump()["settled"] is False


async def test_a_timeout_waits_for_calls_in_flight_so_the_audit_is_true() -> None:
    # The rule: "A timeout waits for an SDK call already in flight to settle before it answers."
    charged: list[str] = []

    def charge(order_id: str) -> str:
        # Still charging when the deadline passes (it waits for the run to be stopped: a
        # second's sleep did, as long as the deadline came first), then done.
        assert get_host_function_context().cancelled.wait_sync(30)
        charged.append(order_id)
        return "charged"

    result = await run(
        'await pay.charge("o1"); return 1',
        {"pay": {"charge": charge}},
        limits=Limits(timeout_ms=400),
    )
    assert result.error.code == "RUN_TIMEOUT"
    assert charged == ["o1"]
    (call,) = result.calls
    assert call.ok is True and call.settled is None and call.error_code is None


async def test_async_host_calls_see_the_run_stop_and_may_finish() -> None:
    async def polite() -> str:
        ctx = get_host_function_context()
        await ctx.cancelled.wait()
        return "stopped cleanly"

    result = await run(
        "await h.polite()", {"h": {"polite": polite}}, limits=Limits(timeout_ms=1000)
    )
    assert result.error.code == "RUN_TIMEOUT"
    (call,) = result.calls
    assert call.ok is True and call.result_text == '"stopped cleanly"'


async def test_memory_limit() -> None:
    source = "const keep = []; while (true) keep.push(new Array(10000).fill(1.5))"
    result = await run(source, limits=Limits(memory_bytes=16 << 20))
    assert result.error.code == "RUN_MEMORY_EXCEEDED"
    await works()


async def test_memory_limit_on_string_growth() -> None:
    source = "const parts = []; for (let i = 0; ; i++) parts.push(String(i).repeat(1 << 20))"
    result = await run(source, limits=Limits(memory_bytes=16 << 20))
    assert result.error.code == "RUN_MEMORY_EXCEEDED"
    await works()


async def test_memory_exceeded_even_if_the_snippet_catches_it_once() -> None:
    source = """
const keep = []
try { while (true) keep.push(new Array(100000).fill(0)) } catch (e) { keep.push(String(e)) }
while (true) keep.push(new Array(100000).fill(0))
"""
    result = await run(source, limits=Limits(memory_bytes=16 << 20))
    assert result.error.code == "RUN_MEMORY_EXCEEDED"
    await works()


async def test_stack_overflow_is_a_catchable_range_error() -> None:
    result = await run(
        "function r(n) { return r(n + 1) + 1 }\ntry { r(0) } catch (e) { return e instanceof RangeError }",
        limits=Limits(stack_bytes=256 << 10),
    )
    assert result.value is True
    uncaught = await run("function r(n) { return r(n + 1) + 1 }\nr(0)")
    assert uncaught.error.code == "RUN_EXCEPTION" and "RangeError" in uncaught.error.message
    await works()


async def test_source_too_large() -> None:
    result = await run("1;" * 200, limits=Limits(max_source_bytes=100))
    assert result.error.code == "RUN_SOURCE_TOO_LARGE"
    await works()


async def test_value_too_large() -> None:
    result = await run("'x'.repeat(5000)", limits=Limits(max_value_bytes=1000))
    assert result.error.code == "RUN_VALUE_TOO_LARGE"
    multibyte = await run("'é'.repeat(800)", limits=Limits(max_value_bytes=1000))
    assert multibyte.error.code == "RUN_VALUE_TOO_LARGE"  # 1,600 bytes of UTF-8
    await works()


async def test_max_host_calls() -> None:
    result = await run(
        "for (let i = 0; i < 10; i++) await h.f(i)",
        {"h": {"f": lambda i: i}},
        limits=Limits(max_host_calls=5),
    )
    assert result.error.code == "RUN_BRIDGE_LIMIT"
    assert [c.ok for c in result.calls] == [True] * 5 + [False]  # the sixth is refused
    assert result.calls[5].error_code == "RUN_BRIDGE_LIMIT" and result.calls[5].seq == 6
    await works()


async def test_max_host_calls_in_flight() -> None:
    async def slow(i: int) -> int:
        await asyncio.sleep(0.05)
        return i

    result = await run(
        "await Promise.all(Array.from({ length: 10 }, (_, i) => h.slow(i)))",
        {"h": {"slow": slow}},
        limits=Limits(max_host_calls_in_flight=4),
    )
    assert result.error.code == "RUN_BRIDGE_LIMIT"
    assert "in flight" in result.error.message or "at once" in result.error.message
    await works()


async def test_log_lines_bounded_and_counted() -> None:
    result = await run(
        "for (let i = 0; i < 50; i++) console.log('line', i)", limits=Limits(max_log_lines=10)
    )
    assert result.status == "ok"
    assert len(result.logs) == 10
    assert result.logs_dropped == 40
    assert result.logs[-1].text == "line 9"


async def test_log_line_cut_to_bytes() -> None:
    result = await run("console.log('é'.repeat(500))", limits=Limits(max_log_line_bytes=100))
    text = result.logs[0].text
    assert len(text.encode()) <= 100
    assert text.startswith("éé") and text.endswith("[cut]")


async def test_cancel_stops_a_spinning_run_at_once() -> None:
    cancel = asyncio.Event()
    spinning = asyncio.Event()

    async def spin() -> None:
        spinning.set()

    task = asyncio.ensure_future(
        run("await h.spin(); while (true) {}", {"h": {"spin": spin}}, cancel=cancel)
    )
    await spinning.wait()  # its worker is running the loop (0.2 s on the clock before)
    cancel.set()
    result = await task
    # Only the cancel can end a loop that never yields (how fast: bench/engine.py).
    assert result.error.code == "RUN_ABORTED"
    assert result.error.next_actions[0].type == "run_again"
    await works()


async def test_cancel_tells_host_calls_in_flight() -> None:
    cancel = asyncio.Event()
    flags: list[bool] = []
    task_cancelled = asyncio.Event()
    started = asyncio.Event()

    async def wait() -> None:
        ctx = get_host_function_context()
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            flags.append(ctx.cancelled.is_set())
            task_cancelled.set()
            raise

    job = asyncio.ensure_future(
        run(
            "await h.wait()",
            {"h": {"wait": wait}},
            cancel=cancel,
            limits=Limits(host_call_grace_ms=100),
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    cancel.set()
    result = await job
    await asyncio.wait_for(task_cancelled.wait(), 1)
    assert result.error.code == "RUN_ABORTED"
    assert flags == [True]
    # Cancelled the Python way, at once: it stopped, so its end is known.
    assert result.calls[0].ok is False and result.calls[0].error_code == "RUN_ABORTED"


async def test_cancel_set_before_start() -> None:
    cancel = asyncio.Event()
    cancel.set()
    result = await run("1", cancel=cancel)
    assert result.error.code == "RUN_ABORTED"


async def test_runner_limits_apply_unless_a_run_passes_its_own() -> None:
    runner = create_runner(limits=Limits(timeout_ms=200))
    result = await runner.run("while (true) {}")
    assert result.error.code == "RUN_TIMEOUT"
    longer = await runner.run("let i = 0; while (i < 1e6) i++; i", limits=Limits(timeout_ms=10_000))
    assert longer.value == 1_000_000


async def test_worker_crash_is_reported_and_next_run_works() -> None:
    # A host function that kills the worker process stands in for a crash in QuickJS.
    import os
    import signal

    from run_repl.sandbox.session import session

    runner = create_runner()

    async def kill_worker() -> None:
        for s in list(_sessions(session)):
            if s.worker is not None:
                os.kill(s.worker.pid, signal.SIGSEGV)
        # In flight until the run has seen the worker die (a second's sleep before, which
        # the run then waited out as the grace it gives calls still running).
        await get_host_function_context().cancelled.wait()

    result = await runner.run("await h.kill()", {"h": {"kill": kill_worker}})
    assert result.error.code == "RUN_WORKER_CRASHED"
    assert "SIGSEGV" in result.error.message
    assert (await runner.run("40 + 2")).value == 42


def _sessions(module):  # type: ignore[no-untyped-def]
    import gc

    return [o for o in gc.get_objects() if isinstance(o, module.RunSession)]


CHILD_THAT_DIES = """
import asyncio, os, signal, sys
from run_repl import run
from run_repl.sandbox.session import pool as worker_pool

async def main():
    spinning = asyncio.Event()

    async def spin():
        spinning.set()

    task = asyncio.ensure_future(run("await h.spin(); while (true) {}", {"h": {"spin": spin}}))
    await spinning.wait()
    pool = worker_pool.default_pool()
    pids = [p.pid for p in worker_pool._REAPER._procs] + [w.pid for w in pool._ready]
    import gc
    from run_repl.sandbox.session.session import RunSession
    pids += [s.worker.pid for s in gc.get_objects() if isinstance(s, RunSession) and s.worker]
    print(" ".join(map(str, pids)), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_workers_die_with_their_parent() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", CHILD_THAT_DIES], capture_output=True, text=True, timeout=60
    )
    pids = [int(p) for p in out.stdout.split()]
    assert pids, out.stderr
    deadline = time.monotonic() + 5
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in pids if _alive(p)]
    assert alive == [], "workers outlived their parent"


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper is dead too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
