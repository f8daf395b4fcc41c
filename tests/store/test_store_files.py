"""The store file the person trusts: private modes, damage reported as one StoreError,
guest text that cannot break a save, and a history with a byte budget (redteam L1, L3, L9, M10)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from types import ModuleType

import pytest
from store_kinds import open_spec

from run_repl.sandbox.result import RunResult
from run_repl.store import MemoryStore, PendingApproval, RunRecord, SqliteStore, Store, StoreError
from run_repl.store import open_store as open_default_store
from run_repl.store.approvals.flow import record_run, save_interrupted, store_runner
from run_repl.store.backends.sqlite import PREVIEW_BYTES
from run_repl.store.json_budget import dumps

SECRET = "s" * 40


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_store_is_0600_in_a_0700_directory_it_makes(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "run-repl"
    store, warning = open_default_store(data)
    assert warning is None
    store.record_run(RunRecord(id="run_1", status="ok", source="1"))
    assert mode(data) == 0o700 and mode(data.parent) == 0o700
    assert mode(data / "run-repl.sqlite3") == 0o600  # redteam L9: 0644
    assert mode(data / "run-repl.sqlite3-wal") == 0o600
    store.close()


def test_an_existing_store_readable_by_others_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "run-repl.sqlite3"
    SqliteStore(path).close()
    os.chmod(path, 0o644)
    SqliteStore(path).close()
    assert mode(path) == 0o600


def damage_pages(path: Path) -> None:
    """Overwrite every page but the first (the header and schema stay readable)."""
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(path.read_bytes())
    for start in range(page, len(data), page):
        data[start : start + page] = b"\xa5" * page
    path.write_bytes(bytes(data))


def test_partly_damaged_pages_give_one_clear_store_error(tmp_path: Path) -> None:
    path = tmp_path / "run-repl.sqlite3"
    store = SqliteStore(path)
    for n in range(40):
        store.record_run(RunRecord(id=f"run_{n}", status="ok", source="x" * 2000))
    store.add_approvals(
        [PendingApproval(id="int_1", run_id="r", source="s", path="p", continuation="t")]
    )
    store.close()
    damage_pages(path)
    try:
        reopened = SqliteStore(path)
    except StoreError as exc:  # the damage may already show on open
        assert exc.problem == "damaged" and "Move the file aside" in str(exc)
        return
    for call in (
        lambda: reopened.list_runs(),
        lambda: reopened.get_run("run_3"),
        lambda: reopened.list_approvals(),
        lambda: reopened.get_approval("int_1"),
    ):
        with pytest.raises(StoreError) as caught:  # redteam L3: a sqlite3.DatabaseError traceback
            call()
        assert caught.value.problem == "damaged"
        assert "Move the file aside" in str(caught.value) and str(path) in str(caught.value)


def test_a_lone_surrogate_in_guest_text_is_saved(store: Store) -> None:
    store.add_approvals(
        [
            PendingApproval(
                id="int_1",
                run_id="r",
                source="return 1",
                path="bank.transfer",
                args=["\ud800", {"k": "\udfff"}],
                payload={"message": "pay \ud800?"},
                message="pay \ud800?",
                continuation="t",
            )
        ]
    )
    kept = store.get_approval("int_1")
    assert kept.args == ["\ud800", {"k": "\udfff"}]  # exactly, as the run will replay them
    assert kept.payload == {"message": "pay \ud800?"}
    # Text for people: a durable store keeps it printable; memory keeps what it was given.
    printable = "pay \ud800?" if isinstance(store, MemoryStore) else "pay \ufffd?"  # noqa: RUF034 (ruff reads both lone-surrogate literals as U+FFFD; they differ)
    assert kept.message == printable


async def test_an_interrupted_call_with_a_lone_surrogate_is_saved_through_the_engine(
    store: Store, bank: ModuleType
) -> None:
    # redteam L1: the SQLite insert failed inside remember(), and the approval was silently lost.
    runner = store_runner(store, secret=SECRET)
    src = "return await bank.transfer(1, '\\ud800 to mallory')"
    first = await runner.run(src, bank.HOSTS)
    assert first.status == "interrupted"
    [saved] = save_interrupted(store, first, source=src, host="bank_host:HOSTS")
    assert saved.args == [1, "\ud800 to mallory"]
    record_run(store, first, source=src, host="bank_host:HOSTS")
    assert store.get_run(first.run_id) is not None


def big_error_envelope(n: int) -> dict[str, object]:
    return RunResult(
        status="error",
        run_id=f"run_{n}",
        error={"code": "RUN_EXCEPTION", "message": "x" * 15_000_000, "stack": "at y\n" * 100_000},
    ).model_dump(mode="json")


def test_a_15_mb_error_envelope_is_cut_to_the_history_budget(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    for n in range(3):
        store.record_run(
            RunRecord(id=f"run_{n}", status="error", source="throw", envelope=big_error_envelope(n))
        )
    # redteam M10: +30 MB of history per failing run
    assert store.history_bytes() < 4 * store.max_envelope_bytes
    if durable_spec.startswith("sqlite:"):
        assert Path(durable_spec[7:]).stat().st_size < 8 * store.max_envelope_bytes
    kept = store.get_run("run_1")
    assert kept is not None and kept.envelope_cut and not kept.partial
    assert len(dumps(kept.envelope)) <= store.max_envelope_bytes
    result = RunResult.model_validate(kept.envelope)  # still an envelope the front ends show
    assert result.error is not None and result.error.message.startswith("xxxx")
    assert "more characters cut" in result.error.message


def test_history_lists_previews_not_whole_envelopes(store: Store) -> None:
    big = RunResult(status="ok", value=["row " * 50] * 2000, run_id="run_big").model_dump(
        mode="json"
    )
    store.record_run(RunRecord(id="run_big", status="ok", source="big", envelope=big))
    store.record_run(
        RunRecord(
            id="run_small", status="ok", source="small", envelope={"status": "ok", "value": 1}
        )
    )
    listed = {r.id: r for r in store.list_runs()}
    assert listed["run_big"].partial and len(dumps(listed["run_big"].envelope)) <= PREVIEW_BYTES
    assert listed["run_big"].envelope["status"] == "ok"
    assert not listed["run_small"].partial and listed["run_small"].envelope["value"] == 1
    whole = store.get_run("run_big")
    assert not whole.partial and len(whole.envelope["value"]) == 2000


def test_the_history_keeps_its_total_budget_oldest_out_first(durable_spec: str) -> None:
    store = open_spec(durable_spec, max_history_bytes=200_000)
    for n in range(40):
        envelope = {"status": "ok", "value": "v" * 10_000}
        store.record_run(
            RunRecord(id=f"run_{n:02d}", status="ok", source="s", started_at=n, envelope=envelope)
        )
    store.settle()  # PostgreSQL evicts off the write's path, on a thread of its own
    assert store.history_bytes() <= 200_000
    kept = [r.id for r in store.list_runs(limit=100)]
    assert kept[0] == "run_39" and "run_00" not in kept
    assert kept == sorted(kept, reverse=True) and len(kept) >= 15


def test_the_history_does_not_keep_continuation_tokens(store: Store) -> None:
    envelope = {"status": "interrupted", "continuation": "rrc1.secret.mac", "interruptions": []}
    store.record_run(RunRecord(id="run_1", status="interrupted", source="s", envelope=envelope))
    assert "continuation" not in store.get_run("run_1").envelope


def test_the_memory_store_composes_a_result_store() -> None:
    from run_repl.sandbox.wire.result_store import MemoryResultStore, ResultStore

    store = MemoryStore()
    assert not isinstance(store, MemoryResultStore)
    assert isinstance(store.values, MemoryResultStore) and isinstance(store, ResultStore)
