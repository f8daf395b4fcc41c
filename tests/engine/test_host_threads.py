"""The threads sync host functions run on: the last idle one takes the next
call, no more than the cap run at once, later calls wait in order, idle ones end."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from run_repl import create_runner
from run_repl.sandbox.session.host_threads import HostThreads


def _wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def _run_and_wait(pool: HostThreads, fn: Callable[[], object]) -> None:
    done = threading.Event()

    def work() -> None:
        try:
            fn()
        finally:
            done.set()

    pool.submit(work)
    assert done.wait(5)


def test_the_thread_that_went_idle_last_takes_the_next_call() -> None:
    pool = HostThreads()
    gates = [threading.Event() for _ in range(3)]
    names: dict[int, str] = {}
    started = threading.Barrier(4)

    def hold(i: int) -> None:
        names[i] = threading.current_thread().name
        started.wait(5)
        assert gates[i].wait(5)

    for i in range(3):
        pool.submit(lambda i=i: hold(i))
    started.wait(5)  # three threads, each busy with its own call
    assert pool.threads == 3 and len(set(names.values())) == 3
    for i in (1, 2, 0):  # they go idle in this order
        gates[i].set()
        _wait_for(lambda n=pool.idle + 1: pool.idle == n)
    seen: list[str] = []
    _run_and_wait(pool, lambda: seen.append(threading.current_thread().name))
    assert seen == [names[0]]  # the last to go idle, not the first (names[1])
    assert pool.threads == 3  # nobody new was started


def test_no_more_than_the_cap_run_at_once_and_the_rest_wait_in_order() -> None:
    pool = HostThreads(max_threads=2)
    release = threading.Event()
    running = 0
    most = 0
    order: list[int] = []
    lock = threading.Lock()
    finished = threading.Semaphore(0)

    def call(i: int) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            order.append(i)
        release.wait(5)
        with lock:
            running -= 1
        finished.release()

    for i in range(6):
        pool.submit(lambda i=i: call(i))
    _wait_for(lambda: len(order) == 2)
    time.sleep(0.02)
    assert len(order) == 2 and pool.threads == 2  # four wait for a thread
    release.set()
    for _ in range(6):
        assert finished.acquire(timeout=5)
    assert most == 2
    assert order[2:] == [2, 3, 4, 5]  # the waiting ones went in the order they came


def test_a_call_that_raises_is_reported_and_its_thread_serves_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pool = HostThreads(max_threads=1)

    def boom() -> None:
        raise RuntimeError("boom in a host thread")

    _run_and_wait(pool, boom)
    names: list[str] = []
    _run_and_wait(pool, lambda: names.append(threading.current_thread().name))
    assert pool.threads == 1 and names
    assert "boom in a host thread" in capsys.readouterr().err


def test_idle_threads_end_and_new_calls_start_new_ones() -> None:
    pool = HostThreads(idle_s=0.05)
    _run_and_wait(pool, lambda: None)
    assert pool.threads == 1
    _wait_for(lambda: pool.threads == 0)
    ran: list[bool] = []
    _run_and_wait(pool, lambda: ran.append(True))
    assert ran == [True]


EXIT_WHILE_A_CALL_RUNS = r"""
import sys, time
from run_repl.sandbox.session.host_threads import host_threads

def slow_call():
    time.sleep(0.3)
    open(sys.argv[1], "w").write("finished")

threads = host_threads()
threads.submit(lambda: None)
time.sleep(0.05)  # that thread is idle now (it would wait 60 s for work)
threads.submit(slow_call)
print("exiting", flush=True)
"""


def test_exit_waits_for_a_running_call_and_not_for_idle_threads(tmp_path: Path) -> None:
    # A started host call may be an approved one: the exit must not cut it in half.
    marker = tmp_path / "marker"
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", EXIT_WHILE_A_CALL_RUNS, str(marker)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr
    assert out.stdout == "exiting\n"
    assert marker.read_text() == "finished"
    assert took < 20  # idle threads ended at once (each would wait IDLE_S = 60 s)


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        HostThreads(max_threads=0)


async def test_sync_host_functions_run_off_the_loop_on_host_threads() -> None:
    loop_thread = threading.current_thread().name
    seen: list[str] = []

    def where(x: int) -> int:
        seen.append(threading.current_thread().name)
        return x * 2

    result = await create_runner().run(
        "const a = await h.where(1); const b = await h.where(2); return a + b",
        {"h": {"where": where}},
    )
    assert result.value == 6
    assert len(seen) == 2 and all(n.startswith("run-repl-host-") for n in seen)
    assert loop_thread not in seen
