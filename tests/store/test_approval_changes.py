"""Every approval write bumps a version any process can see: what an inbox and a
waiting agent watch (a server store pushes it: LISTEN/NOTIFY)."""

from __future__ import annotations

import asyncio

import forked_cli
from store_kinds import CHILD_PRELUDE, open_spec

from run_repl.store import Store
from run_repl.store.approvals.flow import wait_for_approvals_change
from run_repl.store.records import PendingApproval


def approval(aid: str) -> PendingApproval:
    return PendingApproval(
        id=aid, run_id="run_1", source="1", path="a.b", message="ok?", continuation="tok"
    )


def test_each_approval_write_bumps_the_version(store: Store) -> None:
    before = store.approvals_version()
    store.add_approvals([approval("int_1")])
    after = store.approvals_version()
    assert after > before
    store.list_approvals()  # reading changes nothing
    assert store.approvals_version() == after
    store.claim_batch({"int_1": True}, claim_id="c", claimed_by="a", decided_by="a", ttl_s=60)
    assert store.approvals_version() > after


def test_a_queued_approver_polling_changes_nothing_and_wakes_no_one(store: Store) -> None:
    """A decision queued behind another approver's resume asks again every 0.2 s: those
    asks write nothing, so no inbox wakes and no disk syncs for them."""
    store.add_approvals([approval("int_1"), approval("int_2")])
    store.claim_batch({"int_1": True}, claim_id="c1", claimed_by="a", decided_by="a", ttl_s=60)
    queued = store.claim_batch(
        {"int_2": True}, claim_id="c2", claimed_by="b", decided_by="b", ttl_s=60
    )
    assert type(queued).__name__ == "Queued"
    before = store.approvals_version()
    for _ in range(3):
        again = store.claim_batch(
            {"int_2": True}, claim_id="c2", claimed_by="b", decided_by="b", ttl_s=60, waiting=True
        )
        assert type(again).__name__ == "Queued"
    assert store.approvals_version() == before


async def test_a_waiter_wakes_on_a_change_and_times_out_without_one(store: Store) -> None:
    since = store.approvals_version()
    assert await wait_for_approvals_change(store, since, 0.1) == since

    async def later() -> None:
        await asyncio.sleep(0.1)
        await asyncio.to_thread(store.add_approvals, [approval("int_2")])

    task = asyncio.create_task(later())
    changed = await wait_for_approvals_change(store, since, 30)
    await task
    assert changed > since


async def test_many_waiters_all_wake_on_one_change(store: Store) -> None:
    since = store.approvals_version()
    waiters = [asyncio.create_task(wait_for_approvals_change(store, since, 30)) for _ in range(20)]
    await asyncio.sleep(0.2)
    await asyncio.to_thread(store.add_approvals, [approval("int_3")])
    woken = await asyncio.gather(*waiters)
    assert all(v > since for v in woken)


WRITER = (
    CHILD_PRELUDE.format(here=str(__import__("pathlib").Path(__file__).parent))
    + """
from run_repl.store.records import PendingApproval as P
s = open_spec(sys.argv[1])
s.add_approvals([P(id='int_x', run_id='r', source='1', path='a.b', message='m', continuation='t')])
s.close()
"""
)


async def test_a_change_from_another_process_is_seen(durable_spec: str) -> None:
    store = open_spec(durable_spec)
    since = store.approvals_version()
    waiting = asyncio.create_task(wait_for_approvals_change(store, since, 60))
    proc = await asyncio.create_subprocess_exec(*forked_cli.python_c(WRITER, durable_spec))
    assert await proc.wait() == 0
    changed = await waiting
    assert changed > since
    assert store.get_approval("int_x") is not None
    store.close()


def test_a_server_store_pushes_changes_rather_than_being_asked(postgres_spec: str) -> None:
    # wait_for_approvals_change polls a store only when it cannot push.
    store = open_spec(postgres_spec)
    assert callable(getattr(store, "wait_approvals_change", None))
    since = store.approvals_version()
    other = open_spec(postgres_spec)
    other.add_approvals([approval("int_p")])
    assert store.wait_approvals_change(since, 30) > since  # type: ignore[attr-defined]
    other.close()
    store.close()


def test_a_listener_knows_each_new_version_from_the_notification(postgres_spec: str) -> None:
    """The NOTIFY names the counter that moved and its value: the listener's version is
    the committed sum after every change, and it reads the counters only when it starts."""
    store = open_spec(postgres_spec)
    listener = store._listener  # type: ignore[attr-defined]
    reads = 0
    read_shards = listener._read_shards

    def counted(conn: object) -> dict[int, int]:
        nonlocal reads
        reads += 1
        return read_shards(conn)

    listener._read_shards = counted
    since = store.approvals_version()
    other = open_spec(postgres_spec)
    for n in range(12):  # the writes land on shards at random
        other.add_approvals([approval(f"int_n{n}")])
        since = store.wait_approvals_change(since, 30)  # type: ignore[attr-defined]
        assert since == store.approvals_version()  # the sum the server holds, exactly
    assert reads <= 1  # (the one when listening began, if it began after the patch)
    other.close()
    store.close()


def test_a_notification_without_a_value_still_wakes_with_the_sum(postgres_spec: str) -> None:
    """A release that notified with no payload: the listener reads the counters then."""
    store = open_spec(postgres_spec)
    listener = store._listener  # type: ignore[attr-defined]
    since = store.approvals_version()
    store.wait_approvals_change(since, 0.5)  # type: ignore[attr-defined]  # listening now
    with store._listen_connection() as conn:  # type: ignore[attr-defined]  # the store's own settings
        conn.execute("UPDATE approval_changes SET version = version + 5 WHERE shard = 0")
        conn.execute("SELECT pg_notify(%s, '')", (listener._channel,))
    woke = store.wait_approvals_change(since, 30)  # type: ignore[attr-defined]
    assert woke == since + 5 == store.approvals_version()
    store.close()
