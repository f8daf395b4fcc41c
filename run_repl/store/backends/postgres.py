"""The team store on PostgreSQL: the SQLite store's protocols, shared by many machines.

    store = PostgresStore("postgresql://alice@db.internal/runrepl")   # schema run_repl

Values by item, the history with its byte budget, approvals with their
claims, spent continuations: the same rules as the SQLite store (the claim
rules are `ApprovalClaims`, written once), over a psycopg 3 connection pool.

A run's cost stays flat: its small value and logs (INLINE_VALUE_BYTES) live in
their own `results` rows, written with its history row in one statement that
also reads the budgets' running counters; a budget found over is brought down
to its low-water mark in a batch on the store's own thread, off the run's path.

Exactly once across machines:
- Each approval operation is one transaction that locks what it reads: an
  advisory lock per batch (taken in a fixed order, so two operations on one
  run never deadlock), then the rows `FOR UPDATE`. The clock claims are read
  against is the server's.
- An operation whose commit was sent but whose answer was lost with the
  connection is not guessed at: each records its answer under an id in the
  same transaction; after reconnecting, the retry waits for the lost
  transaction's lock, finds its answer and returns it, or, if it never
  committed, runs it again.
- Every approval write bumps a counter and NOTIFYs its new value on commit:
  `wait_approvals_change` wakes within milliseconds on every machine.

Bad days: the server down at open is a StoreError (`problem` "unreachable")
that names the server without its password; a connection lost mid-run is
waited for (`reconnect_s`) before a write gives up; a schema from a newer
run-repl is refused ("newer").
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import math
import random
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ...sandbox.wire.result_store import StoredItems
from ..approvals.claims import ApprovalClaims, ApprovalRows
from ..budgets import (
    DEFAULT_ENVELOPE_BYTES,
    DEFAULT_HISTORY_BYTES,
    DEFAULT_MAX_AGE_S,
    DEFAULT_MAX_BYTES,
    REFUSED,
    TOUCH_EVERY_S,
    low_water,
    over_budget,
)
from ..json_budget import dumps
from ..records import (
    REPLAY_GRANT,
    Applied,
    Claim,
    PendingApproval,
    Queued,
    RunKey,
    RunRecord,
    grant_key,
)
from ..store_error import StoreError
from ..store_url import check_url, mask, scrub
from ._sql import (
    APPROVAL_COLUMNS,
    OPEN_SQL,
    POSTGRES,
    aged_values_sql,
    approval_from_row,
    approval_insert,
    approval_params,
    approval_update,
    approvals_where,
    get_run_sql,
    inline_chunks,
    lapsed_sql,
    list_runs_sql,
    pg_text,
    renew_sql,
    run_from_row,
    run_row,
    set_resumed_as_sql,
    stored_items_from_row,
)
from .executors_sql import SqlExecutors
from .postgres_listener import ApprovalListener
from .postgres_schema import (
    CHANGE_SHARDS,
    COUNTER_SHARDS,
    DEFAULT_SCHEMA,
    SCHEMA_VERSION,
    advisory_key,
    changes_channel,
    check_schema_name,
    migrate,
    newer_schema,
    stored_version,
)

T = TypeVar("T")

DEFAULT_POOL_SIZE = 8
CONNECT_TIMEOUT_S = 5.0  # opening: how long a server may take to answer at all
RECONNECT_S = 30.0  # a write waits this long for a lost connection to come back
OUTAGE_WAIT_S = 2.0  # once the server was found gone, later calls wait only this long
POOL_WAIT_S = 2.0  # a pool that has no connection for this long is taken as reconnecting
# A pooled connection given back this recently is handed out again without a check (a
# round trip of its own before every statement, a tenth of a busy server's time): one
# lost meanwhile fails its call as a lost connection does, and the call is retried.
CHECKED_AFTER_S = 1.0
# A session whose client vanished mid-transaction is ended by the server after this,
# so its locks (and a retry waiting on them) are not held for hours.
IDLE_IN_TRANSACTION_S = 60
OPS_KEPT_S = 24 * 3600  # how long an approval operation's answer is kept for its retry
GRANT_KEPT_S = 24 * 3600  # a takeover's grant to spend a token again, if never used
_RETRYABLE = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)
_STORED_APPROVAL_COLUMNS = (*APPROVAL_COLUMNS, "source_exact")

# psycopg_pool logs every failed connection attempt as a warning; with no logging set
# up, Python would print those (with the server's address) on the user's terminal.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())


def _approval_params(a: PendingApproval) -> dict[str, Any]:
    data = approval_params(a, POSTGRES)
    # The resume replays the source byte for byte: keep it exactly when text cannot.
    data["source_exact"] = dumps(a.source) if data["source"] != a.source else None
    return data


EVICT_PAGE = 500  # rows an eviction reads at a time, oldest first


def _run_upsert(row: dict[str, Any]) -> sql.Composable:
    """A history row's upsert; `started_at` is how long ago, by the server's clock."""
    return sql.SQL("INSERT INTO runs ({}) VALUES ({}) ON CONFLICT (id) DO UPDATE SET {}").format(
        sql.SQL(", ").join(map(sql.Identifier, row)),
        sql.SQL(", ").join(
            sql.SQL(f"{_SERVER_NOW} - {{}}").format(sql.Placeholder(c))
            if c == "started_at"
            else sql.Placeholder(c)
            for c in row
        ),
        sql.SQL(", ").join(
            sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(c)) for c in row if c != "id"
        ),
    )


_STALE_CHUNKS = "stale AS (DELETE FROM result_chunks WHERE ref = ANY(%(refs)s))"
_RESULT_COLUMNS = (
    "ref",
    "kind",
    "path",
    "total",
    "chunk_items",
    "rest",
    "run_id",
    "bytes",
    "created_at",
    "used_at",
    "inline_chunks",
)


def _counter(conn: psycopg.Connection, name: str) -> int:
    """A running counter (the sum of its shards: a few rows, whatever the table's size)."""
    row = conn.execute(
        "SELECT COALESCE(SUM(value), 0) FROM store_counters WHERE name = %s", (name,)
    ).fetchone()
    return int(row[0]) if row else 0


_APPROVAL_INSERT = approval_insert(_STORED_APPROVAL_COLUMNS, POSTGRES)
_APPROVAL_UPDATE = approval_update(_STORED_APPROVAL_COLUMNS, POSTGRES)
_SERVER_NOW = "extract(epoch FROM clock_timestamp())::float8"
# The server's clock as the transaction began: stable, so a comparison with it can use
# an index (clock_timestamp() is volatile: read again for each row, a scan of the table).
_SERVER_NOW_STABLE = "extract(epoch FROM now())::float8"
# What the budgets need after a write, read by the write's own statement (which sees the
# tables as it began): the values' and the history's running counters, less the rows
# the write replaces (a retry's: the caller adds what it writes), and the values past
# their age.
_BUDGETS = sql.SQL(
    "SELECT (SELECT COALESCE(SUM(value), 0) FROM store_counters WHERE name = 'results_bytes') "
    "- (SELECT COALESCE(SUM(bytes), 0) FROM results WHERE ref = ANY(%(refs)s)), "
    "(SELECT COALESCE(SUM(value), 0) FROM store_counters WHERE name = 'runs_bytes') "
    "- (SELECT COALESCE(SUM(bytes), 0) FROM runs WHERE id = %(id)s), "
    f"ARRAY({aged_values_sql(f'{_SERVER_NOW_STABLE} - %(max_age)s')})"
)


def _answer_text(answer: Any) -> str:
    """An operation's answer as kept for its retry: what it decided, and the ids of the
    approvals it named (not the approvals themselves: a source can be 256 KiB)."""
    if answer is None:
        return dumps({"kind": "none"})
    if isinstance(answer, Claim):
        data = answer.model_dump(mode="json", exclude={"approvals"})
        return dumps({"kind": "Claim", "data": data, "ids": [a.id for a in answer.approvals]})
    if isinstance(answer, Queued):
        data = answer.model_dump(mode="json", exclude={"approvals"})
        return dumps({"kind": "Queued", "data": data, "ids": [a.id for a in answer.approvals]})
    if isinstance(answer, Applied):
        return dumps({"kind": "Applied", "data": {}, "ids": [a.id for a in answer.approvals]})
    if isinstance(answer, list):
        return dumps({"kind": "approvals", "ids": [a.id for a in answer]})
    raise TypeError(f"an approval operation answered {type(answer).__name__}")


def _answer_of(text: str, rows: Callable[[list[str]], list[PendingApproval]]) -> Any:
    """The answer kept by `_answer_text`, its approvals read again (`rows`: in order)."""
    stored = json.loads(text)
    if stored["kind"] == "none":
        return None
    approvals = rows(stored["ids"])
    if stored["kind"] == "approvals":
        return approvals
    kinds: dict[str, Any] = {"Claim": Claim, "Queued": Queued, "Applied": Applied}
    return kinds[stored["kind"]].model_validate({**stored["data"], "approvals": approvals})


def _in_order(conn: psycopg.Connection, ids: list[str]) -> list[PendingApproval]:
    with conn.cursor(row_factory=dict_row) as cur:
        found = {
            r["id"]: approval_from_row(r)
            for r in cur.execute("SELECT * FROM approvals WHERE id = ANY(%s)", (ids,)).fetchall()
        }
    return [found[i] for i in ids if i in found]


class _ConnectionLost(Exception):
    """Internal: the connection broke during an operation (its commit may have happened)."""

    def __init__(self, error: psycopg.Error) -> None:
        super().__init__(str(error))
        self.error = error


class _Rows(ApprovalRows):
    """The approvals table inside one transaction: rows locked as they are read,
    each batch behind an advisory lock taken before its rows."""

    def __init__(self, conn: psycopg.Connection, schema: str) -> None:
        self.conn = conn
        self.schema = schema
        self.locked: set[str] = set()
        self._now: float | None = None
        self._prefix = f"{schema}:batch:"
        self.wrote = False  # an operation that only read changes nothing anyone watches

    # A batch's advisory lock key, computed by the server, so every path takes a set of
    # batch locks in one order (by key): two operations on one run never deadlock.
    _KEY = "hashtextextended(%(prefix)s || batch, 0)"

    def _lock(self, batches: Iterable[str]) -> None:
        wanted = sorted(set(batches) - self.locked)
        if not wanted:
            return
        self.conn.execute(
            f"SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT {self._KEY} AS k "
            "FROM unnest(%(batches)s::text[]) AS batch ORDER BY k) AS keys",
            {"prefix": self._prefix, "batches": wanted},
        )
        self.locked.update(wanted)

    def _select(self, where: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        # The server's clock comes along, read once the rows are locked: `now()` uses it.
        with self.conn.cursor(row_factory=dict_row) as cur:
            cur.execute(
                f"SELECT *, {_SERVER_NOW} AS server_now FROM approvals WHERE {where} FOR UPDATE",
                args,
            )
            rows = cur.fetchall()
        if rows:
            self._now = float(rows[0]["server_now"])
        return rows

    def by_ids(self, ids: list[str]) -> dict[str, PendingApproval]:
        # Find their batches and lock them in one round trip, then read the rows.
        found = self.conn.execute(
            f"SELECT batch, pg_advisory_xact_lock(k) FROM (SELECT DISTINCT batch, {self._KEY} "
            "AS k FROM approvals WHERE id = ANY(%(ids)s) ORDER BY k) AS keys",
            {"prefix": self._prefix, "ids": ids},
        ).fetchall()
        self.locked.update(b for b, _ in found)
        rows = self._select("id = ANY(%s) ORDER BY id", (ids,))
        moved = {r["batch"] for r in rows} - self.locked
        if moved:  # moved to a new continuation while we waited: that batch's lock too
            self._lock(moved)
            rows = self._select("id = ANY(%s) ORDER BY id", (ids,))
        # Read by the server's clock (a claim's end is), never this machine's.
        return {r["id"]: approval_from_row(r, r["server_now"]) for r in rows}

    def of_batch(self, batch: str) -> list[PendingApproval]:
        self._lock([batch])
        rows = self._select("batch = %s ORDER BY created_at, id", (batch,))
        return [approval_from_row(r, r["server_now"]) for r in rows]

    def update(self, approvals: Iterable[PendingApproval]) -> None:
        params = [_approval_params(a) for a in approvals]
        if params:
            with self.conn.cursor() as cur:
                cur.executemany(_APPROVAL_UPDATE, params)
            self.wrote = True

    def insert(self, approvals: Iterable[PendingApproval]) -> None:
        params = [_approval_params(a) for a in approvals]
        if params:
            with self.conn.cursor() as cur:
                cur.executemany(_APPROVAL_INSERT, params)
            self.wrote = True

    def grant_replay(self, digest: str, claim_id: str) -> None:
        # consumed_by '' marks it unspent; the takeover's consume writes its own mark.
        self.conn.execute(
            "INSERT INTO consumed_continuations (digest, expires_at, consumed_at, consumed_by) "
            f"VALUES (%s, {_SERVER_NOW} + %s, {_SERVER_NOW}, '') ON CONFLICT (digest) DO NOTHING",
            (grant_key(claim_id, digest), GRANT_KEPT_S),
        )

    def now(self) -> float:
        """The server's clock as the last locking read saw it (else asked now)."""
        if self._now is None:
            row = self.conn.execute(f"SELECT {_SERVER_NOW}").fetchone()
            assert row is not None
            self._now = float(row[0])
        return self._now


class PostgresStore(ApprovalClaims, SqlExecutors):
    """Values, history, approvals and spent continuations in one PostgreSQL schema.

    Safe to share between threads (a pool of `pool_size` connections), processes
    and machines. `location` is the URL with its password masked."""

    durable = True
    _executor_dialect = POSTGRES
    _executor_clock = _SERVER_NOW  # the server's: every machine reads who is live alike

    def _executor_tx(self, work: Callable[[psycopg.Connection], T]) -> T:
        def run(conn: psycopg.Connection) -> T:
            with conn.transaction():
                return work(conn)

        return self._call(run)  # each operation is safe to run again after a lost commit

    def __init__(
        self,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        max_history_bytes: int = DEFAULT_HISTORY_BYTES,
        max_envelope_bytes: int = DEFAULT_ENVELOPE_BYTES,
        pool_size: int = DEFAULT_POOL_SIZE,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        reconnect_s: float = RECONNECT_S,
    ) -> None:
        self._url = check_url(url)
        self.schema = check_schema_name(schema)
        self.location = mask(self._url) + (
            "" if schema == DEFAULT_SCHEMA else f" (schema {schema})"
        )
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.max_history_bytes = max_history_bytes
        self.max_envelope_bytes = max_envelope_bytes
        self.reconnect_s = reconnect_s
        self._channel = changes_channel(schema)
        self._evictor: concurrent.futures.ThreadPoolExecutor | None = None
        self._evict_lock = threading.Lock()
        self._evict_queued = False
        self._spare: tuple[set[str], set[str]] = (set(), set())  # values, runs
        self._outage_since: float | None = None  # when a call last gave up waiting
        self._trouble = False  # a connection was lost: the pool may be reconnecting slowly
        self._closed = False
        self._kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(2, math.ceil(connect_timeout_s)),
            "application_name": "run-repl",
            # A server gone without a word (a cable, a VM) is noticed in about 25 s.
            "keepalives": 1,
            "keepalives_idle": 10,
            "keepalives_interval": 5,
            "keepalives_count": 3,
        }
        try:
            # One plain connection first: its error says why (refused, no such host,
            # bad password), where a pool would only time out.
            with psycopg.connect(self._url, **self._kwargs) as conn:
                self._configure(conn)
                self._ensure_schema(conn)
        except StoreError:
            raise
        except psycopg.Error as exc:
            raise self._error(exc, opening=True) from None
        self._given_back: weakref.WeakKeyDictionary[psycopg.Connection, float] = (
            weakref.WeakKeyDictionary()
        )
        self._pool: ConnectionPool = ConnectionPool(
            self._url,
            kwargs=self._kwargs,
            min_size=1,
            max_size=max(1, pool_size),
            open=False,
            configure=self._configure,
            check=self._check_idle,
            name=f"run-repl {schema}",
            timeout=reconnect_s,
        )
        try:
            self._pool.open(wait=True, timeout=max(connect_timeout_s, 1.0))
        except (PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise self._error(exc, opening=True) from None
        self._listener = ApprovalListener(
            self._listen_connection, self._channel, self._read_shards, f"run-repl-listen {schema}"
        )
        self._listener.sweep = self.settle_lapsed

    # ------------------------------------------------------------------ plumbing
    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        conn.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_S}s'")

    def _ensure_schema(self, conn: psycopg.Connection) -> None:
        version = stored_version(conn, self.schema)
        if version is not None and version > SCHEMA_VERSION:
            raise newer_schema(f"The team store at {self.location}", version)
        if version != SCHEMA_VERSION:
            migrate(conn, self.schema, f"The team store at {self.location}")

    def _listen_connection(self) -> psycopg.Connection:
        conn = psycopg.connect(self._url, **self._kwargs)
        self._configure(conn)
        return conn

    @staticmethod
    def _read_version(conn: psycopg.Connection) -> int:
        row = conn.execute("SELECT COALESCE(SUM(version), 0) FROM approval_changes").fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _read_shards(conn: psycopg.Connection) -> dict[int, int]:
        rows = conn.execute("SELECT shard, version FROM approval_changes").fetchall()
        return {int(shard): int(version) for shard, version in rows}

    def _error(self, exc: BaseException, *, opening: bool = False) -> StoreError:
        where = f"The team store at {self.location}"
        text = " ".join(scrub(str(exc), self._url).split())  # libpq's lines, as one
        state = getattr(exc, "sqlstate", None) or ""
        if state in ("28P01", "28000") or "password authentication failed" in text:
            return StoreError(
                f"{where} refused the login ({text}): check the user in the URL and the "
                "password in ~/.pgpass or PGPASSWORD.",
                "denied",
            )
        if state == "42501":
            return StoreError(
                f"{where} does not let this user do that ({text}): ask its administrator to "
                f"grant the user the use of schema {self.schema}.",
                "denied",
            )
        if state == "3D000":
            return StoreError(f"{where} has no such database ({text}).", "unusable")
        if state == "53100":
            return StoreError(f"{where} cannot be written: the server's disk is full.", "full")
        if state == "53300":
            return StoreError(
                f"{where} has no connection to spare ({text}): try again in a moment.", "busy"
            )
        if isinstance(exc, PoolTimeout | psycopg.OperationalError) and not state.startswith(
            "57014"
        ):
            what = "cannot be reached" if opening else "was lost and did not come back"
            return StoreError(
                f"{where} {what} ({text or type(exc).__name__}). Is the server up, and is this "
                "machine allowed to reach it?",
                "unreachable",
            )
        return StoreError(f"{where} failed: {text}", "unusable")

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """A connection: the pool's; after a loss, one of its own for each call until
        the pool hands one out again (its reconnection backs off for seconds, and a
        server that is back should be used at once). Waits `reconnect_s` for the
        server (only OUTAGE_WAIT_S once a call already gave up, until it answers)."""
        if self._closed:
            raise StoreError(f"The team store at {self.location} is closed.")
        patience = OUTAGE_WAIT_S if self._outage_since is not None else self.reconnect_s
        deadline = time.monotonic() + patience
        delay = 0.05
        last: BaseException | None = None
        while True:
            left = max(0.0, deadline - time.monotonic())
            try:
                conn = self._pool.getconn(timeout=0.01 if self._trouble else min(left, POOL_WAIT_S))
                pooled = True
                break
            except PoolTimeout as exc:
                last = exc
            try:
                conn = psycopg.connect(self._url, **self._kwargs)
                self._configure(conn)
                pooled = False
                break
            except psycopg.Error as exc:
                last = exc
            self._trouble = True
            if time.monotonic() >= deadline:
                if self._outage_since is None:
                    self._outage_since = time.monotonic()
                raise self._error(last) from None
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.5)
        self._outage_since = None
        if pooled:
            self._trouble = False
        try:
            yield conn
        finally:
            if pooled:
                self._given_back[conn] = time.monotonic()
                self._pool.putconn(conn)
            else:
                conn.close()

    def _check_idle(self, conn: psycopg.Connection) -> None:
        """The pool's check before it hands out `conn`: only one idle for a while."""
        back = self._given_back.get(conn)
        if back is not None and time.monotonic() - back < CHECKED_AFTER_S:
            return
        ConnectionPool.check_connection(conn)

    def _call(self, fn: Callable[[psycopg.Connection], T], *, retry: bool = True) -> T:
        """`fn` on a pooled connection; retried after a deadlock, and (when `retry`:
        it must then be safe to run twice) after a lost connection, until `reconnect_s`."""
        deadline = time.monotonic() + self.reconnect_s
        delay = 0.05
        for _ in range(1000):
            try:
                with self._connection() as conn:
                    try:
                        return fn(conn)
                    except psycopg.Error as exc:
                        if conn.broken or conn.closed:
                            raise _ConnectionLost(exc) from exc
                        raise
            except _RETRYABLE:
                time.sleep(random.uniform(0, delay))
                continue
            except _ConnectionLost as lost:
                self._trouble = True
                if not retry or time.monotonic() > deadline:
                    raise self._error(lost.error) from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
            except psycopg.Error as exc:
                raise self._error(exc) from None
        raise StoreError(f"The team store at {self.location} kept failing: giving up.")

    def close(self) -> None:
        if self._closed:
            return
        if self._evictor is not None:  # an eviction under way ends first (its connection)
            self._evictor.shutdown(wait=True, cancel_futures=True)
        self._closed = True
        self._listener.close()
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ values
    def put_items(self, stored: StoredItems) -> None:
        self._write([stored])

    def _write(self, values: Sequence[StoredItems], run: RunRecord | None = None) -> None:
        """Values, and perhaps the run whose result names them, in one statement that
        also reads what the budgets need. Values that all fit their own row
        (INLINE_VALUE_BYTES: most runs) need no transaction of their own: the statement
        is one, so a run's value, logs and history row are one round trip; a big value
        adds its chunk rows (COPY) in a transaction with it. An eviction, when a budget
        is over or a value past its age, follows in a transaction of its own (the rows
        are durable either way). Safe to run again (a retry after a lost commit): the
        same rows again, counted once."""
        entries: list[sql.Composable] = []
        params: dict[str, Any] = {
            "refs": [v.ref for v in values],
            "max_age": self.max_age_s,
            "id": run.id if run is not None else None,
        }
        if values:
            stale, insert, value_params = self._values_upsert(values)
            entries += [sql.SQL(stale), sql.SQL(f"kept AS ({insert})")]  # our own names only
            params.update(value_params)
        run_bytes = 0
        if run is not None:
            row = run_row(run, self.max_envelope_bytes, POSTGRES)
            # How long ago it started, by this machine's clock (a difference: no skew in
            # it), written as a time of the server's clock: every machine orders alike.
            row["started_at"] = max(0.0, time.time() - run.started_at)
            run_bytes = row["bytes"]
            entries.append(sql.SQL("saved AS ({})").format(_run_upsert(row)))
            params.update(row)
            if run.resumed_from:  # the paused run it resumed says what it became
                entries.append(sql.SQL(f"linked AS ({set_resumed_as_sql(POSTGRES)})"))
                params["resumed_from"] = run.resumed_from
        # Every entry of a WITH sees the table as the statement began: the counters
        # before this write, less the rows it replaces (a retry's), plus what it adds.
        statement = sql.SQL("WITH {} {}").format(sql.SQL(", ").join(entries), _BUDGETS)
        keep = {v.ref for v in values}
        chunked = any(inline_chunks(v) is None for v in values)

        def write(conn: psycopg.Connection) -> None:
            if chunked:
                with conn.transaction():
                    found = conn.execute(statement, params).fetchone()
                    self._copy_chunks(conn, values)
            else:
                found = conn.execute(statement, params).fetchone()
            assert found is not None
            values_total = int(found[0]) + sum(v.size for v in values)
            runs_total = int(found[1]) + run_bytes
            aged = [ref for ref in found[2] if ref not in keep]
            if aged or values_total > self.max_bytes or runs_total > self.max_history_bytes:
                self._evict_behind(keep, run.id if run is not None else None)

        self._call(write)

    def _evict_behind(self, values: set[str], run_id: str | None) -> None:
        """Evict on this store's own thread, off the run's path: in batches (down to the
        low-water mark), so seldom. One eviction waits at a time: it reads the budgets
        when it starts, so later writes need none of their own; it spares what was
        written since the last one started."""
        with self._evict_lock:
            self._spare[0].update(values)
            if run_id is not None:
                self._spare[1].add(run_id)
            if self._evict_queued or self._closed:
                return
            self._evict_queued = True
            if self._evictor is None:
                self._evictor = concurrent.futures.ThreadPoolExecutor(
                    1, thread_name_prefix="run-repl-evict"
                )
            self._evictor.submit(self._evict_now)

    def _evict_now(self) -> None:
        with self._evict_lock:
            self._evict_queued = False
            (values, runs), self._spare = self._spare, (set(), set())

        def evict(conn: psycopg.Connection) -> None:
            with conn.transaction():
                found = conn.execute(
                    _BUDGETS, {"refs": [], "id": None, "max_age": self.max_age_s}
                ).fetchone()
                assert found is not None
                total, runs_total = int(found[0]), int(found[1])
                self._evict(conn, values, total, [r for r in found[2] if r not in values])
                self._evict_runs(conn, keep=runs, total=runs_total)

        try:
            self._call(evict)
        except StoreError as exc:  # the next write over a budget tries again
            logging.getLogger(__name__).warning("eviction failed: %s", exc)

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait for the eviction under way or queued, if any (what a test reads after)."""
        evictor = self._evictor
        if evictor is not None and not self._closed:
            evictor.submit(lambda: None).result(timeout_s)

    @staticmethod
    def _values_upsert(values: Sequence[StoredItems]) -> tuple[str, str, dict[str, Any]]:
        """The `results` rows of `values` (an upsert), and the WITH entry that deletes the
        chunk rows an earlier write of the same refs left (a retry writes the same rows):
        one statement. A small value's chunks are in its row (`inline_chunks`), a big
        one's chunk rows are left to `_copy_chunks`.
        Stamped by the server's clock, so every machine ages a value alike: the value's
        age so far is a difference of this machine's clock (no skew in it)."""
        params: dict[str, Any] = {"refs": [v.ref for v in values]}
        rows = []
        for n, v in enumerate(values):
            params.update(
                {
                    f"v{n}_ref": v.ref,
                    f"v{n}_kind": v.kind,
                    f"v{n}_path": pg_text(v.path),
                    f"v{n}_total": v.total,
                    f"v{n}_chunk_items": v.chunk_items,
                    f"v{n}_rest": dumps(v.rest) if v.rest is not None else None,
                    f"v{n}_run_id": v.run_id,
                    f"v{n}_bytes": v.size,
                    f"v{n}_age": max(0.0, time.time() - v.created_at),
                    f"v{n}_inline": inline_chunks(v),
                }
            )
            rows.append(
                f"(%(v{n}_ref)s, %(v{n}_kind)s, %(v{n}_path)s, %(v{n}_total)s, "
                f"%(v{n}_chunk_items)s, %(v{n}_rest)s, %(v{n}_run_id)s, %(v{n}_bytes)s, "
                f"{_SERVER_NOW} - %(v{n}_age)s, {_SERVER_NOW}, %(v{n}_inline)s::bytea)"
            )
        insert = (
            f"INSERT INTO results ({', '.join(_RESULT_COLUMNS)}) VALUES {', '.join(rows)} "
            "ON CONFLICT (ref) DO UPDATE SET "
            + ", ".join(f"{c} = EXCLUDED.{c}" for c in _RESULT_COLUMNS if c != "ref")
        )
        return _STALE_CHUNKS, insert, params

    @staticmethod
    def _copy_chunks(conn: psycopg.Connection, values: Sequence[StoredItems]) -> None:
        """The chunk rows of the values too big for their own row (none for most runs)."""
        big = [v for v in values if inline_chunks(v) is None]
        if not big:
            return
        with conn.cursor() as cur:
            with cur.copy("COPY result_chunks (ref, idx, data) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["text", "int4", "bytea"])
                for v in big:
                    for i, text in enumerate(v.chunks):
                        copy.write_row((v.ref, i, text.encode("utf-8", "surrogatepass")))

    def _evict(self, conn: psycopg.Connection, keep: set[str], total: int, aged: list[str]) -> None:
        """Values past their age (`aged`), and the least used while over the byte
        budget; never those just written (`keep`)."""
        victims = list(aged)
        if total > self.max_bytes:
            # A server-side cursor: rows come in pages, only as many as the eviction needs.
            with conn.cursor(name="evict_values") as by_use:
                by_use.itersize = EVICT_PAGE
                by_use.execute("SELECT ref, bytes FROM results ORDER BY used_at ASC")
                victims += over_budget(
                    by_use, total, low_water(self.max_bytes), keep=keep, already=victims
                )
        if victims:  # in one order on every machine: two evictions never deadlock
            conn.execute("DELETE FROM results WHERE ref = ANY(%s)", (sorted(victims),))

    def _meta(self, conn: psycopg.Connection, ref: str) -> tuple[StoredItems, float] | None:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"SELECT *, {_SERVER_NOW} AS server_now FROM results WHERE ref = %s", (ref,)
            ).fetchone()
        if row is None or row["server_now"] - row["created_at"] > self.max_age_s:
            return None
        meta = stored_items_from_row(row)
        return meta, row["server_now"] - row["used_at"]

    def _touch(self, conn: psycopg.Connection, ref: str, used_ago: float) -> None:
        # `used_ago`: by the server's clock, as is the time written.
        if used_ago > TOUCH_EVERY_S:
            conn.execute(f"UPDATE results SET used_at = {_SERVER_NOW} WHERE ref = %s", (ref,))

    def get_items(self, ref: str) -> StoredItems | None:
        def read(conn: psycopg.Connection) -> StoredItems | None:
            found = self._meta(conn, ref)
            if found is None:
                return None
            meta, used_ago = found
            if not meta.chunks:  # else kept in its own row
                meta.chunks = [
                    bytes(data).decode("utf-8", "surrogatepass")
                    for (data,) in conn.execute(
                        "SELECT data FROM result_chunks WHERE ref = %s ORDER BY idx", (ref,)
                    )
                ]
            self._touch(conn, ref, used_ago)
            return meta

        return self._call(read)

    def get_chunks(self, ref: str, first: int, last: int) -> tuple[StoredItems, list[str]] | None:
        def read(conn: psycopg.Connection) -> tuple[StoredItems, list[str]] | None:
            found = self._meta(conn, ref)
            if found is None:
                return None
            meta, used_ago = found
            if meta.chunks:  # kept in its own row
                self._touch(conn, ref, used_ago)
                return meta, meta.chunks[first : last + 1]
            chunks = [
                bytes(data).decode("utf-8", "surrogatepass")
                for (data,) in conn.execute(
                    "SELECT data FROM result_chunks WHERE ref = %s AND idx BETWEEN %s AND %s "
                    "ORDER BY idx",
                    (ref, first, last),
                )
            ]
            self._touch(conn, ref, used_ago)
            return meta, chunks

        return self._call(read)

    def stored_bytes(self) -> int:
        """What stored values hold, in bytes (what `max_bytes` counts)."""
        return self._call(lambda conn: _counter(conn, "results_bytes"))

    # ------------------------------------------------------------------ runs
    def record_run(self, run: RunRecord, values: Sequence[StoredItems] = ()) -> None:
        """Keep a run, and `values` (the value and logs its result names) in the same
        statement (and a big value's chunks in its transaction)."""
        self._write(values, run)

    def _evict_runs(
        self, conn: psycopg.Connection, keep: str | set[str], total: int | None = None
    ) -> None:
        if total is None:
            total = _counter(conn, "runs_bytes")
        if total <= self.max_history_bytes:
            return
        # Down to the low-water mark: the next runs fit without evicting again.
        # A server-side cursor: rows come in pages, only as many as the eviction needs.
        with conn.cursor(name="evict_runs") as oldest:
            oldest.itersize = EVICT_PAGE
            oldest.execute("SELECT id, bytes FROM runs ORDER BY started_at ASC")
            victims = over_budget(oldest, total, low_water(self.max_history_bytes), keep=keep)
        conn.execute("DELETE FROM runs WHERE id = ANY(%s)", (sorted(victims),))

    def history_bytes(self) -> int:
        """What the history holds, in bytes (what its budget counts)."""
        return self._call(lambda conn: _counter(conn, "runs_bytes"))

    def count_refused(self, code: str) -> None:
        """A run refused before it started (RUN_BUSY): counted, never kept as a run."""
        self._call(
            lambda conn: conn.execute(
                "INSERT INTO store_counters (name, shard, value) "
                f"VALUES (%s, pg_backend_pid() %% {COUNTER_SHARDS}, 1) "
                "ON CONFLICT (name, shard) DO UPDATE SET value = store_counters.value + 1",
                (REFUSED + pg_text(code),),
            ),
            retry=False,  # a count lost with the connection is better than one counted twice
        )

    def refused_runs(self) -> dict[str, int]:
        """How many runs were refused before they started, by error code."""
        rows = self._call(
            lambda conn: conn.execute(
                "SELECT name, SUM(value) FROM store_counters WHERE name LIKE 'refused:%' "
                "GROUP BY name"
            ).fetchall()
        )
        return {name[len(REFUSED) :]: int(value) for name, value in rows}

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        text, args = list_runs_sql(limit, query, POSTGRES)

        def read(conn: psycopg.Connection) -> list[RunRecord]:
            with conn.cursor(row_factory=dict_row) as cur:
                return [run_from_row(r) for r in cur.execute(text, args).fetchall()]

        return self._call(read)

    def get_run(self, run_id: str) -> RunRecord | None:
        def read(conn: psycopg.Connection) -> RunRecord | None:
            with conn.cursor(row_factory=dict_row) as cur:
                row = cur.execute(get_run_sql(POSTGRES), {"id": run_id}).fetchone()
            return run_from_row(row) if row is not None else None

        return self._call(read)

    def owner_of_run(self, run_id: str) -> str | None:
        def read(conn: psycopg.Connection) -> str | None:
            row = conn.execute("SELECT owner FROM runs WHERE id = %s", (run_id,)).fetchone()
            return row[0] if row else None

        return self._call(read)

    def owner_of_ref(self, ref: str) -> str | None:
        def read(conn: psycopg.Connection) -> str | None:
            row = conn.execute(
                "SELECT r.owner FROM results v JOIN runs r ON r.id = v.run_id WHERE v.ref = %s",
                (ref,),
            ).fetchone()
            return row[0] if row else None

        return self._call(read)

    # ------------------------------------------------------------------ idempotency keys
    # Ages by the server's clock: every machine of the team reads a key's day alike.
    _RUN_KEY_SELECT = (
        f"SELECT owner, key, digest, holder, run_id, created_at, "
        f"GREATEST(0, {_SERVER_NOW} - created_at) AS age_s FROM run_keys "
        "WHERE owner = %s AND key = %s"
    )

    def reserve_run_key(
        self, owner: str, key: str, digest: str, *, holder: str, max_age_s: float
    ) -> RunKey:
        args = (pg_text(owner), pg_text(key))

        def reserve(conn: psycopg.Connection) -> RunKey:
            with conn.transaction():
                conn.execute(
                    f"DELETE FROM run_keys WHERE created_at < {_SERVER_NOW} - %s", (max_age_s,)
                )
                conn.execute(
                    "INSERT INTO run_keys (owner, key, digest, holder, run_id, created_at) "
                    f"VALUES (%s, %s, %s, %s, NULL, {_SERVER_NOW}) "
                    "ON CONFLICT (owner, key) DO NOTHING",
                    (*args, digest, holder),
                )
                with conn.cursor(row_factory=dict_row) as cur:
                    row = cur.execute(self._RUN_KEY_SELECT, args).fetchone()
            assert row is not None
            return RunKey(**row)

        # A retry after a lost commit reads its own reservation back (the holder says so).
        return self._call(reserve)

    def get_run_key(self, owner: str, key: str) -> RunKey | None:
        def read(conn: psycopg.Connection) -> RunKey | None:
            with conn.cursor(row_factory=dict_row) as cur:
                row = cur.execute(self._RUN_KEY_SELECT, (pg_text(owner), pg_text(key))).fetchone()
            return RunKey(**row) if row else None

        return self._call(read)

    def settle_run_key(self, owner: str, key: str, *, holder: str, run_id: str | None) -> None:
        """Name the run of a reserved key; `run_id` None gives the key back (nothing ran)."""
        args = (pg_text(owner), pg_text(key), holder)

        def write(conn: psycopg.Connection) -> None:
            if run_id is None:
                conn.execute(
                    "DELETE FROM run_keys WHERE owner = %s AND key = %s AND holder = %s "
                    "AND run_id IS NULL",
                    args,
                )
            else:
                conn.execute(
                    "UPDATE run_keys SET run_id = %s WHERE owner = %s AND key = %s AND holder = %s",
                    (run_id, *args),
                )

        self._call(write)

    # ------------------------------------------------------------------ approvals
    @contextmanager
    def _approval_rows(self) -> Iterator[_Rows]:
        """One approval transaction (what ApprovalClaims' rules need); `_approval_tx`
        adds the operation's record and its retry."""
        with self._connection() as conn, conn.transaction():
            rows = _Rows(conn, self.schema)
            yield rows
            if rows.wrote:
                self._bump(conn)

    # The NOTIFY says which counter moved and to what ("shard:version"), so a listener
    # knows the new total without reading it back (see postgres_listener.py).
    _BUMP = (
        "WITH bumped AS (UPDATE approval_changes SET version = version + 1 "
        "WHERE shard = %(shard)s RETURNING shard, version) "
        "SELECT pg_notify(%(channel)s, shard || ':' || version) FROM bumped"
    )

    def _bump(self, conn: psycopg.Connection) -> None:
        # Last: a counter's row lock is held only for the commit that follows, and with
        # one counter of CHANGE_SHARDS at random, writers seldom wait for each other.
        # The NOTIFY goes out when (and only if) the transaction commits.
        conn.execute(self._BUMP, self._bump_args())

    def _bump_args(self) -> dict[str, Any]:
        return {"shard": random.randrange(CHANGE_SHARDS), "channel": self._channel}

    def _approval_tx(self, work: Callable[[ApprovalRows], T]) -> T:
        """One approval operation, exactly once even if the connection is lost at commit.

        The transaction records the operation's answer under `op`, holding an
        advisory lock on `op` until it ends. A retry takes that lock first (so it
        waits until the lost transaction is really over), then finds the answer
        (committed: return it) or not (rolled back: do the work now)."""
        op = "op_" + secrets.token_hex(12)
        key = advisory_key(self.schema, "op", op)
        first = True

        def attempt(conn: psycopg.Connection) -> T:
            nonlocal first
            # Pipelined: what needs no answer (BEGIN, locks, updates, COMMIT) is sent
            # without waiting for one.
            with conn.pipeline(), conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                if not first:
                    found = conn.execute(
                        "SELECT answer FROM approval_ops WHERE id = %s", (op,)
                    ).fetchone()
                    if found is not None:
                        return _answer_of(found[0], partial(_in_order, conn))  # type: ignore[no-any-return]  # the answer kept for this op
                first = False
                rows = _Rows(conn, self.schema)
                answer = work(rows)
                if not rows.wrote:
                    # Only read: nothing to keep for a retry (reading again is as good),
                    # no change to count, nobody to wake.
                    return answer
                # The answer, the change counter and the NOTIFY: one round trip.
                conn.execute(
                    "WITH recorded AS (INSERT INTO approval_ops (id, answer, done_at) VALUES "
                    f"(%(op)s, %(answer)s, {_SERVER_NOW})), " + self._BUMP[len("WITH ") :],
                    {"op": op, "answer": _answer_text(answer), **self._bump_args()},
                )
                if random.random() < 0.02:  # answers are kept a day: enough for any retry
                    conn.execute(
                        f"DELETE FROM approval_ops WHERE done_at < {_SERVER_NOW} - %s",
                        (OPS_KEPT_S,),
                    )
            return answer

        return self._call(attempt)

    def approvals_version(self) -> int:
        """A number that grows with every change to the approvals (from any machine)."""
        return self._call(self._read_version)

    def wait_approvals_change(self, since: int, timeout_s: float) -> int:
        """Block until the approvals' version passes `since` (LISTEN: woken by the commit
        itself, on every machine) or `timeout_s` passes; the version (`since` on a timeout)."""
        if self._closed:
            raise StoreError(f"The team store at {self.location} is closed.")
        return self._listener.wait(since, timeout_s)

    def watch_approvals(
        self, callback: Callable[[int], None], on_error: Callable[[str], None] | None = None
    ) -> Callable[[], None]:
        """Call `callback(version)` (from the listening thread) on every change to the
        approvals; returns the function that stops it. What `wait_for_approvals_change`
        uses, so a coroutine waiting holds no thread. A lost connection is not an error
        here: the listener reconnects and reads again (`on_error` is never called)."""
        if self._closed:
            raise StoreError(f"The team store at {self.location} is closed.")
        return self._listener.watch(callback, on_error)

    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        def write(conn: psycopg.Connection) -> None:
            with conn.transaction():
                _Rows(conn, self.schema).insert(approvals)
                self._bump(conn)

        self._call(write)  # an id already there is left as it is: safe to retry

    def _select_approvals(self, where: str, args: dict[str, Any]) -> list[PendingApproval]:
        text = (
            f"SELECT *, {_SERVER_NOW} AS server_now FROM approvals WHERE {where} "
            "ORDER BY created_at, id"
        )

        def read(conn: psycopg.Connection) -> list[PendingApproval]:
            with conn.cursor(row_factory=dict_row) as cur:
                rows = cur.execute(text, args).fetchall()
            return [approval_from_row(r, r["server_now"]) for r in rows]

        return self._call(read)

    def _lapsed_batches(self) -> list[str]:
        text = lapsed_sql(_SERVER_NOW_STABLE)
        return self._call(lambda conn: [r[0] for r in conn.execute(text).fetchall()])

    def _open_rows(self, host: str | None) -> tuple[list[PendingApproval], float]:
        where, args = OPEN_SQL, {}
        if host is not None:
            where, args = f"{where} AND host = %(host)s", {"host": pg_text(host)}
        # The rows and the listing's clock in one statement (every executor looks at
        # every change: with 4 servers this look was the most run statement, and its
        # clock a second one). The clock's one row stands alone when no row matches.
        # `claim_decided` judges the claim again under its locks.
        text = (
            f"SELECT a.*, c.server_now "
            f"FROM (SELECT {_SERVER_NOW} AS server_now) c LEFT JOIN approvals a ON {where} "
            "ORDER BY a.created_at, a.id"
        )

        def read(conn: psycopg.Connection) -> tuple[list[PendingApproval], float]:
            with conn.cursor(row_factory=dict_row) as cur:
                rows = cur.execute(text, args).fetchall()
            now = float(rows[0]["server_now"])
            found = [approval_from_row(r, now) for r in rows if r["id"] is not None]
            return found, now

        return self._call(read)

    def _renew(self, claim_id: str, ids: list[str], until_s: float) -> set[str]:
        # The server's clock, never this machine's: a fast machine must not shorten (or a
        # slow one stretch) a lease that another machine reads.
        text = renew_sql(f"{_SERVER_NOW} + %(until)s", POSTGRES)
        rows = self._call(
            lambda conn: conn.execute(text, {"until": until_s, "claim": claim_id}).fetchall()
        )
        return {r[0] for r in rows} & set(ids)

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        self.settle_lapsed()  # a resume that stopped after its guard reads unfinished now
        where, args = approvals_where(status, _SERVER_NOW, POSTGRES, all_rows="true")
        return self._select_approvals(where, args)

    def get_approval(self, approval_id: str) -> PendingApproval | None:
        found = self._select_approvals("id = %(id)s", {"id": approval_id})
        return found[0] if found else None

    def get_approvals(self, approval_ids: Iterable[str]) -> dict[str, PendingApproval]:
        ids = sorted(set(approval_ids))
        if not ids:
            return {}
        return {a.id: a for a in self._select_approvals("id = ANY(%(ids)s)", {"ids": ids})}

    # ------------------------------------------------------------------ continuations
    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        """True the first time this continuation is used, on any machine; False ever
        after (until it expires). A retry after a lost commit knows its own use."""
        me = secrets.token_hex(12)
        takeover = REPLAY_GRANT.get()
        grant = grant_key(takeover, digest) if takeover is not None else None

        def consume(conn: psycopg.Connection) -> bool:
            # Forgotten and stamped by the server's clock, never this machine's: a
            # machine whose clock runs fast must not forget what another one spent.
            with conn.transaction():
                conn.execute(
                    f"DELETE FROM consumed_continuations WHERE expires_at < {_SERVER_NOW_STABLE}"
                )
                conn.execute(
                    "INSERT INTO consumed_continuations (digest, expires_at, consumed_at, "
                    f"consumed_by) VALUES (%s, %s, {_SERVER_NOW}, %s) "
                    "ON CONFLICT (digest) DO NOTHING",
                    (digest, expires_at, me),
                )
                row = conn.execute(
                    "SELECT consumed_by FROM consumed_continuations WHERE digest = %s", (digest,)
                ).fetchone()
                if grant is not None and (row is None or row[0] != me):
                    # Spent before, by the resume this claim took over: once more, for it
                    # alone (marked, not deleted, so a retry after a lost commit knows it).
                    conn.execute(
                        "UPDATE consumed_continuations SET consumed_by = %s "
                        "WHERE digest = %s AND consumed_by = ''",
                        (me, grant),
                    )
                    row = conn.execute(
                        "SELECT consumed_by FROM consumed_continuations WHERE digest = %s",
                        (grant,),
                    ).fetchone()
            return row is not None and row[0] == me

        return self._call(consume)


__all__ = ["PostgresStore", "pg_text"]
