"""Worker processes: a fresh one for every run, forked from a template.

By default (`mode="fork"`) the pool starts one template process
(`template.py`) that has the guest runtime loaded, and each run's worker is a
child forked from it: about a millisecond, against tens for a new process.
One spare child is forked ahead, so a run finds its worker waiting. The
parent itself never forks (it has threads); it hands the template the run's
pipes and learns the child's pid (and a pidfd, so a kill never hits a
recycled pid). If the template dies, the next run starts a new one; only the
runs it was serving fail.

Where fork is unavailable (or `RUN_REPL_WORKER_MODE=spawn`), each worker is
a process of its own (`mode="spawn"`), started ahead on a background thread
as a spare. Runs report which mode served them in `stats.worker_mode`.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Literal

from ..process.template import CONTROL, EXITED, FAILED, FORK, FORKED, READY

WorkerMode = Literal["fork", "spawn"]
TEMPLATE_SCRIPT = Path(__file__).parent.parent / "process" / "template.py"
PACKAGE_ROOT = str(Path(__file__).parents[3])  # the directory that holds run_repl
LOST = -int(signal.SIGKILL)  # how a child ends when its template dies (PR_SET_PDEATHSIG)
TEMPLATE_START_FAILURES = 2  # then the pool falls back to spawning workers
# A fork takes about a millisecond: a template that has not forked a worker asked
# of it this long ago is not answering (it is replaced).
FORK_STALL_S = 10.0


def _module_dirs() -> list[str]:
    """Where the worker's imports live, for a `python -I -S` that has no site."""
    dirs: list[str] = []
    for name, required in (
        ("_quickjs", True),
        ("tree_sitter", True),
        ("tree_sitter_typescript", True),
        ("pyseccomp", False),
    ):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            if required:
                raise RuntimeError(
                    f"{name} is missing: install run-repl's dependencies "
                    "(pip install run-repl brings quickjs-ng and tree-sitter)."
                )
            continue
        path = Path(spec.origin).parent
        if spec.submodule_search_locations:  # a package: its parent holds it
            path = path.parent
        if str(path) not in dirs:
            dirs.append(str(path))
    return dirs


def _python_command() -> list[str]:
    return [sys.executable, "-I", "-S", "-X", "utf8", str(TEMPLATE_SCRIPT), PACKAGE_ROOT]


def _child_env() -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
    if os.environ.get("RUN_REPL_WORKER_STDERR"):
        env["RUN_REPL_WORKER_STDERR"] = "1"  # the template lets its children write there too
    return env


def _stderr() -> int | None:
    return None if os.environ.get("RUN_REPL_WORKER_STDERR") else subprocess.DEVNULL


def fork_available() -> bool:
    """Whether workers can be forked from a template here."""
    return (
        hasattr(os, "fork")
        and hasattr(socket, "send_fds")
        and hasattr(socket, "AF_UNIX")
        and hasattr(os, "waitstatus_to_exitcode")
    )


def default_mode() -> WorkerMode:
    forced = os.environ.get("RUN_REPL_WORKER_MODE")
    if forced in ("fork", "spawn"):
        return forced  # type: ignore[return-value]  # checked against the modes above
    return "fork" if fork_available() else "spawn"


def process_stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, or stopped by a tracer): Linux's
    /proc; False where it cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    # The state follows the command name, whose parentheses may hold anything.
    end = data.rfind(b")")
    return end >= 0 and data[end + 2 : end + 3] in (b"T", b"t")


# ---------------------------------------------------------------------- workers


class WorkerProcess:
    """One run's worker, as the session and the channel see it."""

    mode: WorkerMode
    read_fd: int
    write_fd: int
    started_at: float

    @property
    def pid(self) -> int:
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Kill if needed and close our ends of the pipes."""
        raise NotImplementedError

    def exit_status(self) -> int | None:
        """The exit code (negative: the signal), waiting briefly for the process to end."""
        raise NotImplementedError

    def stalled(self) -> str | None:
        """Why this worker cannot answer though it has not ended (it, or the
        template that should start it, is stopped or not answering), or None."""
        return None


class SpawnedWorker(WorkerProcess):
    mode: WorkerMode = "spawn"

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        self.proc = proc
        self.started_at = time.perf_counter()
        self.read_fd = proc.stdout.fileno()
        self.write_fd = proc.stdin.fileno()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        _REAPER.add(self.proc)

    def exit_status(self) -> int | None:
        try:
            return self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return None

    def stalled(self) -> str | None:
        if self.proc.poll() is None and process_stopped(self.proc.pid):
            return "the sandbox process is stopped (SIGSTOP?)"
        return None


class _Latch:
    """Set once, by one thread (the template's reader); waited on by any. A
    threading.Event costs a Condition and two locks to make, once per run."""

    __slots__ = ("_lock", "_set")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self._set = False

    def set(self) -> None:
        if not self._set:
            self._set = True
            self._lock.release()

    def wait(self, timeout: float) -> bool:
        if self._set:
            return True
        if self._lock.acquire(timeout=timeout):
            self._lock.release()
            return True
        return False


class ForkedWorker(WorkerProcess):
    """A child of the template. Its pid arrives a moment after the request; a
    kill asked for before then happens as soon as it does."""

    mode: WorkerMode = "fork"

    def __init__(self, template: TemplateProcess, read_fd: int, write_fd: int) -> None:
        self.template = template
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.started_at = time.perf_counter()
        self._pid = 0
        self._pidfd = -1
        self._lock = threading.Lock()
        self._forked = _Latch()
        self._exited = _Latch()
        self.returncode: int | None = None
        self._kill_asked = False
        self._closed = False

    @property
    def pid(self) -> int:
        """The child's pid (waits a moment if the template has not said it yet; 0 if it never does)."""
        self._forked.wait(1.0)
        return self._pid

    def alive(self) -> bool:
        return self.returncode is None and not self.template.dead

    # called by the template's reader thread
    def on_forked(self, pid: int, pidfd: int) -> None:
        with self._lock:
            self._pid, self._pidfd = pid, pidfd
            if self._kill_asked:
                self._signal()
            if self._closed and self._kill_asked:
                self._close_pidfd()
        self._forked.set()

    def on_exit(self, code: int) -> None:
        with self._lock:
            self.returncode = code
            self._close_pidfd()
        self._forked.set()
        self._exited.set()

    def _signal(self) -> None:
        if self._pidfd >= 0:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif self._pid and self.returncode is None:
            # No pidfd (an old kernel): the pid, which the template has not reaped yet.
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _close_pidfd(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1

    def kill(self) -> None:
        with self._lock:
            if self.returncode is not None or self._closed:
                return
            self._kill_asked = True
            if self._pid:
                self._signal()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.returncode is None:
                self._kill_asked = True
                self._signal()
            if self._pid or self.returncode is not None:
                self._close_pidfd()
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def exit_status(self) -> int | None:
        self._exited.wait(0.5)
        return self.returncode

    @property
    def forked(self) -> bool:
        """Whether the template has said this worker's pid (it has started)."""
        return bool(self._pid) or self.returncode is not None

    def stalled(self) -> str | None:
        if self.returncode is not None:
            return None  # ended: its end is reported as such
        if self._pid:
            return (
                "the sandbox process is stopped (SIGSTOP?)" if process_stopped(self._pid) else None
            )
        if self.template.dead:
            return None
        return self.template.stalled()


# ---------------------------------------------------------------------- the template


class TemplateProcess:
    """The parent's end of one template process: requests go out on the
    socket; a reader thread takes pids and exit codes back."""

    def __init__(self, options: tuple[str, ...] = ()) -> None:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.proc = subprocess.Popen(
                [
                    *_python_command(),
                    str(os.getpid()),
                    "--control",
                    str(child_end.fileno()),
                    *options,
                    "--",
                    *_module_dirs(),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=_stderr(),
                env=_child_env(),
                pass_fds=[child_end.fileno()],
                start_new_session=True,  # a Ctrl-C at the terminal is the parent's alone
            )
        except BaseException:
            parent_end.close()
            raise
        finally:
            child_end.close()
        self.sock = parent_end
        self.pid = self.proc.pid
        self.dead = False
        self.ready = threading.Event()
        self.info: dict[str, object] = {}
        self.error: str | None = None
        self._lock = threading.Lock()
        self._next = 0
        self._requests: dict[int, ForkedWorker] = {}
        self._children: dict[int, ForkedWorker] = {}
        self._thread = threading.Thread(target=self._read, name="run-repl-template", daemon=True)
        self._thread.start()

    def fork(self) -> ForkedWorker:
        """Ask for a child on two new pipes; returns at once (the pid follows)."""
        child_in, to_child = os.pipe()
        from_child, child_out = os.pipe()
        worker = ForkedWorker(self, from_child, to_child)
        try:
            with self._lock:
                if self.dead:
                    raise RuntimeError("the template process has ended")
                self._next += 1
                self._requests[self._next] = worker
                message = CONTROL.pack(FORK, self._next, 0, 0)
                try:
                    socket.send_fds(self.sock, [message], [child_in, child_out])
                except OSError as exc:
                    del self._requests[self._next]
                    raise RuntimeError(f"the template process is gone ({exc})") from None
        except BaseException:
            worker.close()
            raise
        finally:
            os.close(child_in)
            os.close(child_out)
        return worker

    def stalled(self) -> str | None:
        """Why this template cannot start workers though it runs, or None."""
        if process_stopped(self.pid):
            return "its template process is stopped (SIGSTOP?), so it was never started"
        with self._lock:
            oldest = min((w.started_at for w in self._requests.values()), default=None)
        if oldest is not None and time.perf_counter() - oldest > FORK_STALL_S:
            return f"its template process has not started it in {FORK_STALL_S:g} s"
        return None

    def kill(self) -> None:
        """End a template that cannot serve (a stopped process takes SIGKILL too);
        its children end with it, and its reader thread reaps it."""
        try:
            self.proc.kill()
        except OSError:
            pass

    def _read(self) -> None:
        inbox = bytearray()
        fds: deque[int] = deque()
        size = CONTROL.size
        try:
            while True:
                data, new_fds, _flags, _addr = socket.recv_fds(self.sock, 4096, 4)
                fds.extend(new_fds)
                if not data:
                    return
                inbox += data
                while len(inbox) >= size:
                    kind, a, b, c = CONTROL.unpack_from(inbox)
                    if kind in (READY, FAILED):
                        if len(inbox) < size + a:
                            break
                        text = bytes(inbox[size : size + a]).decode("utf-8", "replace")
                        del inbox[: size + a]
                        self._on_status(kind, text)
                        continue
                    del inbox[:size]
                    if kind == FORKED:
                        pidfd = fds.popleft() if c and fds else -1
                        with self._lock:
                            worker = self._requests.pop(a, None)
                            if worker is not None:
                                self._children[b] = worker
                        if worker is None:
                            if pidfd >= 0:
                                os.close(pidfd)
                        else:
                            worker.on_forked(b, pidfd)
                    elif kind == EXITED:
                        with self._lock:
                            worker = self._children.pop(a, None)
                        if worker is not None:
                            worker.on_exit(b)
        except OSError:
            return
        finally:
            self._on_lost(fds)

    def _on_status(self, kind: int, text: str) -> None:
        if kind == READY:
            import json

            try:
                self.info = json.loads(text)
            except ValueError:
                self.info = {}
        else:
            self.error = text
        self.ready.set()

    def _on_lost(self, fds: deque[int]) -> None:
        """The template has ended: every run it still had is lost (its children
        die with it), and nothing more is asked of it."""
        with self._lock:
            self.dead = True
            lost = [*self._requests.values(), *self._children.values()]
            self._requests.clear()
            self._children.clear()
            try:
                self.sock.close()
            except OSError:
                pass
        for worker in lost:
            worker.on_exit(LOST)
        for fd in fds:
            os.close(fd)
        self.ready.set()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def close(self, timeout: float = 2.0) -> None:
        """End the template and, through it, every child; reap it."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # the template reads EOF; our reader too
        except OSError:
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._thread.join(timeout)


# ---------------------------------------------------------------------- spawned


class _Reaper:
    """Collects exited spawned workers without blocking anyone."""

    def __init__(self) -> None:
        self._procs: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.append(proc)
        self.reap()

    def reap(self, wait_s: float = 0.0) -> None:
        """Collect what has exited; with `wait_s`, wait that long for the rest."""
        deadline = time.monotonic() + wait_s
        with self._lock:
            procs = self._procs
        alive = []
        for proc in procs:
            if proc.poll() is None and wait_s:
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
            if proc.returncode is None:
                alive.append(proc)
        with self._lock:
            self._procs = alive + [p for p in self._procs if p not in procs]


_REAPER = _Reaper()


# ---------------------------------------------------------------------- the pool


class WorkerPool:
    """Hands out fresh workers, one per run; keeps `spares` of them ready ahead."""

    def __init__(
        self,
        spares: int = 1,
        mode: WorkerMode | None = None,
        *,
        _test_options: tuple[str, ...] = (),
    ) -> None:
        self.spares = spares
        # Tests only: "--probe" (workers report what their walls stop instead of
        # running a snippet), "--skip", LAYER (as on a machine without it) and
        # "--no-warm" (a waiting spare never warms up: see Worker.warm).
        self._options = _test_options
        self.mode: WorkerMode = mode or default_mode()
        self.fallback_reason: str | None = None  # why a fork pool spawns instead
        self.replaced_reason: str | None = None  # why the last template was replaced
        self._ready: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self._wanted = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._template: TemplateProcess | None = None
        self._template_failures = 0
        self._closed = False
        self._pid = os.getpid()
        self._refill_at = 0.0
        self.started = 0  # worker processes started or forked

    # ------------------------------------------------------------ handing out
    def take(self) -> WorkerProcess:
        """A fresh worker: a ready spare if there is one, else one started now."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            self._after_fork()
            if self.mode == "fork":
                forked = self._take_forked()
                if forked is not None:
                    return forked
            self._ensure_thread()
            while self._ready and not self._ready[0].alive():
                self._ready.pop(0).close()
            self._refill_at = time.monotonic() + REFILL_DELAY_S
            self._wanted.notify_all()
            if self._ready:
                return self._ready.pop(0)
        return self._spawn()

    def _take_forked(self) -> WorkerProcess | None:
        template = self._live_template()
        if template is None:
            return None  # it could not start: the pool spawns from now on
        while self._ready and not self._ready[0].alive():
            self._ready.pop(0).close()
        spare = self._ready[0] if self._ready else None
        if not isinstance(spare, ForkedWorker) or not spare.forked:
            # The worker to hand out is not started yet: it is the template's to start.
            # A stopped (or stuck) template never will; one that works takes a millisecond.
            why = template.stalled()
            if why is not None:
                self._replace_template(template, why)
                template = self._live_template()
                if template is None:
                    return None
        worker = self._ready.pop(0) if self._ready else self._fork(template)
        try:
            while len(self._ready) < self.spares:
                self._ready.append(self._fork(template))
        except RuntimeError:
            pass  # the template just died: the next take starts another
        return worker

    def _replace_template(self, template: TemplateProcess, why: str) -> None:
        """A template that runs but cannot serve: it goes (with its spares, and the
        workers it had started), and the next take starts another."""
        self.replaced_reason = why
        template.kill()
        for spare in self._ready:
            spare.close()
        self._ready = []
        if self._template is template:
            self._template = None

    def _fork(self, template: TemplateProcess) -> ForkedWorker:
        worker = template.fork()
        self.started += 1
        return worker

    def _live_template(self) -> TemplateProcess | None:
        """The running template, started (again) if needed; None once it has failed
        to start TEMPLATE_START_FAILURES times in a row (the pool then spawns)."""
        template = self._template
        if template is not None and not template.dead:
            return template
        if template is not None:
            if template.error is not None or not template.info:
                self._template_failures += 1
                self.fallback_reason = (template.error or "the template exited").split("\n")[0]
            else:
                self._template_failures = 0
            for spare in self._ready:
                spare.close()
            self._ready = []
        if self._template_failures >= TEMPLATE_START_FAILURES:
            self.mode = "spawn"
            self._template = None
            return None
        self._template = TemplateProcess(self._options)
        return self._template

    def _after_fork(self) -> None:
        if os.getpid() != self._pid:
            # A forked copy of this process must not use its parent's template or spares.
            self._ready, self._thread, self._template, self._pid = [], None, None, os.getpid()

    def release(self) -> None:
        """A run ended: a good time to start the next spawned spare."""
        with self._lock:
            self._refill_at = 0.0
            self._wanted.notify_all()

    def warm(self, wait_s: float = 0.0) -> bool:
        """Start the spares now (they are otherwise started on first use); with
        `wait_s`, wait that long at most for all of them to be ready. True if they are."""
        with self._lock:
            self._after_fork()
            if self.mode == "fork":
                template = self._live_template()
                if template is not None:
                    try:
                        while len(self._ready) < self.spares:
                            self._ready.append(self._fork(template))
                    except RuntimeError:
                        pass
            if self.mode == "spawn":
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

    @property
    def template_pid(self) -> int | None:
        """The template process's pid, while one runs."""
        template = self._template
        return template.pid if template is not None and not template.dead else None

    def close(self) -> None:
        """End every spare and the template (and so its children); reap them all."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
            template, self._template = self._template, None
            self._wanted.notify_all()
        for worker in ready:
            worker.close()
        if template is not None:
            template.close()
        _REAPER.reap(wait_s=1.0)

    # ------------------------------------------------------------ spawning
    def _spawn(self) -> WorkerProcess:
        proc = subprocess.Popen(
            [
                *_python_command(),
                str(os.getpid()),
                "--spawn",
                *self._options,
                "--",
                *_module_dirs(),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=_stderr(),
            env=_child_env(),
            close_fds=True,
            bufsize=0,
        )
        self.started += 1
        _REAPER.reap()
        return SpawnedWorker(proc)

    def _fill(self) -> None:
        while True:
            with self._lock:
                while not self._closed:
                    if self.mode != "spawn" or len(self._ready) >= self.spares:
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
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._fill, name="run-repl-spares", daemon=True)
            self._thread.start()


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
