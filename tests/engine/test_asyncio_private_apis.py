"""Fences around the private asyncio API of the engine's host calls.

On Python 3.11, `start_call` (run_repl/sandbox/session/host_call.py) backports 3.12's eager
task start with `asyncio.tasks._enter_task` and `_leave_task`; on 3.12 and later it
passes `eager_start=True`. These tests check the branch this interpreter takes still
behaves as start_call assumes, and say where to look when it does not.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys

from run_repl.sandbox.session.host_call import start_call

WHERE = "start_call in run_repl/sandbox/session/host_call.py"


async def test_the_eager_start_this_python_takes_is_there() -> None:
    loop = asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        started: list[bool] = []

        async def step() -> None:
            started.append(True)
            await asyncio.sleep(0)

        task = asyncio.Task(step(), loop=loop, eager_start=True)  # type: ignore[call-arg]  # 3.12+; checked as 3.11
        assert started == [True], f"eager_start no longer runs the first step now: {WHERE}"
        await task
        return
    from asyncio import tasks

    for name in ("_enter_task", "_leave_task"):
        assert callable(getattr(tasks, name, None)), f"asyncio.tasks.{name} is gone: {WHERE}"
    outer = asyncio.current_task()
    assert outer is not None

    async def idle() -> None:
        await asyncio.sleep(0)

    inner = loop.create_task(idle())
    try:
        tasks._enter_task(loop, inner)
    except RuntimeError:
        pass  # another task is current: start_call leaves the outer one first
    else:
        raise AssertionError(f"_enter_task no longer refuses a second current task: {WHERE}")
    tasks._leave_task(loop, outer)
    tasks._enter_task(loop, inner)
    assert asyncio.current_task() is inner, f"_enter_task no longer sets current_task: {WHERE}"
    tasks._leave_task(loop, inner)
    tasks._enter_task(loop, outer)
    assert asyncio.current_task() is outer
    await inner


async def test_a_call_that_does_not_wait_ends_in_its_first_step_inside_a_task_of_its_own() -> None:
    loop = asyncio.get_running_loop()
    outer = asyncio.current_task()
    seen: list[object] = []

    async def call() -> None:
        seen.append(asyncio.current_task())

    assert start_call(loop, call(), contextvars.copy_context()) is None
    assert len(seen) == 1 and seen[0] is not None and seen[0] is not outer
    assert asyncio.current_task() is outer  # the outer task is current again


async def test_a_call_that_waits_goes_on_in_its_task_and_ends_there() -> None:
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[None] = loop.create_future()
    steps: list[str] = []

    async def call() -> None:
        steps.append("started")
        await gate
        steps.append("ended")

    task = start_call(loop, call(), contextvars.copy_context())
    assert steps == ["started"] and task is not None
    gate.set_result(None)
    await task
    assert steps == ["started", "ended"]
