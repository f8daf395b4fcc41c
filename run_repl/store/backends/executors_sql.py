"""The executor registry (`store/executors.py`) over SQL, written once for SQLite and
PostgreSQL.

A backend supplies its dialect, its clock as an SQL expression (PostgreSQL: the
server's; SQLite: the file's machine, read by SQLite itself) and one transaction
(`_executor_tx`); every time written or compared is that clock's, in the statement
itself, so no machine's own clock enters a liveness check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..executors import KEPT_S, LIVE_S, Executor, ordered
from ._sql import Dialect

T = TypeVar("T")

_COLUMNS = ("id", "host", "functions", "label", "kind", "started_at", "seen_at")


class SqlExecutors:
    """register/beat/leave/list over the `executors` table."""

    _executor_dialect: Dialect
    _executor_clock: str  # the store's clock in seconds since the epoch, as SQL

    def _executor_tx(self, work: Callable[[Any], T]) -> T:
        """`work(connection)` in one transaction; its result."""
        raise NotImplementedError

    def _exp(self, name: str) -> str:
        return self._executor_dialect.p(name)

    def _executors_where(self, where: str) -> str:
        now = self._executor_clock
        return f"SELECT {', '.join(_COLUMNS)}, {now} - seen_at AS age FROM executors WHERE {where}"

    @staticmethod
    def _executor_of(row: Sequence[Any]) -> Executor:
        data = dict(zip(_COLUMNS, row[: len(_COLUMNS)], strict=True))
        age = max(0.0, float(row[len(_COLUMNS)]))
        return Executor(**data, live=age < LIVE_S, age_s=age)

    def register_executor(
        self, executor_id: str, *, host: str, functions: str, label: str, kind: str
    ) -> Executor:
        now, p, text = self._executor_clock, self._exp, self._executor_dialect.text
        args = {
            "id": executor_id,
            "host": text(host),
            "functions": functions,
            "label": text(label),
            "kind": kind,
            "kept": KEPT_S,
        }

        def work(conn: Any) -> Executor:
            conn.execute(f"DELETE FROM executors WHERE seen_at < {now} - {p('kept')}", args)
            conn.execute(
                f"INSERT INTO executors ({', '.join(_COLUMNS)}) VALUES ({p('id')}, {p('host')}, "
                f"{p('functions')}, {p('label')}, {p('kind')}, {now}, {now}) "
                "ON CONFLICT (id) DO UPDATE SET host = excluded.host, functions = "
                "excluded.functions, label = excluded.label, kind = excluded.kind, "
                "seen_at = excluded.seen_at",
                args,
            )
            row = conn.execute(self._executors_where(f"id = {p('id')}"), args).fetchone()
            return self._executor_of(row)

        return self._executor_tx(work)

    def beat_executor(self, executor_id: str, *, functions: str | None = None) -> bool:
        now, p = self._executor_clock, self._exp
        args = {"id": executor_id, "functions": functions}

        def work(conn: Any) -> bool:
            done = conn.execute(
                f"UPDATE executors SET seen_at = {now}, "
                f"functions = COALESCE({p('functions')}, functions) WHERE id = {p('id')}",
                args,
            )
            return bool(done.rowcount)

        return self._executor_tx(work)

    def leave_executor(self, executor_id: str) -> None:
        self._executor_tx(
            lambda conn: conn.execute(
                f"DELETE FROM executors WHERE id = {self._exp('id')}", {"id": executor_id}
            )
        )

    def list_executors(self, host: str | None = None) -> list[Executor]:
        where = "1 = 1" if host is None else f"host = {self._exp('host')}"
        args = {"host": self._executor_dialect.text(host)} if host is not None else {}

        def work(conn: Any) -> list[Executor]:
            return [
                self._executor_of(r)
                for r in conn.execute(self._executors_where(where), args).fetchall()
            ]

        return ordered(self._executor_tx(work))

    def get_executor(self, executor_id: str) -> Executor | None:
        def work(conn: Any) -> Executor | None:
            row = conn.execute(
                self._executors_where(f"id = {self._exp('id')}"), {"id": executor_id}
            )
            found = row.fetchone()
            return self._executor_of(found) if found is not None else None

        return self._executor_tx(work)


__all__ = ["SqlExecutors"]
