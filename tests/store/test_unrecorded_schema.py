"""A schema whose version was never recorded (a `schema_version` table with no
row, a `meta` table without its row, a zero `user_version`) is migrated from the
tables it holds, and its version recorded: the next start finds it up to date,
never "relation already exists" (which sent the store to memory)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from store_kinds import execute, open_spec, pg_url

from run_repl.store import SqliteStore
from run_repl.store.backends import postgres_schema as pg_schema
from run_repl.store.backends import sqlite as sq
from run_repl.store.records import PendingApproval


def approval(aid: str) -> PendingApproval:
    return PendingApproval(
        id=aid,
        run_id="run_1",
        source="src",
        host="demo",
        path="documents.publish",
        args=[],
        payload=None,
        message="Publish?",
        continuation=f"tok-{aid}",
        batch=f"b-{aid}",
    )


def pg_version(schema: str) -> list[tuple[int, ...]]:
    with psycopg.connect(pg_url() or "", autocommit=True) as conn:
        return conn.execute(
            sql.SQL("SELECT version FROM {}.schema_version").format(sql.Identifier(schema))
        ).fetchall()


@pytest.mark.parametrize("version", sorted(pg_schema.MIGRATIONS))
def test_a_team_schema_with_an_empty_version_table_is_migrated_and_recorded(
    postgres_spec: str, version: int
) -> None:
    schema = postgres_spec.partition(":")[2]
    with psycopg.connect(pg_url() or "", autocommit=True) as conn:
        pg_schema.migrate(conn, schema, "the test store", target=version)
    execute(postgres_spec, "DELETE FROM schema_version")
    for _ in range(2):  # and the next start finds it recorded
        store = open_spec(postgres_spec)
        store.add_approvals([approval(f"int_{_}")])
        assert store.get_approval(f"int_{_}") is not None
        store.close()
        assert pg_version(schema) == [(pg_schema.SCHEMA_VERSION,)]


def sqlite_at(path: Path, version: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.row_factory = sqlite3.Row
    sq.migrate(db, target=version)
    return db


@pytest.mark.parametrize("version", sorted(sq.MIGRATIONS))
@pytest.mark.parametrize("forgotten", ["user_version", "meta_row"])
def test_a_sqlite_store_whose_version_was_not_recorded_is_migrated_and_recorded(
    tmp_path: Path, version: int, forgotten: str
) -> None:
    path = tmp_path / "run-repl.sqlite3"
    db = sqlite_at(path, version)
    db.execute("PRAGMA user_version = 0")
    if forgotten == "meta_row":  # the table of the first schema's number, its row gone
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.close()
    for _ in range(2):
        store = SqliteStore(path)
        store.add_approvals([approval(f"int_{_}")])
        assert store.get_approval(f"int_{_}") is not None
        store.close()
        check = sqlite3.connect(path)
        assert check.execute("PRAGMA user_version").fetchone() == (sq.SCHEMA_VERSION,)
        check.close()


def test_every_migration_leaves_a_mark_a_lost_number_is_found_by() -> None:
    assert set(sq._MARKS) == set(sq.MIGRATIONS)
    assert set(pg_schema._MARKS) == set(pg_schema.MIGRATIONS)
