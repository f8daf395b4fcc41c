"""A resumed run cancelled while an approved sync call is still on its thread: the call
is recorded `settled: false`, and its real end, when it comes, reaches `on_call` and the
stored history of the resumed run, as it does for a run started normally
(tests/engine/test_cancel.py::test_a_late_end_reaches_the_stored_history)."""

from __future__ import annotations

import asyncio
import threading

from run_repl import Limits, requires_approval
from run_repl.sandbox.result import CallRecord
from run_repl.sandbox.runner import Runner
from run_repl.store import Store
from run_repl.store.approvals.flow import decide, save_interrupted

LONG_GRACE = Limits(host_call_grace_ms=600_000)  # a cancel that waited for it would time out
BOUND_S = 60


async def test_a_late_end_of_an_approved_call_reaches_the_resumed_runs_history(
    store: Store, runner: Runner
) -> None:
    started = threading.Event()
    release = threading.Event()
    late = asyncio.Event()
    seen: list[CallRecord] = []

    @requires_approval(message="Send it?")
    def send() -> str:
        started.set()
        assert release.wait(120)
        return "sent"

    functions = {"mail": {"send": send}}
    source = "return await mail.send()"
    first = await runner.run(source, functions)
    assert first.status == "interrupted", first.error
    [approval] = save_interrupted(store, first, source=source, host="test")

    def on_call(call: CallRecord) -> None:
        seen.append(call.model_copy())
        if call.settled is True:
            late.set()

    cancel = asyncio.Event()
    job = asyncio.ensure_future(
        decide(
            store,
            runner,
            functions,
            {approval.id: True},
            cancel=cancel,
            limits=LONG_GRACE,
            on_call=on_call,
        )
    )
    try:
        await asyncio.to_thread(started.wait, 30)
        cancel.set()
        result = await asyncio.wait_for(job, BOUND_S)
        assert result.error is not None and result.error.code == "RUN_ABORTED"
        stored = store.get_run(result.run_id)
        assert stored is not None and stored.resumed_from == first.run_id
        assert stored.envelope["calls"][0]["settled"] is False
    finally:
        release.set()
    await asyncio.wait_for(late.wait(), 30)
    assert seen[-1].ok is True and seen[-1].settled is True  # on_call: the real end
    for _ in range(400):  # the history is written off the loop, after on_call
        stored = store.get_run(result.run_id)
        if stored is not None and stored.envelope["calls"][0].get("ok") is True:
            break
        await asyncio.sleep(0.05)
    assert stored is not None and stored.resumed_from == first.run_id
    call = stored.envelope["calls"][0]
    assert call["ok"] is True and call["settled"] is True
