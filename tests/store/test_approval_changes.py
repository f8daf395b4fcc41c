"""Every approval write bumps a version any process can see: what an inbox and a
waiting agent watch."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from run_repl.store import MemoryStore, SqliteStore
from run_repl.store.approval_flow import wait_for_approvals_change
from run_repl.store.records import PendingApproval


def approval(aid: str) -> PendingApproval:
    return PendingApproval(
        id=aid, run_id="run_1", source="1", path="a.b", message="ok?", continuation="tok"
    )


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    made = SqliteStore(tmp_path / "s.sqlite3") if request.param == "sqlite" else MemoryStore()
    yield made
    made.close()


def test_each_approval_write_bumps_the_version(store) -> None:  # type: ignore[no-untyped-def]
    before = store.approvals_version()
    store.add_approvals([approval("int_1")])
    after = store.approvals_version()
    assert after > before
    store.list_approvals()  # reading changes nothing
    assert store.approvals_version() == after


async def test_a_waiter_wakes_on_a_change_and_times_out_without_one(store) -> None:  # type: ignore[no-untyped-def]
    since = store.approvals_version()
    assert await wait_for_approvals_change(store, since, 0.1) == since

    async def later() -> None:
        await asyncio.sleep(0.1)
        await asyncio.to_thread(store.add_approvals, [approval("int_2")])

    task = asyncio.create_task(later())
    changed = await wait_for_approvals_change(store, since, 10)
    await task
    assert changed > since


async def test_a_change_from_another_process_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteStore(path)
    since = store.approvals_version()
    writer = (
        "import sys; from run_repl.store import SqliteStore; "
        "from run_repl.store.records import PendingApproval as P; "
        "s = SqliteStore(sys.argv[1]); "
        "s.add_approvals([P(id='int_x', run_id='r', source='1', path='a.b', message='m', continuation='t')])"
    )
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", writer, str(path))
    changed = await wait_for_approvals_change(store, since, 30)
    await proc.wait()
    assert proc.returncode == 0 and changed > since
    assert time.monotonic() - started < 30
    assert store.get_approval("int_x") is not None
    store.close()
