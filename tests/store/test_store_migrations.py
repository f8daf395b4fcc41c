"""Every schema migration, from the version before it, with the data that version held."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from run_repl.sandbox.wire.result_store import StoredItems, page_of
from run_repl.store import SqliteStore
from run_repl.store.backends import sqlite as sq
from run_repl.store.backends.sqlite import DEFAULT_ENVELOPE_BYTES, PREVIEW_BYTES, SCHEMA_VERSION
from run_repl.store.records import PendingApproval, continuation_batch


def at_version(path: Path, version: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.row_factory = sqlite3.Row
    sq.migrate(db, target=version)
    return db


def v1_rows(db: sqlite3.Connection) -> None:
    """What version 1 stored: a value, a run, and approvals pending, claimed and approved."""
    now = time.time()
    db.execute(
        "INSERT INTO results VALUES ('res_0000000000000001', 'value', '$', 3, 1000, NULL, 'run_1', 9, ?, ?)",
        (now, now),
    )
    db.execute("INSERT INTO result_chunks VALUES ('res_0000000000000001', 0, ?)", (b"[1,2,3]",))
    db.execute(
        "INSERT INTO runs VALUES ('run_1', ?, 5.0, 'ok', 'return [1,2,3]', 'demo', NULL, "
        "'res_0000000000000001', NULL, NULL, ?)",
        (now, json.dumps({"status": "ok", "value": [1, 2, 3]})),
    )
    for aid, status, decided in (
        ("int_p", "pending", None),
        ("int_c", "claimed", None),
        ("int_a", "approved", now),
    ):
        db.execute(
            "INSERT INTO approvals VALUES (?, 'run_1', 'src', 'demo', 'documents.publish', '[]', "
            "'null', 'Publish?', ?, ?, ?, ?, NULL)",
            (aid, f"tok-{aid}", status, now, decided),
        )


def test_a_store_from_before_user_version_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "run-repl.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.row_factory = sqlite3.Row
    sq._v1(db)  # version 1 as it shipped: its number in a meta table
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    v1_rows(db)
    db.close()
    store = SqliteStore(path)
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert check.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone() is None
    assert page_of(store, "res_0000000000000001").items == [1, 2, 3]
    assert store.get_run("run_1").envelope["value"] == [1, 2, 3]


def test_migration_2_from_1_keeps_approvals_and_makes_old_claims_stuck(tmp_path: Path) -> None:
    db = at_version(tmp_path / "s.sqlite3", 1)
    v1_rows(db)
    sq.migrate(db, target=2)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    pending = store.get_approval("int_p")
    assert pending.status == "pending" and pending.batch == continuation_batch("tok-int_p")
    # A version 1 claim never ended and may have run: stuck until someone recovers it.
    claimed = store.get_approval("int_c")
    assert claimed.state() == "stuck" and "earlier run-repl" in (claimed.claimed_by or "")
    [ended] = store.recover_batch("int_c", by="ops")
    assert ended.status == "unfinished"
    approved = store.get_approval("int_a")
    assert approved.decision == "approve" and approved.finished_at == approved.decided_at
    assert store.consume_continuation("d", time.time() + 60) is True


def test_migration_3_from_2_sizes_the_history_and_cuts_what_is_over_budget(tmp_path: Path) -> None:
    db = at_version(tmp_path / "s.sqlite3", 2)
    huge = {"status": "error", "error": {"code": "RUN_EXCEPTION", "message": "x" * 3_000_000}}
    for rid, envelope in (("run_small", {"status": "ok", "value": 1}), ("run_huge", huge)):
        db.execute(
            "INSERT INTO runs (id, started_at, duration_ms, status, source, host, envelope) "
            "VALUES (?, 1, 1, 'ok', 'src', 'demo', ?)",
            (rid, json.dumps(envelope)),
        )
    sq.migrate(db, target=3)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    assert store.history_bytes() < DEFAULT_ENVELOPE_BYTES + 2 * PREVIEW_BYTES
    huge_run = store.get_run("run_huge")
    assert huge_run.envelope_cut and "more characters cut" in huge_run.envelope["error"]["message"]
    listed = {r.id: r for r in store.list_runs()}
    assert listed["run_huge"].partial and not listed["run_small"].partial
    assert listed["run_small"].envelope == {"status": "ok", "value": 1}


def test_a_failing_migration_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = at_version(tmp_path / "s.sqlite3", SCHEMA_VERSION - 1)
    before = db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE runs ADD COLUMN half_done TEXT")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setitem(sq.MIGRATIONS, SCHEMA_VERSION, broken)
    with pytest.raises(sqlite3.OperationalError):
        sq.migrate(db)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION - 1
    assert db.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before


def test_migration_4_from_3_counts_approval_changes(tmp_path: Path) -> None:
    db = at_version(tmp_path / "s.sqlite3", 3)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    before = store.approvals_version()
    store.add_approvals(
        [
            PendingApproval(
                id="int_1", run_id="r", source="1", path="a.b", message="m", continuation="t"
            )
        ]
    )
    assert store.approvals_version() == before + 1
    store.close()


def test_migration_5_from_4_keeps_runs_and_approvals_ownerless(tmp_path: Path) -> None:
    db = at_version(tmp_path / "s.sqlite3", 1)
    v1_rows(db)
    sq.migrate(db, target=4)
    sq.migrate(db, target=5)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    # What was there belongs to nobody (a person's own): no MCP principal sees it.
    assert store.get_run("run_1").owner is None
    assert store.owner_of_ref("res_0000000000000001") is None
    pending = store.get_approval("int_p")
    assert pending.owner is None and pending.decided_via is None
    key = store.reserve_run_key("alice", "k1", "d", holder="h", max_age_s=60)
    assert key.holder == "h" and key.run_id is None
    store.close()


def test_migration_6_from_5_counts_what_the_history_and_the_values_hold(tmp_path: Path) -> None:
    db = at_version(tmp_path / "s.sqlite3", 1)
    v1_rows(db)
    sq.migrate(db, target=5)
    (history,) = db.execute("SELECT SUM(bytes) FROM runs").fetchone()
    sq.migrate(db, target=6)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    assert history > 0 and store.history_bytes() == history
    assert store.stored_bytes() == 9  # the value's row says so
    store.record_run(store.get_run("run_1").model_copy(update={"id": "run_2"}))
    check = sqlite3.connect(tmp_path / "s.sqlite3")
    (now_held,) = check.execute("SELECT SUM(bytes) FROM runs").fetchone()
    check.close()
    assert now_held > history and store.history_bytes() == now_held  # it follows from here
    assert store.refused_runs() == {}
    store.close()


def test_migration_7_from_6_links_each_paused_run_to_the_run_that_resumed_it(
    tmp_path: Path,
) -> None:
    db = at_version(tmp_path / "s.sqlite3", 6)
    for run_id, started, status, resumed_from in (
        ("run_a", 1.0, "interrupted", None),
        ("run_b0", 2.0, "error", "run_a"),  # a resume that did not go (tried again later)
        ("run_b", 3.0, "ok", "run_a"),
        ("run_c", 4.0, "ok", None),
    ):
        db.execute(
            "INSERT INTO runs (id, started_at, duration_ms, status, source, host, "
            "resumed_from, envelope, bytes) VALUES (?, ?, 1, ?, 'src', 'demo', ?, '{}', 5)",
            (run_id, started, status, resumed_from),
        )
    sq.migrate(db, target=7)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    paused = store.get_run("run_a")
    assert paused is not None and (paused.resumed_as, paused.resumed_status) == ("run_b", "ok")
    listed = {r.id: (r.resumed_as, r.resumed_status) for r in store.list_runs()}
    assert listed == {
        "run_a": ("run_b", "ok"),
        "run_b0": (None, None),
        "run_b": (None, None),
        "run_c": (None, None),
    }
    assert store.history_bytes() == 20  # the counters are untouched
    store.close()


def test_migration_8_from_7_keeps_approvals_not_idempotent_and_resumed_by_anyone(
    tmp_path: Path,
) -> None:
    db = at_version(tmp_path / "s.sqlite3", 7)
    db.execute(
        "INSERT INTO approvals (id, run_id, source, host, path, args, payload, message, "
        "continuation, status, created_at, batch) VALUES ('int_1', 'run_1', 'src', 'demo', "
        "'documents.publish', '[1]', 'null', 'publish?', 'tok', 'pending', 1.0, 'b1')"
    )
    sq.migrate(db, target=8)
    assert db.execute("SELECT count(*) FROM executors").fetchone()[0] == 0
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    kept = store.get_approval("int_1")
    assert kept is not None and (kept.path, kept.args, kept.status) == (
        "documents.publish",
        [1],
        "pending",
    )
    assert (kept.idempotent, kept.resume_by) == (False, None)
    store.close()


def test_migration_9_from_8_reads_old_chunked_values_and_keeps_new_small_ones_inline(
    tmp_path: Path,
) -> None:
    db = at_version(tmp_path / "s.sqlite3", 8)
    now = time.time()
    # A value kept by chunk rows, as every value was.
    db.execute(
        "INSERT INTO results (ref, kind, path, total, chunk_items, rest, run_id, bytes, "
        "created_at, used_at) VALUES ('res_0000000000000001', 'value', '$', 3, 1000, NULL, "
        "'run_1', 9, ?, ?)",
        (now, now),
    )
    db.execute("INSERT INTO result_chunks VALUES ('res_0000000000000001', 0, ?)", (b"[1,2,3]",))
    sq.migrate(db, target=9)
    db.close()
    store = SqliteStore(tmp_path / "s.sqlite3")
    assert page_of(store, "res_0000000000000001", 0, 10).items == [1, 2, 3]
    assert store.stored_bytes() == 9  # the counter is untouched
    store.put_items(
        StoredItems(
            "res_0000000000000002", "$", 2, ["[4,5]"], run_id="run_1", created_at=time.time()
        )
    )
    assert page_of(store, "res_0000000000000002", 0, 10).items == [4, 5]
    assert store.stored_bytes() == 9 + 5
    check = sqlite3.connect(tmp_path / "s.sqlite3")
    chunked = check.execute(
        "SELECT ref, inline_chunks IS NULL FROM results ORDER BY ref"
    ).fetchall()
    (chunk_rows,) = check.execute("SELECT count(*) FROM result_chunks").fetchone()
    check.close()
    assert chunked == [("res_0000000000000001", 1), ("res_0000000000000002", 0)]
    assert chunk_rows == 1  # the old value's: the new one has none
    store.close()


TESTED = {
    2: test_migration_2_from_1_keeps_approvals_and_makes_old_claims_stuck,
    3: test_migration_3_from_2_sizes_the_history_and_cuts_what_is_over_budget,
    4: test_migration_4_from_3_counts_approval_changes,
    5: test_migration_5_from_4_keeps_runs_and_approvals_ownerless,
    6: test_migration_6_from_5_counts_what_the_history_and_the_values_hold,
    7: test_migration_7_from_6_links_each_paused_run_to_the_run_that_resumed_it,
    8: test_migration_8_from_7_keeps_approvals_not_idempotent_and_resumed_by_anyone,
    9: test_migration_9_from_8_reads_old_chunked_values_and_keeps_new_small_ones_inline,
}


def test_every_migration_has_a_test_from_the_version_before() -> None:
    # Version 1 is the first schema; a new migration is not done until it is here.
    assert set(TESTED) == set(range(2, SCHEMA_VERSION + 1)) == set(sq.MIGRATIONS) - {1}
