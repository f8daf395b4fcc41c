"""The SQLite store: stored values by item, run history, approvals, spent continuations.

One file in the data directory (0600; the directory, when the store makes
it, 0700), WAL mode so several processes read and write at once, a schema
versioned by `PRAGMA user_version` and migrated on open, and byte budgets:
stored values (least recently used out first, plus an age limit) and the
history (each envelope cut to a budget, oldest runs out first).

Every SQLite failure reaches the caller as one StoreError that says what to
do: busy (another process holds the file), damaged, full, or other.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ...sandbox.wire.result_store import StoredItems
from ...sqlite_files import (
    ensure_private_file,
    is_busy,
    is_damaged,
    make_private_dir,
    transaction,
)
from ..approvals.claims import ApprovalClaims
from ..approvals.watch import PollingWatch
from ..budgets import (
    DEFAULT_ENVELOPE_BYTES,
    DEFAULT_HISTORY_BYTES,
    DEFAULT_MAX_AGE_S,
    DEFAULT_MAX_BYTES,
    PREVIEW_BYTES,
    REFUSED,
    TOUCH_EVERY_S,
    low_water,
    over_budget,
)
from ..json_budget import dumps, fit_envelope
from ..records import (
    REPLAY_GRANT,
    PendingApproval,
    RunKey,
    RunRecord,
    continuation_batch,
    grant_key,
)
from ..store_error import StoreError
from ._sql import (
    APPROVAL_COLUMNS,
    OPEN_SQL,
    SQLITE,
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
    renew_sql,
    run_from_row,
    run_row,
    set_resumed_as_sql,
    stored_items_from_row,
)
from .executors_sql import SqlExecutors

T = TypeVar("T")

BUSY_TIMEOUT_S = 10
GRANT_KEPT_S = 24 * 3600  # a takeover's grant to spend a token again, if never used


# ---------------------------------------------------------------------- schema


def _script(db: sqlite3.Connection, script: str) -> None:
    # Not executescript: it commits first, and a migration is one transaction.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
    CREATE TABLE results (
        ref TEXT PRIMARY KEY, kind TEXT NOT NULL, path TEXT NOT NULL, total INTEGER NOT NULL,
        chunk_items INTEGER NOT NULL, rest TEXT, run_id TEXT, bytes INTEGER NOT NULL,
        created_at REAL NOT NULL, used_at REAL NOT NULL
    );
    CREATE INDEX results_used ON results (used_at);
    CREATE INDEX results_created ON results (created_at);
    CREATE TABLE result_chunks (
        ref TEXT NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (ref, idx)
    ) WITHOUT ROWID;
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, started_at REAL NOT NULL, duration_ms REAL NOT NULL,
        status TEXT NOT NULL, source TEXT NOT NULL, host TEXT NOT NULL, error_code TEXT,
        value_ref TEXT, logs_ref TEXT, resumed_from TEXT, envelope TEXT NOT NULL
    );
    CREATE INDEX runs_started ON runs (started_at);
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY, run_id TEXT NOT NULL, source TEXT NOT NULL, host TEXT NOT NULL,
        path TEXT NOT NULL, args TEXT NOT NULL, payload TEXT NOT NULL, message TEXT NOT NULL,
        continuation TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL,
        decided_at REAL, resumed_run_id TEXT
    );
    CREATE INDEX approvals_status ON approvals (status, created_at);
    """,
    )


def _v2(db: sqlite3.Connection) -> None:
    """Claims that end, batches, decisions that wait, outcomes; consume-once tokens."""
    for column in (
        "batch TEXT NOT NULL DEFAULT ''",
        "decision TEXT",
        "decided_by TEXT",
        "decision_id TEXT",
        "claim_id TEXT",
        "claimed_by TEXT",
        "claimed_at REAL",
        "claim_expires_at REAL",
        "executing_at REAL",
        "finished_at REAL",
        "outcome TEXT",
        "outcome_code TEXT",
        "note TEXT",
    ):
        db.execute(f"ALTER TABLE approvals ADD COLUMN {column}")
    rows = db.execute("SELECT id, continuation FROM approvals").fetchall()
    db.executemany(
        "UPDATE approvals SET batch = ? WHERE id = ?",
        [(continuation_batch(r["continuation"]), r["id"]) for r in rows],
    )
    # Version 1 set decided_at when an approval ended, and kept no decision.
    db.execute(
        "UPDATE approvals SET finished_at = decided_at, "
        "decision = CASE status WHEN 'approved' THEN 'approve' WHEN 'denied' THEN 'deny' END "
        "WHERE status IN ('approved', 'denied', 'failed', 'superseded')"
    )
    # A version 1 claim never ends, and its resume may have run: it is stuck until recovered.
    db.execute(
        "UPDATE approvals SET status = 'executing', claimed_by = 'an earlier run-repl', "
        "note = 'claimed before run-repl kept claim times: its resume may have run' "
        "WHERE status = 'claimed'"
    )
    _script(
        db,
        """
    CREATE INDEX approvals_batch ON approvals (batch);
    CREATE TABLE consumed_continuations (
        digest TEXT PRIMARY KEY, expires_at REAL NOT NULL, consumed_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX consumed_expiry ON consumed_continuations (expires_at);
    """,
    )


def _v3(db: sqlite3.Connection) -> None:
    """A byte budget for the history: sizes, previews, cut envelopes."""
    db.execute("ALTER TABLE runs ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE runs ADD COLUMN preview TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN envelope_cut INTEGER NOT NULL DEFAULT 0")
    big = db.execute("SELECT id FROM runs WHERE length(envelope) > ?", (PREVIEW_BYTES,)).fetchall()
    for (run_id,) in big:  # one at a time: an old history may hold huge envelopes
        (text,) = db.execute("SELECT envelope FROM runs WHERE id = ?", (run_id,)).fetchone()
        try:
            envelope = json.loads(text)
        except (ValueError, RecursionError):
            envelope = {"status": "error"}
        kept, cut = fit_envelope(envelope, DEFAULT_ENVELOPE_BYTES)
        preview, _ = fit_envelope(envelope, PREVIEW_BYTES)
        db.execute(
            "UPDATE runs SET envelope = :envelope, preview = :preview, envelope_cut = :cut "
            "WHERE id = :id",
            {"envelope": dumps(kept), "preview": dumps(preview), "cut": int(cut), "id": run_id},
        )
    db.execute(
        "UPDATE runs SET bytes = length(envelope) + length(source) + COALESCE(length(preview), 0)"
    )


def _v4(db: sqlite3.Connection) -> None:
    """A counter every approval write bumps, so inboxes and waiting agents see changes."""
    db.execute(
        "CREATE TABLE approval_changes (one INTEGER PRIMARY KEY CHECK (one = 1), version INTEGER NOT NULL)"
    )
    db.execute("INSERT INTO approval_changes VALUES (1, 0)")


def _v5(db: sqlite3.Connection) -> None:
    """Who owns a run and an approval (an MCP principal), the channel of a decision
    beside its decider, and the `run` tool's idempotency keys."""
    db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    db.execute("ALTER TABLE approvals ADD COLUMN owner TEXT")
    db.execute("ALTER TABLE approvals ADD COLUMN decided_via TEXT")
    _script(
        db,
        """
    CREATE TABLE run_keys (
        owner TEXT NOT NULL, key TEXT NOT NULL, digest TEXT NOT NULL, holder TEXT NOT NULL,
        run_id TEXT, created_at REAL NOT NULL, PRIMARY KEY (owner, key)
    ) WITHOUT ROWID;
    CREATE INDEX run_keys_created ON run_keys (created_at);
    """,
    )


def _v6(db: sqlite3.Connection) -> None:
    """Running counters: the bytes of the history and of the values (kept by triggers in
    the transaction of each write, so a budget check reads one row, never a SUM over the
    table), and the runs refused before they started (counted, never kept as runs)."""
    _script(
        db,
        """
    CREATE TABLE store_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO store_counters VALUES
        ('runs_bytes', (SELECT COALESCE(SUM(bytes), 0) FROM runs)),
        ('results_bytes', (SELECT COALESCE(SUM(bytes), 0) FROM results));
    """,
    )
    for table in ("runs", "results"):  # one statement each: a trigger's body holds a ';'
        counter = f"UPDATE store_counters SET value = value {{}} WHERE name = '{table}_bytes';"
        for name, event, change in (
            ("in", "INSERT", "+ NEW.bytes"),
            ("out", "DELETE", "- OLD.bytes"),
            ("change", "UPDATE OF bytes", "+ NEW.bytes - OLD.bytes"),
        ):
            db.execute(
                f"CREATE TRIGGER {table}_bytes_{name} AFTER {event} ON {table} "
                f"BEGIN {counter.format(change)} END"
            )


def _v7(db: sqlite3.Connection) -> None:
    """A paused run names the run that resumed it (that run already names the paused one)."""
    db.execute("ALTER TABLE runs ADD COLUMN resumed_as TEXT")
    resumes = db.execute(
        "SELECT id, resumed_from FROM runs WHERE resumed_from IS NOT NULL ORDER BY started_at"
    ).fetchall()
    # Oldest first: of two resumes of one run (the first did not go), the later one stays.
    db.executemany(
        "UPDATE runs SET resumed_as = ? WHERE id = ? AND id <> ?",
        [(r["id"], r["resumed_from"], r["id"]) for r in resumes],
    )


def _v8(db: sqlite3.Connection) -> None:
    """Resumes run where the host lives: an approval says whether its call may run again
    with the same key (`idempotent`) and which process started its run and waits for it
    (`resume_by`); the processes that can resume a host's runs beat in `executors`."""
    db.execute("ALTER TABLE approvals ADD COLUMN idempotent INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE approvals ADD COLUMN resume_by TEXT")
    _script(
        db,
        """
    CREATE TABLE executors (
        id TEXT PRIMARY KEY, host TEXT NOT NULL, functions TEXT NOT NULL,
        label TEXT NOT NULL, kind TEXT NOT NULL, started_at REAL NOT NULL,
        seen_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX executors_host ON executors (host, seen_at);
    """,
    )


def _v9(db: sqlite3.Connection) -> None:
    """Small values in their own row: `inline_chunks` holds the chunks of a value whose
    chunks fit INLINE_VALUE_BYTES (no chunk rows); NULL for one kept by chunk rows, as
    every value before this version was."""
    db.execute("ALTER TABLE results ADD COLUMN inline_chunks BLOB")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _v1,
    2: _v2,
    3: _v3,
    4: _v4,
    5: _v5,
    6: _v6,
    7: _v7,
    8: _v8,
    9: _v9,
}
SCHEMA_VERSION = max(MIGRATIONS)


# What each version leaves behind, last: (table, column or None). A store whose number
# was never recorded is at the highest version whose mark it holds (each migration is
# one transaction, so none is ever half there).
_MARKS: dict[int, tuple[str, str | None]] = {
    1: ("results", None),
    2: ("consumed_continuations", None),
    3: ("runs", "bytes"),
    4: ("approval_changes", None),
    5: ("run_keys", None),
    6: ("store_counters", None),
    7: ("runs", "resumed_as"),
    8: ("executors", None),
    9: ("results", "inline_chunks"),
}


def found_version(db: sqlite3.Connection) -> int:
    """The version the tables show (0: no run-repl tables)."""
    found = 0
    for version, (table, column) in sorted(_MARKS.items()):
        columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if not columns or (column is not None and column not in columns):
            break
        found = version
    return found


def migrate(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema to `target` in one transaction; the version it was at.

    A store from before user_version (a `meta` table) counts as its version; one
    whose number was lost counts as what its tables show, and the number is written."""
    with transaction(db, durable=True):
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
        recorded = version
        legacy = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if version == 0 and legacy is not None:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            db.execute("DROP TABLE meta")
        version = max(version, found_version(db))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"it was written by a newer run-repl (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade run-repl or use another --data-dir"
            )
        start = version
        for step in range(version + 1, target + 1):
            MIGRATIONS[step](db)
            version = step
        if version != recorded:  # an open that changes nothing writes nothing
            db.execute(f"PRAGMA user_version = {int(version)}")
    return start


# ---------------------------------------------------------------------- columns

_APPROVAL_INSERT = approval_insert(APPROVAL_COLUMNS, SQLITE)
_APPROVAL_UPDATE = approval_update(APPROVAL_COLUMNS, SQLITE)
_text = SQLITE.text


class _Rows:
    """The approvals table inside one SQLite transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.wrote = False  # an operation that only read changes nothing anyone watches

    def by_ids(self, ids: list[str]) -> dict[str, PendingApproval]:
        found: dict[str, PendingApproval] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ", ".join("?" * len(part))
            for row in self.db.execute(f"SELECT * FROM approvals WHERE id IN ({marks})", part):
                found[row["id"]] = approval_from_row(row)
        return found

    def of_batch(self, batch: str) -> list[PendingApproval]:
        return [
            approval_from_row(row)
            for row in self.db.execute(
                "SELECT * FROM approvals WHERE batch = ? ORDER BY created_at, id", (batch,)
            )
        ]

    def update(self, approvals: Iterable[PendingApproval]) -> None:
        self._write(_APPROVAL_UPDATE, approvals)

    def now(self) -> float:
        return time.time()

    def insert(self, approvals: Iterable[PendingApproval]) -> None:
        self._write(_APPROVAL_INSERT, approvals)

    def grant_replay(self, digest: str, claim_id: str) -> None:
        now = time.time()
        self.db.execute(
            "INSERT OR REPLACE INTO consumed_continuations (digest, expires_at, consumed_at) "
            "VALUES (?, ?, ?)",
            (grant_key(claim_id, digest), now + GRANT_KEPT_S, now),
        )

    def _write(self, statement: str, approvals: Iterable[PendingApproval]) -> None:
        params = [approval_params(a, SQLITE) for a in approvals]
        if params:
            self.db.executemany(statement, params)
            self.wrote = True


class SqliteStore(ApprovalClaims, SqlExecutors):
    """The store in one SQLite file; safe to share between threads and processes."""

    durable = True  # what it keeps survives the process
    _executor_dialect = SQLITE
    # The file's machine's clock, read by SQLite in the statement (seconds since the epoch).
    _executor_clock = "((julianday('now') - 2440587.5) * 86400.0)"

    def _executor_tx(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._tx() as db:
            return work(db)

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        max_history_bytes: int = DEFAULT_HISTORY_BYTES,
        max_envelope_bytes: int = DEFAULT_ENVELOPE_BYTES,
    ) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.max_history_bytes = max_history_bytes
        self.max_envelope_bytes = max_envelope_bytes
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        # Its thread starts with the first waiter (an inbox, an MCP call waiting).
        self._watch = PollingWatch(self.approvals_version, name="run-repl-sqlite-watch")
        self._watch.sweep = self.settle_lapsed
        try:
            if not self.path.parent.is_dir():
                make_private_dir(self.path.parent)
            ensure_private_file(self.path)
            self._db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            migrate(self._db)
        except StoreError as exc:
            self._close_quietly()
            raise StoreError(
                f"The store at {self.path} cannot be used: {exc}", exc.problem
            ) from exc
        except (sqlite3.Error, OSError) as exc:
            self._close_quietly()
            raise self._error(exc, opening=True) from exc

    # ------------------------------------------------------------------ plumbing
    def _error(self, exc: BaseException, *, opening: bool = False) -> StoreError:
        where = f"The store at {self.path}"
        if is_busy(exc):
            return StoreError(
                f"{where} is busy: another run-repl has been writing it for over "
                f"{BUSY_TIMEOUT_S} s. Try again in a moment.",
                "busy",
            )
        if is_damaged(exc):
            return StoreError(
                f"{where} is damaged ({exc}). Move the file aside (keep it: it may hold pending "
                "approvals) and start again: a fresh store is made.",
                "damaged",
            )
        code = getattr(exc, "sqlite_errorcode", None)
        if (isinstance(code, int) and code & 0xFF == 13) or "disk is full" in str(exc):
            return StoreError(f"{where} cannot be written: the disk is full ({exc}).", "full")
        verb = "cannot be used" if opening else "failed"
        return StoreError(f"{where} {verb}: {exc}", "unusable")

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"The store at {self.path} is closed.")
        return self._db

    @contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                with transaction(self._conn(), durable=durable) as db:
                    yield db
            except (sqlite3.Error, OSError) as exc:
                raise self._error(exc) from exc

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return fn(self._conn())
            except (sqlite3.Error, OSError) as exc:
                raise self._error(exc) from exc

    def _close_quietly(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None

    def close(self) -> None:
        self._watch.close()
        with self._lock:
            self._close_quietly()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------ values
    def put_items(self, stored: StoredItems) -> None:
        with self._tx() as db:
            now = time.time()
            self._put(db, stored, now)
            self._evict(db, now, keep={stored.ref})

    @staticmethod
    def _put(db: sqlite3.Connection, stored: StoredItems, now: float) -> None:
        """One value's rows: its `results` row, holding its chunks when they are small
        (`inline_chunks`), else with a chunk row each."""
        inline = inline_chunks(stored)
        row = {
            "ref": stored.ref,
            "kind": stored.kind,
            "path": stored.path,
            "total": stored.total,
            "chunk_items": stored.chunk_items,
            "rest": dumps(stored.rest) if stored.rest is not None else None,
            "run_id": stored.run_id,
            "bytes": stored.size,
            "created_at": stored.created_at,
            "used_at": now,
            "inline_chunks": inline,
        }
        db.execute("DELETE FROM result_chunks WHERE ref = ?", (stored.ref,))
        # Deleted, then inserted: a REPLACE's deletion would fire no trigger (the counter).
        db.execute("DELETE FROM results WHERE ref = ?", (stored.ref,))
        db.execute(
            f"INSERT INTO results ({', '.join(row)}) VALUES ({', '.join(':' + k for k in row)})",
            row,
        )
        if inline is None:
            db.executemany(
                "INSERT INTO result_chunks (ref, idx, data) VALUES (?, ?, ?)",
                (
                    (stored.ref, i, text.encode("utf-8", "surrogatepass"))
                    for i, text in enumerate(stored.chunks)
                ),
            )

    def _evict(self, db: sqlite3.Connection, now: float, keep: set[str]) -> None:
        victims = [
            r["ref"]
            for r in db.execute(aged_values_sql(":cutoff"), {"cutoff": now - self.max_age_s})
            if r["ref"] not in keep
        ]
        total = self._counter(db, "results_bytes")
        if total > self.max_bytes:
            by_use = db.execute("SELECT ref, bytes FROM results ORDER BY used_at ASC")
            victims += over_budget(
                by_use, total, low_water(self.max_bytes), keep=keep, already=victims
            )
        for ref in victims:
            db.execute("DELETE FROM result_chunks WHERE ref = ?", (ref,))
            db.execute("DELETE FROM results WHERE ref = ?", (ref,))

    def _meta(self, db: sqlite3.Connection, ref: str) -> StoredItems | None:
        row = db.execute("SELECT * FROM results WHERE ref = ?", (ref,)).fetchone()
        if row is None or time.time() - row["created_at"] > self.max_age_s:
            return None
        return stored_items_from_row(row)

    def _touch(self, ref: str) -> None:
        # Eviction goes by last use; a minute's precision spares a write per page.
        now = time.time()
        with self._tx() as db:
            db.execute(
                "UPDATE results SET used_at = ? WHERE ref = ? AND used_at < ?",
                (now, ref, now - TOUCH_EVERY_S),
            )

    def get_items(self, ref: str) -> StoredItems | None:
        def read(db: sqlite3.Connection) -> StoredItems | None:
            meta = self._meta(db, ref)
            if meta is None:
                return None
            if meta.chunks:  # kept in its own row
                return meta
            meta.chunks = [
                bytes(r["data"]).decode("utf-8", "surrogatepass")
                for r in db.execute(
                    "SELECT data FROM result_chunks WHERE ref = ? ORDER BY idx", (ref,)
                )
            ]
            return meta

        found = self._read(read)
        if found is not None:
            self._touch(ref)
        return found

    def get_chunks(self, ref: str, first: int, last: int) -> tuple[StoredItems, list[str]] | None:
        def read(db: sqlite3.Connection) -> tuple[StoredItems, list[str]] | None:
            meta = self._meta(db, ref)
            if meta is None:
                return None
            if meta.chunks:  # kept in its own row
                return meta, meta.chunks[first : last + 1]
            rows = db.execute(
                "SELECT data FROM result_chunks WHERE ref = ? AND idx BETWEEN ? AND ? ORDER BY idx",
                (ref, first, last),
            ).fetchall()
            return meta, [bytes(r["data"]).decode("utf-8", "surrogatepass") for r in rows]

        found = self._read(read)
        if found is not None:
            self._touch(ref)
        return found

    def settle(self, timeout_s: float = 60.0) -> None:
        """Nothing to wait for: this store evicts in the transaction of the write."""

    def stored_bytes(self) -> int:
        """What stored values hold, in bytes (what `max_bytes` counts)."""
        return self._read(lambda db: self._counter(db, "results_bytes"))

    # ------------------------------------------------------------------ runs
    def record_run(self, run: RunRecord, values: Sequence[StoredItems] = ()) -> None:
        """Keep a run, and `values` (the value and logs its result names) in the same
        transaction: one write makes the run and what it names durable together."""
        row = run_row(run, self.max_envelope_bytes, SQLITE)
        with self._tx() as db:
            now = time.time()
            for stored in values:
                self._put(db, stored, now)
            # An upsert, not a REPLACE: its deletion would fire no trigger (the counter).
            db.execute(
                f"INSERT INTO runs ({', '.join(row)}) "
                f"VALUES ({', '.join(':' + k for k in row)}) ON CONFLICT (id) DO UPDATE SET "
                + ", ".join(f"{k} = excluded.{k}" for k in row if k != "id"),
                row,
            )
            if run.resumed_from:  # the paused run it resumed says what it became
                db.execute(
                    set_resumed_as_sql(SQLITE), {"id": run.id, "resumed_from": run.resumed_from}
                )
            if values:
                self._evict(db, now, keep={v.ref for v in values})
            self._evict_runs(db, keep=run.id)

    @staticmethod
    def _counter(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT value FROM store_counters WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    def _evict_runs(self, db: sqlite3.Connection, keep: str) -> None:
        total = self._counter(db, "runs_bytes")
        if total <= self.max_history_bytes:
            return
        # Down to the low-water mark: the next runs fit without evicting again.
        oldest = db.execute("SELECT id, bytes FROM runs ORDER BY started_at ASC")
        victims = over_budget(oldest, total, low_water(self.max_history_bytes), keep=keep)
        db.executemany("DELETE FROM runs WHERE id = ?", [(v,) for v in victims])

    def history_bytes(self) -> int:
        """What the history holds, in bytes (what its budget counts)."""
        return self._read(lambda db: self._counter(db, "runs_bytes"))

    def count_refused(self, code: str) -> None:
        """A run refused before it started (RUN_BUSY): counted, never kept as a run."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO store_counters VALUES (?, 1) "
                "ON CONFLICT (name) DO UPDATE SET value = value + 1",
                (REFUSED + code,),
            )

    def refused_runs(self) -> dict[str, int]:
        """How many runs were refused before they started, by error code."""
        rows = self._read(
            lambda db: db.execute(
                "SELECT name, value FROM store_counters WHERE name LIKE 'refused:%'"
            ).fetchall()
        )
        return {r[0][len(REFUSED) :]: int(r[1]) for r in rows}

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        sql, args = list_runs_sql(limit, query, SQLITE)
        return self._read(lambda db: [run_from_row(row) for row in db.execute(sql, args)])

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._read(lambda db: db.execute(get_run_sql(SQLITE), {"id": run_id}).fetchone())
        return run_from_row(row) if row else None

    def owner_of_run(self, run_id: str) -> str | None:
        row = self._read(
            lambda db: db.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
        )
        return row[0] if row else None

    def owner_of_ref(self, ref: str) -> str | None:
        row = self._read(
            lambda db: db.execute(
                "SELECT r.owner FROM results v JOIN runs r ON r.id = v.run_id WHERE v.ref = ?",
                (ref,),
            ).fetchone()
        )
        return row[0] if row else None

    # ------------------------------------------------------------------ idempotency keys
    def reserve_run_key(
        self, owner: str, key: str, digest: str, *, holder: str, max_age_s: float
    ) -> RunKey:
        now = time.time()
        with self._tx(durable=True) as db:
            db.execute("DELETE FROM run_keys WHERE created_at < ?", (now - max_age_s,))
            db.execute(
                "INSERT OR IGNORE INTO run_keys (owner, key, digest, holder, run_id, created_at) "
                "VALUES (?, ?, ?, ?, NULL, ?)",
                (_text(owner), _text(key), digest, holder, now),
            )
            row = db.execute(
                "SELECT * FROM run_keys WHERE owner = ? AND key = ?", (_text(owner), _text(key))
            ).fetchone()
        return RunKey(**dict(row), age_s=max(0.0, now - row["created_at"]))

    def get_run_key(self, owner: str, key: str) -> RunKey | None:
        now = time.time()
        row = self._read(
            lambda db: db.execute(
                "SELECT * FROM run_keys WHERE owner = ? AND key = ?", (_text(owner), _text(key))
            ).fetchone()
        )
        return RunKey(**dict(row), age_s=max(0.0, now - row["created_at"])) if row else None

    def settle_run_key(self, owner: str, key: str, *, holder: str, run_id: str | None) -> None:
        """Name the run of a reserved key; `run_id` None gives the key back (nothing ran)."""
        with self._tx(durable=True) as db:
            if run_id is None:
                db.execute(
                    "DELETE FROM run_keys WHERE owner = ? AND key = ? AND holder = ? "
                    "AND run_id IS NULL",
                    (_text(owner), _text(key), holder),
                )
            else:
                db.execute(
                    "UPDATE run_keys SET run_id = ? WHERE owner = ? AND key = ? AND holder = ?",
                    (run_id, _text(owner), _text(key), holder),
                )

    # ------------------------------------------------------------------ approvals
    @contextmanager
    def _approval_rows(self) -> Iterator[_Rows]:
        with self._tx(durable=True) as db:
            rows = _Rows(db)
            yield rows
            if rows.wrote:
                db.execute("UPDATE approval_changes SET version = version + 1")

    def approvals_version(self) -> int:
        """A number that grows with every change to the approvals (from any process)."""
        return int(
            self._read(lambda db: db.execute("SELECT version FROM approval_changes").fetchone()[0])
        )

    def wait_approvals_change(self, since: int, timeout_s: float) -> int:
        """Block until the approvals' version passes `since` (any process's change, read
        every `approvals.watch.POLL_S` by one thread for all waiters) or `timeout_s`
        passes; the version (`since` on a timeout)."""
        self._conn()  # closed: StoreError
        return self._watch.wait(since, timeout_s)

    def watch_approvals(
        self, callback: Callable[[int], None], on_error: Callable[[str], None] | None = None
    ) -> Callable[[], None]:
        """Call `callback(version)` (from the watching thread) when the approvals change,
        and `on_error(text)` when reading them fails; returns the function that stops it.
        A coroutine waiting so holds no thread."""
        self._conn()  # closed: StoreError
        return self._watch.watch(callback, on_error)

    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        with self._approval_rows() as rows:
            rows.insert(approvals)

    def _lapsed_batches(self) -> list[str]:
        return [
            r[0]
            for r in self._read(lambda db: db.execute(lapsed_sql("?"), (time.time(),)).fetchall())
        ]

    def _open_rows(self, host: str | None) -> tuple[list[PendingApproval], float]:
        now = time.time()
        sql = f"SELECT * FROM approvals WHERE {OPEN_SQL}"
        args: tuple[str, ...] = ()
        if host is not None:
            sql, args = sql + " AND host = ?", (_text(host),)
        rows = self._read(lambda db: db.execute(sql, args).fetchall())
        return [approval_from_row(r, now) for r in rows], now

    def _renew(self, claim_id: str, ids: list[str], until_s: float) -> set[str]:
        statement = renew_sql(":until", SQLITE)
        with self._tx() as db:
            renewed = db.execute(
                statement, {"until": time.time() + until_s, "claim": claim_id}
            ).fetchall()
        return {r[0] for r in renewed} & set(ids)

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        self.settle_lapsed()  # a resume that stopped after its guard reads unfinished now
        now = time.time()
        where, args = approvals_where(status, ":now", SQLITE)
        args["now"] = now
        sql = f"SELECT * FROM approvals WHERE {where} ORDER BY created_at, id"
        return self._read(lambda db: [approval_from_row(row, now) for row in db.execute(sql, args)])

    def get_approval(self, approval_id: str) -> PendingApproval | None:
        row = self._read(
            lambda db: db.execute("SELECT * FROM approvals WHERE id = ?", (approval_id,)).fetchone()
        )
        return approval_from_row(row) if row else None

    def get_approvals(self, approval_ids: Iterable[str]) -> dict[str, PendingApproval]:
        ids = sorted(set(approval_ids))
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))  # SQLite allows 32,766 variables
        rows = self._read(
            lambda db: db.execute(f"SELECT * FROM approvals WHERE id IN ({marks})", ids).fetchall()
        )
        return {r["id"]: approval_from_row(r) for r in rows}

    # ------------------------------------------------------------------ continuations
    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        """True the first time this continuation is used; False ever after (until it expires)."""
        now = time.time()
        takeover = REPLAY_GRANT.get()
        with self._tx(durable=True) as db:
            db.execute("DELETE FROM consumed_continuations WHERE expires_at < ?", (now,))
            inserted = db.execute(
                "INSERT OR IGNORE INTO consumed_continuations (digest, expires_at, consumed_at) "
                "VALUES (?, ?, ?)",
                (digest, expires_at, now),
            ).rowcount
            if inserted != 1 and takeover is not None:
                # Spent before, by the resume this claim took over: once more, for it alone.
                inserted = db.execute(
                    "DELETE FROM consumed_continuations WHERE digest = ?",
                    (grant_key(takeover, digest),),
                ).rowcount
        return inserted == 1


__all__ = [
    "DEFAULT_ENVELOPE_BYTES",
    "DEFAULT_HISTORY_BYTES",
    "DEFAULT_MAX_AGE_S",
    "DEFAULT_MAX_BYTES",
    "PREVIEW_BYTES",
    "SCHEMA_VERSION",
    "SqliteStore",
    "StoreError",
    "migrate",
]
