"""The template process (a zygote): every run's worker is forked from it.

Started once per pool as `python -I -S template.py ...`, it loads what a run
needs (the QuickJS binding, the frame code, tree-sitter for stripping, the
confinement layers), builds one QuickJS context with the guest runtime
evaluated, and waits. For each run the parent hands it the run's two pipes
over a Unix socket (`socket.send_fds`, as multiprocessing's forkserver does);
it forks a child, which confines itself, says READY on its pipe and serves
that one run in its copy-on-write copy of the prepared context, then exits.
Children never come back, so every run starts from pristine, unshared state.
The parent never forks (it has threads); this process has one thread.

The template tells the parent each child's pid (with a pidfd, so a kill can
never hit a recycled pid), reaps every child and reports how it ended. It ends
when the parent closes the socket or dies, killing its children first; each
child also dies with the template (PR_SET_PDEATHSIG, and a watch on getppid).

Run with `--spawn`, the same script is one worker on its stdin and stdout:
the fallback where fork is unavailable. `--probe`, `--skip LAYER` and
`--no-warm` exist for tests only (see `confine.probe_walls` and
`Worker.warm`); nothing a snippet does reaches them.

Control messages (`CONTROL`: kind, then three int32):

    parent -> template   FORK (request id)            + fds: child's stdin, stdout
    template -> parent   READY (length) + JSON info      once, when loaded
                         FAILED (length) + text          could not load; exits
                         FORKED (request id, pid, has_pidfd) [+ fd: the pidfd]
                         EXITED (pid, exit code: negative for a signal)
"""

from __future__ import annotations

import _signal
import _thread
import ctypes
import gc
import itertools
import json
import os
import select
import signal
import socket
import struct
import sys
from collections import deque
from collections.abc import Callable
from typing import Any

CONTROL = struct.Struct("<Biii")
FORK = ord("F")
READY = ord("R")
FAILED = ord("X")
FORKED = ord("P")
EXITED = ord("E")
PARENT_WATCH_S = 1.0  # how often an idle template checks that its parent lives


class Template:
    """The loaded runtime, and the loop that forks a worker per request."""

    def __init__(
        self, control: socket.socket, parent_pid: int, stderr: int, options: list[str]
    ) -> None:
        from .confine import Confinement
        from .source import WARM_UP_SOURCE, prepare_source
        from .worker import Worker, become_worker

        self.control = control
        self.parent_pid = parent_pid
        self.pid = os.getpid()
        self.stderr = stderr
        self.become_worker = become_worker
        self.confinement = Confinement(skip=_skipped(options))
        self.confinement.name_process("run-repl-tmpl")
        self.worker = Worker(
            self.confinement, "fork", probe="--probe" in options, warm_up="--no-warm" not in options
        )
        # Warm what each child would otherwise build: the parser, the queries'
        # first run, the guest's first snippet.
        prepare_source.__wrapped__(WARM_UP_SOURCE)
        self.worker.ctx.eval("(async function () { return 1 + 1 })")
        self.worker.ctx.memory()  # what each child's stats call: its symbols bound here
        self.confinement.finish()  # the seccomp program, compiled meanwhile: before any fork
        # Nothing here reads the environment after start: each child then has none to
        # clear (the child still clears it, and says so in `confinement`).
        os.environ.clear()
        self.raw_fork = _raw_fork()
        self.children: set[int] = set()
        self.inbox = bytearray()
        self.fds: deque[int] = deque()

    def info(self) -> dict[str, Any]:
        return {"pid": self.pid, "confinement": self.confinement.available()}

    def send(
        self, kind: int, a: int = 0, b: int = 0, c: int = 0, fds: list[int] | None = None
    ) -> None:
        data = CONTROL.pack(kind, a, b, c)
        if fds:
            socket.send_fds(self.control, [data], fds)
        else:
            self.control.sendall(data)

    def serve(self) -> None:
        """Fork children on request until the parent goes; then end them all."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        # Children must not copy what a collection touches: freeze what exists now.
        gc.collect()
        release_free_heap()
        gc.freeze()
        watched: list[socket.socket | int] = [self.control, wake_r]
        try:
            while True:
                try:
                    ready, _, _ = select.select(watched, [], [], PARENT_WATCH_S)
                except InterruptedError:
                    continue
                if not ready and os.getppid() != self.parent_pid:
                    return
                if wake_r in ready:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                self.reap()
                if self.control in ready and not self.receive():
                    return
        except OSError:
            return  # the parent is gone
        finally:
            self.end_children()

    def receive(self) -> bool:
        """Handle what the parent sent; False when it has closed the socket."""
        data, fds, _flags, _addr = socket.recv_fds(self.control, 4096, 32)
        self.fds.extend(fds)
        if not data:
            return False
        self.inbox += data
        size = CONTROL.size
        while len(self.inbox) >= size:
            kind, request, _b, _c = CONTROL.unpack_from(self.inbox)
            del self.inbox[:size]
            if kind != FORK or len(self.fds) < 2:
                return False  # not our protocol: stop rather than guess
            stdin, stdout = self.fds.popleft(), self.fds.popleft()
            try:
                pid = self.fork(stdin, stdout)
            finally:
                os.close(stdin)
                os.close(stdout)
            pidfd = -1
            if hasattr(os, "pidfd_open"):
                try:
                    pidfd = os.pidfd_open(pid)
                except OSError:
                    pidfd = -1
            try:
                self.send(FORKED, request, pid, int(pidfd >= 0), [pidfd] if pidfd >= 0 else None)
            finally:
                if pidfd >= 0:
                    os.close(pidfd)
        return True

    def fork(self, stdin: int, stdout: int) -> int:
        pid = self.raw_fork() if self.raw_fork is not None and not _thread._count() else os.fork()
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork failed")
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                # The C function: `signal.signal` turns its answer into an enum, and
                # that Python costs each child ~60 page copies (~0.15 ms).
                _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                self.become_worker(
                    self.worker,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=self.stderr,
                    parent_pid=self.pid,
                    die_with_parent=True,
                )
            finally:
                os._exit(71)
        self.children.add(pid)
        return pid

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.send(EXITED, pid, os.waitstatus_to_exitcode(status))

    def end_children(self) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.children.clear()


# ------------------------------------------------------------------ entry points


def run_template(control_fd: int, parent_pid: int, options: list[str]) -> None:
    control = socket.socket(fileno=control_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    debug = bool(os.environ.get("RUN_REPL_WORKER_STDERR"))
    stderr = 2 if debug else os.open(os.devnull, os.O_WRONLY)
    try:
        template = Template(control, parent_pid, stderr, options)
    except BaseException as exc:
        import traceback

        first = (str(exc).splitlines() or [""])[0]
        text = (f"{type(exc).__name__}: {first}\n" + traceback.format_exc()).encode()
        _refuse_waiting_runs(control, text)
        os._exit(66)
    info = json.dumps(template.info()).encode()
    control.sendall(CONTROL.pack(READY, len(info), 0, 0) + info)
    template.serve()
    os._exit(0)


def _raw_fork() -> Callable[[], int] | None:
    """libc's fork(2), called with the GIL held (PyDLL), where that is sound.

    `os.fork()` also does CPython's after-fork repairs in every child: it
    re-creates the runtime's locks, re-seeds `random` and rebuilds `threading`'s
    table of threads. In a child of this one-thread process, forked while this
    thread holds the GIL, none of that is broken, and measured here it cost each
    run ~0.25 ms, most of it copying the ~80 pages it writes. Children use
    neither `random` nor threads started before the fork. Where this is not
    CPython with a GIL on Linux, `os.fork()` does it."""
    if not sys.platform.startswith("linux") or sys.implementation.name != "cpython":
        return None
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    try:
        fork = ctypes.PyDLL(None, use_errno=True).fork
    except (OSError, AttributeError):
        return None
    fork.restype = ctypes.c_int
    fork.argtypes = []
    return fork


def release_free_heap() -> bool:
    """Hand the C heap's free pages back to the kernel (glibc's malloc_trim): the
    loaded template keeps ~2 MiB of them, and every page it holds is one more
    that each fork copies a reference to and each child tears down (measured:
    ~0.07 ms less CPU a run). False where there is no malloc_trim."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True


def _refuse_waiting_runs(control: socket.socket, text: bytes) -> None:
    """The template could not load: say why to the parent, and to each run
    already handed over (as the INTERNAL frame a worker that cannot start sends)."""
    try:
        control.sendall(CONTROL.pack(FAILED, len(text), 0, 0) + text)
        control.setblocking(False)
        fds: deque[int] = deque()
        while True:
            try:
                data, new_fds, _flags, _addr = socket.recv_fds(control, CONTROL.size, 2)
            except BlockingIOError:
                break
            fds.extend(new_fds)
            if not data:
                break
            if len(fds) >= 2:
                stdin, stdout = fds.popleft(), fds.popleft()
                os.write(stdout, _internal_frame(text))
                os.close(stdin)
                os.close(stdout)
    except OSError:
        pass


def run_spawned(parent_pid: int, options: list[str]) -> None:
    """One worker on this process's stdin and stdout (no template)."""
    try:
        from .confine import Confinement
        from .worker import Worker, become_worker

        worker = Worker(
            Confinement(skip=_skipped(options)),
            "spawn",
            probe="--probe" in options,
            warm_up="--no-warm" not in options,
        )
        worker.confinement.finish()  # before the walls close the compiling child's pipe
    except BaseException as exc:
        import traceback

        first = (str(exc).splitlines() or [""])[0]
        text = (f"{type(exc).__name__}: {first}\n" + traceback.format_exc()).encode()
        os.write(1, _internal_frame(text))
        os._exit(66)
    become_worker(worker, stdin=0, stdout=1, stderr=2, parent_pid=parent_pid, die_with_parent=False)


def _internal_frame(text: bytes) -> bytes:
    """frames.frame(Kind.INTERNAL, text), without importing frames (it may be what failed)."""
    return struct.pack("<IB", len(text), ord("X")) + text


def _skipped(options: list[str]) -> frozenset[str]:
    """Layers named by `--skip LAYER` (tests: a machine without that layer)."""
    return frozenset(b for a, b in itertools.pairwise(options) if a == "--skip")


def _add_paths(package_root: str, paths: list[str]) -> None:
    """Make run_repl and the worker's dependencies importable in a `python -I -S`
    (no site). The package root comes first, so the parent's own run_repl is the one
    imported; the packages' `__init__`s are lazy, so importing the worker loads only
    the child's modules and the errors."""
    for path in reversed([package_root, *paths]):
        if path not in sys.path:
            sys.path.insert(0, path)


def _main(argv: list[str]) -> None:
    # template.py PACKAGE_ROOT PARENT_PID (--control FD | --spawn) [OPTION...] -- PATH...
    package_root, parent_pid, how = argv[0], int(argv[1]), argv[2]
    rest = argv[3:]
    control_fd = int(rest.pop(0)) if how == "--control" else -1
    split = rest.index("--")
    options, paths = rest[:split], rest[split + 1 :]
    _add_paths(package_root, paths)
    from run_repl.sandbox.process import template

    if control_fd >= 0:
        template.run_template(control_fd, parent_pid, options)
    else:
        template.run_spawned(parent_pid, options)


if __name__ == "__main__":
    _main(sys.argv[1:])
