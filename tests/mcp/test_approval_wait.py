"""Waiting for a person: a waiter reads its run's standing again only when its own
approvals moved, and every waiter's approvals are read once per change."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest
from test_standing import HOSTS, SOURCE  # the paused run: one approval of ops.launch

from run_repl.mcp import approval_wait
from run_repl.mcp.approval_wait import ApprovalWatch, Standing, standing, wait_for_decision
from run_repl.sandbox.result import RunResult
from run_repl.store import MemoryStore, PendingApproval
from run_repl.store.approvals.flow import decide, record_run, save_interrupted, store_runner


class Counting(MemoryStore):
    """A store that counts its reads of many approvals at once."""

    def __init__(self) -> None:
        super().__init__()
        self.at_once: list[frozenset[str]] = []

    def get_approvals(self, approval_ids: Iterable[str]) -> dict[str, PendingApproval]:
        self.at_once.append(frozenset(approval_ids))
        return super().get_approvals(approval_ids)


async def paused(store: MemoryStore, runner: Any) -> RunResult:
    first = await runner.run(SOURCE, HOSTS)
    assert first.status == "interrupted"
    record_run(store, first, source=SOURCE, host="ops")
    save_interrupted(store, first, source=SOURCE, host="ops")
    return first


async def until(condition: Any) -> None:
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


async def test_other_runs_changes_do_not_make_a_waiter_read_its_standing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_on = approval_wait._read_on
    reads = 0

    def counted(*args: Any) -> Standing:
        nonlocal reads
        reads += 1
        return read_on(*args)

    monkeypatch.setattr(approval_wait, "_read_on", counted)
    store = Counting()
    runner = store_runner(store, secret="s" * 40)
    mine = await paused(store, runner)
    watch = ApprovalWatch(store)
    heard: list[Standing] = []

    async def report(state: Standing) -> None:
        heard.append(state)

    waiting = asyncio.create_task(
        wait_for_decision(watch, lambda: standing(store, mine), 30, report, heartbeat_s=30)
    )
    await until(lambda: heard)
    others = [await paused(store, runner) for _ in range(5)]  # five changes not its own
    for other in others:
        await decide(store, runner, HOSTS, {other.interruptions[0].id: False})  # and more
    await until(lambda: store.at_once)  # it was woken and looked
    await asyncio.sleep(0.3)  # (the polled memory store's later changes too)
    assert reads == 0  # woken, it asked only whether its own row moved
    assert not waiting.done() and len(heard) == 1  # and nobody was told of a change
    await decide(store, runner, HOSTS, {mine.interruptions[0].id: True})
    state = await asyncio.wait_for(waiting, 10)
    assert reads >= 1
    assert state.status == "done" and state.result is not None
    assert state.result.value == "launched x"
    await watch.close()


async def test_every_waiters_approvals_are_read_in_one_read_per_change() -> None:
    store = Counting()
    runner = store_runner(store, secret="s" * 40)
    firsts = [await paused(store, runner) for _ in range(3)]
    watch = ApprovalWatch(store)
    started = 0

    async def report(state: Standing) -> None:
        nonlocal started
        started += 1

    waiters = [
        asyncio.create_task(
            wait_for_decision(
                watch, lambda first=first: standing(store, first), 30, report, heartbeat_s=30
            )
        )
        for first in firsts
    ]
    await until(lambda: started == 3)
    await asyncio.sleep(0.2)
    store.at_once.clear()
    await paused(store, runner)  # one change, someone else's
    await until(lambda: store.at_once)
    await asyncio.sleep(0.2)  # every waiter has looked by now
    ids = {first.interruptions[0].id for first in firsts}
    assert store.at_once == [frozenset(ids)]  # one read, all three waiters' approvals
    for first in firsts:
        await decide(store, runner, HOSTS, {first.interruptions[0].id: True})
    done = await asyncio.wait_for(asyncio.gather(*waiters), 10)
    assert [s.status for s in done] == ["done"] * 3
    await watch.close()
