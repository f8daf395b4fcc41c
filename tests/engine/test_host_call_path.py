"""The per-call path: a host call that finishes at once is answered in the same
turn of the loop (no task of its own to wait for), yet every host function
still runs inside its own task, and a run of quick calls never keeps the event
loop from other work."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os

import pytest

from run_repl import Limits, run
from run_repl.sandbox.process import frames
from run_repl.sandbox.result import CallRecord
from run_repl.sandbox.session import channel
from run_repl.sandbox.session.host_call import start_call


async def test_an_async_host_function_runs_in_its_own_task_from_its_first_line() -> None:
    seen: list[bool] = []

    async def grouped(x: int) -> int:
        me = asyncio.current_task()
        seen.append(me is not None and me is not outer)
        async with asyncio.timeout(5):
            async with asyncio.TaskGroup() as group:
                doubled = group.create_task(asyncio.sleep(0, result=x * 2))
        return doubled.result()

    def quick(x: int) -> int:
        return x + 1

    outer = asyncio.current_task()
    result = await run(
        "const a = await h.grouped(1);\n"
        "const b = await Promise.all([h.grouped(2), h.quick(3), h.grouped(4), h.quick(5)]);\n"
        "return [a, ...b]",
        {"h": {"grouped": grouped, "quick": quick}},
    )
    assert result.status == "ok", result.error
    assert result.value == [2, 4, 4, 8, 6]
    assert seen == [True, True, True]
    assert [c.ok for c in result.calls] == [True] * 5


async def test_a_call_that_fails_at_once_and_one_that_fails_later_reach_the_guest() -> None:
    async def now() -> None:
        raise ValueError("at once")

    async def later() -> None:
        await asyncio.sleep(0)
        raise ValueError("later")

    result = await run(
        "const out = [];\n"
        "for (const f of [h.now, h.later]) {\n"
        "  try { await f(); } catch (e) { out.push(e.code); }\n"
        "}\n"
        "return out",
        {"h": {"now": now, "later": later}},
    )
    assert result.value == ["RUN_HOST_FUNCTION_ERROR", "RUN_HOST_FUNCTION_ERROR"]
    assert [c.error_message for c in result.calls] == ["ValueError: at once", "ValueError: later"]


@pytest.mark.slow
async def test_quick_calls_back_to_back_leave_the_loop_turns_for_other_work() -> None:
    served: list[int] = []
    seen_at: set[int] = set()
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            seen_at.add(len(served))
            await asyncio.sleep(0)

    async def f(i: int) -> int:
        served.append(i)
        return i

    ticks = asyncio.create_task(ticker())
    result = await run(
        "let s = 0; for (let i = 0; i < 2000; i++) s += await h.f(i); return s",
        {"h": {"f": f}},
    )
    stop.set()
    await ticks
    assert result.value == sum(range(2000))
    # The other task ran between calls many times over, not only before and after.
    assert len({n for n in seen_at if 0 < n < 2000}) >= 3


async def test_a_sync_host_function_raising_stop_iteration_fails_its_call() -> None:
    def first(items: list[int]) -> int:
        return next(iter(items))  # StopIteration on an empty list

    result = await run(
        "try { await h.first([]); } catch (e) { return [e.code, await h.first([7])]; }",
        {"h": {"first": first}},
        limits=Limits(timeout_ms=10_000),
    )
    assert result.status == "ok", result.error
    assert result.value == ["RUN_HOST_FUNCTION_ERROR", 7]
    assert "StopIteration" in (result.calls[0].error_message or "")


async def test_a_call_that_finishes_in_its_first_step_needs_no_task() -> None:
    loop = asyncio.get_running_loop()
    done: list[int] = []

    async def quick() -> None:
        done.append(1)

    assert start_call(loop, quick(), contextvars.copy_context()) is None
    assert done == [1]  # it ran now, not in a later turn


async def test_a_call_cancelled_before_its_task_steps_gives_back_what_it_waits_for() -> None:
    """Cancelled at once (the run's end), a call waiting on a semaphore leaves it as it
    was: the future it waits on is cancelled, as a task's own waiter would be."""
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(1)
    await slots.acquire()

    async def wants_a_slot() -> None:
        async with slots:
            pass

    task = start_call(loop, wants_a_slot(), contextvars.copy_context())
    assert task is not None
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert slots._value == 0  # still held by us: the cancelled call took nothing back
    slots.release()
    assert slots._value == 1


def test_the_worker_polls_longer_only_while_answers_come_that_fast() -> None:
    from run_repl.sandbox.process.worker import SPIN_LONG_SECONDS, SPIN_SECONDS, next_spin

    assert SPIN_SECONDS < SPIN_LONG_SECONDS
    # A sync host function's answer (two thread hops) often comes after the short poll:
    assert next_spin(SPIN_SECONDS * 1.5) == SPIN_LONG_SECONDS
    assert next_spin(0.00002) == SPIN_LONG_SECONDS
    # Calls that take milliseconds: the longer poll would never catch them.
    assert next_spin(SPIN_LONG_SECONDS) == SPIN_SECONDS
    assert next_spin(0.004) == SPIN_SECONDS


async def test_a_lone_answer_leaves_before_its_call_is_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The guest waits on each of these calls alone: its answer goes to the
    # worker first, and the audit's record is made and written while the guest
    # works (on_call hears the call start and end then). Calls made together
    # still leave together.
    events: list[tuple[str, int]] = []

    class Writes:
        """The channel's `os`, noting each write of answers to the worker."""

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        @staticmethod
        def write(fd: int, data: bytes) -> int:
            n = os.write(fd, data)
            settled = [
                frames.SETTLE.unpack_from(payload)[0]
                for kind, payload in frames.FrameReader().feed(bytes(data[:n]))
                if kind == frames.Kind.SETTLE_CALL
            ]
            if settled:
                events.append(("sent", len(settled)))
            events.extend(("answered", seq) for seq in settled)
            return n

    def on_call(record: CallRecord) -> None:
        events.append(("started" if record.ok is None else "recorded", record.seq))

    async def f(x: int) -> int:
        return x

    monkeypatch.setattr(channel, "os", Writes())
    result = await run(
        "let s = 0; for (let i = 0; i < 5; i++) s += await h.f(i);\n"
        "const all = await Promise.all([h.f(10), h.f(20), h.f(30)]);\n"
        "return s + all.length",
        {"h": {"f": f}},
        on_call=on_call,
    )
    assert result.status == "ok", result.error
    lone = [e for e in events if e[0] != "sent" and e[1] <= 5]
    assert lone == [
        event
        for seq in range(1, 6)
        for event in (("answered", seq), ("started", seq), ("recorded", seq))
    ]
    # The three made together: recorded as they start, served side by side, their
    # answers in one write, which the last one served sends (the guest then
    # waits on it alone).
    assert events[-10:] == [
        ("started", 6),
        ("started", 7),
        ("started", 8),
        ("recorded", 6),
        ("recorded", 7),
        ("sent", 3),
        ("answered", 6),
        ("answered", 7),
        ("answered", 8),
        ("recorded", 8),
    ]


async def test_a_call_that_ends_after_a_wait_is_heard_ending_before_the_next_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After a lone answer the parent polls for the guest's next message. A call
    # that ended in a later turn (it awaited something) used to poll from inside
    # its own ending: the guest's next call was heard starting before this one
    # was heard ending (and counted as one of two running). Polling long here
    # makes that next call arrive inside the poll every time.
    monkeypatch.setattr(channel, "SPIN_SECONDS", 2.0)
    monkeypatch.setattr(channel, "CHAIN_SECONDS", 5.0)
    events: list[tuple[int, bool | None]] = []

    async def later(x: int) -> int:
        await asyncio.sleep(0.01)
        return x

    result = await run(
        "return (await h.later(1)) + (await h.later(2)) + (await h.later(3))",
        {"h": {"later": later}},
        on_call=lambda record: events.append((record.seq, record.ok)),
    )
    assert result.status == "ok", result.error
    assert result.value == 6
    assert events == [(1, None), (1, True), (2, None), (2, True), (3, None), (3, True)]


async def test_a_call_that_runs_on_is_heard_starting_while_it_runs() -> None:
    # A lone call that awaits: on_call hears it start before it ends. The host
    # function waits for that, so it would never end otherwise.
    heard = asyncio.Event()
    events: list[tuple[int, bool | None]] = []

    def on_call(record: CallRecord) -> None:
        events.append((record.seq, record.ok))
        if record.ok is None:
            heard.set()

    async def slow(x: int) -> int:
        await asyncio.wait_for(heard.wait(), 5)
        heard.clear()
        return x

    result = await run(
        "return (await h.slow(1)) + (await h.slow(2))", {"h": {"slow": slow}}, on_call=on_call
    )
    assert result.status == "ok", result.error
    assert result.value == 3
    assert events == [(1, None), (1, True), (2, None), (2, True)]
    assert [c.seq for c in result.calls] == [1, 2]
