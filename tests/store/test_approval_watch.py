"""The thread that reads a SQLite store's approval counter for every waiter
(run_repl/store/approvals/watch.py): one reader however many wait, nothing read
while nobody waits, a new waiter read for at once, a failed read told to all."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from run_repl.store import StoreError
from run_repl.store.approvals.flow import wait_for_approvals_change
from run_repl.store.approvals.watch import PollingWatch
from run_repl.store.backends.sqlite import SqliteStore

WAIT_S = 10.0  # a bound on waiting for the watch thread, never reached when it works


class Counter:
    """A version to hand out, the reads that asked for it, and a failure to raise."""

    def __init__(self) -> None:
        self.version = 1
        self.reads: list[int] = []  # the thread of each read
        self.fail: str | Exception | None = None
        self.read_once = threading.Event()

    def __call__(self) -> int:
        self.reads.append(threading.get_ident())
        self.read_once.set()
        if isinstance(self.fail, Exception):
            raise self.fail
        if self.fail is not None:
            raise StoreError(self.fail)
        return self.version


def until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.002)


def test_one_thread_reads_for_every_waiter_and_tells_each_of_a_change() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=0.005)
    heard: list[list[int]] = [[] for _ in range(20)]
    stops = [watch.watch(seen.append) for seen in heard]
    results: list[int] = []
    waiters = [
        threading.Thread(target=lambda: results.append(watch.wait(1, WAIT_S))) for _ in range(3)
    ]
    for waiter in waiters:
        waiter.start()
    until(lambda: len(counter.reads) >= 5, "the counter is read while they wait")
    counter.version = 2
    until(lambda: all(2 in seen for seen in heard), "every watcher hears of the change")
    for waiter in waiters:
        waiter.join(WAIT_S)
    assert results == [2, 2, 2]
    assert len(set(counter.reads)) == 1  # one reader for 23 waiters
    assert threading.get_ident() not in counter.reads
    # Told once per change, not once per read: 1 (the first read), then 2.
    assert all(seen == [1, 2] for seen in heard), heard[0]
    for stop in stops:
        stop()
    watch.close()


def test_nothing_is_read_while_nobody_waits() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=0.005)
    stop = watch.watch(lambda version: None)
    until(lambda: len(counter.reads) >= 3, "the counter is read while someone waits")
    stop()
    reads = len(counter.reads)
    time.sleep(0.2)  # forty intervals
    assert len(counter.reads) <= reads + 1  # at most the read already under way
    watch.watch(lambda version: None)
    until(lambda: len(counter.reads) > reads, "a new waiter wakes the reader")
    watch.close()


def test_a_new_waiter_is_read_for_at_once_not_after_the_interval() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=3600)
    stop = watch.watch(lambda version: None)
    assert counter.read_once.wait(WAIT_S)
    counter.read_once.clear()
    counter.version = 5
    # The interval is an hour: only the new waiter's arrival can make this read.
    assert watch.wait(4, WAIT_S) == 5
    stop()
    watch.close()


def test_a_failed_read_is_told_to_every_waiter_and_the_version_is_kept() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=0.005)
    errors: list[str] = []
    versions: list[int] = []
    stop = watch.watch(versions.append, errors.append)
    until(lambda: versions == [1], "the first read is told")
    counter.fail = "The store at x is busy"
    with pytest.raises(StoreError, match="is busy"):
        watch.wait(1, WAIT_S)
    until(lambda: errors, "the watcher hears the failure")
    assert errors[0] == "The store at x is busy"
    assert watch.last_error == "The store at x is busy"
    counter.fail = None
    counter.version = 3
    assert watch.wait(1, WAIT_S) == 3  # reading again once it works
    assert versions == [1, 3]
    stop()
    watch.close()


def test_a_read_that_fails_unexpectedly_does_not_end_the_watching() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=0.005)
    counter.fail = RuntimeError("a bug in a read")
    errors: list[str] = []
    stop = watch.watch(lambda version: None, errors.append)
    until(lambda: errors, "the watcher hears the failure")
    assert errors[0] == "RuntimeError('a bug in a read')"
    counter.fail = None
    counter.version = 9
    assert watch.wait(1, WAIT_S) == 9
    stop()
    watch.close()


async def test_a_coroutine_waiting_on_a_failing_store_gets_the_store_error() -> None:
    counter = Counter()
    watch = PollingWatch(counter, interval_s=0.005)

    class Store:
        watch_approvals = watch.watch

    counter.fail = "The store at x is damaged"
    with pytest.raises(StoreError, match="is damaged"):
        await asyncio.wait_for(wait_for_approvals_change(Store(), 1, WAIT_S), WAIT_S)
    counter.fail = None
    counter.version = 7
    assert await wait_for_approvals_change(Store(), 1, WAIT_S) == 7
    watch.close()


def test_closing_ends_the_thread_and_returns_the_waiters(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    since = store.approvals_version()
    results: list[int] = []
    waiter = threading.Thread(target=lambda: results.append(store.wait_approvals_change(since, 60)))
    waiter.start()
    until(lambda: store._watch._waiting == 1, "the waiter waits")
    thread = store._watch._thread
    assert thread is not None and thread.is_alive()
    store.close()
    waiter.join(WAIT_S)
    thread.join(WAIT_S)
    assert results == [since]
    assert not thread.is_alive()
    with pytest.raises(StoreError, match="closed"):
        store.watch_approvals(lambda version: None)


def test_a_sqlite_store_that_nobody_watches_starts_no_thread(tmp_path: Path) -> None:
    def watching() -> int:
        return sum(t.name == "run-repl-sqlite-watch" for t in threading.enumerate())

    before = watching()  # an earlier test's store may still be ending its own
    store = SqliteStore(tmp_path / "s.db")
    store.add_approvals([])
    store.approvals_version()
    assert store._watch._thread is None
    assert watching() <= before
    store.close()
