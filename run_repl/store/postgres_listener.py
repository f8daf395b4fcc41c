"""Live approval changes from a PostgreSQL server: one LISTEN connection per store.

Every approval write bumps the schema's change counter and sends a NOTIFY in
the same transaction, so a notification arrives exactly when a change is
committed; the listener then reads the counter (committed by then). One thread per store listens
and wakes every waiting thread (an IDE's inbox, each MCP call waiting for a
decision), so a thousand waiters cost one connection. When the connection
is lost it reconnects and reads the counter again: nothing that happened
meanwhile is missed, only seen late.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg
from psycopg import sql

POLL_S = 0.25  # how often the listening thread looks up from its socket (to stop)
RETRY_MAX_S = 2.0  # the longest wait between two attempts to listen again


class ApprovalListener:
    """Waits for the approvals' change counter to pass a value, across processes."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        channel: str,
        read_version: Callable[[psycopg.Connection], int],
        name: str = "run-repl-listen",
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._read_version = read_version
        self._name = name
        self._cond = threading.Condition()
        self._version: int | None = None  # None: not listening (yet, or since a loss)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchers: dict[int, Callable[[int], None]] = {}
        self._next_watcher = 0
        self.last_error: str | None = None

    def _start(self) -> None:
        with self._cond:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def wait(self, since: int, timeout_s: float) -> int:
        """The counter once it is past `since`, or `since` when `timeout_s` passes first."""
        self._start()
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while True:
                if self._version is not None and self._version > since:
                    return self._version
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return since
                self._cond.wait(left)

    def watch(self, callback: Callable[[int], None]) -> Callable[[], None]:
        """Call `callback(version)` from the listening thread on every change (and now,
        with the version known, if any): for waiters that must not hold a thread each,
        such as coroutines. Returns the function that stops it."""
        self._start()
        with self._cond:
            token = self._next_watcher
            self._next_watcher += 1
            self._watchers[token] = callback
            known = self._version
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
            watchers = list(self._watchers.values())
        if current is not None:
            for callback in watchers:
                try:
                    callback(current)
                except Exception:  # a waiter that went away must not stop the listening
                    pass

    def _loop(self) -> None:
        delay = 0.1
        while not self._stop.is_set():
            conn: psycopg.Connection | None = None
            try:
                conn = self._connect()
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                # Read after LISTEN: a change committed in between is in both, never in neither.
                self._seen(self._read_version(conn))
                self.last_error = None
                delay = 0.1
                while not self._stop.is_set():
                    # A notification says "changed"; the version is read after it (the
                    # change is committed by then), once for all that came together.
                    heard = False
                    for _ in conn.notifies(timeout=POLL_S, stop_after=1):
                        heard = True
                    if heard:
                        self._seen(self._read_version(conn))
            except psycopg.Error as exc:
                self.last_error = str(exc)
                self._seen(None)
                self._stop.wait(delay)
                delay = min(delay * 2, RETRY_MAX_S)
            finally:
                if conn is not None:
                    try:
                        conn.close()
                    except psycopg.Error:
                        pass

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=POLL_S * 4)


__all__ = ["ApprovalListener"]
