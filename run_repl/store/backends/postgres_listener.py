"""Live approval changes from a PostgreSQL server: one LISTEN connection per store.

Every approval write bumps the schema's change counter and sends a NOTIFY in
the same transaction, so a notification arrives exactly when a change is
committed; the listener then reads the counter (committed by then). One thread per
store listens and wakes every waiter (`ApprovalWatch`: an IDE's inbox, each MCP call
waiting for a decision), so a thousand waiters cost one connection. When the connection
is lost it reconnects and reads the counter again: nothing that happened
meanwhile is missed, only seen late.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg import sql

from ..approvals.watch import ApprovalWatch

POLL_S = 0.25  # how often the listening thread looks up from its socket (to stop)
RETRY_MAX_S = 2.0  # the longest wait between two attempts to listen again


class ApprovalListener(ApprovalWatch):
    """Waits for the approvals' change counter to pass a value, across processes."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        channel: str,
        read_version: Callable[[psycopg.Connection], int],
        name: str = "run-repl-listen",
    ) -> None:
        super().__init__(name, join_s=POLL_S * 4)
        self._connect = connect
        self._channel = channel
        self._read_version = read_version

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
                    self._sweep_due()
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


__all__ = ["ApprovalListener"]
