"""Workers forked from a template process: one fresh child per run, isolated,
reaped, and never outliving the parent."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

from run_repl import Limits, get_host_function_context
from run_repl.sandbox.process.confine import Confinement
from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session import pool as worker_pool
from run_repl.sandbox.session.pool import TemplateProcess, WorkerPool, WorkerProcess


class RecordingPool(WorkerPool):
    """A pool that remembers each worker it hands out."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.taken: list[WorkerProcess] = []

    def take(self) -> WorkerProcess:
        worker = super().take()
        self.taken.append(worker)
        return worker


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _parent_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _exists(pid: int) -> bool:
    """Running, or a zombie nobody has reaped."""
    return _stat(pid) is not None


def _running(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _wait_gone(
    pids: list[int], seconds: float = 5.0, *, still: Callable[[int], bool] = _exists
) -> list[int]:
    """The ones for which `still(pid)` holds after `seconds` (by default: not reaped;
    `still=_running`: not stopped, a zombie counting as stopped)."""
    deadline = time.monotonic() + seconds
    left = [p for p in pids if still(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = [p for p in left if still(p)]
    return left


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


async def run_saw_its_worker_die() -> None:
    """What a host function that killed its own run's worker does next: stay in flight
    until the run has seen the worker die (it then tells its calls the run stopped). A
    fixed sleep here outlasted the crash by seconds, and the run waited it out (the grace
    it gives calls still running); a regression that missed the death still ends in the
    run's own deadline, and the test then fails on its error code."""
    await get_host_function_context().cancelled.wait()


@pytest.fixture
def pool() -> RecordingPool:
    made = RecordingPool()
    yield made
    made.close()


async def test_each_run_is_a_fresh_child_of_one_template(pool: RecordingPool) -> None:
    runner = Runner(pool=pool)
    seen: list[tuple[int, int | None]] = []

    def whoami() -> None:
        pid = pool.taken[-1].pid
        seen.append((pid, _parent_of(pid)))

    results = [await runner.run("await h.whoami(); 1", {"h": {"whoami": whoami}}) for _ in range(3)]
    assert [r.value for r in results] == [1, 1, 1]
    assert {r.stats.worker_mode for r in results} == {"fork"}
    template = pool.template_pid
    assert template is not None and _running(template)
    assert [parent for _pid, parent in seen] == [template] * 3
    assert len({pid for pid, _parent in seen}) == 3
    assert _wait_gone([pid for pid, _ in seen]) == []  # each one exited and was reaped


async def test_per_run_settings_are_applied_after_fork(pool: RecordingPool) -> None:
    runner = Runner(pool=pool)
    grab = "const a = []; for (let i = 0; i < 40; i++) a.push('x'.repeat(1 << 20) + i); a.length"
    small = await runner.run(grab, limits=Limits(memory_bytes=16 << 20))
    large = await runner.run(grab, limits=Limits(memory_bytes=256 << 20))
    assert small.error is not None and small.error.code == "RUN_MEMORY_EXCEEDED"
    assert large.value == 40
    # The clock and the seed are the run's own, not the template's.
    draws = [(await runner.run("[Math.random(), Date.now()]")).value for _ in range(3)]
    assert len({d[0] for d in draws}) == 3
    now = time.time() * 1000
    assert all(now - 60_000 < d[1] <= now + 1_000 for d in draws)


async def test_a_crash_ends_only_its_child(pool: RecordingPool) -> None:
    runner = Runner(pool=pool)
    await runner.run("1")
    template = pool.template_pid

    async def crash() -> None:
        os.kill(pool.taken[-1].pid, signal.SIGSEGV)
        await run_saw_its_worker_die()

    result = await runner.run("await h.crash()", {"h": {"crash": crash}})
    assert result.error is not None and result.error.code == "RUN_WORKER_CRASHED"
    assert "SIGSEGV" in result.error.message
    assert pool.template_pid == template and template is not None and _running(template)
    assert (await runner.run("40 + 2")).value == 42


async def test_a_dead_template_fails_only_the_runs_it_held(pool: RecordingPool) -> None:
    runner = Runner(pool=pool)
    await runner.run("1")
    first = pool.template_pid
    assert first is not None

    async def kill_template() -> None:
        os.kill(first, signal.SIGKILL)
        await run_saw_its_worker_die()

    result = await runner.run("await h.k()", {"h": {"k": kill_template}})
    assert result.error is not None and result.error.code == "RUN_WORKER_CRASHED"
    after = await runner.run("40 + 2")
    assert after.value == 42 and after.stats.worker_mode == "fork"
    second = pool.template_pid
    assert second is not None and second != first
    assert _wait_gone([first]) == []  # reaped, not a zombie
    # And when it dies between runs, the next run does not notice.
    os.kill(second, signal.SIGKILL)
    assert _wait_gone([second]) == []
    assert (await runner.run("6 * 7")).value == 42


def test_a_kill_asked_before_the_pid_is_known_still_happens() -> None:
    template = TemplateProcess()
    try:
        worker = template.fork()
        worker.kill()  # at once: the template has not answered yet
        assert worker._exited.wait(10)
        assert worker.exit_status() == -signal.SIGKILL
        worker.close()
    finally:
        template.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fork", "spawn"])
async def test_close_leaves_no_process_zombie_or_descriptor(mode: str) -> None:
    before = _open_fds()
    pool = RecordingPool(mode=mode)
    runner = Runner(pool=pool)
    for _ in range(5):
        assert (await runner.run("1 + 1")).value == 2
    cancel = asyncio.Event()
    started = asyncio.Event()

    async def spin() -> None:
        started.set()

    spinning = asyncio.ensure_future(
        runner.run("await h.spin(); while (true) {}", {"h": {"spin": spin}}, cancel=cancel)
    )
    await started.wait()  # cancelled while its worker spins, not before it has one
    cancel.set()
    assert (await spinning).error.code == "RUN_ABORTED"  # type: ignore[union-attr]
    timed_out = await runner.run("while (true) {}", limits=Limits(timeout_ms=200))
    assert timed_out.error is not None and timed_out.error.code == "RUN_TIMEOUT"
    pool.warm(5.0)  # a spare is waiting: close must end it too
    pids = [w.pid for w in pool.taken] + [w.pid for w in pool._ready]
    template = pool.template_pid
    pool.close()
    if template is not None:
        pids.append(template)
    assert _wait_gone(pids) == [], "a worker or the template was left running or unreaped"
    assert _open_fds() <= before


CHILD_THAT_DIES = """
import asyncio, os, signal
from run_repl.sandbox.runner import Runner
from run_repl.sandbox.session.pool import WorkerPool

async def main():
    pool = WorkerPool()
    runner = Runner(pool=pool)
    spinning = asyncio.Event()

    async def started():
        spinning.set()

    hosts = {"h": {"started": started}}
    task = asyncio.ensure_future(runner.run("await h.started(); while (true) {}", hosts))
    await spinning.wait()
    pool.warm(2.0)
    pids = [pool.template_pid] + [w.pid for w in pool._ready]
    children = [int(p) for p in os.popen(f"ps -o pid= --ppid {pool.template_pid}").read().split()]
    print(" ".join(map(str, pids + children)), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_the_template_and_its_children_die_with_the_parent() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD_THAT_DIES], capture_output=True, text=True, timeout=60
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) >= 3, out.stderr  # the template, the spare, the spinning run
    # Dead is what they must be; reaping the orphans is init's business, and it takes
    # its time (a zombie waited for until init got round to it cost a second).
    assert _wait_gone(pids, still=_running) == [], "processes outlived their parent"


RAW_FORK_CHILD = r"""
import json, os, threading, _thread
from run_repl.sandbox.process import template

fork = template._raw_fork()
hooks = []
os.register_at_fork(after_in_child=lambda: hooks.append("ran"))
lock = threading.Lock()
ready = threading.Condition(lock)
r, w = os.pipe()
pid = fork()
if pid == 0:
    box = []
    def flusher():  # as the worker starts its flusher: _thread, a Condition made before fork
        with ready:
            box.append(threading.get_native_id())
            ready.notify()
    with ready:
        _thread.start_new_thread(flusher, ())
        while not box:
            ready.wait(5)
    thread = threading.Thread(target=box.append, args=("joined",))
    thread.start()
    thread.join(5)
    report = {
        "pid": os.getpid(),
        "thread": box[0],
        "joined": box[-1] == "joined",
        "main": threading.current_thread() is threading.main_thread(),
        "hooks": hooks,
    }
    os.write(w, json.dumps(report).encode())
    os._exit(0)
os.close(w)
_, status = os.waitpid(pid, 0)
print(json.dumps({"pid": pid, "status": os.waitstatus_to_exitcode(status), "child": json.loads(os.read(r, 4096))}))
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="libc fork from the template: Linux"
)
def test_the_templates_own_fork_leaves_a_sound_child() -> None:
    # The template forks through libc, skipping CPython's after-fork repairs (they
    # cost each run ~0.25 ms). What a worker relies on must still hold in the child.
    out = subprocess.run(
        [sys.executable, "-c", RAW_FORK_CHILD], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    child = report["child"]
    assert report["status"] == 0 and child["pid"] == report["pid"]
    assert child["thread"] != child["pid"] and child["joined"] and child["main"]
    assert child["hooks"] == []  # CPython's after-fork work was skipped: the point of it


async def test_spawn_mode_works_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = WorkerPool(mode="spawn")
    try:
        result = await Runner(pool=pool).run("let x: number = 21; x * 2")
        assert result.value == 42 and result.stats.worker_mode == "spawn"
    finally:
        pool.close()
    monkeypatch.setenv("RUN_REPL_WORKER_MODE", "spawn")
    assert worker_pool.default_mode() == "spawn"
    monkeypatch.setenv("RUN_REPL_WORKER_MODE", "fork")
    assert worker_pool.default_mode() == "fork"


async def test_a_template_that_cannot_start_falls_back_to_spawning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without its modules' directory the template cannot import the binding or tree-sitter.
    monkeypatch.setattr(worker_pool, "_module_dirs", lambda: ["/nonexistent"])
    pool = WorkerPool()
    try:
        runner = Runner(pool=pool)
        for _ in range(2 * worker_pool.TEMPLATE_START_FAILURES + 2):
            result = await runner.run("1")
            assert result.error is not None and result.error.code == "RUN_WORKER_CRASHED"
            if pool.mode == "spawn":
                break
            await asyncio.sleep(0.2)
        assert pool.mode == "spawn"
        reason = pool.fallback_reason
        assert reason is not None and reason.startswith("ModuleNotFoundError")
        # Spawned workers cannot start either here: the run says why, and nothing hangs.
        result = await runner.run("1")
        assert result.error is not None and "ModuleNotFoundError" in result.error.message
    finally:
        pool.close()


def test_a_workers_latch_wakes_every_waiter_once_set_and_stays_set() -> None:
    latch = worker_pool._Latch()
    assert latch.wait(0.01) is False  # not set: the wait ends at its timeout
    woken: list[bool] = []
    waiters = [threading.Thread(target=lambda: woken.append(latch.wait(5))) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.02)
    assert woken == []
    latch.set()
    latch.set()  # a second set changes nothing
    for waiter in waiters:
        waiter.join(5)
    assert woken == [True, True, True]
    assert latch.wait(0) is True and latch.wait(0.01) is True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/maps: Linux")
async def test_the_template_keeps_out_what_its_workers_never_use(pool: RecordingPool) -> None:
    # Every fork copies the template's mappings and every exit drops them: libseccomp
    # (compiled once in a helper child) and what tree-sitter-typescript's package
    # imports for its query files stay out; the walls are still all there.
    result = await Runner(pool=pool).run("1")
    template = pool.template_pid
    assert template is not None
    with open(f"/proc/{template}/maps") as fh:
        mapped = fh.read()
    for library in ("libseccomp", "_lzma", "_bz2", "_posixsubprocess"):
        assert library not in mapped, library
    assert result.stats.confinement == Confinement().available()


def _private_bytes(pid: int) -> int:
    """What a process holds alone (copied or its own), from /proc (Linux)."""
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        return sum(
            int(line.split()[1]) * 1024
            for line in fh
            if line.startswith(("Private_Clean:", "Private_Dirty:"))
        )


# What a snippet sees of the context it starts in: a warm-up must leave no trace there.
_CONTEXT_PRINT = """
const names = Object.getOwnPropertyNames(globalThis).sort()
const rows: { id: number }[] = [{ id: 1 }]
return { names: names.join(","), count: names.length, rows: rows.length as number }
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps_rollup"), reason="smaps_rollup: Linux")
async def test_a_spare_that_waits_warms_up_and_its_run_starts_as_any_other() -> None:
    # Between runs (a person reading, an agent thinking) a waiting spare makes now the
    # page copies its run would otherwise make first; in a burst, jobs come sooner
    # than WARM_AFTER_S and nothing changes.
    private: dict[str, int] = {}
    seen: dict[str, object] = {}
    for name, options in (("cold", ("--no-warm",)), ("warm", ())):
        pool = WorkerPool(_test_options=options)
        try:
            assert await asyncio.to_thread(pool.warm, 20.0)
            spare = pool._ready[0]
            # Far past WARM_AFTER_S; a slow machine gets up to 10 s to finish warming up.
            deadline = time.monotonic() + 10.0
            await asyncio.sleep(0.3)
            private[name] = _private_bytes(spare.pid)
            while name == "warm" and private[name] - private["cold"] < 128 * 1024:
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
                private[name] = _private_bytes(spare.pid)
            result = await Runner(pool=pool).run(_CONTEXT_PRINT)
            assert result.status == "ok", result.error
            seen[name] = result.value
        finally:
            pool.close()
    assert private["warm"] - private["cold"] >= 128 * 1024, private
    assert seen["warm"] == seen["cold"]


async def test_a_job_that_comes_while_its_spare_warms_up_is_served() -> None:
    # Runs each a little later after the last, so their jobs come before, while or
    # after their spare warms up (the machine's timing decides which).
    pool = WorkerPool()
    runner = Runner(pool=pool)
    try:
        values = []
        for i in range(12):
            await asyncio.sleep(0.004 + 0.0005 * i)
            result = await runner.run(f"const n: number = {i}\nn * 2")
            values.append(result.value)
        assert values == [i * 2 for i in range(12)]
    finally:
        pool.close()


FREED_HEAP_CHILD = r"""
import ctypes, json
from run_repl.sandbox.process import template

def anonymous_kib():
    with open("/proc/self/smaps_rollup") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("Anonymous:"))

libc = ctypes.CDLL(None)
has_trim = hasattr(libc, "malloc_trim")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
blocks = [libc.malloc(64 << 10) for _ in range(96)]  # under the mmap threshold: the heap
for block in blocks:
    ctypes.memset(block, 1, 64 << 10)
for block in blocks[::2]:  # holes between blocks still held: free() trims none of them
    libc.free(block)
before = anonymous_kib()
released = template.release_free_heap()
print(json.dumps({"has_trim": has_trim, "released": released, "freed_kib": before - anonymous_kib()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps_rollup")
def test_the_template_hands_its_free_heap_back() -> None:
    # What the template does before its first fork: pages malloc keeps free
    # would otherwise be mapped in every child, copied at fork and torn down.
    out = subprocess.run(
        [sys.executable, "-c", FREED_HEAP_CHILD], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["released"] == found["has_trim"]
    if found["has_trim"]:  # glibc: 48 free blocks of 64 KiB, 15 whole pages each at least
        assert found["freed_kib"] >= 2 * 1024, found
