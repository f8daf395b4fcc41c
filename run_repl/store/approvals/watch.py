"""Hearing of approval changes: one thread per store tells every waiter.

A waiter is a thread (`wait`) or a callback (`watch`: for coroutines, which must
not hold a thread each). `ApprovalWatch` keeps them and the last version seen;
how a change is heard is the subclass's: PostgreSQL's listener is woken by
NOTIFY (`backends/postgres_listener.py`); SQLite's `PollingWatch` below reads the
counter every `POLL_S`, only while someone waits, and calls back only when it
moved. So any number of inboxes and MCP calls waiting on one SQLite store cost
one read per interval, and an idle IDE's event loop is not woken to ask.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..store_error import StoreError

POLL_S = 0.05  # how often a store that cannot push changes is read while someone waits
SWEEP_S = 1.0  # how often, while someone waits, lapsed resumes are settled (and so heard)


class ApprovalWatch:
    """The waiters on one store's approval change counter, and its last value."""

    def __init__(self, name: str, join_s: float = 1.0) -> None:
        self._name = name
        self._join_s = join_s  # how long close() waits for the thread
        self._cond = threading.Condition()
        self._version: int | None = None  # None: not known (yet, or since a loss)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchers: dict[int, tuple[Callable[[int], None], Callable[[str], None] | None]] = {}
        self._next_watcher = 0
        self._waiting = 0  # threads inside wait()
        self._failures = 0  # reads that failed so far (waiters raise on a new one)
        self.last_error: str | None = None
        # The store's `settle_lapsed`: a resume that died after its guard writes nothing,
        # so while anyone waits this thread settles such batches (the change is then heard).
        self.sweep: Callable[[], object] | None = None
        self._swept = time.monotonic()

    def _start(self) -> None:
        with self._cond:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def _joined(self) -> None:
        """Someone started waiting (a subclass that reads on demand reads now)."""

    def wait(self, since: int, timeout_s: float) -> int:
        """The counter once it is past `since`, or `since` when `timeout_s` passes first;
        StoreError if reading it fails meanwhile (a watch that reports failures)."""
        self._start()
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            self._waiting += 1
            failures = self._failures
            self._joined()
            try:
                while True:
                    if self._version is not None and self._version > since:
                        return self._version
                    if self._failures != failures:
                        raise StoreError(self.last_error or "The approvals could not be read.")
                    left = deadline - time.monotonic()
                    if left <= 0 or self._stop.is_set():
                        return since
                    self._cond.wait(left)
            finally:
                self._waiting -= 1

    def watch(
        self, callback: Callable[[int], None], on_error: Callable[[str], None] | None = None
    ) -> Callable[[], None]:
        """Call `callback(version)` from the watching thread on every change (and now,
        with the version known, if any), and `on_error(text)` when reading fails (a
        watch that reports failures). Returns the function that stops it."""
        self._start()
        with self._cond:
            token = self._next_watcher
            self._next_watcher += 1
            self._watchers[token] = (callback, on_error)
            known = self._version
            self._joined()
        if known is not None:
            callback(known)

        def stop() -> None:
            with self._cond:
                self._watchers.pop(token, None)

        return stop

    def _seen(self, version: int | None) -> None:
        with self._cond:
            if version is None:
                self._version = None
            else:
                self._version = max(version, self._version or 0)
            self._cond.notify_all()
            current = self._version
            watchers = [callback for callback, _ in self._watchers.values()]
        if current is not None:
            for callback in watchers:
                try:
                    callback(current)
                except Exception:  # a waiter that went away must not stop the watching
                    pass

    def _failed(self, text: str) -> None:
        """Reading the counter failed: every waiter hears it (the version is kept)."""
        with self._cond:
            self.last_error = text
            self._failures += 1
            self._cond.notify_all()
            told = [on_error for _, on_error in self._watchers.values() if on_error is not None]
        for on_error in told:
            try:
                on_error(text)
            except Exception:
                pass

    def _sweep_due(self) -> None:
        """Settle lapsed resumes every SWEEP_S while anyone waits (on the watching thread)."""
        if self.sweep is None or not (self._watchers or self._waiting):
            return
        if time.monotonic() - self._swept < SWEEP_S:
            return
        self._swept = time.monotonic()
        try:
            self.sweep()
        except Exception:  # a failed sweep is tried again next time; reading goes on
            pass

    def _loop(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self._join_s)


class PollingWatch(ApprovalWatch):
    """For a store that cannot push (SQLite): reads the counter every `interval_s`
    while anyone waits, at once when someone starts to, and sleeps otherwise."""

    def __init__(
        self,
        read_version: Callable[[], int],
        interval_s: float = POLL_S,
        name: str = "run-repl-poll",
    ) -> None:
        super().__init__(name)
        self._read_version = read_version
        self._interval_s = interval_s
        self._read_now = False

    def _joined(self) -> None:  # called holding the condition
        self._read_now = True
        self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                # Sleep while nobody waits; a new waiter wakes this at once.
                while not (self._watchers or self._waiting) and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                self._read_now = False
                known = self._version
            try:
                version = int(self._read_version())
            except Exception as exc:  # the thread must outlive any one read
                # Closed, busy or damaged: every waiter hears it now (an inbox says so);
                # the version is kept, and read again next time.
                self._failed(str(exc) if isinstance(exc, StoreError) else repr(exc))
            else:
                self.last_error = None
                if version != known:
                    self._seen(version)
            self._sweep_due()
            with self._cond:
                if not self._read_now and not self._stop.is_set():
                    self._cond.wait(self._interval_s)


__all__ = ["POLL_S", "SWEEP_S", "ApprovalWatch", "PollingWatch"]
