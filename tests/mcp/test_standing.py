"""Where a paused run stands, read from the store: the endings the server follows."""

from __future__ import annotations

from typing import Any

import pytest

from run_repl import requires_approval
from run_repl.mcp.approval_wait import standing, standing_of_approvals, standing_of_run
from run_repl.mcp.tool_errors import ToolError
from run_repl.sandbox.result import RunResult
from run_repl.store import MemoryStore, RunRecord
from run_repl.store.approvals.flow import decide, record_run, save_interrupted, store_runner

SOURCE = 'const r = await ops.launch("x"); return r'


@requires_approval
def launch(name: str) -> str:
    return f"launched {name}"


HOSTS = {"ops": {"launch": launch}}


class Forgetful(MemoryStore):
    """A store whose history has lost every run (evicted, or never written)."""

    def get_run(self, run_id: str) -> RunRecord | None:
        return None


async def paused(store: MemoryStore) -> tuple[Any, RunResult]:
    runner = store_runner(store, secret="s" * 40)
    first = await runner.run(SOURCE, HOSTS)
    assert first.status == "interrupted"
    record_run(store, first, source=SOURCE, host="ops")
    save_interrupted(store, first, source=SOURCE, host="ops")
    return runner, first


async def test_waiting_then_done_with_the_resumed_runs_result() -> None:
    store = MemoryStore()
    runner, first = await paused(store)
    before = standing(store, first)
    assert before.status == "waiting"
    assert [a.id for a in before.approvals] == [first.interruptions[0].id]
    await decide(store, runner, HOSTS, {first.interruptions[0].id: True})
    after = standing(store, first)
    assert after.status == "done"
    assert after.result is not None and after.result.value == "launched x"
    assert standing_of_run(store, first.run_id or "").result == after.result
    assert standing_of_approvals(store, [first.interruptions[0].id]).status == "done"
    # The resumed run itself reads as done, from its own id.
    assert standing_of_run(store, after.result.run_id or "").status == "done"


async def test_a_recovered_approval_ends_without_a_result() -> None:
    store = MemoryStore()
    _, first = await paused(store)
    approval_id = first.interruptions[0].id
    claim = store.claim_batch(
        {approval_id: True}, claim_id="clm_1", claimed_by="gone", decided_by="p", ttl_s=-1
    )
    store.start_batch(claim)  # it started, then its process died: stuck once the claim ran out
    store.recover_batch(approval_id, by="admin")
    state = standing(store, first)
    assert state.status == "ended"
    assert state.result is not None and state.result.run_id == first.run_id
    assert state.note is not None and "unfinished" in state.note


async def test_a_resumed_run_the_history_lost_ends_and_says_so() -> None:
    store = Forgetful()
    runner, first = await paused(store)
    await decide(store, runner, HOSTS, {first.interruptions[0].id: False})
    state = standing(store, first)
    assert state.status == "ended"
    assert state.note is not None and "history no longer holds" in state.note


def test_unknown_runs_and_approvals_are_tool_errors() -> None:
    store = MemoryStore()
    with pytest.raises(ToolError) as run_error:
        standing_of_run(store, "run_nope")
    assert run_error.value.code == "RUN_NOT_FOUND"
    with pytest.raises(ToolError) as approval_error:
        standing_of_approvals(store, ["int_nope"])
    assert approval_error.value.code == "APPROVAL_NOT_FOUND"
