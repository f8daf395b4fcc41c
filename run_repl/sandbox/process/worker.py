"""The worker: one QuickJS context, one run, then exit.

A worker is a child forked from the template process (`template.py`), whose
guest runtime is already evaluated, or, where fork is unavailable, a process
started for one run. Either way it is confined (`confine.py`) before it reads
its job; when the job comes it takes the run's OS limits and its system-call
allow-list, strips the snippet's TypeScript (inside the run's deadline, and
inside the walls: tree-sitter parses hostile text here, never in the parent),
runs it, reports and exits.

A crash here (even inside QuickJS) ends this process only; the parent turns
that into RUN_WORKER_CRASHED.

Imports only the standard library, the binding's C module, tree-sitter (for
stripping) and the engine's stdlib-only modules, so the template loads it
without the package (see `template.py`).
"""

from __future__ import annotations

import _thread
import json
import os
import resource
import select
import sys
import threading
import time
import traceback
from collections import deque
from typing import Any

import _quickjs

from ..errors import TypeScriptSyntaxError
from . import frames, guest_sources
from .confine import Confinement, probe_walls
from .source import WARM_UP_SOURCE, PreparedSource, prepare_source

_OUT = 1
_IN = 0
_ERR = 2
_STATUS = 3  # /proc/self/status, opened before the walls go up (-1: none)
_CLEAR_REFS = 4  # /proc/self/clear_refs, likewise
# A spare that has waited this long for its job is between runs (a person reading,
# an agent thinking), not in a burst: it warms up meanwhile (see Worker.warm).
WARM_AFTER_S = 0.005
SPIN_SECONDS = 0.0002  # how long to poll for an answer before sleeping
SPIN_LONG_SECONDS = 0.0005  # while answers come that fast (a sync host function's two thread hops)


def next_spin(waited: float) -> float:
    """How long to poll for the next answer, from how long this one took: the
    longer poll only while it would have caught the answer, so a run whose
    calls take milliseconds polls no longer than before."""
    return SPIN_LONG_SECONDS if waited < SPIN_LONG_SECONDS else SPIN_SECONDS


_proc_fds = {"status": -1, "clear_refs": -1}


def _status_bytes(field: str) -> int:
    fd = _proc_fds["status"]
    if fd < 0:
        return 0
    for line in os.pread(fd, 1 << 16, 0).decode("ascii", "replace").splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    return 0


def _reset_peak_rss() -> int:
    """Forget the start-up's peak (Linux), so the peak at the end is the run's.
    Returns the resident size now."""
    try:
        if _proc_fds["clear_refs"] >= 0:
            os.write(_proc_fds["clear_refs"], b"5")
        return _status_bytes("VmRSS:")
    except (OSError, ValueError):
        return 0


def _peak_rss() -> int:
    try:
        return _status_bytes("VmHWM:")
    except (OSError, ValueError):
        return 0


def _write_raw(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(_OUT, view)
        view = view[n:]


class _Outbox:
    """What the worker sends, in batches: one frame (and one wake-up of the
    parent, often a UI) per console line or per host call would cost more than
    the work. Console lines become one LOG_BATCH frame; host calls made in one
    stretch of guest work go out together. Everything leaves when the guest
    goes idle, before a final frame, when a batch is big, and within
    LATENCY_S of its first item, so logs stay live and calls start while the
    snippet computes (the flusher thread runs while QuickJS holds no GIL).
    A batch with host calls in it is big sooner (CALL_BATCH_BYTES): the parent
    serves the first calls while the guest is still making the rest."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending = threading.Condition(self.lock)
        self.lines: list[str] = []  # console lines not yet in a frame
        self.frames: list[bytes] = []  # frames ready to go, in order
        self.held = b""  # goes first, with whatever goes next (see hold)
        self.size = 0
        self.first_at = 0.0
        self.frame: Any = None
        self.kind = 0
        self.parent_pid = 0
        self.active = False
        self.started = False

    def start(self, parent_pid: int, *, eager: bool) -> None:
        """Watch the parent, and flush what waits while the guest computes.

        A spawned worker starts its flusher now: it is also the watch on the
        parent (if it dies, so does this worker, within LIFELINE_S, even while
        QuickJS spins). A child of the template dies with it (PR_SET_PDEATHSIG),
        so it starts the flusher only when something first waits to be sent: a
        run that neither logs nor calls never pays for a second thread."""
        self.parent_pid = parent_pid
        if os.getppid() != parent_pid:
            os._exit(70)
        if eager:
            self._start_flusher()

    def _start_flusher(self) -> None:
        if not self.started:
            self.started = True
            # Not threading.Thread: its start() waits until the thread runs, a
            # scheduler round trip this process has no need to wait for.
            _thread.start_new_thread(self._flusher, ())

    def connect(self, frame: Any, kind: int) -> None:
        self.frame = frame
        self.kind = kind

    def activate(self) -> None:
        """A run has started: from now on the flusher looks every LATENCY_S
        (waking it per item would cost a thread switch per host call)."""
        with self.lock:
            self.active = True
            if self.started:  # else nobody waits (a run that never logs or calls)
                self.pending.notify()

    def _mark(self) -> None:
        if not self.lines and not self.frames:
            self.first_at = time.monotonic()
            self._start_flusher()

    def add_line(self, level: int, text: str) -> None:
        with self.lock:
            self._mark()
            self.lines.append(f"[{level},{text}]")
            self.size += len(text) + 8
            if self.size >= BATCH_BYTES:
                self._flush_locked()

    def add_frame(self, data: bytes) -> None:
        with self.lock:
            self._mark()
            self._close_lines()  # a line printed before the call comes first
            self.frames.append(data)
            self.size += len(data)
            if self.size >= CALL_BATCH_BYTES:
                self._flush_locked()

    def _close_lines(self) -> None:
        if self.lines:
            body = ("[" + ",".join(self.lines) + "]").encode("utf-8", "surrogatepass")
            self.lines = []
            self.frames.append(self.frame(self.kind, body))

    def hold(self, data: bytes) -> None:
        """Send `data` ahead of whatever is sent next, not on its own: a frame the
        parent needs before any other (PREPARED), but not at once. A quick run
        then wakes its parent once, with everything, instead of twice."""
        with self.lock:
            self.held += data

    def _take_locked(self) -> bytes:
        self._close_lines()
        data = (self.held + b"".join(self.frames)) if self.frames else self.held
        self.held, self.frames, self.size = b"", [], 0
        return data

    def _flush_locked(self) -> None:
        data = self._take_locked()
        if data:
            _write_raw(data)

    def flush(self) -> None:
        with self.lock:
            self._flush_locked()

    def write(self, data: bytes) -> None:
        """Send `data` now, after what waits: in one write, so one wake-up."""
        with self.lock:
            waiting = self._take_locked()
            _write_raw(waiting + data if waiting else data)

    def _flusher(self) -> None:
        # An idle spare sleeps (it must not wake the machine); during a run,
        # whatever has waited LATENCY_S goes out.
        while True:
            with self.lock:
                if not self.active:
                    self.pending.wait(LIFELINE_S)
                elif self.lines or self.frames:
                    if time.monotonic() - self.first_at >= LATENCY_S:
                        self._flush_locked()
            if self.active:
                time.sleep(LATENCY_S / 2)
            if os.getppid() != self.parent_pid:
                os._exit(70)  # the parent is gone: nobody is left to answer


_OUTBOX = _Outbox()
BATCH_BYTES = 32 * 1024
# About 60 small calls. 1000 calls made at once took 24-26 ms end to end with
# 0.5-4 KiB here, 29-30 ms with 8 or 32 KiB: the parent sat idle until the
# first batch came, 7 ms in.
CALL_BATCH_BYTES = 2 * 1024
LATENCY_S = 0.005
LIFELINE_S = 0.2  # how often an idle worker checks that its parent lives


def _write(data: bytes) -> None:
    _OUTBOX.write(data)


class Worker:
    """The guest runtime in a QuickJS context, waiting for one job.

    Built once in the template (every forked child shares it, copy-on-write)
    or once in a spawned worker."""

    def __init__(
        self, confinement: Confinement, mode: str, probe: bool = False, warm_up: bool = True
    ) -> None:
        self.q = _quickjs
        self.f = frames
        self.confinement = confinement
        self.mode = mode  # "fork" or "spawn": reported in the run's stats
        self.probe = probe  # tests only: probe the walls instead of running the snippet
        self.warm_up = warm_up  # False for tests only (a spare that never warms up)
        self.max_value_bytes = 0
        self.reader = frames.FrameReader()
        self.spin = SPIN_SECONDS  # this run's poll for an answer (see next_spin)
        self.pending: deque[tuple[int, bytes]] = deque()  # a batch of answers, taken in order
        self.finished = False
        self.bridge_error: str | None = None
        self.calls_made = 0
        self.rss_at_start = 0
        self.value_bytes = 0  # of the value's chunks sent so far
        self.calls_closed = 0  # answered, or interrupted for this run
        self.ctx = _quickjs.Context()
        self.ctx.add_callable("__rr_send", self.bridge)
        # web/*.js in a scope of their own; the prelude sees only what they export.
        loader = guest_sources.runtime_source(frames.PRELUDE_LINE_BASE)
        self.dispatch = self.ctx.eval(loader)
        self.dispatch("line_base", frames.PRELUDE_LINE_BASE)

    # -- the guest's one door to Python; it must never raise
    def bridge(
        self, kind: str, a: object = None, b: object = None, c: object = None, d: object = None
    ) -> str | None:
        f = self.f
        try:
            if kind == "call":
                # Arguments are bounded here, where counting UTF-8 bytes is cheap: a
                # refused call is never sent, and the guest is told why.
                size = len(str(d).encode("utf-8", "surrogatepass"))
                if size > self.max_argument_bytes:
                    return f"call:{size}"
                if self.argument_bytes + size > self.max_argument_bytes_per_run:
                    return f"run:{self.argument_bytes}"
                self.argument_bytes += size
                self.calls_made += 1
                _OUTBOX.add_frame(f.host_call_frame(int(a), str(b), str(c), str(d)))  # type: ignore[call-overload]  # the guest's seq, a number
            elif kind == "refused":
                # A call the guest refused itself: for the audit, nothing to answer.
                _OUTBOX.add_frame(f.refused_call_frame(int(a), str(b), str(c)))  # type: ignore[call-overload]  # the guest's seq, a number
            elif kind == "log":
                level = f.LOG_LEVELS.index(str(a)) if a in f.LOG_LEVELS else 0
                _OUTBOX.add_line(level, str(b))
            elif kind == "chunk":
                body = str(a).encode("utf-8", "surrogatepass")
                self.value_bytes += len(body)
                if self.value_bytes <= self.max_value_bytes:
                    _write(f.frame(f.Kind.VALUE_CHUNK, body))
            elif kind in ("done", "fail"):
                self.finished = True
                self._final(kind, str(a), str(b) if b is not None else "")
        except BaseException as exc:
            self.bridge_error = f"{type(exc).__name__}: {exc}"
        return None

    def _final(self, kind: str, payload_text: str, value_text: str) -> None:
        payload = json.loads(payload_text)
        error = payload.get("error")
        if isinstance(error, dict):
            # What the guest threw: the parent trusts no engine code from here.
            error["origin"] = "guest"
        payload["stats"] = self._stats()
        f = self.f
        if kind == "done":
            body = value_text.encode("utf-8", "surrogatepass")
            payload["value_bytes"] = len(body) + self.value_bytes
            limit = self.max_value_bytes
            if payload["value_bytes"] > limit:
                err = {
                    "code": "RUN_VALUE_TOO_LARGE",
                    "name": "ValueTooLargeError",
                    "message": f"The run's value is {payload['value_bytes']:,} bytes as JSON, over "
                    f"max_value_bytes ({limit:,}): select less in the snippet.",
                    "stack": None,
                }
                payload["error"] = err
                _write(f.frame(f.Kind.FAIL, json.dumps(payload).encode()))
                return
            _write(f.frame(f.Kind.DONE, json.dumps(payload).encode() + b"\n" + body))
        else:
            _write(f.frame(f.Kind.FAIL, json.dumps(payload).encode()))

    def _stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "worker_mode": self.mode,
            "confinement": list(self.confinement.layers),
        }
        try:
            peak = _peak_rss() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            out["memory_peak_bytes"] = peak
            # What the run itself added at its highest: the heap's peak, near enough.
            out["memory_growth_bytes"] = max(0, peak - self.rss_at_start)
        except Exception:
            pass
        try:
            # Walks the heap: about 40 ms for a million objects, microseconds usually.
            out["heap_bytes"] = int(self.ctx.memory()["malloc_size"])
        except Exception:
            pass
        return out

    def read_frame(self, spin: float | None = None) -> tuple[int, bytes]:
        """The next frame from the parent. An answer usually comes within tens of
        microseconds, so poll briefly before sleeping: a wake-up costs more."""
        if self.pending:
            return self.pending.popleft()
        started = time.perf_counter()
        spin_until = started + (self.spin if spin is None else spin)
        while not self.pending:
            try:
                data = os.read(_IN, 1 << 20)
            except BlockingIOError:
                if time.perf_counter() < spin_until:
                    os.sched_yield()  # on a busy machine, let the parent have this core
                    continue
                select.select([_IN], [], [])
                continue
            if not data:
                os._exit(0)  # the parent is gone or done with us
            self.pending.extend(self.reader.feed(data))
        if spin is None:
            self.spin = next_spin(time.perf_counter() - started)
        return self.pending.popleft()

    def warm(self) -> None:
        """Do what each run does first (prepare a snippet, write its frame, read the
        stats) on a fixed snippet, before the job comes. A child copies from the
        template each page it first writes, mostly the same pages every run: the
        copies are made now, while nobody waits (a trivial run after a pause took
        2.0 ms instead of 2.7 here). The guest's context is only read."""
        try:
            prepared = prepare_source.__wrapped__(WARM_UP_SOURCE)
            self.f.prepared_frame(prepared.to_wire(), prepared.code)
            self._stats()
        except Exception:
            pass  # only a head start: the run does all of it again
        self.rss_at_start = _reset_peak_rss()  # the run's figures leave the warm-up out

    def fail_from_python(self, code: str, name: str, message: str, **extra: Any) -> None:
        if self.finished:
            return
        self.finished = True
        payload = {
            "error": {"code": code, "name": name, "message": message, "stack": None, **extra},
            "stats": self._stats(),
            "logs_dropped": 0,
            "calls_in_flight": 0,
        }
        _write(self.f.frame(self.f.Kind.FAIL, json.dumps(payload).encode()))

    def drain(self) -> None:
        """Run every pending job: after each settled call, the guest runs until idle."""
        ctx = self.ctx
        try:
            while ctx.execute_pending_job():
                pass
        except self.q.JSException as exc:
            text = str(exc)
            if (
                "out of memory" in text
                or text.startswith("null")
                or text.startswith("InternalError: null")
            ):
                self.fail_from_python(
                    "RUN_MEMORY_EXCEEDED", "InternalError", "The sandbox ran out of memory."
                )
            else:
                self.fail_from_python("RUN_EXCEPTION", "InternalError", text.split("\n", 1)[0])

    def prepare(self, source: str) -> PreparedSource:
        """Strip and wrap the snippet here, and tell the parent what came of it (it
        maps positions back to the user's text); a syntax error ends the run."""
        f = self.f
        try:
            prepared = prepare_source(source)
        except TypeScriptSyntaxError as exc:
            self.fail_from_python(
                "RUN_SYNTAX_ERROR",
                "SyntaxError",
                f"SyntaxError: {exc.message}",
                line=exc.line,
                column=exc.column,
            )
            self.exit()
        except MemoryError:
            self.fail_from_python(
                "RUN_MEMORY_EXCEEDED",
                "InternalError",
                "The sandbox ran out of memory while reading the snippet's TypeScript.",
            )
            self.exit()
        except Exception as exc:  # a bug in stripping: say so, never hang
            self.fail_from_python(
                "RUN_INTERNAL_ERROR",
                "InternalError",
                f"Stripping the snippet's types failed: {type(exc).__name__}: {exc}",
            )
            self.exit()
        _OUTBOX.hold(f.prepared_frame(prepared.to_wire(), prepared.code))
        return prepared

    def serve(self) -> None:
        """Say READY, take one job, run it to its end, and exit."""
        f = self.f
        _OUTBOX.connect(f.frame, f.Kind.LOG_BATCH)
        _write(f.frame(f.Kind.READY, b'{"pid": %d}' % os.getpid()))
        os.set_blocking(_IN, False)  # an ioctl: not allowed behind the walls
        self.confinement.wall()  # now, not with the job: a run does not wait for it
        # The run's memory figures count from here (and from the end of a warm-up),
        # not from the job's arrival: reading /proc cost each run ~0.1 ms. Reading the
        # job (a few KiB) counts in.
        self.rss_at_start = _reset_peak_rss()
        # No polling for the job: a spare waits far longer than a poll lasts, and
        # would only take a core from the run in progress. (It sleeps first, so the
        # read finds the job: a read that finds nothing raises.)
        if not select.select([_IN], [], [], WARM_AFTER_S if self.warm_up else None)[0]:
            self.warm()
            select.select([_IN], [], [])
        kind, payload = self.read_frame(spin=0.0)
        if kind != f.Kind.RUN:
            os._exit(65)
        job = json.loads(payload)
        self.max_value_bytes = int(job["max_value_bytes"])
        self.max_argument_bytes = int(job["max_argument_bytes"])
        self.max_argument_bytes_per_run = int(job["max_argument_bytes_per_run"])
        self.argument_bytes = 0
        # The last wall, now that the job says how high (nothing since the allow-list
        # went up may open a file, a socket or a process).
        self.confinement.lock(int(job["memory_bytes"]), int(job["timeout_ms"]))
        _OUTBOX.activate()
        if self.probe:
            report = {"stats": self._stats(), "logs_dropped": 0, "kind": "value"}
            walls = probe_walls(_OUTBOX.parent_pid)
            # what this process has loaded: the child's modules and the errors only
            walls["modules"] = ",".join(sorted(m for m in sys.modules if m.startswith("run_repl")))
            walls["pydantic"] = "loaded" if "pydantic" in sys.modules else "absent"
            value = json.dumps(walls)
            _write(f.frame(f.Kind.DONE, json.dumps(report).encode() + b"\n" + value.encode()))
            self.exit()
        prepared = self.prepare(job["source"])
        self.dispatch("configure", job["guest"])
        self.ctx.set_max_stack_size(int(job["stack_bytes"]))
        self.ctx.set_memory_limit(int(job["memory_bytes"]))
        try:
            fn = self.ctx.eval(prepared.code)
        except self.q.JSException as exc:
            text = str(exc)
            if "out of memory" in text:
                self.fail_from_python(
                    "RUN_MEMORY_EXCEEDED",
                    "InternalError",
                    "The sandbox ran out of memory while compiling the snippet.",
                )
            else:
                self.fail_from_python("RUN_SYNTAX_ERROR", "SyntaxError", text)
            self.exit()
        try:
            self.dispatch("start", fn)
        except self.q.JSException as exc:
            self.fail_from_python("RUN_EXCEPTION", "InternalError", str(exc).split("\n", 1)[0])
            self.exit()
        settle = f.SETTLE
        while True:
            self.drain()
            if self.bridge_error is not None and not self.finished:
                self.fail_from_python("RUN_WORKER_CRASHED", "InternalError", self.bridge_error)
            if self.finished:
                self.exit()
            # The guest waits: what it sent must go now (with IDLE, if nothing can
            # wake it: the parent decides what that means; memory figures tell a
            # swallowed out-of-memory from a stuck promise).
            if self.calls_closed >= self.calls_made:
                stats = self._stats() if self.calls_made == 0 or self.calls_closed else {}
                _write(f.frame(f.Kind.IDLE, json.dumps(stats).encode()))
            else:
                _OUTBOX.flush()
            kind, payload = self.read_frame()
            if kind == f.Kind.CALL_INTERRUPTED:
                self.calls_closed += 1
                continue
            if kind != f.Kind.SETTLE_CALL:
                continue
            self.calls_closed += 1
            call_id, ok, mode, elapsed = settle.unpack_from(payload)
            text = payload[settle.size :].decode("utf-8")
            try:
                self.dispatch("settle", call_id, ok, mode.decode(), text, elapsed)
            except self.q.JSException as exc:
                message = str(exc)
                if "out of memory" in message:
                    self.fail_from_python(
                        "RUN_MEMORY_EXCEEDED", "InternalError", "The sandbox ran out of memory."
                    )
                else:
                    self.fail_from_python(
                        "RUN_EXCEPTION", "InternalError", message.split("\n", 1)[0]
                    )

    def exit(self) -> None:
        os._exit(0)


def become_worker(
    worker: Worker,
    *,
    stdin: int,
    stdout: int,
    stderr: int,
    parent_pid: int,
    die_with_parent: bool,
) -> None:
    """Turn this process into the run's worker: confined, on these pipes, then
    serving its one job. Never returns."""
    try:
        confinement = worker.confinement
        confinement.name_process("run-repl-worker")
        if die_with_parent:
            confinement.die_with_parent(parent_pid)
        keep = {_IN: stdin, _OUT: stdout, _ERR: stderr}
        for name, target, path, flags in (
            ("status", _STATUS, "/proc/self/status", os.O_RDONLY),
            ("clear_refs", _CLEAR_REFS, "/proc/self/clear_refs", os.O_WRONLY),
        ):
            try:
                keep[target] = os.open(path, flags)
                _proc_fds[name] = target
            except OSError:
                pass
        confinement.seal(keep)
        # Stray prints must never corrupt the frame stream on stdout.
        sys.stdout = sys.stderr
        # PR_SET_PDEATHSIG is Linux's: elsewhere the flusher is the watch, from the start.
        _OUTBOX.start(parent_pid, eager=not (die_with_parent and confinement.linux))
        worker.serve()
    except BaseException:
        traceback.print_exc()  # to the template's stderr when RUN_REPL_WORKER_STDERR is set
        os._exit(71)
    os._exit(0)
