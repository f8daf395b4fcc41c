"""Every durable store (SQLite, PostgreSQL): values by item across processes, eviction,
history, approvals; SQLite's own file format and fallback."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import forked_cli
import pytest
from store_kinds import CHILD_PRELUDE, execute, open_spec

from run_repl import create_runner
from run_repl.sandbox.wire.result_store import ResultRefNotFound, StoredItems, page_of
from run_repl.sandbox.wire.value_window import chunk_texts
from run_repl.store import (
    ApprovalConflict,
    Claim,
    MemoryStore,
    PendingApproval,
    RunRecord,
    SqliteStore,
    Store,
    open_store,
)
from run_repl.store.backends.sqlite import SCHEMA_VERSION


def items_of(n: int, ref: str = "res_aaaaaaaaaaaaaaaa", pad: str = "") -> StoredItems:
    return StoredItems(ref, "$", n, chunk_texts([{"i": i, "pad": pad} for i in range(n)]))


def test_store_pages_by_item(store: Store) -> None:
    store.put_items(items_of(2500))
    page = page_of(store, "res_aaaaaaaaaaaaaaaa", 995, 10)
    assert [x["i"] for x in page.items] == list(range(995, 1005))  # across a chunk boundary
    assert page.total == 2500 and page.has_more
    last = page_of(store, "res_aaaaaaaaaaaaaaaa", 2495, 100)
    assert len(last.items) == 5 and not last.has_more


def test_schema_is_versioned_by_user_version(tmp_path: Path) -> None:
    path = tmp_path / "run-repl.sqlite3"
    SqliteStore(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.execute("PRAGMA user_version = 999")
    db.commit()
    db.close()
    store, warning = open_store(tmp_path, max_bytes=1 << 20)
    assert isinstance(store, MemoryStore)
    assert warning is not None and "newer run-repl" in warning


def test_corrupt_file_falls_back_to_memory_with_a_clear_warning(tmp_path: Path) -> None:
    (tmp_path / "run-repl.sqlite3").write_bytes(b"this is not a database" * 100)
    store, warning = open_store(tmp_path)
    assert isinstance(store, MemoryStore)
    assert warning is not None and "in-memory store" in warning and "--data-dir" in warning
    store.put_items(items_of(3))  # and it still works
    assert page_of(store, "res_aaaaaaaaaaaaaaaa").total == 3


def test_data_dir_that_is_a_file_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    store, warning = open_store(blocker)
    assert isinstance(store, MemoryStore)
    assert warning is not None


def test_size_budget_evicts_least_recently_used(durable_spec: str) -> None:
    store = open_spec(durable_spec, max_bytes=60_000)
    pad = "x" * 200
    store.put_items(items_of(100, "res_0000000000000001", pad))  # ~21 KB each
    store.put_items(items_of(100, "res_0000000000000002", pad))
    # Use the first again, so the second is the least recently used.
    execute(
        durable_spec,
        "UPDATE results SET used_at = used_at + 1000 WHERE ref = 'res_0000000000000001'",
    )
    store.put_items(items_of(100, "res_0000000000000003", pad))
    store.settle()  # PostgreSQL evicts off the write's path, on a thread of its own
    assert store.get_items("res_0000000000000002") is None
    assert store.get_items("res_0000000000000001") is not None
    assert store.get_items("res_0000000000000003") is not None
    assert store.stored_bytes() <= 60_000
    with pytest.raises(ResultRefNotFound):
        page_of(store, "res_0000000000000002")


def test_an_expired_value_counts_as_freed_before_a_live_one_is_evicted(
    durable_spec: str,
) -> None:
    """Over the size budget with an expired value among the least recently used: its
    going frees its bytes, so no live value goes with it."""
    store = open_spec(durable_spec, max_bytes=60_000, max_age_s=3600)
    pad = "x" * 200
    store.put_items(items_of(100, "res_0000000000000001", pad))  # ~21 KB each
    store.put_items(items_of(100, "res_0000000000000002", pad))
    # The first has since expired, and it is the least recently used.
    execute(
        durable_spec,
        f"UPDATE results SET created_at = {time.time() - 7200}, used_at = 0"
        " WHERE ref = 'res_0000000000000001'",
    )
    store.put_items(items_of(100, "res_0000000000000003", pad))
    store.settle()
    assert store.get_items("res_0000000000000002") is not None
    assert store.get_items("res_0000000000000003") is not None


def test_age_limit_expires_values(durable_spec: str) -> None:
    store = open_spec(durable_spec, max_age_s=3600)
    old = items_of(5, "res_000000000000000a")
    old.created_at = time.time() - 7200
    store.put_items(old)
    assert store.get_items("res_000000000000000a") is None
    store.put_items(items_of(5, "res_000000000000000b"))
    store.settle()
    assert store.stored_bytes() == items_of(5).size  # the expired one is gone from disk too


def test_the_age_limit_spares_the_value_just_written_on_every_sql_store(
    durable_spec: str,
) -> None:
    """One eviction rule for both SQL stores (the SQLite copy once took the value it had
    just written): the write's own value goes at the next write, never within its own."""
    store = open_spec(durable_spec, max_age_s=3600)
    old = items_of(5, "res_000000000000000c")
    old.created_at = time.time() - 7200
    store.put_items(old)
    store.settle()
    assert store.stored_bytes() == old.size
    store.put_items(items_of(5, "res_000000000000000d"))
    store.settle()
    assert store.stored_bytes() == items_of(5).size


def test_history_is_searchable(store: Store) -> None:
    store.record_run(
        RunRecord(id="run_1", status="ok", source="await store.listOrders('c1')", started_at=1)
    )
    store.record_run(
        RunRecord(
            id="run_2", status="error", source="boom()", error_code="RUN_EXCEPTION", started_at=2
        )
    )
    assert [r.id for r in store.list_runs()] == ["run_2", "run_1"]
    assert [r.id for r in store.list_runs(query="listOrders")] == ["run_1"]
    assert [r.id for r in store.list_runs(query="RUN_EXC")] == ["run_2"]
    assert [r.id for r in store.list_runs(query="listorders")] == ["run_1"]  # any case
    assert [r.id for r in store.list_runs(query="100%_")] == []
    assert store.get_run("run_1").title == "await store.listOrders('c1')"


def test_approval_claimed_once(store: Store) -> None:
    store.add_approvals(
        [
            PendingApproval(
                id="int_1", run_id="run_1", source="s", path="documents.publish", continuation="tok"
            )
        ]
    )
    first = store.claim_batch(
        {"int_1": True}, claim_id="clm_a", claimed_by="a", decided_by="a", ttl_s=60
    )
    assert isinstance(first, Claim) and store.get_approval("int_1").status == "claimed"
    with pytest.raises(ApprovalConflict, match="already claimed"):
        store.claim_batch(
            {"int_1": True}, claim_id="clm_b", claimed_by="b", decided_by="b", ttl_s=60
        )
    assert store.list_approvals() == []


CHILD = (
    CHILD_PRELUDE.format(here=str(Path(__file__).parent))
    + """
import json
from run_repl.sandbox.wire.result_store import StoredItems, page_of
from run_repl.sandbox.wire.value_window import chunk_texts
store = open_spec(sys.argv[1])
if sys.argv[2] == "write":
    for k in range(int(sys.argv[4])):
        ref = "res_%s%012d" % (sys.argv[3], k)
        store.put_items(StoredItems(ref, "$", 50, chunk_texts(list(range(50)))))
else:
    print(json.dumps(page_of(store, sys.argv[3], 10, 5).items))
"""
)


@pytest.mark.slow
def test_two_processes_writing_at_once_lose_nothing(durable_spec: str) -> None:
    open_spec(durable_spec).close()
    procs = [
        subprocess.Popen(forked_cli.python_c(CHILD, durable_spec, "write", tag, "60"))
        for tag in ("aaaa", "bbbb")
    ]
    for p in procs:
        assert p.wait(timeout=60) == 0
    store = open_spec(durable_spec)
    for tag in ("aaaa", "bbbb"):
        for k in range(60):
            assert store.get_items(f"res_{tag}{k:012d}") is not None


async def test_a_ref_from_one_process_pages_in_another(durable_spec: str) -> None:
    runner = create_runner(store=open_spec(durable_spec))
    result = await runner.run("Array.from({ length: 3000 }, (_, i) => i * 2)")
    runner.flush()
    out = subprocess.run(
        forked_cli.python_c(CHILD, durable_spec, "read", result.value_ref),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == [20, 22, 24, 26, 28]


async def test_runner_pages_before_and_after_the_write_behind(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    runner = create_runner(store=store)
    result = await runner.run("Array.from({ length: 5000 }, (_, i) => i)")
    assert runner.expand(result.value_ref, 4000, 3).items == [4000, 4001, 4002]
    runner.flush()
    fresh = create_runner(store=store)
    assert fresh.expand(result.value_ref, 4997, 10).items == [4997, 4998, 4999]


def test_every_store_is_every_part_of_the_protocol(store: Store, spec: str) -> None:
    from run_repl.store import ApprovalStore, ContinuationStore, RunHistory, ValueStore

    for part in (Store, ValueStore, RunHistory, ApprovalStore, ContinuationStore):
        assert isinstance(store, part), (store, part)
    assert store.durable == (not spec.startswith("memory"))
