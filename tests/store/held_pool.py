"""A worker pool whose workers are stopped (SIGSTOP) as they are handed out: a resumed run
that has not reached its approved call yet, for as long as the test needs.

What a test of "before the guard" needs is a resume still on its way to the approved
call when the test acts. A spin at the top of the snippet gave that window for as long as
the spin lasted: the test raced it (a loaded machine could close it), and every run of the
snippet paid for it, the first one and the retry too. A stopped worker never gets there;
whatever ends the run (a cancel, the approver killed) kills it as it would a running one.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from run_repl.sandbox.session.pool import WorkerPool, WorkerProcess


class HeldPool(WorkerPool):
    """`held`: the workers handed out so far, each stopped before the run could use it;
    `on_held` is told of each one (a child process says so on its stdout)."""

    def __init__(self, on_held: Callable[[], object] | None = None) -> None:
        super().__init__(spares=0)  # no spare started ahead: each worker is stopped as taken
        self.held: list[WorkerProcess] = []
        self.on_held = on_held

    def take(self) -> WorkerProcess:
        worker = super().take()
        os.kill(_pid_of(worker), signal.SIGSTOP)
        self.held.append(worker)
        if self.on_held is not None:
            self.on_held()
        return worker


def _pid_of(worker: WorkerProcess, timeout: float = 60.0) -> int:
    """A forked worker's pid comes a moment after it is handed out (0 until then, and a
    signal to pid 0 would stop our own process group)."""
    deadline = time.monotonic() + timeout
    while not (pid := worker.pid):  # each look waits up to a second for the template
        assert worker.alive() and time.monotonic() < deadline, "the worker never started"
    return pid
