"""Approvals against the bad days: kill -9 and Ctrl-C of the approver mid-resume, a full
disk at each write, and two approver processes racing over one run (redteam H1, M2, M7);
the process stories on every durable store (SQLite, PostgreSQL)."""

from __future__ import annotations

import json
import selectors
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_kinds import CHILD_PRELUDE, execute, open_spec

from run_repl.present.approvals import describe_state
from run_repl.sandbox.runner import Runner
from run_repl.store import ApprovalConflict, SqliteStore, Store, StoreError
from run_repl.store.approvals.flow import (
    decide,
    recover,
    save_interrupted,
    store_runner,
)

SECRET = "s" * 40
HOST = "bank_host:HOSTS"
HERE = Path(__file__).parent


# ------------------------------------------------------------------ a full disk, on purpose


class FullDisk:
    """A connection whose writes fail while `full` is set, as SQLite's do on a full disk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.full = False

    def _check(self, sql: str) -> None:
        if self.full and sql.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            raise sqlite3.OperationalError("database or disk is full")

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._check(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._check(sql)
        return self._conn.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[tuple[SqliteStore, FullDisk]]:
    store = SqliteStore(tmp_path / "run-repl.sqlite3")
    fake = FullDisk(store._db)  # type: ignore[arg-type]
    store._db = fake  # type: ignore[assignment]
    yield store, fake
    store._db = fake._conn
    store.close()


def full_during(fake: FullDisk, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        fake.full = True
        try:
            return fn(*args, **kwargs)
        finally:
            fake.full = False

    return wrapped


async def paused(store: Store, runner: Runner, bank: ModuleType, source: str) -> Any:
    first = await runner.run(source, bank.HOSTS)
    assert first.status == "interrupted", first.error
    return save_interrupted(store, first, source=source, host=HOST)


async def test_disk_full_at_the_guard_means_the_call_does_not_run(
    disk: tuple[SqliteStore, FullDisk], bank: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, fake = disk
    runner = store_runner(store, secret=SECRET)
    [approval] = await paused(store, runner, bank, "return await bank.transfer(1, 'full')")
    healthy = store.start_batch
    monkeypatch.setattr(store, "start_batch", full_during(fake, healthy))
    result = await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert result.error is not None and result.error.code == "RUN_CONTINUATION_INVALID"
    assert "disk is full" in result.error.message and "Nothing was run" in result.error.message
    assert result.stats.host_calls_executed == 0
    assert bank.rows() == []
    after = store.get_approval(approval.id)
    assert after.status == "pending" and after.decision is None and "disk is full" in after.note
    monkeypatch.setattr(store, "start_batch", healthy)
    assert (await decide(store, runner, bank.HOSTS, {approval.id: True})).status == "ok"
    assert bank.rows() == [("full", 1)]


async def test_disk_full_when_claiming_records_nothing_and_runs_nothing(
    disk: tuple[SqliteStore, FullDisk], bank: ModuleType
) -> None:
    store, fake = disk
    runner = store_runner(store, secret=SECRET)
    [approval] = await paused(store, runner, bank, "return await bank.transfer(1, 'claim')")
    fake.full = True
    with pytest.raises(StoreError, match="disk is full") as caught:
        await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert caught.value.problem == "full"
    fake.full = False
    assert store.get_approval(approval.id).status == "pending" and bank.rows() == []


async def test_disk_full_when_recording_the_outcome_shows_the_result_and_never_reruns(
    disk: tuple[SqliteStore, FullDisk], bank: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # redteam M2: a traceback, the call done, the approval `claimed` forever, no result seen.
    store, fake = disk
    runner = store_runner(store, secret=SECRET)
    [approval] = await paused(store, runner, bank, "return await bank.transfer(6, 'after')")
    healthy = store.finish_batch
    monkeypatch.setattr(store, "finish_batch", full_during(fake, healthy))
    warnings: list[str] = []
    result = await decide(store, runner, bank.HOSTS, {approval.id: True}, warnings=warnings)
    monkeypatch.setattr(store, "finish_batch", healthy)
    assert result.status == "ok" and result.value == 6
    assert any("could not be recorded" in w and "unfinished" in w for w in warnings)
    assert store.get_approval(approval.id).state() == "executing"
    with pytest.raises(ApprovalConflict):
        await decide(store, runner, bank.HOSTS, {approval.id: True})
    with pytest.raises(ApprovalConflict, match="being resumed"):
        recover(store, approval.id, approver="ops")
    # Its lease runs out (no heartbeat after the resume ended): stuck until someone ran
    # `recover`, under the old rule; now unfinished as soon as anyone looks.
    expire_claims(f"sqlite:{store.path}")
    assert describe_state(store.get_approval(approval.id)).startswith("STUCK")  # not looked at
    assert store.list_approvals("stuck") == []
    ended = store.get_approval(approval.id)
    assert ended.status == "unfinished" and ended.outcome == "unknown"
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert bank.rows() == [("after", 6)]


def expire_claims(spec: str) -> None:
    """Time passes: every claim runs out."""
    execute(spec, "UPDATE approvals SET claim_expires_at = 0 WHERE claim_expires_at IS NOT NULL")


# ------------------------------------------------------------------ the approver killed, or Ctrl-C


APPROVER = (
    CHILD_PRELUDE.format(here=str(HERE))
    + """
import asyncio, json, signal
# Ctrl-C raises KeyboardInterrupt, as in a person's terminal, however the suite was
# started (a shell starts a background job's children with SIGINT ignored).
signal.signal(signal.SIGINT, signal.default_int_handler)
import bank_host
from run_repl.store import ApprovalConflict
from run_repl.store.approvals.flow import decide, store_runner
store = open_spec(sys.argv[2])
if sys.argv[5:] == ["held"]:  # its resume's worker stops before the approved call; it says so
    from held_pool import HeldPool
    from run_repl.sandbox.runner import Runner
    held = HeldPool(on_held=lambda: print("held", flush=True))
    runner = Runner(secret="s" * 40, store=store, continuation_store=store, pool=held)
else:
    runner = store_runner(store, secret="s" * 40)
try:
    result = asyncio.run(decide(store, runner, bank_host.HOSTS, {sys.argv[3]: True}, approver=sys.argv[4]))
    print(json.dumps({"status": result.status, "value": result.value}))
except ApprovalConflict as exc:
    print(json.dumps({"conflict": str(exc)}))
"""
)


def start_approver(
    spec: str, approval_id: str, name: str = "proc", *how: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", APPROVER, str(HERE), spec, approval_id, name, *how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def signal_masks(pid: int) -> str:
    """The process's blocked, ignored and caught signals (Linux), for a failure's message."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "?"
    return " ".join(
        line for line in status.splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt"))
    )


def read_line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The child's next line of output (it must come within `timeout`)."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout), f"nothing from the child in {timeout} s"
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=60)
        stderr = proc.stderr.read() if proc.stderr is not None else ""
        raise AssertionError(f"the child ended without a word: {stderr}")
    return line.strip()


def wait_status(spec: str, approval_id: str, status: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    store = open_spec(spec)
    try:
        while store.get_approval(approval_id).status != status:
            assert time.monotonic() < deadline, f"{approval_id} never became {status}"
            time.sleep(0.02)
    finally:
        store.close()


@pytest.mark.slow
async def test_kill_9_mid_resume_is_unfinished_once_its_lease_lapses_and_never_runs_twice(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    [approval] = await paused(store, runner, bank, "return await bank.transfer(1, 'kill', 60)")
    proc = start_approver(durable_spec, approval.id)
    try:
        wait_status(durable_spec, approval.id, "executing")
        deadline = time.monotonic() + 60
        while not bank.rows("start"):  # the approved call has begun (and is held)
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    # redteam M2: `claimed` forever, invisible to list, refused by approve and deny, no way out.
    assert store.get_approval(approval.id).state() == "executing"
    with pytest.raises(ApprovalConflict):
        await decide(store, runner, bank.HOSTS, {approval.id: False})
    expire_claims(durable_spec)  # its lease runs out: unfinished once anyone looks (not stuck)
    assert store.list_approvals("stuck") == []
    ended = store.get_approval(approval.id)
    assert ended.status == "unfinished" and ended.outcome == "unknown"
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert bank.rows() == []  # killed during its delay: it never got to the transfer


@pytest.mark.slow
async def test_kill_9_before_the_guard_frees_the_claim_for_the_same_decision(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    source = "return await bank.transfer(2, 'early')"
    [approval] = await paused(store, runner, bank, source)
    proc = start_approver(durable_spec, approval.id, "alice", "held")
    try:
        assert read_line(proc) == "held"  # claimed, its resume under way, stopped short of the call
        assert store.get_approval(approval.id).status == "claimed"
    finally:
        proc.kill()
        proc.wait()
    expire_claims(durable_spec)
    seen = store.get_approval(approval.id)
    assert seen.state() == "queued" and seen.decided_by == "alice"  # her decision is kept
    with pytest.raises(ApprovalConflict, match="approve by alice"):
        await decide(store, runner, bank.HOSTS, {approval.id: False})
    bobs = store_runner(store, secret=SECRET)
    done = await decide(store, bobs, bank.HOSTS, {approval.id: True}, approver="bob")
    assert done.status == "ok", done.error
    assert bank.rows() == [("early", 2)]


@pytest.mark.slow
async def test_ctrl_c_mid_resume_leaves_it_final_and_the_call_ran_once(
    durable_spec: str, bank: ModuleType
) -> None:
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    [approval] = await paused(store, runner, bank, "return await bank.transfer(3, 'sigint', 60)")
    proc = start_approver(durable_spec, approval.id)
    deadline = time.monotonic() + 60
    while not bank.rows("start"):  # the approved call is running
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    masks = signal_masks(proc.pid)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)  # the interrupt lands while the call is still held
    bank.release("sigint")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, (proc.returncode, masks, out, err)
    after = store.get_approval(approval.id)
    assert (
        after.status == "unfinished"
    )  # redteam H1: back to pending, and re-approving ran it again
    # Approved again from another process than the one interrupted (this one: starting a
    # third took longer than the rest of the test).
    with pytest.raises(ApprovalConflict, match="already unfinished"):
        await decide(store, runner, bank.HOSTS, {approval.id: True})
    assert bank.rows() == [("sigint", 3)]


# ------------------------------------------------------------------ two approver processes racing


RACER = (
    CHILD_PRELUDE.format(here=str(HERE))
    + """
import asyncio, json, time
from pathlib import Path
import bank_host
from run_repl.store.approvals.flow import resolve, store_runner
store = open_spec(sys.argv[2])
runner = store_runner(store, secret="s" * 40)
me, other, ids = sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
flags = Path(sys.argv[6])

async def main():
    for k, approval_id in enumerate(ids):
        (flags / f"{k}-{me}").touch()
        while not (flags / f"{k}-{other}").exists():  # start each trial together
            await asyncio.sleep(0.0005)
        done = await resolve(store, runner, bank_host.HOSTS, {approval_id: True}, approver=me, poll_s=0.01)
        print(json.dumps({"trial": k, "status": done.result.status if done.result else None,
                          "queued": done.queued_behind is not None, "warnings": done.warnings}), flush=True)

asyncio.run(main())
"""
)


@pytest.mark.slow
async def test_two_processes_approving_the_two_approvals_of_one_run_complete_it(
    durable_spec: str, tmp_path: Path, bank: ModuleType
) -> None:
    # redteam M7: 2 of 3 trials stranded the run (both calls ran, the rest of the snippet never did).
    trials = 12
    store = open_spec(durable_spec)
    runner = store_runner(store, secret=SECRET)
    pairs = []
    for k in range(trials):
        src = (
            f"const [a, b] = await Promise.all([bank.transfer(1, 't{k}'), bank.transfer(2, 't{k}')])\n"
            f"await bank.done('t{k}')\nreturn a + b"
        )
        a, b = await paused(store, runner, bank, src)
        pairs.append((a.id, b.id))
    flags = tmp_path / "flags"
    flags.mkdir()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RACER,
                str(HERE),
                durable_spec,
                me,
                other,
                json.dumps([p[i] for p in pairs]),
                str(flags),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, (me, other) in enumerate((("alice", "bob"), ("bob", "alice")))
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
    reports = [[json.loads(line) for line in out.splitlines()] for out, _ in outs]
    assert all(len(r) == trials for r in reports)
    assert all(not line["warnings"] for r in reports for line in r)
    for k, (a, b) in enumerate(pairs):
        assert [store.get_approval(i).status for i in (a, b)] == ["approved", "approved"], k
        assert sorted(bank.rows(tag=f"t{k}")) == [(f"t{k}", 1), (f"t{k}", 2)], k
        assert bank.rows("done", tag=f"t{k}") == [(f"t{k}", 0)], k  # the run completed, once
        statuses = {r[k]["status"] for r in reports}
        assert "ok" in statuses and statuses <= {"ok", "interrupted"}, (k, statuses)
    queued = sum(line["queued"] for r in reports for line in r)
    print(f"{trials} trials; {queued} decisions had to wait for the other approver's resume")
