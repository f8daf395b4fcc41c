"""What only a server store has to get right: its schema and migrations, a password that
is never shown, a server that is down, goes away mid-operation, or loses a commit's
answer, and machines starting at once."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import forked_cli
import psycopg
import pytest
from psycopg import sql
from store_kinds import AT_ONCE, CHILD_PRELUDE, execute, open_spec, pg_url, release_together
from tcp_proxy import TcpProxy

from run_repl.sandbox.wire.result_store import StoredItems, page_of
from run_repl.store import (
    Claim,
    MemoryStore,
    PendingApproval,
    Queued,
    StoreError,
    open_store,
)
from run_repl.store.backends import postgres as postgres_store
from run_repl.store.backends import postgres_schema as schema_module
from run_repl.store.backends.postgres import PostgresStore
from run_repl.store.backends.postgres_schema import CHANGE_SHARDS, SCHEMA_VERSION, migrate
from run_repl.store.records import ResumeReport, RunRecord
from run_repl.store.store_url import has_password, mask, scrub

HERE = Path(__file__).parent


def approval(aid: str, token: str = "tok-1", **fields: object) -> PendingApproval:
    data: dict[str, object] = {"source": "src", "path": "bank.transfer", **fields}
    return PendingApproval(id=aid, run_id="run_1", continuation=token, **data)  # type: ignore[arg-type]


def schema_of(spec: str) -> str:
    return spec.partition(":")[2]


def admin() -> psycopg.Connection:
    return psycopg.connect(pg_url() or "", autocommit=True)


def tables(schema: str) -> list[str]:
    with admin() as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "ORDER BY table_name",
                (schema,),
            )
        ]


@pytest.fixture
def proxy(postgres_spec: str) -> Iterator[TcpProxy]:
    with TcpProxy.to_url(pg_url() or "") as made:
        yield made


@pytest.fixture
def flaky(postgres_spec: str, proxy: TcpProxy) -> Iterator[PostgresStore]:
    """The test's store, reached through a proxy the test can cut."""
    store = PostgresStore(
        proxy.url(pg_url() or ""), schema=schema_of(postgres_spec), reconnect_s=20
    )
    yield store
    store.close()


# ------------------------------------------------------------------ schema and migrations


def test_a_fresh_schema_is_made_at_the_current_version(postgres_spec: str) -> None:
    schema = schema_of(postgres_spec)
    assert tables(schema) == []
    open_spec(postgres_spec).close()
    assert tables(schema) == [
        "approval_changes",
        "approval_ops",
        "approvals",
        "consumed_continuations",
        "executors",
        "result_chunks",
        "results",
        "run_keys",
        "runs",
        "schema_version",
        "store_counters",
    ]
    with admin() as conn:
        row = conn.execute(
            sql.SQL("SELECT version, migrated_by FROM {}.schema_version").format(
                sql.Identifier(schema)
            )
        ).fetchone()
    assert row is not None and row[0] == SCHEMA_VERSION and row[1].startswith("run-repl on ")


def test_migration_1_into_a_schema_an_administrator_made(postgres_spec: str) -> None:
    # Version 0: the schema exists (made and granted by whoever runs the server), empty.
    schema = schema_of(postgres_spec)
    with admin() as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("CREATE TABLE {}.theirs (x int)").format(sql.Identifier(schema)))
    store = open_spec(postgres_spec)
    store.add_approvals([approval("int_1")])
    assert store.get_approval("int_1") is not None
    assert "theirs" in tables(schema)  # what was there stays
    store.close()


def test_migration_2_from_1_keeps_runs_and_approvals_ownerless(postgres_spec: str) -> None:
    schema = schema_of(postgres_spec)
    with admin() as conn:
        migrate(conn, schema, "the test store", target=1)
    with admin() as conn:
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.runs (id, started_at, duration_ms, status, source, host, "
                "envelope, bytes) VALUES ('run_1', 1, 1, 'ok', 'src', 'demo', '{{}}', 2)"
            ).format(sql.Identifier(schema))
        )
    store = open_spec(postgres_spec)
    assert store.get_run("run_1") is not None and store.owner_of_run("run_1") is None
    store.add_approvals([approval("int_1")])
    assert store.get_approval("int_1").owner is None
    key = store.reserve_run_key("alice", "k1", "d", holder="h", max_age_s=60)
    assert key.holder == "h" and key.run_id is None and key.age_s < 60
    store.close()


def test_migration_3_from_2_counts_what_the_history_and_the_values_hold(
    postgres_spec: str,
) -> None:
    schema = schema_of(postgres_spec)
    with admin() as conn:
        migrate(conn, schema, "the test store", target=2)
        for statement in (
            "INSERT INTO {}.runs (id, started_at, duration_ms, status, source, host, "
            "envelope, bytes) VALUES ('run_1', 1, 1, 'ok', 'src', 'demo', '{{}}', 700)",
            "INSERT INTO {}.results VALUES ('res_0000000000000001', 'value', '$', 3, 1000, "
            "NULL, 'run_1', 9, 1, 1)",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(schema)))
    store = open_spec(postgres_spec)
    assert store.history_bytes() == 700 and store.stored_bytes() == 9
    store.record_run(RunRecord(id="run_2", status="ok", source="s", envelope={"status": "ok"}))
    assert store.history_bytes() == 700 + len('{"status":"ok"}') + len("s")
    assert store.refused_runs() == {}
    store.close()


def test_migration_4_from_3_links_each_paused_run_to_the_run_that_resumed_it(
    postgres_spec: str,
) -> None:
    schema = schema_of(postgres_spec)
    with admin() as conn:
        migrate(conn, schema, "the test store", target=3)
        for run_id, started, status, resumed_from in (
            ("run_a", 1.0, "interrupted", None),
            ("run_b0", 2.0, "error", "run_a"),  # a resume that did not go (tried again later)
            ("run_b", 3.0, "ok", "run_a"),
            ("run_c", 4.0, "ok", None),
        ):
            conn.execute(
                sql.SQL(
                    "INSERT INTO {}.runs (id, started_at, duration_ms, status, source, host, "
                    "resumed_from, envelope, bytes) VALUES (%s, %s, 1, %s, 'src', 'demo', %s, "
                    "'{{}}', 5)"
                ).format(sql.Identifier(schema)),
                (run_id, started, status, resumed_from),
            )
    store = open_spec(postgres_spec)
    paused = store.get_run("run_a")
    assert paused is not None and (paused.resumed_as, paused.resumed_status) == ("run_b", "ok")
    listed = {r.id: (r.resumed_as, r.resumed_status) for r in store.list_runs()}
    assert listed == {
        "run_a": ("run_b", "ok"),
        "run_b0": (None, None),
        "run_b": (None, None),
        "run_c": (None, None),
    }
    store.close()


def test_migration_5_from_4_keeps_approvals_not_idempotent_and_resumed_by_anyone(
    postgres_spec: str,
) -> None:
    schema = schema_of(postgres_spec)
    with admin() as conn:
        migrate(conn, schema, "the test store", target=4)
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.approvals (id, run_id, source, host, path, args, payload, "
                "message, continuation, status, created_at, batch) VALUES ('int_1', 'run_1', "
                "'src', 'demo', 'documents.publish', '[1]', 'null', 'publish?', 'tok', "
                "'pending', 1.0, 'b1')"
            ).format(sql.Identifier(schema))
        )
    store = open_spec(postgres_spec)
    kept = store.get_approval("int_1")
    assert kept is not None and (kept.path, kept.args, kept.status) == (
        "documents.publish",
        [1],
        "pending",
    )
    assert (kept.idempotent, kept.resume_by) == (False, None)
    with admin() as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.executors").format(sql.Identifier(schema))
        ).fetchone()
    assert row is not None and row[0] == 0
    store.close()


def test_migration_6_from_5_reads_old_chunked_values_and_keeps_new_small_ones_inline(
    postgres_spec: str,
) -> None:
    schema = schema_of(postgres_spec)
    with admin() as conn:
        migrate(conn, schema, "the test store", target=5)
        for statement in (
            "INSERT INTO {}.results VALUES ('res_0000000000000001', 'value', '$', 3, 1000, "
            "NULL, 'run_1', 7, extract(epoch FROM now()), extract(epoch FROM now()))",
            "INSERT INTO {}.result_chunks VALUES ('res_0000000000000001', 0, '[1,2,3]'::bytea)",
        ):
            conn.execute(sql.SQL(statement).format(sql.Identifier(schema)))
    store = open_spec(postgres_spec)
    assert page_of(store, "res_0000000000000001", 0, 10).items == [1, 2, 3]
    assert store.stored_bytes() == 7  # the counter is untouched
    store.put_items(StoredItems("res_0000000000000002", "$", 2, ["[4,5]"], run_id="run_1"))
    assert page_of(store, "res_0000000000000002", 0, 10).items == [4, 5]
    assert store.stored_bytes() == 7 + 5
    with admin() as conn:
        kept = conn.execute(
            sql.SQL("SELECT ref, inline_chunks IS NULL FROM {}.results ORDER BY ref").format(
                sql.Identifier(schema)
            )
        ).fetchall()
        chunks = conn.execute(
            sql.SQL("SELECT ref FROM {}.result_chunks").format(sql.Identifier(schema))
        ).fetchall()
    assert kept == [("res_0000000000000001", True), ("res_0000000000000002", False)]
    assert chunks == [("res_0000000000000001",)]  # the new value has none
    store.close()


TESTED = {
    1: test_migration_1_into_a_schema_an_administrator_made,
    2: test_migration_2_from_1_keeps_runs_and_approvals_ownerless,
    3: test_migration_3_from_2_counts_what_the_history_and_the_values_hold,
    4: test_migration_4_from_3_links_each_paused_run_to_the_run_that_resumed_it,
    5: test_migration_5_from_4_keeps_approvals_not_idempotent_and_resumed_by_anyone,
    6: test_migration_6_from_5_reads_old_chunked_values_and_keeps_new_small_ones_inline,
}


def test_every_migration_has_a_test_from_the_version_before() -> None:
    # A new migration is not done until a test brings a store at the version before it up.
    assert set(TESTED) == set(range(1, SCHEMA_VERSION + 1)) == set(schema_module.MIGRATIONS)


def test_a_schema_from_a_newer_run_repl_is_refused_and_left_alone(postgres_spec: str) -> None:
    open_spec(postgres_spec).close()
    execute(postgres_spec, "UPDATE schema_version SET version = 999")
    with pytest.raises(StoreError, match="newer run-repl") as caught:
        open_spec(postgres_spec)
    assert caught.value.problem == "newer" and "schema version 999" in str(caught.value)
    store, warning = open_store(url=pg_url(), schema=schema_of(postgres_spec))
    assert isinstance(store, MemoryStore)
    assert warning is not None and "newer run-repl" in warning and "NOT saved" in warning
    with admin() as conn:
        (version,) = conn.execute(
            sql.SQL("SELECT version FROM {}.schema_version").format(
                sql.Identifier(schema_of(postgres_spec))
            )
        ).fetchone()  # type: ignore[misc]
    assert version == 999


def test_a_failing_migration_leaves_nothing_behind(
    postgres_spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = schema_of(postgres_spec)

    def broken(conn: psycopg.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x int)")
        raise psycopg.errors.DiskFull("could not extend file: No space left on device")

    monkeypatch.setitem(schema_module.MIGRATIONS, 1, broken)
    with admin() as conn, pytest.raises(psycopg.errors.DiskFull):
        migrate(conn, schema, "the test store")
    with admin() as conn:
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert exists.fetchone() is None  # DDL is transactional: not even the schema


MIGRATE_AT_ONCE = (
    CHILD_PRELUDE.format(here=str(HERE))
    + AT_ONCE
    + """
open_spec(sys.argv[1]).close()
"""
)


def test_machines_opening_a_fresh_schema_at_once_make_it_once(postgres_spec: str) -> None:
    procs = [
        subprocess.Popen(
            forked_cli.python_c(MIGRATE_AT_ONCE, postgres_spec),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    release_together(procs)
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with admin() as conn:
        rows = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.approval_changes").format(
                sql.Identifier(schema_of(postgres_spec))
            )
        ).fetchone()
    assert rows == (
        CHANGE_SHARDS,
    )  # made once: a second run of migration 1 would have doubled them


# ------------------------------------------------------------------ the password


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://alice:s3cr%40t@db:5432/rr", "postgresql://alice:***@db:5432/rr"),
        ("postgres://alice@db/rr?password=s3cr%40t&sslmode=require", None),
        ("postgresql://db/rr?sslpassword=s3cr%40t", None),
        ("postgresql://alice@db/rr", "postgresql://alice@db/rr"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str | None) -> None:
    masked = mask(url)
    if shown is not None:
        assert masked == shown
    assert "s3cr" not in masked
    assert has_password(url) == ("s3cr" in url)
    if has_password(url):  # a driver's message quoting it, in either form, is cut too
        assert scrub(f"failed for s3cr@t and s3cr%40t at {url}", url).count("s3cr") == 0


def test_a_server_that_is_down_is_said_plainly_and_the_password_never(
    postgres_spec: str, proxy: TcpProxy
) -> None:
    proxy.cut()
    url = proxy.url(pg_url() or "")
    password = url.split(":")[2].split("@")[0]
    with pytest.raises(StoreError) as caught:
        PostgresStore(url, schema=schema_of(postgres_spec), connect_timeout_s=2)
    assert caught.value.problem == "unreachable"
    text = str(caught.value)
    assert "cannot be reached" in text and f"127.0.0.1:{proxy.port}" in text
    assert password not in text and ":***@" in text
    store, warning = open_store(url=url, schema=schema_of(postgres_spec))
    assert isinstance(store, MemoryStore) and warning is not None
    assert password not in warning and password not in store.location
    assert "NOT saved" in warning


def test_a_wrong_password_is_refused_and_not_repeated(postgres_spec: str) -> None:
    url = pg_url() or ""
    password = url.split(":")[2].split("@")[0]
    wrong = url.replace(f":{password}@", ":not-the-password@")
    with pytest.raises(StoreError) as caught:
        PostgresStore(wrong, schema=schema_of(postgres_spec))
    assert caught.value.problem == "denied" and "refused the login" in str(caught.value)
    assert "not-the-password" not in str(caught.value) and password not in str(caught.value)


def test_nothing_of_the_url_is_kept_in_the_store(postgres_spec: str) -> None:
    url = pg_url() or ""
    password = url.split(":")[2].split("@")[0]
    store = open_spec(postgres_spec)
    store.add_approvals([approval("int_1")])
    claim = store.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="a@b pid 1", decided_by="a", ttl_s=60
    )
    assert isinstance(claim, Claim)
    store.close()
    with admin() as conn:
        dump = conn.execute(
            sql.SQL(
                "SELECT string_agg(t::text, ' ') FROM (SELECT * FROM {0}.approvals UNION ALL "
                "SELECT a.* FROM {0}.approvals a) t"
            ).format(sql.Identifier(schema_of(postgres_spec)))
        ).fetchone()[0]  # type: ignore[index]
        ops = conn.execute(
            sql.SQL("SELECT string_agg(answer, ' ') FROM {}.approval_ops").format(
                sql.Identifier(schema_of(postgres_spec))
            )
        ).fetchone()[0]  # type: ignore[index]
    assert password not in dump and password not in ops and "127.0.0.1" not in dump


# ------------------------------------------------------------------ text PostgreSQL cannot hold


def test_a_source_with_nul_and_lone_surrogates_comes_back_exactly(store_pg: PostgresStore) -> None:
    source = "return 'a\x00b' + '\ud800'"
    store_pg.add_approvals([approval("int_1", source=source, message="pay \x00 \udfff?")])
    kept = store_pg.get_approval("int_1")
    assert kept is not None and kept.source == source  # the resume replays it byte for byte
    assert kept.message == "pay \ufffd \ufffd?"  # text for people: printable


@pytest.fixture
def store_pg(postgres_spec: str) -> Iterator[PostgresStore]:
    made = open_spec(postgres_spec)
    assert isinstance(made, PostgresStore)
    yield made
    made.close()


# ------------------------------------------------------------------ a commit whose answer is lost


def ops_recorded(spec: str) -> int:
    with admin() as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.approval_ops").format(sql.Identifier(schema_of(spec)))
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("delivered", [True, False], ids=["committed", "never-arrived"])
def test_a_claim_whose_commit_answer_is_lost_is_neither_lost_nor_taken_twice(
    postgres_spec: str, flaky: PostgresStore, proxy: TcpProxy, delivered: bool
) -> None:
    flaky.add_approvals([approval("int_1"), approval("int_2")])
    before = flaky.approvals_version()
    connections = proxy.connections
    proxy.drop_at(b"COMMIT", deliver=delivered)
    got = flaky.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="alice", decided_by="alice", ttl_s=60
    )
    assert proxy.fired.is_set() and proxy.connections > connections  # it did reconnect
    # Without the operation's record the retry would find its own claim and call it
    # someone else's (Queued behind alice); it answers what the commit did.
    assert isinstance(got, Claim) and got.claim_id == "clm_a"
    assert {a.id for a in got.approvals} == {"int_1", "int_2"} and got.decisions == {"int_1": True}
    assert [flaky.get_approval(i).status for i in ("int_1", "int_2")] == ["claimed", "claimed"]
    assert flaky.approvals_version() == before + 1  # one change: done once
    assert ops_recorded(postgres_spec) == 1


@pytest.mark.parametrize("delivered", [True, False], ids=["committed", "never-arrived"])
def test_a_guard_whose_commit_answer_is_lost_still_lets_its_resume_run(
    flaky: PostgresStore, proxy: TcpProxy, delivered: bool
) -> None:
    flaky.add_approvals([approval("int_1")])
    got = flaky.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="alice", decided_by="alice", ttl_s=60
    )
    assert isinstance(got, Claim)
    proxy.drop_at(b"COMMIT", deliver=delivered)
    flaky.start_batch(got)  # a retry that ran again would raise ClaimLost: nothing would run
    assert proxy.fired.is_set()
    assert flaky.get_approval("int_1").status == "executing"
    flaky.finish_batch(got, ResumeReport(ended=True, status="ok", run_id="run_2"), ttl_s=60)
    assert flaky.get_approval("int_1").status == "failed"  # the call was never reported


def test_a_recovery_and_a_queued_decision_whose_answers_are_lost_are_answered_once(
    postgres_spec: str, flaky: PostgresStore, proxy: TcpProxy
) -> None:
    flaky.add_approvals([approval("int_1"), approval("int_2")])
    got = flaky.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="alice", decided_by="alice", ttl_s=60
    )
    assert isinstance(got, Claim)
    proxy.drop_at(b"COMMIT", deliver=True)
    queued = flaky.claim_batch(
        {"int_2": False}, claim_id="clm_b", claimed_by="bob", decided_by="bob", ttl_s=60
    )
    assert isinstance(queued, Queued) and queued.held_by == "alice"  # not "already decided"
    assert [a.id for a in queued.approvals] == ["int_2"] and proxy.fired.is_set()
    flaky.start_batch(got)
    execute(postgres_spec, "UPDATE approvals SET claim_expires_at = 0")  # alice is gone
    proxy.drop_at(b"COMMIT", deliver=True)
    ended = flaky.recover_batch("int_1", by="ops")  # a second recovery would be refused
    assert {a.id: a.status for a in ended} == {"int_1": "unfinished", "int_2": "failed"}
    assert ops_recorded(postgres_spec) == 4


def test_a_continuation_consumed_as_the_connection_dies_is_still_this_resumes(
    flaky: PostgresStore, proxy: TcpProxy
) -> None:
    later = time.time() + 600
    proxy.drop_at(b"COMMIT", deliver=True)
    assert flaky.consume_continuation("d1", later) is True  # a plain retry would say "used"
    assert proxy.fired.is_set()
    assert flaky.consume_continuation("d1", later) is False


# ------------------------------------------------------------------ the server goes away


def test_a_write_waits_for_the_server_to_come_back(flaky: PostgresStore, proxy: TcpProxy) -> None:
    flaky.add_approvals([approval("int_1")])
    proxy.cut(back_after_refusal=True)
    flaky.add_approvals([approval("int_2")])  # refused, waits, then writes
    assert proxy.refusals >= 1  # it met the outage
    assert {a.id for a in flaky.list_approvals()} == {"int_1", "int_2"}


def test_a_connection_given_back_just_now_is_used_again_unchecked(
    postgres_spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool's check is a round trip before a statement: only a connection idle for
    CHECKED_AFTER_S is checked (one lost meanwhile is retried, as the test above shows)."""
    from psycopg_pool import ConnectionPool

    checks = 0
    check = ConnectionPool.check_connection

    def counted(conn: psycopg.Connection) -> None:
        nonlocal checks
        checks += 1
        check(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    store = open_spec(postgres_spec)
    try:
        for n in range(20):
            store.add_approvals([approval(f"int_c{n}")])
        assert checks <= 2  # (the first use of each connection the pool made)
        monkeypatch.setattr(postgres_store, "CHECKED_AFTER_S", 0.0)
        before = checks
        store.list_approvals()
        assert checks > before  # idle for longer than that: checked before use
    finally:
        store.close()


def test_a_server_that_does_not_come_back_is_a_clear_error(
    postgres_spec: str, proxy: TcpProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both waits run out in full here (the server never comes back): a call waits
    # reconnect_s for it, and once one has given up the next ones wait OUTAGE_WAIT_S (2 s),
    # which was longer than the 1 s this test gave the first. Short ones, the second the
    # shorter, as in use (30 s, then 2 s), say the same.
    monkeypatch.setattr(postgres_store, "OUTAGE_WAIT_S", 0.1)
    store = PostgresStore(
        proxy.url(pg_url() or ""), schema=schema_of(postgres_spec), reconnect_s=0.5
    )
    try:
        proxy.cut()
        with pytest.raises(StoreError) as caught:
            store.add_approvals([approval("int_1")])
        assert caught.value.problem == "unreachable"
        assert "was lost and did not come back" in str(caught.value)
        with pytest.raises(StoreError):  # and the next call says so too, without a long wait
            store.list_approvals()
        proxy.restore()
        store.add_approvals([approval("int_1")])  # back: it works again
        assert store.get_approval("int_1") is not None
    finally:
        store.close()


async def test_a_waiting_inbox_hears_of_changes_made_while_its_connection_was_cut(
    postgres_spec: str, flaky: PostgresStore, proxy: TcpProxy
) -> None:
    from run_repl.store.approvals.flow import wait_for_approvals_change

    since = flaky.approvals_version()
    assert await wait_for_approvals_change(flaky, since, 0.2) == since  # listening now
    proxy.cut()
    direct = open_spec(postgres_spec)  # another machine, whose network is fine
    direct.add_approvals([approval("int_9")])
    direct.close()
    threading.Timer(0.5, proxy.restore).start()
    changed = await wait_for_approvals_change(flaky, since, 60)
    assert changed > since and flaky.get_approval("int_9") is not None


@pytest.mark.parametrize(
    ("error", "problem", "words"),
    [
        (psycopg.errors.DiskFull("could not extend file"), "full", "disk is full"),
        (psycopg.errors.InsufficientPrivilege("permission denied"), "denied", "grant"),
        (psycopg.errors.TooManyConnections("too many clients"), "busy", "try again"),
        (psycopg.OperationalError("server closed the connection"), "unreachable", "was lost"),
    ],
)
def test_what_the_server_says_becomes_one_store_error_that_says_what_to_do(
    store_pg: PostgresStore, error: psycopg.Error, problem: str, words: str
) -> None:
    said = store_pg._error(error)
    assert said.problem == problem and words in str(said)
    assert password_of_test_server() not in str(said)


def password_of_test_server() -> str:
    return (pg_url() or "").split(":")[2].split("@")[0]


# ------------------------------------------------------------------ one clock: the server's
def test_a_machine_whose_clock_runs_ahead_does_not_take_a_live_claim(
    store_pg: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claims end by the server's clock. A machine 1,000 s ahead must still see alice's
    live claim as hers, and queue bob's decision behind it."""
    store_pg.add_approvals([approval("int_1"), approval("int_2")])
    first = store_pg.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="alice", decided_by="alice", ttl_s=60
    )
    assert isinstance(first, Claim)
    ahead = time.time() + 1000
    monkeypatch.setattr("run_repl.store.records.time.time", lambda: ahead)
    second = store_pg.claim_batch(
        {"int_2": True}, claim_id="clm_b", claimed_by="bob", decided_by="bob", ttl_s=60
    )
    monkeypatch.undo()
    assert isinstance(second, Queued) and second.held_by == "alice"


# ------------------------------------------------------------------ statements a look costs


def test_a_look_at_what_is_resumable_is_one_statement(
    store_pg: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every executor looks at every change anyone makes; with 4 servers that look was the
    most run statement, and it read the server's clock in a second one."""
    store_pg.add_approvals([approval("int_a", host="h:HOSTS")])
    store_pg.record_decisions({"int_a": True}, decided_by="alice", decision_id="dec_a")
    statements: list[str] = []
    real = psycopg.Cursor.execute

    def counted(self: psycopg.Cursor[object], query: object, *args: object, **kw: object) -> object:
        statements.append(str(query))
        return real(self, query, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(psycopg.Cursor, "execute", counted)
    for host, expected in (("h:HOSTS", ["int_a"]), ("other:HOSTS", []), (None, ["int_a"])):
        statements.clear()
        assert [a.id for a in store_pg.resumable(host)] == expected
        assert len(statements) == 1, statements
