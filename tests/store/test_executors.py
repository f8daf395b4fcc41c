"""The executor registry: the processes that can resume a host's runs, and who is live.

Live is read by the store's clock: a machine whose own clock is two hours off still
sees (and is seen) as live. Time passing is made by moving `seen_at` back in the
store (what a test does instead of waiting); a real process registers, beats, and
leaves on exit, or, killed, stays until it is no longer live."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import forked_cli
import pytest
from store_kinds import CHILD_PRELUDE, execute, open_spec

from run_repl.store import Store
from run_repl.store.executors import KEPT_S, LIVE_S, Executor, new_executor_id

HERE = Path(__file__).parent
DIGEST = "f" * 64


def age_all(spec: str, store: Store, seconds: float) -> None:
    """Time passes: every executor was last seen `seconds` earlier than it was."""
    if spec.startswith("memory"):
        with store._executors_lock:  # type: ignore[attr-defined]
            table = store._executors  # type: ignore[attr-defined]
            for key, (row, seen) in list(table.items()):
                table[key] = (row, seen - seconds)
        return
    execute(
        spec,
        f"UPDATE executors SET seen_at = seen_at - {seconds}, started_at = started_at - {seconds}",
    )


def register(store: Store, host: str = "demo", kind: str = "serve") -> Executor:
    eid = new_executor_id()
    return store.register_executor(
        eid, host=host, functions=DIGEST, label=f"{kind} tester@box pid 1", kind=kind
    )


def test_a_registered_executor_is_live_and_listed_by_host(spec: str, store: Store) -> None:
    mine = register(store)
    other = register(store, host="bank", kind="mcp")
    assert mine.live and mine.age_s < LIVE_S
    assert (mine.host, mine.functions, mine.kind) == ("demo", DIGEST, "serve")
    assert mine.label == "serve tester@box pid 1"
    assert [e.id for e in store.list_executors("demo")] == [mine.id]
    assert {e.id for e in store.list_executors()} == {mine.id, other.id}
    found = store.get_executor(mine.id)
    assert found is not None and found.live and found.started_at == mine.started_at
    assert store.get_executor(new_executor_id()) is None


def test_not_seen_for_live_s_is_not_live_and_a_beat_makes_it_live_again(
    spec: str, store: Store
) -> None:
    mine = register(store)
    age_all(spec, store, LIVE_S - 2)
    assert store.get_executor(mine.id).live  # type: ignore[union-attr]
    age_all(spec, store, 3)
    gone = store.get_executor(mine.id)
    assert gone is not None and not gone.live and gone.age_s >= LIVE_S
    assert store.beat_executor(mine.id) is True
    back = store.get_executor(mine.id)
    assert back is not None and back.live and back.age_s < LIVE_S
    assert back.started_at == gone.started_at  # the same executor, seen again


def test_a_beat_can_carry_new_host_functions_and_an_unknown_one_says_register_again(
    spec: str, store: Store
) -> None:
    mine = register(store)
    assert store.beat_executor(mine.id, functions="e" * 64) is True
    assert store.get_executor(mine.id).functions == "e" * 64  # type: ignore[union-attr]
    assert store.beat_executor(mine.id) is True
    assert store.get_executor(mine.id).functions == "e" * 64  # type: ignore[union-attr]
    assert store.beat_executor(new_executor_id()) is False


def test_leaving_removes_it_and_live_ones_come_first(spec: str, store: Store) -> None:
    old = register(store)
    age_all(spec, store, LIVE_S + 1)
    new = register(store)
    assert [e.id for e in store.list_executors("demo")] == [new.id, old.id]
    store.leave_executor(new.id)
    assert [e.id for e in store.list_executors("demo")] == [old.id]
    store.leave_executor(new.id)  # twice: nothing more to do


def test_registering_forgets_executors_gone_for_a_day(spec: str, store: Store) -> None:
    old = register(store)
    age_all(spec, store, KEPT_S + 60)
    new = register(store)
    assert [e.id for e in store.list_executors()] == [new.id]
    assert store.get_executor(old.id) is None


def test_liveness_is_the_stores_clock_not_this_machines(
    spec: str, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = time.time
    with monkeypatch.context() as m:  # this machine's clock two hours fast
        m.setattr(time, "time", lambda: real() + 7200)
        fast = register(store)
        assert store.get_executor(fast.id).live  # type: ignore[union-attr]
    with monkeypatch.context() as m:  # and two hours slow
        m.setattr(time, "time", lambda: real() - 7200)
        assert store.beat_executor(fast.id)
        slow = register(store)
    assert all(e.live for e in store.list_executors())
    assert {e.id for e in store.list_executors()} == {fast.id, slow.id}


CHILD = (
    CHILD_PRELUDE.format(here=str(HERE))
    + """
from run_repl.store.executors import new_executor_id
store = open_spec(sys.argv[1])
eid = new_executor_id()
store.register_executor(eid, host="demo", functions="f" * 64, label="child", kind="serve")
print(eid, flush=True)
sys.stdin.readline()
if sys.argv[2] == "leave":
    store.leave_executor(eid)
store.close()
"""
)


@pytest.mark.parametrize("ending", ["leave", "killed"])
def test_another_process_registers_and_leaves_or_is_killed_and_stops_being_live(
    durable_spec: str, ending: str
) -> None:
    store = open_spec(durable_spec)
    try:
        _registers_and_ends(durable_spec, store, ending)
    finally:
        store.close()


def _registers_and_ends(durable_spec: str, store: Store, ending: str) -> None:
    proc = subprocess.Popen(
        forked_cli.python_c(CHILD, durable_spec, ending),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    eid = proc.stdout.readline().strip()
    assert eid.startswith("exe_"), proc.stderr.read() if proc.stderr else ""
    seen = store.get_executor(eid)
    assert seen is not None and seen.live and seen.label == "child"
    if ending == "leave":
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        assert store.get_executor(eid) is None
        return
    proc.kill()
    proc.wait(timeout=60)
    assert store.get_executor(eid).live  # type: ignore[union-attr]  # not yet: seen just now
    age_all(durable_spec, store, LIVE_S)
    dead = store.get_executor(eid)
    assert dead is not None and not dead.live
