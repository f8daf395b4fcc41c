"""The team store reads one clock, the server's: a machine whose clock is off
neither re-arms what another machine spent nor forgets another machine's values.

Each test runs two stores on one schema (two machines, as far as the store can
tell) and sets one machine's clock two hours fast by faking `time.time` in the
store's module while that machine works."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from store_kinds import open_spec

from run_repl.sandbox.wire.result_store import StoredItems
from run_repl.sandbox.wire.value_window import chunk_texts
from run_repl.store.backends import postgres as postgres_store
from run_repl.store.backends.postgres import PostgresStore
from run_repl.store.records import RunRecord

TWO_HOURS = 2 * 3600.0


@pytest.fixture
def team(postgres_spec: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    spec = postgres_spec
    right = open_spec(spec, max_age_s=3 * 3600)
    fast = open_spec(spec, max_age_s=3 * 3600)
    assert isinstance(right, PostgresStore) and isinstance(fast, PostgresStore)
    yield right, fast
    right.close()
    fast.close()


@contextmanager
def clock_off_by(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Iterator[None]:
    real = time.time
    with monkeypatch.context() as m:
        m.setattr(postgres_store.time, "time", lambda: real() + seconds)
        yield


def test_a_fast_machine_does_not_re_arm_a_continuation_another_spent(
    team: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    right, fast = team
    expires = time.time() + 3600  # the token is good for an hour more, by the true clock
    assert right.consume_continuation("spent", expires) is True
    with clock_off_by(monkeypatch, TWO_HOURS):
        assert fast.consume_continuation("other", time.time() + 3600) is True
        assert fast.consume_continuation("spent", expires) is False
    assert right.consume_continuation("spent", expires) is False  # still spent: no replay


def test_a_slow_machine_keeps_a_spent_continuation_spent_too(
    team: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    right, slow = team
    expires = time.time() + 3600
    with clock_off_by(monkeypatch, -TWO_HOURS):
        assert slow.consume_continuation("spent", expires) is True
    assert right.consume_continuation("spent", expires) is False


def test_a_fast_machine_reads_and_keeps_another_machines_fresh_value(
    team: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    right, fast = team
    # Values live 3 h here; the fast machine's clock puts a new value past 2 h old,
    # and a value it writes would outlive the others by 2 h.
    right.put_items(StoredItems("res_right", "$", 3, chunk_texts([1, 2, 3])))
    with monkeypatch.context() as m:
        real = time.time
        m.setattr(postgres_store.time, "time", lambda: real() + 3.5 * 3600)
        fast.put_items(StoredItems("res_fast", "$", 1, chunk_texts([4])))  # evicts by age
        assert fast.get_items("res_right") is not None
    found = right.get_items("res_right")
    assert found is not None and found.total == 3


def test_the_history_orders_runs_by_the_servers_clock(
    team: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    right, fast = team

    def record(store: PostgresStore, run_id: str) -> None:
        envelope = {"status": "ok", "value": 1}
        started = time.time()  # the machine's own clock, as a runner stamps it
        store.record_run(
            RunRecord(id=run_id, status="ok", source="s", started_at=started, envelope=envelope)
        )

    record(right, "run_a")
    with clock_off_by(monkeypatch, TWO_HOURS):
        record(fast, "run_b")
    record(right, "run_c")
    # Newest first, as they happened: the fast machine's run is not "newest" for 2 h
    # (nor the last the history's budget would evict).
    assert [r.id for r in right.list_runs()] == ["run_c", "run_b", "run_a"]
