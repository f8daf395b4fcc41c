"""The threads that sync host functions run on, off the event loop.

Calls start in the order they come, each woken thread taking the oldest
waiting call, as in a `ThreadPoolExecutor`; but the thread woken is the one
that went idle last: it has slept least and its caches are warm, so waking it
costs less than waking the thread idle longest, as the executor does
(`bench/host_threads.py`: a loop -> thread -> loop trip took 50-59 us here
against 61-66 us; inside the engine, the two hops of a sync call 17 us
against 23-41). At most MAX_THREADS calls run at once; later ones wait for
the next thread to come free. A thread idle for IDLE_S ends.

When the interpreter exits, a call already running finishes and those
waiting still run, as with the executor: a started host call (perhaps an
approved one) is never cut in half by the exit.
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
from collections import deque
from collections.abc import Callable

MAX_THREADS = 128
IDLE_S = 60.0

Work = Callable[[], None]


class _Slot:
    """The lock one idle thread sleeps on until there is work."""

    __slots__ = ("wake",)

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()  # held: the thread sleeps on it until woken


class HostThreads:
    def __init__(self, max_threads: int = MAX_THREADS, idle_s: float = IDLE_S) -> None:
        if max_threads < 1:
            raise ValueError("max_threads must be at least 1")
        self.max_threads = max_threads
        self.idle_s = idle_s
        self._mutex = threading.Lock()
        self._idle: list[_Slot] = []  # a stack: the last to go idle is woken first
        self._work: deque[Work] = deque()  # calls not started yet, oldest first
        self._threads = 0
        self._closing = False
        self._names = itertools.count(1)
        try:
            # Before the interpreter joins its threads: the idle ones must end.
            threading._register_atexit(self._close)  # type: ignore[attr-defined]  # private: runs before threads are joined
        except (AttributeError, RuntimeError):
            self._closing = True  # the interpreter is already exiting

    @property
    def threads(self) -> int:
        """Threads alive now, busy or idle."""
        return self._threads

    @property
    def idle(self) -> int:
        """Threads waiting for a call."""
        return len(self._idle)

    def submit(self, work: Work) -> None:
        """Run `work` on a thread: it must not raise (what it raises is printed)."""
        with self._mutex:
            if self._closing:
                raise RuntimeError("the interpreter is exiting: no new host call can start")
            self._work.append(work)
            if self._idle:
                self._idle.pop().wake.release()
                return
            if self._threads >= self.max_threads:
                return  # it waits for the next thread to come free
            self._threads += 1
        try:
            threading.Thread(
                target=self._serve, args=(_Slot(),), name=f"run-repl-host-{next(self._names)}"
            ).start()
        except BaseException:
            with self._mutex:
                self._threads -= 1
            raise

    def _serve(self, slot: _Slot) -> None:
        while True:
            with self._mutex:
                work = self._work.popleft() if self._work else None
                if work is None:
                    if self._closing:
                        self._threads -= 1
                        return
                    self._idle.append(slot)
            if work is not None:
                try:
                    work()
                except BaseException:
                    traceback.print_exc()
                continue
            if slot.wake.acquire(timeout=self.idle_s):
                continue
            with self._mutex:
                if slot in self._idle:  # nobody woke it meanwhile: it ends
                    self._idle.remove(slot)
                    self._threads -= 1
                    return
            slot.wake.acquire()  # woken as the wait ended: take that wake-up

    def _close(self) -> None:
        with self._mutex:
            self._closing = True
            idle, self._idle = self._idle, []
        for slot in idle:
            slot.wake.release()


_THREADS: HostThreads | None = None
_MAKING = threading.Lock()


def host_threads() -> HostThreads:
    """The process's threads for sync host functions (made on first use)."""
    global _THREADS
    if _THREADS is None:
        with _MAKING:
            if _THREADS is None:
                _THREADS = HostThreads()
    return _THREADS


def _forget_after_fork() -> None:
    # A forked child has none of the parent's threads: it makes its own.
    global _THREADS
    _THREADS = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
