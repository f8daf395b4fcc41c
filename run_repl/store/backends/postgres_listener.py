"""Live approval changes from a PostgreSQL server: one LISTEN connection per store.

Every approval write bumps one of the schema's change counters (a shard) and sends a
NOTIFY in the same transaction, so a notification arrives exactly when a change is
committed. Its payload is the shard and its new value (`3:1207`): the listener keeps
every shard's latest value, read once when it starts listening, and their sum is the
version (`SUM(version)`, what `approvals_version` reads) without a read per change.
A payload it cannot parse (a release that sent none) makes it read the counters again.
One thread per store listens and wakes every waiter (`ApprovalWatch`: an IDE's inbox,
each MCP call waiting for a decision), so a thousand waiters cost one connection. When
the connection is lost it reconnects and reads the counters again: nothing that
happened meanwhile is missed, only seen late.
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
        read_shards: Callable[[psycopg.Connection], dict[int, int]],
        name: str = "run-repl-listen",
    ) -> None:
        super().__init__(name, join_s=POLL_S * 4)
        self._connect = connect
        self._channel = channel
        self._read_shards = read_shards
        self._shards: dict[int, int] = {}

    def _heard(self, payload: str) -> bool:
        """Take one notification's shard value; False if it names none (read them all)."""
        shard, sep, value = payload.partition(":")
        try:
            key, seen = int(shard), int(value)
        except ValueError:
            return False
        if not sep or key not in self._shards:
            return False  # a shard this listener never read: the counters changed shape
        self._shards[key] = max(self._shards[key], seen)  # counters only grow
        return True

    def _loop(self) -> None:
        delay = 0.1
        while not self._stop.is_set():
            conn: psycopg.Connection | None = None
            try:
                conn = self._connect()
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                # Read after LISTEN: a change committed in between is in both, never in
                # neither (and max() keeps the later of the two).
                self._shards = self._read_shards(conn)
                self._seen(sum(self._shards.values()))
                self.last_error = None
                delay = 0.1
                while not self._stop.is_set():
                    heard = False
                    unread = False
                    for note in conn.notifies(timeout=POLL_S, stop_after=1):
                        heard = True
                        unread = not self._heard(note.payload) or unread
                    if unread:
                        self._shards = self._read_shards(conn)
                    if heard:
                        self._seen(sum(self._shards.values()))
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
