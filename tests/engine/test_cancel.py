"""Cancel stops a run now: it does not wait out the grace a timeout gives calls.

An async host call in flight is cancelled the Python way (its task gets
CancelledError) and recorded as cancelled; a sync call still on its thread
cannot be stopped, so it is recorded `settled: false`, and its real end
reaches `on_call` (and the result's audit) when it comes.

Each run here has a grace of ten minutes: a cancel that waited for it would
not come back within the generous bound the test puts on it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from run_repl import Limits, get_host_function_context, run
from run_repl.sandbox.result import CallRecord

LONG_GRACE = Limits(host_call_grace_ms=600_000)
BOUND_S = 60  # far below the grace: only a run that waited for it goes past


async def test_cancel_cancels_an_async_call_in_flight_and_records_it_cancelled() -> None:
    cancel = asyncio.Event()
    started = asyncio.Event()
    saw: list[str] = []
    seen: list[CallRecord] = []

    async def slow() -> str:
        started.set()
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            saw.append("CancelledError")
            raise
        return "finished"

    job = asyncio.ensure_future(
        run(
            "await h.slow()",
            {"h": {"slow": slow}},
            cancel=cancel,
            limits=LONG_GRACE,
            on_call=seen.append,
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    cancel.set()
    result = await asyncio.wait_for(job, BOUND_S)
    assert result.error is not None and result.error.code == "RUN_ABORTED"
    assert saw == ["CancelledError"]
    (call,) = result.calls
    assert call.ok is False and call.error_code == "RUN_ABORTED"
    assert "cancelled" in (call.error_message or "")
    assert call.settled is not False  # it did stop: its end is known
    assert seen[-1].ok is False and seen[-1].error_code == "RUN_ABORTED"


async def test_cancel_returns_while_a_sync_call_is_blocked_and_its_late_end_arrives() -> None:
    cancel = asyncio.Event()
    started = threading.Event()
    release = threading.Event()
    late = asyncio.Event()
    seen: list[CallRecord] = []

    def blocked(order_id: str) -> str:
        started.set()
        assert release.wait(120)
        return f"charged {order_id}"

    def on_call(call: CallRecord) -> None:
        seen.append(call)
        if call.ok is not None:
            late.set()

    job = asyncio.ensure_future(
        run(
            'return await pay.charge("o1")',
            {"pay": {"charge": blocked}},
            cancel=cancel,
            limits=LONG_GRACE,
            on_call=on_call,
        )
    )
    await asyncio.to_thread(started.wait, 10)
    cancel.set()
    try:
        result = await asyncio.wait_for(job, BOUND_S)
        assert not release.is_set()  # the run came back with the call still on its thread
        assert result.error is not None and result.error.code == "RUN_ABORTED"
        (call,) = result.calls
        assert call.ok is None and call.settled is False
        assert "unknown" in (call.error_message or "")
        assert seen[-1].settled is False
        assert not late.is_set()
    finally:
        release.set()
    await asyncio.wait_for(late.wait(), 30)
    end = seen[-1]
    assert end.ok is True and end.settled is True and end.seq == call.seq
    assert end.error_message is None and end.result_text == '"charged o1"'
    # The result's audit holds the same record: it now says how the call ended.
    assert result.calls[0].ok is True and result.calls[0].settled is True


async def test_cancel_with_calls_side_by_side_of_both_kinds() -> None:
    cancel = asyncio.Event()
    release = threading.Event()
    on_thread = threading.Event()
    in_task = asyncio.Event()
    saw: list[str] = []
    ends: dict[str, Any] = {}
    done = asyncio.Event()

    def sync_wait() -> str:
        on_thread.set()
        assert release.wait(120)
        return "sync done"

    async def async_wait() -> str:
        in_task.set()
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            saw.append("cancelled")
            raise
        return "async done"

    def on_call(call: CallRecord) -> None:
        if call.ok is not None:
            ends[call.path] = call
            if call.path == "h.sync_wait":
                done.set()

    job = asyncio.ensure_future(
        run(
            "return await Promise.all([h.sync_wait(), h.async_wait()])",
            {"h": {"sync_wait": sync_wait, "async_wait": async_wait}},
            cancel=cancel,
            limits=LONG_GRACE,
            on_call=on_call,
        )
    )
    await asyncio.wait_for(in_task.wait(), 10)
    await asyncio.to_thread(on_thread.wait, 10)
    cancel.set()
    try:
        result = await asyncio.wait_for(job, BOUND_S)
        by_path = {c.path: c for c in result.calls}
        assert saw == ["cancelled"]
        assert by_path["h.async_wait"].error_code == "RUN_ABORTED"
        assert by_path["h.sync_wait"].settled is False
    finally:
        release.set()
    await asyncio.wait_for(done.wait(), 30)
    assert ends["h.sync_wait"].ok is True and ends["h.sync_wait"].settled is True


async def test_an_async_call_that_finishes_on_cancel_keeps_its_real_end() -> None:
    """Cancellation the Python way: a host function may catch it and finish."""
    cancel = asyncio.Event()
    started = asyncio.Event()

    async def tidy() -> str:
        started.set()
        try:
            await asyncio.sleep(600)
        except asyncio.CancelledError:
            return "rolled back"
        return "finished"

    job = asyncio.ensure_future(
        run("await h.tidy()", {"h": {"tidy": tidy}}, cancel=cancel, limits=LONG_GRACE)
    )
    await asyncio.wait_for(started.wait(), 10)
    cancel.set()
    result = await asyncio.wait_for(job, BOUND_S)
    assert result.error is not None and result.error.code == "RUN_ABORTED"
    (call,) = result.calls
    assert call.ok is True and call.result_text == '"rolled back"'


async def test_a_timeout_still_gives_calls_in_flight_their_grace() -> None:
    """Unlike cancel: the deadline waits (up to the grace) for a call in flight."""
    finished: list[str] = []

    async def slow() -> str:
        ctx = get_host_function_context()
        await ctx.cancelled.wait()  # the deadline passed
        await asyncio.sleep(0.05)
        finished.append("done")
        return "done"

    result = await run(
        "await h.slow()",
        {"h": {"slow": slow}},
        limits=Limits(timeout_ms=300, host_call_grace_ms=30_000),
    )
    assert result.error is not None and result.error.code == "RUN_TIMEOUT"
    assert finished == ["done"]
    assert result.calls[0].ok is True


async def test_a_late_end_reaches_the_stored_history(tmp_path: Path) -> None:
    """What the IDE and the REPL keep: the run's history record says how the call ended."""
    from run_repl.host.loader import LoadedHost
    from run_repl.sandbox.session.host_functions import build_manifest
    from run_repl.workspace import open_workspace

    started = threading.Event()
    release = threading.Event()
    late = asyncio.Event()

    def blocked() -> str:
        started.set()
        assert release.wait(120)
        return "sent"

    functions = {"mail": {"send": blocked}}
    ws = open_workspace(None, data_dir_override=str(tmp_path / "data"))
    try:
        ws.host = LoadedHost("test", functions, build_manifest(functions))
        cancel = asyncio.Event()

        def on_call(call: CallRecord) -> None:
            if call.settled is True:
                late.set()

        job = asyncio.ensure_future(
            ws.run("await mail.send()", cancel=cancel, limits=LONG_GRACE, on_call=on_call)
        )
        await asyncio.to_thread(started.wait, 10)
        cancel.set()
        try:
            result = await asyncio.wait_for(job, BOUND_S)
            stored = ws.store.get_run(result.run_id)
            assert stored is not None
            assert stored.envelope["calls"][0]["settled"] is False
        finally:
            release.set()
        await asyncio.wait_for(late.wait(), 30)
        for _ in range(200):  # the history is written off the loop, after on_call
            stored = ws.store.get_run(result.run_id)
            if stored is not None and stored.envelope["calls"][0].get("ok") is True:
                break
            await asyncio.sleep(0.05)
        assert stored is not None
        call = stored.envelope["calls"][0]
        assert call["ok"] is True and call["settled"] is True
    finally:
        ws.close()
