"""A lone sync host call: the loop thread waits briefly for its end, so a quick
function's answer goes back in the same turn. Exactly one end delivers each
outcome, whatever the timing; a slow function never holds the loop for longer
than the wait; calls made together still run side by side."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections import Counter
from typing import Any

import pytest

from run_repl import create_runner
from run_repl.sandbox.context import CancelledFlag, HostFunctionContext
from run_repl.sandbox.session import host_call
from run_repl.sandbox.session.host_call import SYNC_WAIT_S, HostCallRunner, _on_a_thread
from run_repl.sandbox.session.host_functions import HostFunction


@pytest.fixture
def deliveries(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """How many times each future was handed an outcome, by either end."""
    seen: Counter[int] = Counter()
    deliver = host_call._deliver

    def counting(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
        seen[id(future)] += 1
        deliver(future, outcome)

    monkeypatch.setattr(host_call, "_deliver", counting)
    return seen


def _held_until(release: threading.Event, value: str) -> Any:
    """A sync host function that ends (with `value`) when the test lets it."""

    def held() -> str:
        release.wait(5)
        return value

    return held


async def test_a_quick_function_is_answered_before_the_loop_turns(
    deliveries: Counter[int],
) -> None:
    loop = asyncio.get_running_loop()
    future, took = _on_a_thread(loop, lambda x: x * 2, [21], wait_s=1.0)
    assert future.done() and future.result() == 42
    assert 0 < took[0] < 1.0
    failing, _ = _on_a_thread(loop, lambda: 1 / 0, [], wait_s=1.0)
    assert isinstance(failing.exception(), ZeroDivisionError)
    assert list(deliveries.values()) == [1, 1]


async def test_a_slow_function_is_answered_through_the_loop(deliveries: Counter[int]) -> None:
    loop = asyncio.get_running_loop()
    release = threading.Event()
    future, _ = _on_a_thread(loop, _held_until(release, "late"), [], wait_s=0.001)
    assert not future.done()  # the wait ended first: the loop goes on
    release.set()
    assert await asyncio.wait_for(future, 5) == "late"
    await asyncio.sleep(0.01)
    assert list(deliveries.values()) == [1]


async def test_every_outcome_is_delivered_once_when_it_ends_as_the_wait_does(
    deliveries: Counter[int],
) -> None:
    # Functions that end around the wait's end, some before and some after it:
    # the two ends race on each handoff, and exactly one of them must deliver.
    loop = asyncio.get_running_loop()
    wait_s = 0.0002

    def spin(i: int) -> int:
        until = time.perf_counter() + (i % 7) * wait_s / 3
        while time.perf_counter() < until:
            pass
        return i

    futures = [_on_a_thread(loop, spin, [i], wait_s=wait_s)[0] for i in range(300)]
    results = await asyncio.wait_for(asyncio.gather(*futures), 10)
    await asyncio.sleep(0.01)
    assert results == list(range(300))
    assert len(deliveries) == 300 and set(deliveries.values()) == {1}


async def test_an_interrupted_wait_loses_no_outcome(deliveries: Counter[int]) -> None:
    # Ctrl-C while the loop thread waits: the interrupt goes on up, and the
    # outcome still reaches the future once (through the loop, later).
    loop = asyncio.get_running_loop()
    release = threading.Event()

    class Stop(Exception):
        pass

    def interrupt(*_: Any) -> None:
        raise Stop

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    captured: list[asyncio.Future[Any]] = []
    real_future = loop.create_future

    def remember() -> asyncio.Future[Any]:
        captured.append(real_future())
        return captured[-1]

    loop.create_future = remember  # type: ignore[method-assign]
    try:
        with pytest.raises(Stop):
            _on_a_thread(loop, _held_until(release, "done"), [], wait_s=5.0)
    finally:
        del loop.create_future
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    (future,) = captured
    assert not future.done()
    release.set()
    assert await asyncio.wait_for(future, 5) == "done"
    await asyncio.sleep(0.01)
    assert list(deliveries.values()) == [1]


def _runner() -> HostCallRunner:
    return HostCallRunner(
        loop=asyncio.get_running_loop(),
        policy=None,
        resume_guard=None,
        max_result_bytes=1 << 20,
        max_sync_in_flight=8,
    )


def _call(fn: Any, *args: Any) -> tuple[HostFunction, HostFunctionContext]:
    hf = HostFunction(path="h.f", fn=fn, is_async=False)
    return hf, HostFunctionContext("h.f", "run", 1, list(args), CancelledFlag(), None)


async def test_a_slow_sync_function_holds_the_loop_no_longer_than_the_wait() -> None:
    runner = _runner()
    ticks: list[float] = []

    async def tick() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.005)

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.01)

    def slow(x: int) -> int:
        time.sleep(0.3)
        return x

    started = time.perf_counter()
    outcome = await runner.run(*_call(slow, 5), lone=True)
    ticker.cancel()
    assert outcome.ok and outcome.wire == "J5"
    # The loop went on turning while the function ran.
    assert sum(1 for t in ticks if started < t < started + 0.3) >= 10
    # A slow function: the next lone call does not wait for it at all.
    assert runner.sync_wait_s == 0.0
    outcome = await runner.run(*_call(lambda x: x, 6), lone=True)
    assert outcome.ok and runner.sync_wait_s == SYNC_WAIT_S  # quick again: it waits again


async def test_calls_made_together_still_run_side_by_side() -> None:
    # Four sync calls the guest makes at once, each blocking until all four
    # have started: they can only end if none waits for another.
    started = threading.Barrier(4, timeout=5)

    def meet(i: int) -> int:
        started.wait()
        return i

    result = await create_runner().run(
        "return await Promise.all([h.meet(1), h.meet(2), h.meet(3), h.meet(4)])",
        {"h": {"meet": meet}},
    )
    assert result.status == "ok", result.error
    assert result.value == [1, 2, 3, 4]


async def test_sequential_sync_calls_give_their_answers_in_order() -> None:
    seen: list[int] = []

    def record(i: int) -> int:
        seen.append(i)
        return i * i

    result = await create_runner().run(
        "let s = 0; for (let i = 0; i < 200; i++) s += await h.record(i); return s",
        {"h": {"record": record}},
    )
    assert result.status == "ok", result.error
    assert result.value == sum(i * i for i in range(200))
    assert seen == list(range(200))
    assert [c.seq for c in result.calls] == list(range(1, 201))
    assert all(c.ok for c in result.calls)
