"""The SQLite store: stored values by item, run history and pending approvals.

One file in the data directory, WAL mode so several processes can read and
write at once, a versioned schema migrated on open, and a size budget with
least-recently-used eviction plus an age limit for stored values.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ..sandbox.result_store import StoredItems
from .records import ApprovalConflict, PendingApproval, RunRecord

T = TypeVar("T")

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB of stored values
DEFAULT_MAX_AGE_S = 30 * 24 * 3600  # 30 days
SCHEMA_VERSION = 1

MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE results (
        ref TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        total INTEGER NOT NULL,
        chunk_items INTEGER NOT NULL,
        rest TEXT,
        run_id TEXT,
        bytes INTEGER NOT NULL,
        created_at REAL NOT NULL,
        used_at REAL NOT NULL
    );
    CREATE INDEX results_used ON results (used_at);
    CREATE INDEX results_created ON results (created_at);
    CREATE TABLE result_chunks (
        ref TEXT NOT NULL,
        idx INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (ref, idx)
    ) WITHOUT ROWID;
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at REAL NOT NULL,
        duration_ms REAL NOT NULL,
        status TEXT NOT NULL,
        source TEXT NOT NULL,
        host TEXT NOT NULL,
        error_code TEXT,
        value_ref TEXT,
        logs_ref TEXT,
        resumed_from TEXT,
        envelope TEXT NOT NULL
    );
    CREATE INDEX runs_started ON runs (started_at);
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        source TEXT NOT NULL,
        host TEXT NOT NULL,
        path TEXT NOT NULL,
        args TEXT NOT NULL,
        payload TEXT NOT NULL,
        message TEXT NOT NULL,
        continuation TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        decided_at REAL,
        resumed_run_id TEXT
    );
    CREATE INDEX approvals_status ON approvals (status, created_at);
    """,
}


class StoreError(RuntimeError):
    """The store cannot be used (corrupt, unwritable, from a newer version)."""


class SqliteStore:
    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_age_s: float = DEFAULT_MAX_AGE_S,
    ) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=10, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA busy_timeout = 10000")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"The store at {self.path} cannot be used: {exc}") from exc

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            else:
                self._db.execute("COMMIT")

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return fn(self._db)

    def _migrate(self) -> None:
        with self._write() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"The store at {self.path} was written by a newer run-repl (schema {version}); "
                    "upgrade run-repl or use another --data-dir."
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _statements(MIGRATIONS[target]):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(target),),
                )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ values
    def put_items(self, stored: StoredItems) -> None:
        now = time.time()
        size = stored.size
        rest = json.dumps(stored.rest) if stored.rest is not None else None
        with self._write() as db:
            db.execute("DELETE FROM result_chunks WHERE ref = ?", (stored.ref,))
            db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stored.ref,
                    stored.kind,
                    stored.path,
                    stored.total,
                    stored.chunk_items,
                    rest,
                    stored.run_id,
                    size,
                    stored.created_at,
                    now,
                ),
            )
            db.executemany(
                "INSERT INTO result_chunks (ref, idx, data) VALUES (?, ?, ?)",
                (
                    (stored.ref, i, text.encode("utf-8", "surrogatepass"))
                    for i, text in enumerate(stored.chunks)
                ),
            )
            self._evict(db, now, keep=stored.ref)

    def _evict(self, db: sqlite3.Connection, now: float, keep: str) -> None:
        expired = [
            r
            for (r,) in db.execute(
                "SELECT ref FROM results WHERE created_at < ?", (now - self.max_age_s,)
            )
        ]
        total = db.execute("SELECT COALESCE(SUM(bytes), 0) FROM results").fetchone()[0]
        victims = list(expired)
        if total > self.max_bytes:
            for ref, size in db.execute("SELECT ref, bytes FROM results ORDER BY used_at ASC"):
                if total <= self.max_bytes:
                    break
                if ref == keep or ref in victims:
                    continue
                victims.append(ref)
                total -= size
        for ref in victims:
            db.execute("DELETE FROM result_chunks WHERE ref = ?", (ref,))
            db.execute("DELETE FROM results WHERE ref = ?", (ref,))

    def _meta(self, db: sqlite3.Connection, ref: str) -> StoredItems | None:
        row = db.execute(
            "SELECT kind, path, total, chunk_items, rest, run_id, created_at, used_at FROM results WHERE ref = ?",
            (ref,),
        ).fetchone()
        if row is None:
            return None
        kind, path, total, chunk_items, rest, run_id, created_at, _used_at = row
        if time.time() - created_at > self.max_age_s:
            return None
        return StoredItems(
            ref,
            path,
            total,
            [],
            json.loads(rest) if rest else None,
            chunk_items,
            kind,
            run_id,
            created_at,
        )

    def _touch(self, ref: str) -> None:
        # Eviction goes by last use; a minute's precision spares a write per page.
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE results SET used_at = ? WHERE ref = ? AND used_at < ?", (now, ref, now - 60)
            )

    def get_items(self, ref: str) -> StoredItems | None:
        def read(db: sqlite3.Connection) -> StoredItems | None:
            meta = self._meta(db, ref)
            if meta is None:
                return None
            meta.chunks = [
                bytes(d).decode("utf-8", "surrogatepass")
                for (d,) in db.execute(
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
            rows = db.execute(
                "SELECT data FROM result_chunks WHERE ref = ? AND idx BETWEEN ? AND ? ORDER BY idx",
                (ref, first, last),
            ).fetchall()
            return meta, [bytes(d).decode("utf-8", "surrogatepass") for (d,) in rows]

        found = self._read(read)
        if found is not None:
            self._touch(ref)
        return found

    def stored_bytes(self) -> int:
        return int(
            self._read(
                lambda db: db.execute("SELECT COALESCE(SUM(bytes), 0) FROM results").fetchone()[0]
            )
        )

    # ------------------------------------------------------------------ runs
    def record_run(self, run: RunRecord) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.id,
                    run.started_at,
                    run.duration_ms,
                    run.status,
                    run.source,
                    run.host,
                    run.error_code,
                    run.value_ref,
                    run.logs_ref,
                    run.resumed_from,
                    json.dumps(run.envelope, default=str),
                ),
            )

    def list_runs(self, limit: int = 50, query: str | None = None) -> list[RunRecord]:
        sql = "SELECT * FROM runs"
        args: list[Any] = []
        if query:
            sql += (
                " WHERE source LIKE ? ESCAPE '\\' OR status LIKE ? ESCAPE '\\'"
                " OR COALESCE(error_code, '') LIKE ? ESCAPE '\\'"
            )
            like = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            args += [like, like, like]
        sql += " ORDER BY started_at DESC LIMIT ?"
        args.append(limit)
        return self._read(lambda db: [_run(row) for row in db.execute(sql, args)])

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._read(
            lambda db: db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        )
        return _run(row) if row else None

    # ------------------------------------------------------------------ approvals
    def add_approvals(self, approvals: list[PendingApproval]) -> None:
        with self._write() as db:
            for a in approvals:
                db.execute(
                    "INSERT OR REPLACE INTO approvals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        a.id,
                        a.run_id,
                        a.source,
                        a.host,
                        a.path,
                        json.dumps(a.args, default=str),
                        json.dumps(a.payload, default=str),
                        a.message,
                        a.continuation,
                        a.status,
                        a.created_at,
                        a.decided_at,
                        a.resumed_run_id,
                    ),
                )

    def list_approvals(self, status: str | None = "pending") -> list[PendingApproval]:
        if status is None:
            sql, args = "SELECT * FROM approvals ORDER BY created_at", ()
        else:
            sql, args = "SELECT * FROM approvals WHERE status = ? ORDER BY created_at", (status,)
        return self._read(lambda db: [_approval(row) for row in db.execute(sql, args)])

    def get_approval(self, approval_id: str) -> PendingApproval | None:
        row = self._read(
            lambda db: db.execute("SELECT * FROM approvals WHERE id = ?", (approval_id,)).fetchone()
        )
        return _approval(row) if row else None

    def claim_approvals(self, ids: list[str]) -> list[PendingApproval]:
        """Take these approvals for one resume; refused if any is not pending any more."""
        with self._write() as db:
            rows = []
            for approval_id in ids:
                row = db.execute("SELECT * FROM approvals WHERE id = ?", (approval_id,)).fetchone()
                if row is None:
                    raise KeyError(approval_id)
                approval = _approval(row)
                if approval.status != "pending":
                    raise ApprovalConflict(
                        f"Approval {approval_id} is already {approval.status}: it can be decided only once."
                    )
                rows.append(approval)
            for approval in rows:
                db.execute("UPDATE approvals SET status = 'claimed' WHERE id = ?", (approval.id,))
                approval.status = "claimed"
            return rows

    def release_approvals(self, ids: list[str]) -> None:
        """Give claimed approvals back (the resume could not start)."""
        with self._write() as db:
            for approval_id in ids:
                db.execute(
                    "UPDATE approvals SET status = 'pending' WHERE id = ? AND status = 'claimed'",
                    (approval_id,),
                )

    def finish_approvals(self, decisions: dict[str, str], resumed_run_id: str | None) -> None:
        now = time.time()
        with self._write() as db:
            for approval_id, status in decisions.items():
                db.execute(
                    "UPDATE approvals SET status = ?, decided_at = ?, resumed_run_id = ? WHERE id = ?",
                    (status, now, resumed_run_id, approval_id),
                )

    def replace_continuation(self, ids: list[str], continuation: str, run_id: str) -> None:
        """Pending approvals that the resumed run is still waiting on get its new token."""
        with self._write() as db:
            for approval_id in ids:
                db.execute(
                    "UPDATE approvals SET continuation = ?, run_id = ?, status = 'pending' "
                    "WHERE id = ? AND status IN ('pending', 'claimed')",
                    (continuation, run_id, approval_id),
                )


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _run(row: tuple[Any, ...]) -> RunRecord:
    (
        rid,
        started_at,
        duration_ms,
        status,
        source,
        host,
        error_code,
        value_ref,
        logs_ref,
        resumed_from,
        envelope,
    ) = row
    return RunRecord(
        id=rid,
        started_at=started_at,
        duration_ms=duration_ms,
        status=status,
        source=source,
        host=host,
        error_code=error_code,
        value_ref=value_ref,
        logs_ref=logs_ref,
        resumed_from=resumed_from,
        envelope=json.loads(envelope),
    )


def _approval(row: tuple[Any, ...]) -> PendingApproval:
    (
        aid,
        run_id,
        source,
        host,
        path,
        args,
        payload,
        message,
        continuation,
        status,
        created_at,
        decided_at,
        resumed_run_id,
    ) = row
    return PendingApproval(
        id=aid,
        run_id=run_id,
        source=source,
        host=host,
        path=path,
        args=json.loads(args),
        payload=json.loads(payload),
        message=message,
        continuation=continuation,
        status=status,
        created_at=created_at,
        decided_at=decided_at,
        resumed_run_id=resumed_run_id,
    )
