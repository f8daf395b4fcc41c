"""A runner's slots: new runs are refused when all are taken; a run that may queue (an
executor's resume of a person's decision) waits for the next free one, ahead of them."""

from __future__ import annotations

import asyncio
import threading

import pytest

from run_repl import create_runner
from run_repl.sandbox.run_slots import RunSlots


async def test_a_free_slot_is_taken_at_once_and_a_full_runner_refuses_a_run_that_may_not_wait() -> (
    None
):
    slots = RunSlots(1)
    assert await slots.take() is True
    assert await slots.take() is False
    assert slots.in_flight == 1
    slots.give()
    assert slots.in_flight == 0
    assert await slots.take() is True


async def test_a_queued_run_gets_the_next_freed_slot_and_new_runs_cannot_jump_the_queue() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    queued = asyncio.create_task(slots.take(queue_s=5))
    await asyncio.sleep(0.01)
    assert slots.waiting == 1 and not queued.done()
    slots.give()  # the slot passes to the waiter: never free in between
    assert await slots.take() is False
    assert await queued is True
    assert slots.in_flight == 1 and slots.waiting == 0
    slots.give()
    assert slots.in_flight == 0


async def test_while_one_waits_a_run_that_may_not_wait_is_refused_even_below_the_cap() -> None:
    slots = RunSlots(2)
    assert await slots.take() and await slots.take()
    queued = asyncio.create_task(slots.take(queue_s=5))
    await asyncio.sleep(0.01)
    slots.give()
    assert await queued is True
    # Two in flight again (the freed one went to the queue): a new run is refused.
    assert slots.in_flight == 2 and await slots.take() is False


async def test_queued_runs_are_served_first_come_first_served() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    order: list[str] = []

    async def wait(name: str) -> None:
        assert await slots.take(queue_s=5)
        order.append(name)

    first = asyncio.create_task(wait("first"))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(wait("second"))
    await asyncio.sleep(0.01)
    slots.give()
    await first
    slots.give()
    await second
    assert order == ["first", "second"]
    slots.give()
    assert slots.in_flight == 0


async def test_a_wait_that_runs_out_leaves_the_queue_and_takes_nothing() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    assert await slots.take(queue_s=0.05) is False
    assert slots.waiting == 0 and slots.in_flight == 1
    slots.give()
    assert slots.in_flight == 0  # nothing was handed to the waiter that left


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    queued = asyncio.create_task(slots.take(queue_s=5))
    await asyncio.sleep(0.01)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert slots.waiting == 0
    slots.give()
    assert slots.in_flight == 0


async def test_a_waiter_cancelled_just_after_it_was_handed_a_slot_gives_it_back() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    queued = asyncio.create_task(slots.take(queue_s=5))
    later = asyncio.create_task(slots.take(queue_s=5))
    await asyncio.sleep(0.01)
    slots.give()  # handed to `queued`, whose wake-up is only scheduled
    queued.cancel()  # ... and it is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert await later is True  # the slot went on to the next in line, not lost
    assert slots.in_flight == 1
    slots.give()
    assert slots.in_flight == 0


async def test_a_slot_freed_on_another_thread_wakes_a_waiter_on_this_loop() -> None:
    slots = RunSlots(1)
    assert await slots.take()
    queued = asyncio.create_task(slots.take(queue_s=5))
    await asyncio.sleep(0.01)
    threading.Thread(target=slots.give).start()
    assert await asyncio.wait_for(queued, 2) is True


async def test_a_runner_queues_a_run_given_queue_s_and_refuses_the_others() -> None:
    runner = create_runner(max_runs_in_flight=1)
    release = asyncio.Event()
    holding = asyncio.Event()

    async def hold() -> int:
        holding.set()
        await release.wait()
        return 1

    hog = asyncio.create_task(runner.run("return await h.hold()", {"h": {"hold": hold}}))
    await holding.wait()
    queued = asyncio.create_task(runner.run("return 2", queue_s=30))
    await asyncio.sleep(0.05)
    refused = await runner.run("return 3")
    assert refused.error is not None and refused.error.code == "RUN_BUSY"
    assert not queued.done()
    await asyncio.sleep(1.5)  # it waits as long as the slot is held
    assert not queued.done()
    release.set()
    assert (await hog).value == 1
    done = await queued
    assert done.status == "ok" and done.value == 2
    # Its duration is its own run's: the 1.5 s wait for the slot is not in it.
    assert done.duration_ms < 1_500


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
async def test_queue_s_must_be_a_finite_number_of_seconds(bad: float) -> None:
    runner = create_runner(max_runs_in_flight=1)
    with pytest.raises(ValueError, match="queue_s"):
        await runner.run("1", queue_s=bad)
