"""Where a decided run resumes (`approvals/dispatch.py`), and an executor's loop
(`approvals/resumer.py`) resuming it, on every store.

The order: the live process that started the run (its approvals' `resume_by`), else a
live server (mcp, serve) with the same host and host functions, else this process.
The bank counts what really ran."""

from __future__ import annotations

import asyncio
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from store_kinds import execute

from run_repl.sandbox.resume.continuation import manifest_digest_of
from run_repl.sandbox.runner import Runner
from run_repl.store import Store
from run_repl.store.approvals.dispatch import NoExecutor, dispatch, follow, resumes_where
from run_repl.store.approvals.flow import save_interrupted, store_runner
from run_repl.store.approvals.resumer import Resumed, Resumer
from run_repl.store.executors import LIVE_S, Executor, new_executor_id

SECRET = "s" * 40  # the store tests' runners' (conftest.py)
HOST = "bank_host:HOSTS"  # as the other store tests name it (conftest is not a module to import)

TRANSFER = "return await bank.transfer(5, 'd')"


def executor(store: Store, functions: str, *, kind: str = "serve", host: str = HOST) -> Executor:
    return store.register_executor(
        new_executor_id(), host=host, functions=functions, label=f"{kind} x", kind=kind
    )


def gone(spec: str, store: Store, executor_id: str) -> None:
    if spec.startswith("memory"):
        with store._executors_lock:  # type: ignore[attr-defined]
            row, seen = store._executors[executor_id]  # type: ignore[attr-defined]
            store._executors[executor_id] = (row, seen - LIVE_S - 1)  # type: ignore[attr-defined]
        return
    execute(
        spec, f"UPDATE executors SET seen_at = seen_at - {LIVE_S + 1} WHERE id = '{executor_id}'"
    )


async def paused(runner: Runner, store: Store, bank: ModuleType, resume_by: str | None) -> Any:
    first = await runner.run(TRANSFER, bank.HOSTS)
    assert first.status == "interrupted"
    [approval] = save_interrupted(store, first, source=TRANSFER, host=HOST, resume_by=resume_by)
    return approval


async def started(
    store: Store, runner: Runner, bank: ModuleType, probe: Any, heard: list[Resumed]
) -> tuple[Resumer, asyncio.Event, asyncio.Task[None]]:
    """A resumer of the bank's host functions (those of `probe`'s run), registered."""
    resumer = Resumer(
        store,
        runner,
        bank.HOSTS,
        host=HOST,
        digest=manifest_digest_of(probe.continuation) or "",
        on_resumed=heard.append,
    )
    stop = asyncio.Event()
    loop = asyncio.create_task(resumer.run(stop))
    while store.get_executor(resumer.id) is None:
        await asyncio.sleep(0.01)
    return resumer, stop, loop


async def test_the_starter_first_then_a_server_with_the_same_functions_then_here(
    spec: str, store: Store, runner: Runner, bank: ModuleType
) -> None:
    probe = await paused(runner, store, bank, None)
    digest = manifest_digest_of(probe.continuation)
    assert digest is not None
    assert resumes_where(store, probe) is None  # nobody: here
    executor(store, "0" * 64)  # other host functions: cannot resume it
    executor(store, digest, host="other:HOSTS")  # another host
    executor(store, digest, kind="ide")  # resumes only its own runs
    assert resumes_where(store, probe) is None
    server = executor(store, digest)
    assert resumes_where(store, probe).id == server.id  # type: ignore[union-attr]
    assert resumes_where(store, probe, here=server.id) is None  # this process is that server
    starter = executor(store, digest, kind="ide")
    mine = await paused(runner, store, bank, starter.id)
    assert resumes_where(store, mine).id == starter.id  # type: ignore[union-attr]
    assert resumes_where(store, mine, here=starter.id) is None  # started here: resumes here
    gone(spec, store, starter.id)
    assert resumes_where(store, mine).id == server.id  # type: ignore[union-attr]  # starter gone
    gone(spec, store, server.id)
    assert resumes_where(store, mine) is None


async def test_with_a_live_server_the_decision_is_recorded_and_nothing_runs_here(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    approval = await paused(runner, store, bank, None)
    server = executor(store, manifest_digest_of(approval.continuation) or "")
    done = await dispatch(store, runner, bank.HOSTS, {approval.id: True}, approver="alice")
    assert done.executor is not None and done.executor.id == server.id
    assert done.resolution is None and done.result is None
    assert done.summary() == f"Approved; {approval.run_id} resumes on serve x"
    [recorded] = done.approvals
    assert recorded.state() == "queued" and recorded.decided_by == "alice"
    assert bank.rows() == []  # nothing ran in the deciding process
    assert [a.id for a in store.resumable(HOST)] == [approval.id]


async def test_with_nobody_else_it_resumes_here_and_started_here_always_does(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    alone = await paused(runner, store, bank, None)
    done = await dispatch(store, runner, bank.HOSTS, {alone.id: True})
    assert done.executor is None and done.result is not None and done.result.status == "ok"
    assert "this process" in done.summary()
    executor(store, manifest_digest_of(alone.continuation) or "")
    mine = await paused(runner, store, bank, None)
    here = await dispatch(store, runner, bank.HOSTS, {mine.id: True}, started_here=True)
    assert here.executor is None and here.result is not None and here.result.status == "ok"
    assert bank.rows() == [("d", 5), ("d", 5)]


async def test_a_process_without_the_host_and_nobody_to_resume_records_nothing(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    approval = await paused(runner, store, bank, None)
    with pytest.raises(NoExecutor):
        await dispatch(store, runner, bank.HOSTS, {approval.id: True}, can_resume_here=False)
    assert store.get_approval(approval.id).state() == "pending"  # type: ignore[union-attr]


async def test_following_without_the_host_never_resumes_here_when_its_server_dies(
    spec: str, store: Store, runner: Runner, bank: ModuleType
) -> None:
    # `approvals approve --wait` from a process without the run's host: the server it
    # was left to dies before it began. This process cannot resume it (its host functions
    # are another's), so it waits, and the decision stays for the next executor.
    approval = await paused(runner, store, bank, None)
    server = executor(store, manifest_digest_of(approval.continuation) or "")
    done = await dispatch(store, runner, bank.HOSTS, {approval.id: True}, approver="alice")
    assert done.executor is not None and done.executor.id == server.id
    gone(spec, store, server.id)
    other_host: dict[str, Any] = {"bank": {"transfer": lambda amount, tag="": amount}}
    tried: list[str] = []
    real = runner.run

    async def counted(*args: Any, **kwargs: Any) -> Any:
        tried.append("run")
        return await real(*args, **kwargs)

    runner.run = counted  # type: ignore[method-assign]
    result = await follow(store, runner, other_host, done, timeout_s=2.5, can_resume_here=False)
    assert result is None and tried == []  # nothing was run here, not even refused
    assert store.get_approval(approval.id).state() == "queued"  # type: ignore[union-attr]
    assert bank.rows() == []


async def test_a_resumer_resumes_what_is_decided_for_it_once_and_leaves_when_stopped(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    probe = await paused(runner, store, bank, None)
    heard: list[Resumed] = []
    resumer, stop, loop = await started(store, runner, bank, probe, heard)
    mine = await paused(runner, store, bank, resumer.id)
    done = await dispatch(store, runner, bank.HOSTS, {probe.id: True, **{}})
    assert done.executor is not None and done.executor.id == resumer.id
    done = await dispatch(store, runner, bank.HOSTS, {mine.id: False})
    assert done.executor is not None and done.executor.id == resumer.id
    for _ in range(2000):
        if all(store.get_approval(i).final for i in (probe.id, mine.id)):  # type: ignore[union-attr]
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(loop, 60)
    assert store.get_approval(probe.id).status == "approved"  # type: ignore[union-attr]
    assert store.get_approval(mine.id).status == "denied"  # type: ignore[union-attr]
    assert bank.rows() == [("d", 5)]  # the approved one ran once; the denied one never
    assert sorted(r.approval.id for r in heard) == sorted([probe.id, mine.id])
    assert all(r.error is None and r.resolution is not None for r in heard)
    assert store.get_executor(resumer.id) is None


async def test_a_resume_on_a_full_runner_waits_for_its_slot_ahead_of_new_runs(
    store: Store, bank: ModuleType
) -> None:
    # bench/fleet.py with one server: its runner was full of agents' runs when a decision
    # came, the resume got RUN_BUSY and was retried a second later (p95 1.4 s from the
    # decision to the agent's result). It now queues for the next free slot.
    one = store_runner(store, secret=SECRET, max_runs_in_flight=1)
    probe = await paused(one, store, bank, None)
    release = asyncio.Event()
    holding = asyncio.Event()

    async def hold() -> int:
        holding.set()
        await release.wait()
        return 1

    heard: list[Resumed] = []
    resumer, stop, loop = await started(store, one, bank, probe, heard)
    hog = asyncio.create_task(one.run("return await h.hold()", {"h": {"hold": hold}}))
    await holding.wait()  # the runner's one slot is taken
    done = await dispatch(store, one, bank.HOSTS, {probe.id: True})
    assert done.executor is not None and done.executor.id == resumer.id
    for _ in range(1000):  # the resume has claimed the batch and waits for the slot
        if one._slots.waiting:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.01)
    assert resumer.running and one._slots.waiting == 1  # type: ignore[attr-defined]
    refused = await one.run("return 2")  # a new run does not jump the queue
    assert refused.error is not None and refused.error.code == "RUN_BUSY"
    release.set()
    assert (await hog).value == 1
    for _ in range(2000):
        if store.get_approval(probe.id).final:  # type: ignore[union-attr]
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(loop, 60)
    [resumed] = heard  # one resume, not a busy one and a retry
    assert resumed.resolution is not None and resumed.resolution.result is not None
    assert resumed.resolution.result.status == "ok"
    assert store.get_approval(probe.id).status == "approved"  # type: ignore[union-attr]
    assert bank.rows() == [("d", 5)]


async def test_a_live_starter_is_read_once_a_second_and_its_death_is_seen_after(
    spec: str, store: Store, runner: Runner, bank: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every executor looks at every change anyone makes: with 4 servers, each look read
    # the liveness of every decided run's starter (561 reads in a 15 s bench/fleet.py run).
    from run_repl.store.approvals import resumer as resumer_module

    probe = await paused(runner, store, bank, None)
    starter = executor(store, manifest_digest_of(probe.continuation) or "", kind="mcp")
    theirs = await paused(runner, store, bank, starter.id)
    store.record_decisions({theirs.id: True}, decided_by="alice", decision_id="dec_1")
    resumer = Resumer(
        store, runner, bank.HOSTS, host=HOST, digest=manifest_digest_of(probe.continuation) or ""
    )
    clock = [1000.0]
    monkeypatch.setattr(resumer_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    reads: list[str] = []
    real = store.get_executor

    def counted(executor_id: str) -> Executor | None:
        reads.append(executor_id)
        return real(executor_id)

    monkeypatch.setattr(store, "get_executor", counted)
    decided = store.resumable(HOST)
    for _ in range(3):  # three changes within the second: its starter resumes it
        assert resumer.eligible(decided) == []
        clock[0] += 0.3
    assert reads == [starter.id]
    gone(spec, store, starter.id)  # it died: once its last reading is a second old, taken
    clock[0] += resumer_module.LIVENESS_KEPT_S
    assert [a.id for a in resumer.eligible(decided)] == [theirs.id]
    assert reads == [starter.id, starter.id]
