"""Owners (an MCP principal) of runs, values and approvals, kept through resumes; and
the `run` tool's idempotency keys, shared by every machine of a store."""

from __future__ import annotations

from types import ModuleType

from store_kinds import execute, open_spec

from run_repl.sandbox.runner import Runner
from run_repl.store import Store
from run_repl.store.approvals.flow import decide, record_run, save_interrupted

HOST = "bank_host:HOSTS"
SOURCE = "await bank.transfer(1, 'o'); return [1, 2, 3]"


async def test_a_resumed_run_stays_its_first_owners(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    first = await runner.run(SOURCE, bank.HOSTS)
    record_run(store, first, source=SOURCE, host=HOST, owner="alice")
    [approval] = save_interrupted(store, first, source=SOURCE, host=HOST, owner="alice")
    assert approval.owner == "alice" and store.owner_of_run(first.run_id or "") == "alice"
    done = await decide(store, runner, bank.HOSTS, {approval.id: True}, approver="carol", via="x")
    runner.flush()
    assert done.status == "ok"
    assert store.owner_of_run(done.run_id or "") == "alice"  # whoever decided
    assert done.value_ref is None or store.owner_of_ref(done.value_ref) == "alice"
    decided = store.get_approval(approval.id)
    assert decided is not None
    assert (decided.decided_by, decided.decided_via) == ("carol", "x")


def test_a_key_is_reserved_once_and_names_its_run(store: Store) -> None:
    mine = store.reserve_run_key("alice", "k", "d1", holder="h1", max_age_s=86400)
    again = store.reserve_run_key("alice", "k", "d1", holder="h2", max_age_s=86400)
    theirs = store.reserve_run_key("bob", "k", "d2", holder="h3", max_age_s=86400)
    assert mine.holder == again.holder == "h1" and again.run_id is None
    assert theirs.holder == "h3"  # keys are per owner
    store.settle_run_key("alice", "k", holder="h2", run_id="run_x")  # not its holder: nothing
    assert store.get_run_key("alice", "k").run_id is None  # type: ignore[union-attr]
    store.settle_run_key("alice", "k", holder="h1", run_id="run_1")
    assert store.get_run_key("alice", "k").run_id == "run_1"  # type: ignore[union-attr]
    store.settle_run_key("bob", "k", holder="h3", run_id=None)  # it never ran: given back
    assert store.get_run_key("bob", "k") is None


def test_machines_of_a_store_share_keys_for_a_day(durable_spec: str) -> None:
    one, two = open_spec(durable_spec), open_spec(durable_spec)
    try:
        one.reserve_run_key("alice", "k", "d", holder="h1", max_age_s=86400)
        seen = two.reserve_run_key("alice", "k", "d", holder="h2", max_age_s=86400)
        assert seen.holder == "h1"  # the other machine's reservation
        one.settle_run_key("alice", "k", holder="h1", run_id="run_1")
        assert two.get_run_key("alice", "k").run_id == "run_1"  # type: ignore[union-attr]
        execute(durable_spec, "UPDATE run_keys SET created_at = created_at - 90000")
        later = two.reserve_run_key("alice", "k", "other", holder="h3", max_age_s=86400)
        assert later.holder == "h3" and later.run_id is None  # a day on: a new key
    finally:
        one.close()
        two.close()
