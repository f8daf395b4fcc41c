"""The team store's tables on PostgreSQL, and the migrations that make them.

Everything lives in one schema (`run_repl` unless configured), so a store
shares a database with anything else and two teams can share a server. The
schema's version is a row in its `schema_version` table; `migrate` brings it
up to date in one transaction (PostgreSQL's DDL is transactional: a failed
step leaves nothing behind) under an advisory lock, so machines that start
at the same moment migrate once. A schema written by a newer run-repl is
refused, never touched.
"""

from __future__ import annotations

import hashlib
import re
import socket
from collections.abc import Callable

import psycopg
from psycopg import sql

from ..store_error import StoreError
from ..store_url import DEFAULT_SCHEMA

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
CHANGE_SHARDS = 16
COUNTER_SHARDS = 16


def check_schema_name(name: str) -> str:
    """A schema name run-repl may create: lower-case letters, digits, underscores."""
    if not _NAME.match(name):
        raise StoreError(
            f"{name!r} is not a usable schema name: use lower-case letters, digits and "
            "underscores, starting with a letter (at most 63)",
            "unusable",
        )
    return name


def advisory_key(*parts: str) -> int:
    """A 64-bit advisory lock key for these parts (signed, as PostgreSQL wants it)."""
    digest = hashlib.sha256("\x00".join(("run-repl", *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def changes_channel(schema: str) -> str:
    """The LISTEN/NOTIFY channel of a schema's approval changes (an identifier, <= 63 bytes)."""
    name = f"{schema}_approvals"
    if len(name) <= 63:
        return name
    return f"{schema[:40]}_{hashlib.sha256(schema.encode()).hexdigest()[:16]}"


def _v1(conn: psycopg.Connection) -> None:
    """Values by item, the history, approvals with their claims, spent continuations,
    the approvals' change counter, and the record of each approval operation."""
    for statement in (
        """CREATE TABLE results (
            ref text PRIMARY KEY, kind text NOT NULL, path text NOT NULL, total bigint NOT NULL,
            chunk_items integer NOT NULL, rest text, run_id text, bytes bigint NOT NULL,
            created_at double precision NOT NULL, used_at double precision NOT NULL
        )""",
        "CREATE INDEX results_used ON results (used_at)",
        "CREATE INDEX results_created ON results (created_at)",
        # Chunks are JSON text as UTF-8 bytes (surrogatepass: guest strings may hold lone
        # surrogates, which PostgreSQL text cannot); they go with their value.
        """CREATE TABLE result_chunks (
            ref text NOT NULL REFERENCES results (ref) ON DELETE CASCADE,
            idx integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (ref, idx)
        )""",
        """CREATE TABLE runs (
            id text PRIMARY KEY, started_at double precision NOT NULL,
            duration_ms double precision NOT NULL, status text NOT NULL, source text NOT NULL,
            host text NOT NULL, error_code text, value_ref text, logs_ref text,
            resumed_from text, envelope text NOT NULL, preview text,
            envelope_cut boolean NOT NULL DEFAULT false, bytes bigint NOT NULL
        )""",
        "CREATE INDEX runs_started ON runs (started_at)",
        # source_exact: the source as JSON when PostgreSQL text cannot hold it as it is
        # (a NUL, a lone surrogate): the resume needs it byte for byte.
        """CREATE TABLE approvals (
            id text PRIMARY KEY, run_id text NOT NULL, source text NOT NULL,
            source_exact text, host text NOT NULL, path text NOT NULL, args text NOT NULL,
            payload text NOT NULL, message text NOT NULL, continuation text NOT NULL,
            batch text NOT NULL, status text NOT NULL, created_at double precision NOT NULL,
            decision text, decided_by text, decided_at double precision, decision_id text,
            claim_id text, claimed_by text, claimed_at double precision,
            claim_expires_at double precision, executing_at double precision,
            finished_at double precision, resumed_run_id text, outcome text, outcome_code text,
            note text
        )""",
        "CREATE INDEX approvals_status ON approvals (status, created_at)",
        "CREATE INDEX approvals_batch ON approvals (batch)",
        # consumed_by: who consumed it, so a retry after a lost commit knows it was itself.
        """CREATE TABLE consumed_continuations (
            digest text PRIMARY KEY, expires_at double precision NOT NULL,
            consumed_at double precision NOT NULL, consumed_by text NOT NULL
        )""",
        "CREATE INDEX consumed_expiry ON consumed_continuations (expires_at)",
        # The approvals' version is the sum of these counters: each write bumps one at
        # random, so writers on many machines do not queue behind one row's lock.
        """CREATE TABLE approval_changes (
            shard integer PRIMARY KEY, version bigint NOT NULL
        )""",
        f"INSERT INTO approval_changes SELECT s, 0 FROM generate_series(0, {CHANGE_SHARDS - 1}) s",
        # What each approval operation answered, kept a day: after a commit whose answer
        # was lost with the connection, the operation is looked up here, never run twice.
        """CREATE TABLE approval_ops (
            id text PRIMARY KEY, answer text NOT NULL, done_at double precision NOT NULL
        )""",
        "CREATE INDEX approval_ops_done ON approval_ops (done_at)",
    ):
        conn.execute(statement)
    # lz4 where the server has it: chunks are written and read whole, and pglz is slow.
    lz4 = conn.execute(
        "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
    ).fetchone()
    if lz4 and lz4[0]:
        conn.execute("ALTER TABLE result_chunks ALTER COLUMN data SET COMPRESSION lz4")


def _v2(conn: psycopg.Connection) -> None:
    """Who owns a run and an approval (an MCP principal), the channel of a decision
    beside its decider, and the `run` tool's idempotency keys (shared by every server
    of the team, so a retry on another server finds the first call's run)."""
    for statement in (
        "ALTER TABLE runs ADD COLUMN owner text",
        "ALTER TABLE approvals ADD COLUMN owner text",
        "ALTER TABLE approvals ADD COLUMN decided_via text",
        """CREATE TABLE run_keys (
            owner text NOT NULL, key text NOT NULL, digest text NOT NULL, holder text NOT NULL,
            run_id text, created_at double precision NOT NULL, PRIMARY KEY (owner, key)
        )""",
        "CREATE INDEX run_keys_created ON run_keys (created_at)",
    ):
        conn.execute(statement)


def _v3(conn: psycopg.Connection) -> None:
    """Running counters: the bytes of the history and of the values, kept by triggers
    in the transaction of each write (a budget check reads COUNTER_SHARDS rows, never
    a SUM over the table), and the runs refused before they started."""
    # Sharded as the approvals' changes are: each connection adds to its own shard (by
    # its backend's pid), so writers on many machines seldom wait on one row, and one
    # transaction locks one shard per counter (no two writers lock two in turn).
    schema = conn.execute("SELECT current_schema()").fetchone()
    assert schema is not None and schema[0]
    counters = sql.Identifier(schema[0], "store_counters")
    conn.execute(
        """CREATE TABLE store_counters (
            name text NOT NULL, shard integer NOT NULL, value bigint NOT NULL,
            PRIMARY KEY (name, shard)
        )"""
    )
    for table in ("runs", "results"):
        conn.execute(
            sql.SQL(
                "INSERT INTO store_counters SELECT {name}, s, CASE WHEN s = 0 THEN "
                "(SELECT COALESCE(SUM(bytes), 0) FROM {table}) ELSE 0 END "
                "FROM generate_series(0, {last}) s"
            ).format(
                name=sql.Literal(f"{table}_bytes"),
                table=sql.Identifier(table),
                last=sql.Literal(COUNTER_SHARDS - 1),
            )
        )
    conn.execute(
        sql.SQL(
            """CREATE FUNCTION count_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
            DECLARE delta bigint := 0;
            BEGIN
                IF TG_OP <> 'INSERT' THEN delta := delta - OLD.bytes; END IF;
                IF TG_OP <> 'DELETE' THEN delta := delta + NEW.bytes; END IF;
                IF delta <> 0 THEN
                    UPDATE {counters} SET value = value + delta
                    WHERE name = TG_TABLE_NAME || '_bytes' AND shard = pg_backend_pid() % {n};
                END IF;
                RETURN NULL;
            END $body$"""
        ).format(counters=counters, n=sql.Literal(COUNTER_SHARDS))
    )
    for table in ("runs", "results"):
        conn.execute(
            sql.SQL(
                "CREATE TRIGGER {trigger} AFTER INSERT OR DELETE OR UPDATE OF bytes ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION count_bytes()"
            ).format(trigger=sql.Identifier(f"{table}_bytes"), table=sql.Identifier(table))
        )


def _v4(conn: psycopg.Connection) -> None:
    """A paused run names the run that resumed it (that run already names the paused one)."""
    conn.execute("ALTER TABLE runs ADD COLUMN resumed_as text")
    # Of two resumes of one run (the first did not go), the later one.
    conn.execute(
        "UPDATE runs SET resumed_as = later.id FROM ("
        "SELECT DISTINCT ON (resumed_from) resumed_from, id FROM runs "
        "WHERE resumed_from IS NOT NULL ORDER BY resumed_from, started_at DESC"
        ") AS later WHERE runs.id = later.resumed_from AND runs.id <> later.id"
    )


def _v5(conn: psycopg.Connection) -> None:
    """Resumes run where the host lives: an approval says whether its call may run again
    with the same key (`idempotent`) and which process started its run and waits for it
    (`resume_by`); the processes that can resume a host's runs beat in `executors`
    (times on the server's clock)."""
    for statement in (
        "ALTER TABLE approvals ADD COLUMN idempotent boolean NOT NULL DEFAULT false",
        "ALTER TABLE approvals ADD COLUMN resume_by text",
        """CREATE TABLE executors (
            id text PRIMARY KEY, host text NOT NULL, functions text NOT NULL,
            label text NOT NULL, kind text NOT NULL, started_at double precision NOT NULL,
            seen_at double precision NOT NULL
        )""",
        "CREATE INDEX executors_host ON executors (host, seen_at)",
    ):
        conn.execute(statement)


def _v6(conn: psycopg.Connection) -> None:
    """Small values in their own row: `inline_chunks` holds the chunks of a value whose
    chunks fit INLINE_VALUE_BYTES (no chunk rows, no COPY); NULL for one kept by chunk
    rows, as every value before this version was."""
    conn.execute("ALTER TABLE results ADD COLUMN IF NOT EXISTS inline_chunks bytea")


MIGRATIONS: dict[int, Callable[[psycopg.Connection], None]] = {
    1: _v1,
    2: _v2,
    3: _v3,
    4: _v4,
    5: _v5,
    6: _v6,
}
SCHEMA_VERSION = max(MIGRATIONS)


def newer_schema(where: str, version: int) -> StoreError:
    return StoreError(
        f"{where} was made by a newer run-repl (schema version {version}; this one knows "
        f"{SCHEMA_VERSION}): upgrade run-repl on this machine (every machine of a team "
        "should run the same version)",
        "newer",
    )


def stored_version(conn: psycopg.Connection, schema: str, row_only: bool = False) -> int | None:
    """The schema's version, or None when it has no run-repl tables yet (with
    `row_only`: None too when its version table has no row)."""
    found = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f'"{schema}".schema_version',)
    ).fetchone()
    if not found or not found[0]:
        return None
    row = conn.execute(
        sql.SQL("SELECT version FROM {}.schema_version").format(sql.Identifier(schema))
    ).fetchone()
    return int(row[0]) if row else 0


# What each version leaves behind: (table, column or None). A schema whose number was
# never recorded is at the highest version whose mark it holds (each migration is one
# transaction, so none is ever half there).
_MARKS: dict[int, tuple[str, str | None]] = {
    1: ("results", None),
    2: ("run_keys", None),
    3: ("store_counters", None),
    4: ("runs", "resumed_as"),
    5: ("executors", None),
    6: ("results", "inline_chunks"),
}


def found_version(conn: psycopg.Connection, schema: str) -> int:
    """The version the schema's tables show (0: no run-repl tables)."""
    found = 0
    for version, (table, column) in sorted(_MARKS.items()):
        row = conn.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = %s "
            "AND table_name = %s AND (%s::text IS NULL OR column_name = %s)",
            (schema, table, column, column),
        ).fetchone()
        if not row or not row[0]:
            break
        found = version
    return found


def migrate(conn: psycopg.Connection, schema: str, where: str, target: int = SCHEMA_VERSION) -> int:
    """Bring `schema` to version `target` (creating it if missing); the version it was at.

    One transaction under an advisory lock: of several machines starting at once,
    one migrates and the others find it done. Raises StoreError for a newer schema."""
    ident = sql.Identifier(schema)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("migrate", schema),))
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(ident))
        version = stored_version(conn, schema)
        if version is None:
            conn.execute(
                """CREATE TABLE schema_version (
                    one integer PRIMARY KEY CHECK (one = 1), version integer NOT NULL,
                    migrated_at timestamptz NOT NULL DEFAULT now(), migrated_by text NOT NULL
                )"""
            )
            version = 0
        recorded = stored_version(conn, schema, row_only=True)
        if version > SCHEMA_VERSION:
            raise newer_schema(where, version)
        # A version table without its row (or behind its tables): what the tables show.
        version = max(version, found_version(conn, schema))
        start = version
        for step in range(version + 1, target + 1):
            MIGRATIONS[step](conn)
            version = step
        if version != recorded:
            conn.execute(
                "INSERT INTO schema_version (one, version, migrated_by) VALUES (1, %s, %s) "
                "ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version, "
                "migrated_at = now(), migrated_by = EXCLUDED.migrated_by",
                (version, f"run-repl on {socket.gethostname()}"),
            )
    return start


__all__ = [
    "CHANGE_SHARDS",
    "COUNTER_SHARDS",
    "DEFAULT_SCHEMA",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "advisory_key",
    "changes_channel",
    "check_schema_name",
    "migrate",
    "newer_schema",
    "stored_version",
]
