"""A runner's cap on runs in flight, with a queue for the runs that may wait.

    slots = RunSlots(4)
    if not await slots.take(queue_s=0):   # a new run: refused at once when all are taken
        ...RUN_BUSY...
    try: ...
    finally: slots.give()

A run that may wait (`queue_s > 0`: an executor's resume of a decision a person
made, who is waiting for its result) queues for the next free slot, first come first
served, and while any such run waits, the runs that may not wait are refused: a
freed slot goes to the queue, so a resume is never starved by new runs arriving on a
full runner. A slot is handed to the waiter under the lock, so one freed slot admits
one run; a waiter cancelled after it was handed one gives it back.

Thread-safe, and the waiters may sit on different event loops (a runner is shared).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from dataclasses import dataclass, field


@dataclass
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = field(default=False)


class RunSlots:
    """`limit` runs at once; `take` one before a run, `give` it back after."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._taken = 0
        self._queue: collections.deque[_Waiter] = collections.deque()
        self._lock = threading.Lock()

    @property
    def in_flight(self) -> int:
        return self._taken

    @property
    def waiting(self) -> int:
        return len(self._queue)

    async def take(self, queue_s: float = 0.0) -> bool:
        """A slot: at once if one is free and nobody queues; else, with `queue_s > 0`,
        the next one freed within `queue_s` seconds. False: none (the run is busy)."""
        with self._lock:
            if self._taken < self.limit and not self._queue:
                self._taken += 1
                return True
            if queue_s <= 0:
                return False
            loop = asyncio.get_running_loop()
            waiter = _Waiter(loop, loop.create_future())
            self._queue.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), queue_s)
            return True
        except TimeoutError:
            # Handed a slot just as the wait ran out: it keeps it, and the run goes.
            return self._leave(waiter)
        except asyncio.CancelledError:
            if self._leave(waiter):
                self.give()  # handed one just as it was cancelled: to the next in line
            raise

    def _leave(self, waiter: _Waiter) -> bool:
        """Off the queue; whether it had been handed a slot meanwhile."""
        with self._lock:
            if not waiter.granted:
                with contextlib.suppress(ValueError):
                    self._queue.remove(waiter)
            return waiter.granted

    def give(self) -> None:
        """Give a slot back: to the first waiter in line, else to the free pool."""
        with self._lock:
            if self._queue:
                waiter = self._queue.popleft()
                waiter.granted = True  # the slot passes to it: _taken stays
                waiter.loop.call_soon_threadsafe(_settle, waiter.future)
                return
            self._taken -= 1


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


__all__ = ["RunSlots"]
