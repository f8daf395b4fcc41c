"""Small values live in their run's own row: no chunk rows, no COPY, one INSERT, and on
a workspace's run the same transaction as the run's history row. Big values still go
by chunk. Paging, ages, byte budgets and eviction treat both alike."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_kinds import execute, open_spec, pg_url

from run_repl import create_runner
from run_repl.config import Settings
from run_repl.host.loader import load_host
from run_repl.sandbox.wire.result_store import StoredItems, page_of
from run_repl.store import Store
from run_repl.store.approvals.flow import store_runner
from run_repl.store.budgets import INLINE_VALUE_BYTES
from run_repl.workspace import Workspace

SECRET = "s" * 40


def rows(spec: str, statement: str) -> list[tuple[Any, ...]]:
    """The rows of one query on a durable store's own tables."""
    kind, _, where = spec.partition(":")
    if kind == "sqlite":
        db = sqlite3.connect(where, isolation_level=None, timeout=30)
        try:
            return [tuple(r) for r in db.execute(statement).fetchall()]
        finally:
            db.close()
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url() or "", autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(where)))
        return [tuple(r) for r in conn.execute(statement).fetchall()]  # type: ignore[arg-type]


def chunk_rows(spec: str, ref: str) -> int:
    return int(rows(spec, f"SELECT count(*) FROM result_chunks WHERE ref = '{ref}'")[0][0])


def held_bytes(spec: str) -> int:
    return int(rows(spec, "SELECT COALESCE(SUM(bytes), 0) FROM results")[0][0])


def value(ref: str, chunks: list[str], *, total: int | None = None, **kw: Any) -> StoredItems:
    count = total if total is not None else sum(len(json.loads(c)) for c in chunks)
    return StoredItems(ref, "$", count, chunks, run_id="run_1", **kw)


def numbers(first: int, last: int) -> str:
    return json.dumps(list(range(first, last)), separators=(",", ":"))


def digits(first: int, last: int) -> str:
    """Items i % 10: 2 bytes an item, so thousands of them fit the inline limit."""
    return json.dumps([i % 10 for i in range(first, last)], separators=(",", ":"))


async def test_a_small_value_has_no_chunk_rows_and_reads_from_another_store(
    durable_spec: str,
) -> None:
    writer, reader = open_spec(durable_spec), open_spec(durable_spec)
    try:
        result = await create_runner(store=writer).run("return [1, 2, 3]")
        assert result.value_ref
        assert chunk_rows(durable_spec, result.value_ref) == 0
        page = page_of(reader, result.value_ref, 0, 10)
        assert page.items == [1, 2, 3] and page.total == 3 and not page.has_more
    finally:
        writer.close()
        reader.close()


async def test_a_big_value_still_goes_by_chunk(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    try:
        result = await create_runner(store=store).run(
            "return Array.from({ length: 5000 }, (_, i) => 'item ' + i)"
        )
        assert result.value_ref
        assert chunk_rows(durable_spec, result.value_ref) == 5  # 1000 items a chunk
        assert page_of(store, result.value_ref, 4998, 5).items == ["item 4998", "item 4999"]
    finally:
        store.close()


def test_an_inline_value_of_several_chunks_pages_as_a_chunked_one(spec: str) -> None:
    writer, reader = open_spec(spec), None
    try:
        chunks = [digits(0, 1000), digits(1000, 2000), digits(2000, 2500)]
        assert sum(map(len, chunks)) <= INLINE_VALUE_BYTES
        writer.put_items(value("res_00000000000000a1", chunks, rest={"k": 1}))
        reader = writer if spec.startswith("memory") else open_spec(spec)
        if not spec.startswith("memory"):
            assert chunk_rows(spec, "res_00000000000000a1") == 0
        page = page_of(reader, "res_00000000000000a1", 995, 10)
        assert page.items == [i % 10 for i in range(995, 1005)] and page.total == 2500
        assert page.rest == {"k": 1} and page.has_more
        tail = page_of(reader, "res_00000000000000a1", 2495, 100).items
        assert tail == [i % 10 for i in range(2495, 2500)]
        whole = reader.get_items("res_00000000000000a1")
        assert whole is not None and whole.chunks == chunks
        found = reader.get_chunks("res_00000000000000a1", 1, 1)
        assert found is not None and found[1] == [chunks[1]]
        assert reader.get_chunks("res_00000000000000a1", 7, 9) == (found[0], [])
    finally:
        writer.close()
        if reader is not None and reader is not writer:
            reader.close()


def test_an_empty_inline_value_and_odd_text_read_back_exactly(spec: str) -> None:
    store = open_spec(spec)
    try:
        odd = json.dumps(["nul \x00", "lone \ud800", "emoji \U0001f600", "é"], ensure_ascii=False)
        store.put_items(value("res_00000000000000b1", [odd]))
        store.put_items(value("res_00000000000000b2", [], total=0))
        got = store.get_items("res_00000000000000b1")
        assert got is not None and got.chunks == [odd]
        assert page_of(store, "res_00000000000000b1", 0, 4).items[1] == "lone \ud800"
        empty = store.get_items("res_00000000000000b2")
        assert empty is not None and empty.chunks == [] and empty.total == 0
        assert page_of(store, "res_00000000000000b2", 0, 4).items == []
    finally:
        store.close()


def test_the_byte_counter_counts_inline_values_exactly(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    try:
        small = value("res_00000000000000c1", [numbers(0, 100)])
        big = value("res_00000000000000c2", [numbers(i * 1000, i * 1000 + 1000) for i in range(5)])
        assert small.size <= INLINE_VALUE_BYTES < big.size
        store.put_items(small)
        store.put_items(big)
        assert store.stored_bytes() == small.size + big.size == held_bytes(durable_spec)  # type: ignore[attr-defined]
        store.put_items(small)  # written again (a retry): counted once
        assert store.stored_bytes() == small.size + big.size == held_bytes(durable_spec)  # type: ignore[attr-defined]
    finally:
        store.close()


def test_the_byte_budget_evicts_inline_values_as_chunked_ones(durable_spec: str) -> None:
    one = value("res_0000000000000000", [numbers(0, 1000)])  # ~4 KB, inline
    budget = one.size * 3 + 10
    store = open_spec(durable_spec, max_bytes=budget)
    try:
        refs = [f"res_{i:016d}" for i in range(6)]
        for ref in refs:
            store.put_items(value(ref, [numbers(0, 1000)]))
            store.settle()  # type: ignore[attr-defined]  # PostgreSQL evicts on a thread
            assert store.stored_bytes() == held_bytes(durable_spec) <= budget  # type: ignore[attr-defined]
        kept = [r for r in refs if store.get_items(r) is not None]
        assert refs[-1] in kept and refs[0] not in kept and len(kept) < len(refs)
        # A chunked value evicts inline ones too, and is then evicted by them like any other.
        big = value("res_00000000000000d1", [numbers(0, 1000), numbers(1000, 2000)])
        assert big.size > INLINE_VALUE_BYTES and big.size <= budget
        store.put_items(big)
        store.settle()  # type: ignore[attr-defined]
        assert store.get_items("res_00000000000000d1") is not None
        assert store.stored_bytes() == held_bytes(durable_spec) <= budget  # type: ignore[attr-defined]
        for ref in refs[:3]:
            store.put_items(value(ref, [numbers(0, 1000)]))
        store.settle()  # type: ignore[attr-defined]
        assert store.get_items("res_00000000000000d1") is None
        assert chunk_rows(durable_spec, "res_00000000000000d1") == 0  # its chunks went with it
    finally:
        store.close()


def test_an_inline_value_past_its_age_is_gone(durable_spec: str) -> None:
    store = open_spec(durable_spec, max_age_s=3600)
    try:
        store.put_items(value("res_00000000000000e1", [numbers(0, 3)]))
        assert store.get_items("res_00000000000000e1") is not None
        execute(durable_spec, "UPDATE results SET created_at = created_at - 7200")
        assert store.get_items("res_00000000000000e1") is None
        assert store.get_chunks("res_00000000000000e1", 0, 0) is None
        store.put_items(value("res_00000000000000e2", [numbers(0, 3)]))  # its write evicts it
        store.settle()  # type: ignore[attr-defined]
        assert rows(durable_spec, "SELECT ref FROM results") == [("res_00000000000000e2",)]
        assert store.stored_bytes() == held_bytes(durable_spec)  # type: ignore[attr-defined]
    finally:
        store.close()


def test_a_run_recorded_with_its_values_keeps_both(spec: str) -> None:
    from run_repl.store.records import RunRecord

    store = open_spec(spec)
    try:
        small = value("res_00000000000000f1", [numbers(0, 10)])
        logs = StoredItems(
            "res_00000000000000f2",
            "$logs",
            2,
            [json.dumps([{"level": "log", "text": "a"}, {"level": "log", "text": "b"}])],
            kind="logs",
            run_id="run_1",
        )
        big = value("res_00000000000000f3", [numbers(0, 1000), numbers(1000, 2000)])
        run = RunRecord(
            id="run_1",
            status="ok",
            source="return 1",
            value_ref=small.ref,
            logs_ref=logs.ref,
            envelope={"status": "ok"},
        )
        store.record_run(run, values=[small, logs, big])
        got = store.get_run("run_1")
        assert got is not None and got.value_ref == small.ref
        assert page_of(store, small.ref, 0, 20).items == list(range(10))
        assert page_of(store, logs.ref, 1, 1).items == [{"level": "log", "text": "b"}]
        assert page_of(store, big.ref, 1999, 1).items == [1999]
        assert store.owner_of_ref(small.ref) is None
        if not spec.startswith("memory"):
            assert chunk_rows(spec, small.ref) == chunk_rows(spec, logs.ref) == 0
            assert chunk_rows(spec, big.ref) == 2
            assert store.stored_bytes() == held_bytes(spec)  # type: ignore[attr-defined]
            store.record_run(run, values=[small, logs, big])  # a retry writes the same rows
            assert store.stored_bytes() == held_bytes(spec)  # type: ignore[attr-defined]
            assert chunk_rows(spec, big.ref) == 2
    finally:
        store.close()


def _workspace(store: Store, tmp_path: Path) -> Workspace:
    host = load_host("demo")
    return Workspace(Settings(), store, host, store_runner(store, secret=SECRET), tmp_path)


async def test_a_workspace_run_writes_its_value_with_its_history_row(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_spec(spec)
    puts: list[str] = []
    recorded: list[set[str]] = []
    real_put, real_record = store.put_items, store.record_run

    def put(stored: StoredItems) -> None:
        puts.append(stored.ref)
        real_put(stored)

    def record(run: Any, values: Any = ()) -> None:
        recorded.append({v.ref for v in values})
        real_record(run, values=values)

    monkeypatch.setattr(store, "put_items", put)
    monkeypatch.setattr(store, "record_run", record)
    ws = _workspace(store, tmp_path)
    reader = store if spec.startswith("memory") else open_spec(spec)
    try:
        result = await ws.run("for (let i = 0; i < 60; i++) console.log('l' + i); return [4, 5]")
        assert result.value_ref and result.logs_ref
        assert puts == []  # no write of its own: the history row's transaction has them
        assert recorded == [{result.value_ref, result.logs_ref}]
        assert page_of(reader, result.value_ref, 0, 5).items == [4, 5]
        assert page_of(reader, result.logs_ref, 59, 1).items[0]["text"] == "l59"
        run = reader.get_run(result.run_id or "")
        assert run is not None and run.value_ref == result.value_ref
        assert ws.runner._writes == []
    finally:
        if reader is not store:
            reader.close()
        store.close()


async def test_a_history_write_that_fails_still_keeps_the_value(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_spec(spec)

    def broken(run: Any, values: Any = ()) -> None:
        raise RuntimeError("the history is full of something")

    monkeypatch.setattr(store, "record_run", broken)
    ws = _workspace(store, tmp_path)
    try:
        result = await ws.run("return {a: 1}")
        assert result.value_ref and result.value == {"a": 1}
        assert any("could not record the run" in w for w in ws.warnings)
        # Named in the result, so in the store when the run returned, all the same.
        assert page_of(store, result.value_ref, 0, 1).items == [{"key": "a", "value": 1}]
    finally:
        store.close()


async def test_a_run_that_raises_after_its_values_were_held_still_writes_them(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_spec(spec)
    ws = _workspace(store, tmp_path)

    def remember(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt  # what no `except Exception` catches

    monkeypatch.setattr(ws, "remember", remember)
    refs: list[str] = []
    real_run = ws.runner.run

    async def run(*args: Any, **kwargs: Any) -> Any:
        result = await real_run(*args, **kwargs)
        refs.append(result.value_ref)
        return result

    monkeypatch.setattr(ws.runner, "run", run)
    try:
        with pytest.raises(KeyboardInterrupt):
            await ws.run("return 'kept'")
        ws.runner.flush(timeout=30)
        assert page_of(store, refs[0], 0, 1).items == ["kept"]
    finally:
        store.close()


async def test_an_mcp_run_writes_its_value_with_its_history_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp import Client

    from run_repl.mcp.server import RunReplMcp
    from run_repl.store import SqliteStore
    from run_repl.workspace import open_workspace

    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    with open_workspace(None, data_dir_override=str(tmp_path / "data")) as ws:
        puts: list[str] = []
        recorded: list[set[str]] = []
        real_put, real_record = ws.store.put_items, ws.store.record_run

        def put(stored: StoredItems) -> None:
            puts.append(stored.ref)
            real_put(stored)

        def record(run: Any, values: Any = ()) -> None:
            recorded.append({v.ref for v in values})
            real_record(run, values=values)

        monkeypatch.setattr(ws.store, "put_items", put)
        monkeypatch.setattr(ws.store, "record_run", record)
        async with Client(RunReplMcp(ws).build()) as client:
            reply = await client.call_tool(
                "run", {"code": "for (let i = 0; i < 80; i++) console.log(i); return [1, 2]"}
            )
            data = reply.structured_content
            # Read by another store at once, as another server would.
            other = SqliteStore(ws.store.location)
            try:
                assert page_of(other, data["value_ref"], 0, 5).items == [1, 2]
                assert page_of(other, data["logs_ref"], 79, 1).items[0]["text"] == "79"
                run = other.get_run(data["run_id"])
                assert run is not None and run.value_ref == data["value_ref"]
            finally:
                other.close()
        assert puts == [] and recorded == [{data["value_ref"], data["logs_ref"]}]
        assert ws.runner._writes == []


def test_runs_recorded_with_their_values_keep_the_history_budget(durable_spec: str) -> None:
    from run_repl.store.records import RunRecord

    budget = 4000
    store = open_spec(durable_spec, max_history_bytes=budget)
    try:
        for n in range(30):
            small = value(f"res_{n:016d}", [numbers(0, 10)])
            run = RunRecord(
                id=f"run_{n}", status="ok", source="x" * 200, value_ref=small.ref, envelope={}
            )
            store.record_run(run, values=[small])
            store.settle()  # type: ignore[attr-defined]
            (held,) = rows(durable_spec, "SELECT COALESCE(SUM(bytes), 0) FROM runs")[0]
            assert store.history_bytes() == held <= budget  # type: ignore[attr-defined]
            assert store.stored_bytes() == held_bytes(durable_spec)  # type: ignore[attr-defined]
        assert store.get_run("run_29") is not None and store.get_run("run_0") is None
        # The values have a budget of their own: those of evicted runs stay.
        assert page_of(store, f"res_{0:016d}", 0, 1).items == [0]
    finally:
        store.close()


async def test_a_workspace_run_of_a_small_value_is_one_statement_on_postgres(
    postgres_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's value and history row, and what the budgets need: one statement, no
    transaction of its own (where a value was a transaction of seven and its row four)."""
    import psycopg

    store = open_spec(postgres_spec)
    ws = _workspace(store, tmp_path)
    try:
        await ws.run("return 0")  # the worker and the pool, warm
        sent: list[str] = []
        transactions: list[int] = []
        real_execute, real_transaction = psycopg.Cursor.execute, psycopg.Connection.transaction

        def execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if str(query):  # not the pool's check of a connection it hands out (an empty query)
                sent.append(str(query))
            return real_execute(self, query, *args, **kwargs)

        def transaction(self: Any, *args: Any, **kwargs: Any) -> Any:
            transactions.append(1)
            return real_transaction(self, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)
        monkeypatch.setattr(psycopg.Connection, "transaction", transaction)
        result = await ws.run("return 1")
        monkeypatch.undo()
        assert result.value == 1 and result.value_ref
        assert len(sent) == 1 and transactions == [], sent
        assert page_of(store, result.value_ref, 0, 1).items == [1]
    finally:
        store.close()


def test_what_fits_the_budgets_is_all_kept(durable_spec: str) -> None:
    """The budgets count each write once: values and runs that fit stay, the first
    past the budget makes room."""
    from run_repl.store.records import RunRecord

    one = value("res_0000000000000000", [numbers(0, 1000)])
    store = open_spec(durable_spec, max_bytes=one.size * 4 + 1, max_history_bytes=20_000)
    try:
        refs = [f"res_{i:016d}" for i in range(4)]
        for n, ref in enumerate(refs):
            run = RunRecord(id=f"run_{n}", status="ok", source="s", value_ref=ref, envelope={})
            store.record_run(run, values=[value(ref, [numbers(0, 1000)])])
        assert all(store.get_items(r) is not None for r in refs)
        assert store.stored_bytes() == one.size * 4 == held_bytes(durable_spec)  # type: ignore[attr-defined]
        assert [r.id for r in store.list_runs()] == ["run_3", "run_2", "run_1", "run_0"]
        store.put_items(value("res_00000000000000ff", [numbers(0, 1000)]))
        store.settle()  # type: ignore[attr-defined]
        assert store.get_items(refs[0]) is None and store.get_items("res_00000000000000ff")
    finally:
        store.close()


def test_the_inline_limit_counts_encoded_bytes() -> None:
    from run_repl.store.backends._sql import chunks_of_inline, inline_chunks

    fits = '["' + "x" * (INLINE_VALUE_BYTES - 5) + '"]'  # with its newline: the limit
    assert len(fits) + 1 == INLINE_VALUE_BYTES
    kept = inline_chunks(value("res_1", [fits], total=1))
    assert kept is not None and chunks_of_inline(kept) == [fits]
    assert inline_chunks(value("res_2", [fits[:-2] + 'x"]'], total=1)) is None  # a byte over
    # Characters that take more than a byte count as their bytes.
    wide = '["' + "é" * ((INLINE_VALUE_BYTES - 5) // 2 + 1) + '"]'
    assert len(wide) < INLINE_VALUE_BYTES and inline_chunks(value("res_4", [wide], total=1)) is None


async def test_a_run_past_a_budget_leaves_the_eviction_to_the_store_s_thread(
    postgres_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Costs that stay flat: the run's path is its one statement even when a budget is
    full; the eviction (a batch, down to the low-water mark) runs on the store's thread."""
    import threading

    import psycopg

    store = open_spec(postgres_spec, max_bytes=20_000)
    ws = _workspace(store, tmp_path)
    try:
        for n in range(5):  # ~4 KB each: the budget nearly full
            store.put_items(value(f"res_{n:016d}", [numbers(0, 1000)]))
        await ws.run("return 0")  # warm
        assert store.stored_bytes() <= 20_000  # type: ignore[attr-defined]  # no eviction yet
        store.settle()  # type: ignore[attr-defined]
        sent: list[tuple[str, str]] = []
        real_execute = psycopg.Cursor.execute

        def execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if str(query):  # not the pool's check of a connection (an empty query)
                sent.append((threading.current_thread().name, str(query)))
            return real_execute(self, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)
        result = await ws.run("return Array.from({ length: 1800 }, (_, i) => i % 10)")
        on_path = [q for t, q in sent if not t.startswith("run-repl-evict")]
        store.settle()  # type: ignore[attr-defined]
        monkeypatch.undo()
        assert result.value_ref and len(on_path) == 1, on_path
        evicting = [q for t, q in sent if t.startswith("run-repl-evict")]
        assert any("DELETE FROM results" in q for q in evicting), evicting
        assert store.stored_bytes() <= 20_000  # type: ignore[attr-defined]
        assert page_of(store, result.value_ref, 1799, 1).items == [9]  # spared: just written
    finally:
        store.close()
