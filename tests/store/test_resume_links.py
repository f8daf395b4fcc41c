"""A paused run and the run that resumed it point at each other in the history: the
paused one says what it became (`resumed_as`, and how that run ended), the resumed one
what it resumed (`resumed_from`), on every store."""

from __future__ import annotations

from types import ModuleType

from run_repl.sandbox.runner import Runner
from run_repl.store import Store
from run_repl.store.approvals.flow import decide, record_run, save_interrupted

HOST = "bank_host:HOSTS"


async def paused(store: Store, runner: Runner, bank: ModuleType, source: str) -> str:
    """Run `source` until it asks, kept as a front end keeps it: its row and its approvals."""
    first = await runner.run(source, bank.HOSTS)
    assert first.status == "interrupted", first.error
    record_run(store, first, source=source, host=HOST)
    save_interrupted(store, first, source=source, host=HOST)
    assert first.run_id is not None
    return first.run_id


def listed(store: Store, run_id: str) -> dict[str, object]:
    (row,) = [r for r in store.list_runs(limit=20) if r.id == run_id]
    return {"status": row.status, "as": row.resumed_as, "then": row.resumed_status}


async def test_an_approved_pause_links_to_the_run_that_resumed_it(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    first = await paused(store, runner, bank, "return await bank.transfer(5, 'a')")
    assert listed(store, first) == {"status": "interrupted", "as": None, "then": None}
    [approval] = store.list_approvals()
    result = await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert result.status == "ok" and result.run_id != first
    assert listed(store, first) == {"status": "interrupted", "as": result.run_id, "then": "ok"}
    resumed = store.get_run(result.run_id or "")
    assert resumed is not None and resumed.resumed_from == first and resumed.resumed_as is None
    got = store.get_run(first)
    assert got is not None and (got.resumed_as, got.resumed_status) == (result.run_id, "ok")


async def test_a_denied_pause_links_to_the_run_that_ended_in_its_error(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    first = await paused(store, runner, bank, "return await bank.transfer(5, 'd')")
    [approval] = store.list_approvals()
    result = await decide(store, runner, bank.HOSTS, {approval.id: False})
    assert result.status == "error"
    assert listed(store, first) == {"status": "interrupted", "as": result.run_id, "then": "error"}


async def test_a_run_paused_twice_links_each_step(
    store: Store, runner: Runner, bank: ModuleType
) -> None:
    source = "await bank.transfer(1, 'x'); return await bank.transfer(2, 'y')"
    first = await paused(store, runner, bank, source)
    [one] = store.list_approvals()
    second = await decide(store, runner, bank.HOSTS, {one.id: True})
    assert second.status == "interrupted"
    [two] = store.list_approvals()
    third = await decide(store, runner, bank.HOSTS, {two.id: True})
    assert third.status == "ok"
    assert listed(store, first)["as"] == second.run_id
    middle = listed(store, second.run_id or "")
    assert middle == {"status": "interrupted", "as": third.run_id, "then": "ok"}
    last = store.get_run(third.run_id or "")
    assert last is not None and last.resumed_from == second.run_id
