"""A sandbox process that never starts or never answers is named as such, and the
pool recovers: a stopped (SIGSTOP) template is replaced before the next run.

Without this, a run whose worker never started ended RUN_TIMEOUT "passed its
deadline", as if the snippet had been slow, though nothing of it ran.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from run_repl import Limits
from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session.pool import WorkerPool, WorkerProcess, process_stopped

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow


def _wait_stopped(pid: int) -> None:
    deadline = time.monotonic() + 10
    while not process_stopped(pid):
        assert time.monotonic() < deadline, f"{pid} never stopped"
        time.sleep(0.005)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    made = WorkerPool()
    yield made
    made.close()


async def test_a_stopped_template_is_replaced_and_runs_go_on(pool: WorkerPool) -> None:
    runner = Runner(pool=pool)
    assert (await runner.run("1 + 1")).value == 2
    stopped = pool.template_pid
    assert stopped is not None
    os.kill(stopped, signal.SIGSTOP)
    _wait_stopped(stopped)
    try:
        for n in range(3):
            result = await runner.run(f"{n} + 1", limits=Limits(timeout_ms=10_000))
            assert result.status == "ok", result.error
            assert result.value == n + 1
        assert pool.template_pid not in (None, stopped)
        deadline = time.monotonic() + 10
        while not _gone(stopped):  # killed (it was stopped), and reaped
            assert time.monotonic() < deadline, "the stopped template was left behind"
            time.sleep(0.01)
    finally:
        if not _gone(stopped):
            os.kill(stopped, signal.SIGKILL)


class _TemplateStoppedAtTake(WorkerPool):
    """Hands out a worker asked of a template stopped just before: it never starts."""

    def __init__(self) -> None:
        super().__init__(spares=0)
        self.stop_next = True
        self.stopped_pid = 0

    def take(self) -> WorkerProcess:
        if not self.stop_next:
            return super().take()
        self.stop_next = False
        with self._lock:
            template = self._live_template()
            assert template is not None and template.ready.wait(30)
            self.stopped_pid = template.pid
            os.kill(template.pid, signal.SIGSTOP)
            _wait_stopped(template.pid)
            return self._fork(template)


async def test_a_worker_that_never_started_says_so_and_the_next_run_works() -> None:
    pool = _TemplateStoppedAtTake()
    try:
        runner = Runner(pool=pool)
        result = await runner.run("1 + 1", limits=Limits(timeout_ms=1500))
        assert result.error is not None
        assert result.error.code == "RUN_WORKER_CRASHED"
        message = result.error.message
        assert "did not start" in message and "stopped" in message, message
        assert "deadline" not in message
        (action,) = result.error.next_actions
        assert action.type == "run_again" and "fresh" in (action.why or "")
        again = await runner.run("2 + 2", limits=Limits(timeout_ms=10_000))
        assert again.value == 4, again.error
        assert pool.template_pid != pool.stopped_pid
    finally:
        pool.close()
        if pool.stopped_pid and not _gone(pool.stopped_pid):
            os.kill(pool.stopped_pid, signal.SIGKILL)


class _WorkerStoppedAtTake(WorkerPool):
    """Hands out a worker that is stopped as soon as it has a pid."""

    def __init__(self) -> None:
        super().__init__(spares=0)

    def take(self) -> WorkerProcess:
        worker = super().take()
        deadline = time.monotonic() + 30
        while not (pid := worker.pid):
            assert time.monotonic() < deadline
        os.kill(pid, signal.SIGSTOP)
        _wait_stopped(pid)
        return worker


async def test_a_stopped_worker_is_named_not_a_timeout() -> None:
    pool = _WorkerStoppedAtTake()
    try:
        result = await Runner(pool=pool).run("1 + 1", limits=Limits(timeout_ms=800))
        assert result.error is not None and result.error.code == "RUN_WORKER_CRASHED"
        assert "stopped" in result.error.message
        assert result.error.next_actions[0].type == "run_again"
    finally:
        pool.close()


async def test_a_slow_snippet_is_still_a_timeout(pool: WorkerPool) -> None:
    result = await Runner(pool=pool).run("while (true) {}", limits=Limits(timeout_ms=1200))
    assert result.error is not None and result.error.code == "RUN_TIMEOUT"
