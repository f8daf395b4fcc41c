"""The parent enforces the limits the guest runtime enforces, in case it does not.

The worker runs QuickJS, which may have bugs; if the guest's own checks are
broken, the pipe to the parent is the door left. These tests stand in a worker
that lies: it is told limits far beyond the run's (so it sends whatever the
snippet asks), or its frames are repeated on the way. The parent must then
stop the run with the limit's own code, and run nothing past the limit.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from run_repl import Limits, run
from run_repl.sandbox.process import frames
from run_repl.sandbox.session.session import RunSession

HUGE = 1 << 40


@pytest.fixture
def lying_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers of this test ignore the run's limits: their job says there are none."""
    real = RunSession._job

    def job_without_limits(self: RunSession) -> dict[str, Any]:
        job = real(self)
        job["max_argument_bytes"] = job["max_argument_bytes_per_run"] = HUGE
        guest = json.loads(job["guest"])
        guest.update(
            maxHostCalls=10**9,
            maxInFlight=10**9,
            maxArgumentBytes=HUGE,
            maxArgumentBytesPerRun=HUGE,
        )
        job["guest"] = json.dumps(guest)
        return job

    monkeypatch.setattr(RunSession, "_job", job_without_limits)


@pytest.mark.usefixtures("lying_worker")
async def test_the_parent_counts_host_calls() -> None:
    ran: list[int] = []

    def f(i: int) -> int:
        ran.append(i)
        return i

    result = await run(
        "for (let i = 0; i < 50; i++) await h.f(i); return 'all'",
        {"h": {"f": f}},
        limits=Limits(max_host_calls=5),
    )
    assert result.error is not None and result.error.code == "RUN_BRIDGE_LIMIT"
    assert "max_host_calls" in result.error.message
    assert result.error.next_actions
    assert ran == [0, 1, 2, 3, 4]
    sixth = result.calls[-1]
    assert sixth.seq == 6 and sixth.ok is False and sixth.error_code == "RUN_BRIDGE_LIMIT"


@pytest.mark.usefixtures("lying_worker")
async def test_the_parent_counts_calls_in_flight() -> None:
    started: list[int] = []

    async def slow(i: int) -> int:
        started.append(i)
        await asyncio.sleep(0.05)
        return i

    result = await run(
        "return await Promise.all([...Array(10).keys()].map((i) => h.slow(i)))",
        {"h": {"slow": slow}},
        limits=Limits(max_host_calls_in_flight=2),
    )
    assert result.error is not None and result.error.code == "RUN_BRIDGE_LIMIT"
    assert "max_host_calls_in_flight" in result.error.message
    assert len(started) == 2


@pytest.mark.usefixtures("lying_worker")
async def test_the_parent_bounds_one_call_s_arguments() -> None:
    got: list[int] = []

    def take(text: str) -> int:
        got.append(len(text))
        return len(text)

    result = await run(
        "await h.take('ok'); return await h.take('x'.repeat(3_000_000))",
        {"h": {"take": take}},
        limits=Limits(max_host_argument_bytes=1 << 20),
    )
    assert result.error is not None and result.error.code == "RUN_ARGUMENT_TOO_LARGE"
    assert "max_host_argument_bytes" in result.error.message
    assert got == [2]  # the large one never ran
    assert result.calls[-1].ok is False
    assert result.calls[-1].error_code == "RUN_ARGUMENT_TOO_LARGE"


@pytest.mark.usefixtures("lying_worker")
async def test_the_parent_bounds_a_run_s_arguments() -> None:
    got: list[int] = []

    def take(text: str) -> int:
        got.append(len(text))
        return len(text)

    result = await run(
        "for (let i = 0; i < 5; i++) await h.take('y'.repeat(1500)); return 'all'",
        {"h": {"take": take}},
        limits=Limits(max_host_argument_bytes=2048, max_host_argument_bytes_per_run=4096),
    )
    assert result.error is not None and result.error.code == "RUN_ARGUMENT_TOO_LARGE"
    assert "max_host_argument_bytes_per_run" in result.error.message
    assert got == [1500, 1500]


@pytest.mark.usefixtures("lying_worker")
async def test_the_parent_bounds_results_whatever_the_worker_says() -> None:
    def big() -> str:
        return "z" * 100_000

    result = await run(
        "try { await h.big() } catch (e) { return e.code }",
        {"h": {"big": big}},
        limits=Limits(max_host_result_bytes=1024),
    )
    assert result.value == "RUN_HOST_RESULT_TOO_LARGE"


async def test_a_worker_that_repeats_a_call_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The red team's worker: each host call frame arrives many times over."""
    real_feed = frames.FrameReader.feed

    def repeating_feed(self: frames.FrameReader, data: bytes) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for kind, payload in real_feed(self, data):
            out.extend([(kind, payload)] * (300 if kind == frames.Kind.HOST_CALL else 1))
        return out

    monkeypatch.setattr(frames.FrameReader, "feed", repeating_feed)
    ran: list[int] = []

    def f(i: int) -> int:
        ran.append(i)
        return i

    result = await run(
        "await h.f(1); return 'done'",
        {"h": {"f": f}},
        limits=Limits(max_host_calls=5, max_host_calls_in_flight=2),
    )
    assert result.status == "error"
    assert result.error is not None
    assert result.error.code in ("RUN_BRIDGE_LIMIT", "RUN_WORKER_CRASHED")
    assert ran == [1]


async def test_a_worker_that_sends_one_call_twice_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_feed = frames.FrameReader.feed

    def twice(self: frames.FrameReader, data: bytes) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for kind, payload in real_feed(self, data):
            out.extend([(kind, payload)] * (2 if kind == frames.Kind.HOST_CALL else 1))
        return out

    monkeypatch.setattr(frames.FrameReader, "feed", twice)
    ran: list[int] = []

    def f(i: int) -> int:
        ran.append(i)
        return i

    result = await run("await h.f(1); return 'done'", {"h": {"f": f}})
    assert result.error is not None and result.error.code == "RUN_WORKER_CRASHED"
    assert "twice" in result.error.message
    assert ran == [1]


async def test_a_well_behaved_worker_refuses_in_the_guest_as_before() -> None:
    """The parent's checks never fire first: the snippet can still catch the guest's refusal."""

    def f() -> int:
        return 1

    result = await run(
        "let n = 0; for (let i = 0; i < 8; i++) { try { await h.f(); n++ } catch (e) { return [n, e.code] } }",
        {"h": {"f": f}},
        limits=Limits(max_host_calls=5),
    )
    assert result.value == [5, "RUN_BRIDGE_LIMIT"]
    in_flight = await run(
        "const r = await Promise.allSettled([h.f(), h.f(), h.f()]);"
        " return r.map((x) => x.status === 'rejected' ? x.reason.code : x.value)",
        {"h": {"f": f}},
        limits=Limits(max_host_calls_in_flight=2),
    )
    assert in_flight.value == [1, 1, "RUN_BRIDGE_LIMIT"]
    size = await run(
        "try { await h.g('x'.repeat(5000)) } catch (e) { return e.code }",
        {"h": {"g": lambda s: 1}},
        limits=Limits(max_host_argument_bytes=1024),
    )
    assert size.value == "RUN_ARGUMENT_TOO_LARGE"
