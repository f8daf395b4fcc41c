"""Worker processes: one fresh process per run, with a spare started ahead.

A spare loads QuickJS and the guest runtime while nobody waits for it, on a
background thread; the next one starts when the run that took it ends (or
soon after it began), so its start-up does not compete with that run for a
core. A run never pays for a process start when runs are not back to back.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

WORKER_SCRIPT = Path(__file__).with_name("worker.py")


def _quickjs_dir() -> str:
    spec = importlib.util.find_spec("_quickjs")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "The QuickJS binding is missing: install run-repl's dependencies "
            "(pip install run-repl, which brings quickjs-ng)."
        )
    return str(Path(spec.origin).parent)


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    started_at: float
    read_fd: int = field(init=False)
    write_fd: int = field(init=False)

    def __post_init__(self) -> None:
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.read_fd = self.proc.stdout.fileno()
        self.write_fd = self.proc.stdin.fileno()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Kill if needed, close our ends of the pipes, and reap when it has exited."""
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        _REAPER.add(self.proc)

    def exit_status(self) -> int | None:
        """The exit code (negative: the signal), waiting briefly for the process to end."""
        try:
            return self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return None


class _Reaper:
    """Collects exited workers without blocking anyone."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.append(proc)
        self.reap()

    def reap(self) -> None:
        with self._lock:
            self._procs = [p for p in self._procs if p.poll() is None]


_REAPER = _Reaper()


class WorkerPool:
    """Hands out fresh workers; keeps `spares` of them started ahead."""

    def __init__(self, spares: int = 1) -> None:
        self.spares = spares
        self._ready: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self._wanted = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._quickjs_dir: str | None = None
        self._pid = os.getpid()
        self._refill_at = 0.0
        self.started = 0

    def _spawn(self) -> WorkerProcess:
        if self._quickjs_dir is None:
            self._quickjs_dir = _quickjs_dir()
        env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-S",
                "-X",
                "utf8",
                str(WORKER_SCRIPT),
                self._quickjs_dir,
                str(os.getpid()),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if os.environ.get("RUN_REPL_WORKER_STDERR") else subprocess.DEVNULL,
            env=env,
            close_fds=True,
            bufsize=0,
        )
        self.started += 1
        _REAPER.reap()
        return WorkerProcess(proc, time.perf_counter())

    def _fill(self) -> None:
        while True:
            with self._lock:
                while not self._closed:
                    if len(self._ready) >= self.spares:
                        self._wanted.wait()
                        continue
                    # A spare starting takes a core for ~40 ms: not while a run
                    # that just began needs it (see take and release).
                    delay = self._refill_at - time.monotonic()
                    if delay <= 0:
                        break
                    self._wanted.wait(delay)
                if self._closed:
                    return
            try:
                worker = self._spawn()
            except Exception:
                time.sleep(0.5)  # e.g. out of processes: try again, calmly
                continue
            with self._lock:
                if self._closed:
                    worker.close()
                    return
                self._ready.append(worker)
                self._wanted.notify_all()

    def _ensure_thread(self) -> None:
        if os.getpid() != self._pid:
            # A forked child must not use its parent's spares.
            self._ready, self._thread, self._pid = [], None, os.getpid()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._fill, name="run-repl-spares", daemon=True)
            self._thread.start()

    def take(self) -> WorkerProcess:
        """A fresh worker: a ready spare if there is one (the next starts when this
        run ends, or after REFILL_DELAY_S), else one started now."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            self._ensure_thread()
            while self._ready and self._ready[0].proc.poll() is not None:
                self._ready.pop(0).close()
            self._refill_at = time.monotonic() + REFILL_DELAY_S
            self._wanted.notify_all()
            if self._ready:
                return self._ready.pop(0)
        return self._spawn()

    def release(self) -> None:
        """A run ended: a good time to start the next spare."""
        with self._lock:
            self._refill_at = 0.0
            self._wanted.notify_all()

    def warm(self, wait_s: float = 0.0) -> bool:
        """Start the spares now (they are otherwise started on first use); with
        `wait_s`, wait that long at most for all of them to be ready. True if they are."""
        import select

        with self._lock:
            self._ensure_thread()
            self._refill_at = 0.0
            self._wanted.notify_all()
        deadline = time.monotonic() + wait_s
        while True:
            with self._lock:
                spares = list(self._ready) if len(self._ready) >= self.spares else []
            # A ready spare has written its READY frame: its pipe is readable.
            fds = [w.read_fd for w in spares]
            if fds and len(select.select(fds, [], [], 0)[0]) == len(fds):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
            self._wanted.notify_all()
        for worker in ready:
            worker.close()


REFILL_DELAY_S = 2.0  # at the latest; usually the run that took the spare has ended first

_default_pool: WorkerPool | None = None
_default_lock = threading.Lock()


def default_pool() -> WorkerPool:
    global _default_pool
    with _default_lock:
        if _default_pool is None or _default_pool._closed:
            _default_pool = WorkerPool()
        return _default_pool


@atexit.register
def _shutdown() -> None:
    if _default_pool is not None:
        _default_pool.close()
