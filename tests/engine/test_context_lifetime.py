"""A host call's context lives as long as the call: work the call leaves behind,
or a context object kept from it, cannot reach it (or act on its run) afterwards."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from run_repl import create_runner, get_host_function_context

SECRET = "c" * 40


async def test_work_a_call_awaits_sees_its_context() -> None:
    async def inner() -> str:
        await asyncio.sleep(0)
        return get_host_function_context().path

    async def outer() -> str:
        return await asyncio.create_task(inner())  # started and awaited within the call

    result = await create_runner(secret=SECRET).run(
        "return await t.outer()", {"t": {"outer": outer}}
    )
    assert result.status == "ok" and result.value == "t.outer"


async def test_work_left_running_after_the_call_settled_cannot_fetch_its_context() -> None:
    go = asyncio.Event()
    leftovers: list[asyncio.Task[Any]] = []

    async def later() -> Any:
        await go.wait()
        return get_host_function_context()

    async def detach() -> str:
        leftovers.append(asyncio.create_task(later()))
        return "started"

    result = await create_runner(secret=SECRET).run(
        "return await t.detach()", {"t": {"detach": detach}}
    )
    assert result.status == "ok" and result.value == "started"
    go.set()
    with pytest.raises(RuntimeError, match=r"t\.detach\(\).*ended") as caught:
        await leftovers[0]
    assert "Await the work inside the call" in str(caught.value)  # what to do instead


async def test_a_sync_call_s_copied_context_is_gone_after_the_call() -> None:
    copies: list[contextvars.Context] = []

    def keep() -> str:
        copies.append(contextvars.copy_context())
        return get_host_function_context().path  # during the call: there

    result = await create_runner(secret=SECRET).run("return await t.keep()", {"t": {"keep": keep}})
    assert result.status == "ok" and result.value == "t.keep"
    with pytest.raises(RuntimeError, match=r"t\.keep\(\).*ended"):
        copies[0].run(get_host_function_context)


async def test_a_context_kept_from_a_call_cannot_interrupt_after_it() -> None:
    runner = create_runner(secret=SECRET)
    kept: list[Any] = []

    async def hold() -> int:
        kept.append(get_host_function_context())
        return 1

    def ask() -> str:
        ctx = get_host_function_context()
        kept.append(ctx)
        if ctx.resume is None:
            ctx.interrupt({"why": "check"})
        return "asked"

    hosts = {"t": {"hold": hold, "ask": ask}}
    first = await runner.run("await t.hold(); return await t.ask()", hosts)
    assert first.status == "interrupted"
    held, asked = kept
    for ctx in (held, asked):
        with pytest.raises(RuntimeError, match="ended"):
            ctx.interrupt({"late": True})
    # What it was stays readable; only acting on the ended call is refused.
    assert held.path == "t.hold" and asked.args == []
    done = await runner.run(
        "await t.hold(); return await t.ask()",
        hosts,
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": True}],
    )
    assert done.status == "ok" and done.value == "asked"
    with pytest.raises(RuntimeError, match="ended"):
        kept[-1].interrupt()
