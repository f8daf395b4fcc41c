"""One run, seen from the parent: a worker, its frames, the host calls it makes.

The session owns the worker from start to end: it sends the run, answers
host calls (live, or from the ledger when replaying), streams logs and calls
to the callbacks, enforces the wall-clock deadline and cancellation by
killing the worker, and hands back a `SessionOutcome` for the runner to turn
into a `RunResult`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import json
import os
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from . import codec, frames
from .context import CancelledFlag, HostFunctionContext, Interrupt, Resume, bind
from .errors import ErrorCode
from .host_functions import HostManifest, check_arguments, did_you_mean, js_parameters
from .limits import Limits
from .result import CallRecord, LogLine
from .worker_pool import WorkerPool, WorkerProcess

LogCallback = Callable[[LogLine], Any]
CallCallback = Callable[[CallRecord], Any]
# Awaited once per resumed run, before its first live host call; raising stops the run.
ResumeGuard = Callable[[], Awaitable[None]]


class _GuardRefused(Exception):
    """The resume guard said no: the call must not run (the run has already ended)."""


_EXECUTOR: concurrent.futures.ThreadPoolExecutor | None = None
PREVIEW_TEXT_LIMIT = 64 * 1024
SPIN_SECONDS = 0.0001
READ_CHUNK = 8 * 1024  # a few milliseconds of frames: the event loop gets a turn between reads


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    # Sync host functions run here, off the event loop; many may wait on I/O at once.
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = concurrent.futures.ThreadPoolExecutor(
            max_workers=64, thread_name_prefix="run-repl-host"
        )
    return _EXECUTOR


class HostError(Exception):
    """Raise from a host function to tell the guest why, on purpose.

    Any other exception reaches the guest as its class name only; this one
    carries `message`, and `code` and `details` (data) when given."""

    def __init__(self, message: str, *, code: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details


class ApprovalDenied(Exception):
    """Raised inside a host call when a person (or the policy) said no."""

    def __init__(self, message: str, interruption_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.interruption_id = interruption_id


@dataclass
class LedgerEntry:
    """A host call as it happened: what the guest asked, and what it got."""

    seq: int
    path: str
    args_digest: str = ""  # filled from args_wire when the ledger is signed
    ok: bool | None = None
    wire: str | None = None  # mode + JSON text of the value or of the error
    elapsed_ms: float = 0.0  # the guest clock when it settled
    interruption_id: str | None = None
    payload: Any = None
    decision: str | None = None
    args_wire: str | None = None

    def digest(self) -> str:
        if not self.args_digest and self.args_wire is not None:
            self.args_digest = args_digest(self.args_wire)
        return self.args_digest


@dataclass
class PendingInterrupt:
    id: str
    seq: int
    path: str
    args: list[Any]
    payload: Any


@dataclass
class ReplayPlan:
    """What a resumed run knows: finished calls, and answers for interrupted ones."""

    entries: list[LedgerEntry]
    settle_order: list[int]
    resolutions: dict[str, Any]
    elapsed_ms: float = 0.0
    issued_at: float | None = (
        None  # when the run was interrupted: approval wait is measured from it
    )


@dataclass
class SessionOutcome:
    kind: str  # done | fail | interrupted
    payload: dict[str, Any] = field(default_factory=dict)
    value_text: str | None = None
    value_chunks: list[str] = field(default_factory=list)
    logs: list[LogLine] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    ledger: list[LedgerEntry] = field(default_factory=list)
    settle_order: list[int] = field(default_factory=list)
    interrupts: list[PendingInterrupt] = field(default_factory=list)
    duration_ms: float = 0.0
    worker_start_ms: float | None = None
    elapsed_ms: float = 0.0
    executed: int = 0


def args_digest(wire: str) -> str:
    import hashlib

    return hashlib.sha256(wire.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class RunSession:
    def __init__(
        self,
        *,
        code: str,
        manifest: HostManifest,
        limits: Limits,
        pool: WorkerPool,
        logical_run_id: str,
        seed: list[int],
        clock_ms: int,
        on_log: LogCallback | None = None,
        on_call: CallCallback | None = None,
        cancel: asyncio.Event | None = None,
        replay: ReplayPlan | None = None,
        policy: Callable[[str], str] | None = None,
        rewrite_log: Callable[[str], str] | None = None,
        resume_guard: ResumeGuard | None = None,
    ) -> None:
        self.code = code
        self.manifest = manifest
        self.limits = limits
        self.pool = pool
        self.logical_run_id = logical_run_id
        self.seed = seed
        self.clock_ms = clock_ms
        self.on_log = on_log
        self.on_call = on_call
        self.cancel = cancel
        self.replay = replay
        self.policy = policy
        self.rewrite_log = rewrite_log
        self.resume_guard = resume_guard if replay is not None else None
        self.guard_task: asyncio.Task[None] | None = None
        self.executed = 0  # host functions invoked live
        self.logs: list[LogLine] = []
        self.calls: dict[int, CallRecord] = {}
        self.ledger: dict[int, LedgerEntry] = {}
        self.settle_order: list[int] = []
        self.interrupts: list[PendingInterrupt] = []
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.cancelled = CancelledFlag()
        self.reader = frames.FrameReader()
        self.outbox = bytearray()
        self.worker: WorkerProcess | None = None
        self.final: asyncio.Future[SessionOutcome] | None = None
        self.ended_by_us = False
        self.worker_start_ms: float | None = None
        self.t0 = 0.0
        # Replay: answers are given in the order they were first given.
        self.replay_next = 0
        self.replay_waiting: dict[int, LedgerEntry] = {}
        self.replay_by_seq = {e.seq: e for e in replay.entries} if replay else {}
        self.replay_settled: set[int] = set()
        self.held_live: list[tuple[int, bool, str, str, LedgerEntry | None]] = []
        self.running = 0
        self.spinning = False
        self.batch: list[bytes] = []  # answers to send together at the end of this loop turn
        self.value_chunks: list[str] = []

    # ------------------------------------------------------------ lifecycle
    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def guest_clock(self) -> float:
        base = self.replay.elapsed_ms if self.replay else 0.0
        return base + self.elapsed_ms()

    async def execute(self) -> SessionOutcome:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.t0 = time.perf_counter()
        self.final = loop.create_future()
        if self.cancel is not None and self.cancel.is_set():
            return self._complete(
                self._failure(ErrorCode.RUN_ABORTED, "The run was cancelled before it started.")
            )
        try:
            worker = self.pool.take()
        except (OSError, RuntimeError) as exc:  # out of processes, no Python to start...
            return self._complete(
                self._failure(
                    ErrorCode.RUN_WORKER_CRASHED, f"Could not start a sandbox process: {exc}."
                )
            )
        self.worker = worker
        os.set_blocking(worker.read_fd, False)
        os.set_blocking(worker.write_fd, False)
        loop.add_reader(worker.read_fd, self._on_readable)
        job = {
            "code": self.code,
            "memory_bytes": self.limits.memory_bytes,
            "stack_bytes": self.limits.stack_bytes,
            "timeout_ms": self.limits.timeout_ms,
            "max_value_bytes": self.limits.max_value_bytes,
            "guest": json.dumps(
                {
                    "namespaces": self.manifest.tree,
                    "maxLogLines": self.limits.max_log_lines,
                    "maxLogLineBytes": self.limits.max_log_line_bytes,
                    "maxValueBytes": self.limits.max_value_bytes,
                    "maxHostCalls": self.limits.max_host_calls,
                    "maxInFlight": self.limits.max_host_calls_in_flight,
                    "clockMs": self.clock_ms,
                    "seed": self.seed,
                }
            ),
        }
        self._send(frames.frame(frames.RUN, json.dumps(job).encode()))
        deadline = loop.call_later(self.limits.timeout_ms / 1000, self._on_timeout)
        watcher: asyncio.Task[Any] | None = None
        if self.cancel is not None:
            watcher = loop.create_task(self.cancel.wait())
            watcher.add_done_callback(self._on_cancel)
        try:
            outcome = await self.final
        except asyncio.CancelledError:
            self._end_worker()
            self._stop_tasks(ErrorCode.RUN_ABORTED)
            raise
        finally:
            deadline.cancel()
            if watcher is not None:
                watcher.cancel()
            self._end_worker()
        if outcome.kind in ("done", "fail") and self.tasks:
            await self._wait_for_calls()
        return self._complete(outcome)

    def _complete(self, outcome: SessionOutcome) -> SessionOutcome:
        outcome.logs = self.logs
        outcome.calls = [self.calls[k] for k in sorted(self.calls)]
        outcome.ledger = [self.ledger[k] for k in sorted(self.ledger)]
        outcome.settle_order = list(self.settle_order)
        outcome.interrupts = list(self.interrupts)
        outcome.duration_ms = self.elapsed_ms()
        outcome.worker_start_ms = self.worker_start_ms
        outcome.elapsed_ms = self.guest_clock()
        outcome.executed = self.executed
        return outcome

    async def _wait_for_calls(self) -> None:
        """The snippet ended with calls still running: let them finish (within the
        deadline) so the audit trail says what really happened."""
        remaining = self.limits.timeout_ms / 1000 - (time.perf_counter() - self.t0)
        pending = [t for t in self.tasks.values() if not t.done()]
        if not pending:
            return
        _done, still = await asyncio.wait(pending, timeout=max(remaining, 0))
        if still:
            self._stop_tasks(ErrorCode.RUN_TIMEOUT)
            await asyncio.wait(still, timeout=1)

    def _end_worker(self) -> None:
        worker = self.worker
        if worker is None:
            return
        self.worker = None
        self.pool.release()
        try:
            self.loop.remove_reader(worker.read_fd)
        except (ValueError, OSError):
            pass
        try:
            self.loop.remove_writer(worker.write_fd)
        except (ValueError, OSError):
            pass
        worker.close()

    def _stop_tasks(self, code: ErrorCode) -> None:
        self.cancelled.set()
        for seq, task in self.tasks.items():
            if not task.done():
                task.cancel()
                record = self.calls.get(seq)
                if record is not None and record.ok is None:
                    self._finish_record(
                        record,
                        ok=False,
                        error_code=code,
                        message="still running when the run ended",
                    )

    def _resolve(self, outcome: SessionOutcome) -> None:
        if self.final is not None and not self.final.done():
            self.final.set_result(outcome)

    @staticmethod
    def _failure(code: ErrorCode, message: str, **extra: Any) -> SessionOutcome:
        error = {
            "code": str(code),
            "message": message,
            "name": extra.pop("name", None),
            "stack": None,
            **extra,
        }
        return SessionOutcome("fail", {"error": error})

    def _fail(self, code: ErrorCode, message: str, **extra: Any) -> None:
        self._resolve(self._failure(code, message, **extra))

    def _on_timeout(self) -> None:
        if self.final is None or self.final.done():
            return
        self.ended_by_us = True
        self._end_worker()
        self._stop_tasks(ErrorCode.RUN_TIMEOUT)
        self._fail(
            ErrorCode.RUN_TIMEOUT,
            f"The run passed its deadline of {self.limits.timeout_ms:,} ms and was stopped.",
            timeout_ms=self.limits.timeout_ms,
        )

    def _on_cancel(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or self.final is None or self.final.done():
            return
        self.ended_by_us = True
        self._end_worker()
        self._stop_tasks(ErrorCode.RUN_ABORTED)
        self._fail(ErrorCode.RUN_ABORTED, "The run was cancelled.")

    # ------------------------------------------------------------ the pipe
    def _send(self, data: bytes) -> None:
        worker = self.worker
        if worker is None:
            return
        if self.outbox:
            self.outbox += data
            return
        try:
            n = os.write(worker.write_fd, data)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, OSError):
            return  # the worker is gone; its end is reported by the reader
        if n < len(data):
            self.outbox += data[n:]
            self.loop.add_writer(worker.write_fd, self._on_writable)

    def _on_writable(self) -> None:
        worker = self.worker
        if worker is None:
            return
        try:
            n = os.write(worker.write_fd, self.outbox)
        except BlockingIOError:
            return
        except OSError:
            self.outbox.clear()
            self.loop.remove_writer(worker.write_fd)
            return
        del self.outbox[:n]
        if not self.outbox:
            self.loop.remove_writer(worker.write_fd)

    def _on_readable(self) -> None:
        worker = self.worker
        if worker is not None:
            self._read_once(worker)

    def _read_once(self, worker: WorkerProcess) -> bool:
        """Read and handle what the worker sent; False when nothing was there."""
        try:
            # A bounded read: a flood of log frames must not hold the event loop.
            data = os.read(worker.read_fd, READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._on_eof(worker)
            return True
        for kind, payload in self.reader.feed(data):
            try:
                self._dispatch(kind, payload)
            except Exception as exc:  # a bug here must end the run, never hang it
                self._fail(
                    ErrorCode.RUN_WORKER_CRASHED,
                    f"The sandbox sent a message the host could not read: {exc!r}",
                )
                self._end_worker()
                return True
        return True

    def _on_eof(self, worker: WorkerProcess) -> None:
        self._end_worker()
        if self.final is None or self.final.done() or self.ended_by_us:
            return
        status = worker.exit_status()
        if status is not None and status < 0:
            import signal

            try:
                how = f"signal {signal.Signals(-status).name}"
            except ValueError:
                how = f"signal {-status}"
        else:
            how = f"exit code {status}"
        self._stop_tasks(ErrorCode.RUN_WORKER_CRASHED)
        self._fail(ErrorCode.RUN_WORKER_CRASHED, f"The sandbox process died unexpectedly ({how}).")

    # ------------------------------------------------------------ frames
    def _dispatch(self, kind: int, payload: bytes) -> None:
        if kind == frames.HOST_CALL:
            call_id, path_len = frames.CALL.unpack_from(payload)
            start = frames.CALL.size
            path = payload[start : start + path_len].decode()
            wire = payload[start + path_len :].decode("utf-8", "surrogatepass")
            self._on_host_call(call_id, path, wire)
        elif kind == frames.LOG_BATCH:
            at_ms = round(self.elapsed_ms(), 3)
            levels = frames.LOG_LEVELS
            rewrite = self.rewrite_log
            for level, text in json.loads(payload.decode("utf-8", "surrogatepass")):
                if rewrite is not None and "<input>:" in text:
                    text = rewrite(text)
                line = LogLine(
                    level=levels[level] if level < len(levels) else "log", text=text, at_ms=at_ms
                )  # type: ignore[arg-type]
                self.logs.append(line)
                self._emit(self.on_log, line)
        elif kind == frames.IDLE:
            self._on_idle(json.loads(payload) if payload else {})
        elif kind == frames.VALUE_CHUNK:
            self.value_chunks.append(payload.decode("utf-8", "surrogatepass"))
        elif kind == frames.DONE:
            head, _, body = payload.partition(b"\n")
            outcome = SessionOutcome(
                "done", json.loads(head), body.decode("utf-8", "surrogatepass")
            )
            outcome.value_chunks = self.value_chunks
            self._resolve(outcome)
        elif kind == frames.FAIL:
            self._resolve(SessionOutcome("fail", json.loads(payload)))
        elif kind == frames.READY:
            self.worker_start_ms = round((time.perf_counter() - self.t0) * 1000, 3)
        elif kind == frames.INTERNAL:
            self._fail(
                ErrorCode.RUN_WORKER_CRASHED,
                "The sandbox could not start: "
                + payload.decode("utf-8", "replace").split("\n", 1)[0],
            )

    def _emit_call(self, record: CallRecord) -> None:
        # Each event gets its own copy: a listener may keep the start and the end.
        if self.on_call is not None:
            self._emit(self.on_call, record.model_copy())

    def _emit(self, callback: Callable[[Any], Any] | None, item: Any) -> None:
        if callback is None:
            return
        try:
            result = callback(item)
            if inspect.isawaitable(result):
                self.loop.create_task(_swallow(result))
        except Exception:
            # A broken callback must not break the run it watches.
            traceback.print_exc()

    def _on_idle(self, stats: dict[str, Any] | None = None) -> None:
        """The worker has run out of work. If no host call can still answer it,
        the run is interrupted (pending approvals) or stuck (a promise that
        nothing will settle)."""
        if self.worker is None or self.final is None or self.final.done():
            return
        if self.replay is not None and not self._replay_done():
            self._end_worker()
            self._fail(
                ErrorCode.RUN_REPLAY_MISMATCH,
                "On replay, the snippet stopped before making the calls it made the first time: "
                "it did not repeat what it did before.",
            )
            return
        if self.interrupts:
            self._resolve(SessionOutcome("interrupted", {}))
            return
        if stats and near_memory_limit(stats, self.limits.memory_bytes):
            # Out of memory inside a promise job can leave nothing to report it.
            self._fail(ErrorCode.RUN_MEMORY_EXCEEDED, "The sandbox ran out of memory.")
            return
        self._fail(
            ErrorCode.RUN_EXCEPTION,
            "The snippet is waiting for a promise that nothing will ever settle (no host call is "
            "running): await host calls or resolve your own promises.",
        )

    def tasks_waiting(self) -> bool:
        return bool(self.held_live or self.replay_waiting)

    def _replay_done(self) -> bool:
        return self.replay is None or self.replay_next >= len(self.replay.settle_order)

    # ------------------------------------------------------------ host calls
    def _on_host_call(self, seq: int, path: str, wire: str) -> None:
        try:
            args = codec.decode(wire)
        except Exception:
            args = None
        record = CallRecord(
            seq=seq,
            path=path,
            args_preview=_args_preview(wire, args),
            started_at_ms=round(self.elapsed_ms(), 3),
            args_text=wire[1:PREVIEW_TEXT_LIMIT],
        )
        self.calls[seq] = record
        entry = LedgerEntry(seq=seq, path=path, args_wire=wire)

        if self.replay is not None and seq in self.replay_by_seq:
            old = self.replay_by_seq[seq]
            if old.path != path or old.digest() != entry.digest():
                self._emit_call(record)
                what = "another function" if old.path != path else "other arguments"
                self._finish_record(
                    record,
                    ok=False,
                    error_code=ErrorCode.RUN_REPLAY_MISMATCH,
                    message=f"replay expected {old.path}() here",
                )
                self._end_worker()
                self._fail(
                    ErrorCode.RUN_REPLAY_MISMATCH,
                    f"On replay, call #{seq} was {path}() with {what} than the recorded "
                    f"{old.path}(): the snippet did not repeat what it did before.",
                    path=path,
                )
                return
            if old.ok is not None:
                # Finished before: answered from the ledger, in its recorded order.
                record.replayed = True
                self.ledger[seq] = old
                self._emit_call(record)
                self.replay_waiting[seq] = old
                self._pump_replay()
                return
        self._emit_call(record)
        self.ledger[seq] = entry
        fn = self.manifest.functions.get(path)
        if fn is None:
            suggestions = did_you_mean(self.manifest.paths, path)
            self._reply_error(
                seq, ErrorCode.RUN_UNKNOWN_MEMBER, f"The host has no {path}.", record, entry=entry
            )
            record.error_message = (
                f"unknown path; did you mean {', '.join(suggestions) or 'nothing close'}"
            )
            return
        if not isinstance(args, list):
            self._reply_error(
                seq,
                ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
                f"The arguments to {path}() could not be read.",
                record,
                entry=entry,
            )
            return
        resume = None
        if self.replay is not None and seq in self.replay_by_seq:
            old = self.replay_by_seq[seq]
            if old.interruption_id and old.interruption_id in self.replay.resolutions:
                resume = Resume(
                    old.interruption_id, old.payload, self.replay.resolutions[old.interruption_id]
                )
                record.decision = "pending"
                record.interruption_id = old.interruption_id
                if self.replay.issued_at is not None:
                    record.wait_ms = round(max(0.0, time.time() - self.replay.issued_at) * 1000, 1)
            elif old.interruption_id:
                # Still undecided: the call is interrupted again, with the same id.
                self.interrupts.append(
                    PendingInterrupt(old.interruption_id, seq, path, args, old.payload)
                )
                entry.interruption_id = old.interruption_id
                entry.payload = old.payload
                record.decision = "pending"
                record.interruption_id = old.interruption_id
                record.ok = None
                self._tell_interrupted(seq)
                return
        hctx = HostFunctionContext(path, self.logical_run_id, seq, args, self.cancelled, resume)
        self.running += 1
        task = self.loop.create_task(self._run_call(fn, hctx, record, entry), context=bind(hctx))
        self.tasks[seq] = task

    def _pump_replay(self) -> None:
        """Give recorded answers in the order they were first given, each only once
        the guest has asked for it."""
        assert self.replay is not None
        order = self.replay.settle_order
        while self.replay_next < len(order):
            seq = order[self.replay_next]
            entry = self.replay_waiting.pop(seq, None)
            if entry is None:
                recorded = self.replay_by_seq.get(seq)
                if seq in self.replay_settled or recorded is None or recorded.ok is None:
                    self.replay_next += 1  # nothing to give for it
                    continue
                return  # not asked for yet
            self.replay_next += 1
            self.replay_settled.add(seq)
            record = self.calls[seq]
            wire = entry.wire or "Jnull"
            mode, body = wire[0], wire[1:]
            self._finish_record(
                record,
                ok=bool(entry.ok),
                replayed=True,
                error_code=None if entry.ok else _wire_code(entry.wire),
                message=None,
                result_text=body[:PREVIEW_TEXT_LIMIT],
                duration_ms=0.0,
                decision=entry.decision,
            )
            self.settle_order.append(seq)
            self._settle(seq, bool(entry.ok), mode, body, entry.elapsed_ms)
        if self._replay_done() and self.held_live:
            self._flush_held()

    async def _run_call(
        self, fn: Any, hctx: HostFunctionContext, record: CallRecord, entry: LedgerEntry
    ) -> None:
        started = time.perf_counter()
        # `running` was counted when the task was made: an idle frame may come first.
        try:
            await self._call_host(fn, hctx, record, entry, started)
        finally:
            self.running -= 1

    async def _call_host(
        self,
        fn: Any,
        hctx: HostFunctionContext,
        record: CallRecord,
        entry: LedgerEntry,
        started: float,
    ) -> None:
        seq = hctx.request_index
        problem = check_arguments(fn.fn, hctx.args)
        if problem is not None:
            # The call's shape is the snippet's business: say what the function takes.
            self._reply_error(
                seq,
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{hctx.path}{js_parameters(fn.fn)} cannot take {len(hctx.args)} argument"
                f"{'s' if len(hctx.args) != 1 else ''}: {problem}.",
                record,
                started=started,
                entry=entry,
            )
            return
        try:
            if self.policy is not None:
                await self._apply_policy(fn, hctx, record)
            if self.resume_guard is not None:
                await self._pass_guard(record, started)
            self.executed += 1
            if fn.is_async:
                result = await fn.fn(*hctx.args)
            else:
                result = await self.loop.run_in_executor(
                    _executor(), contextvars.copy_context().run, fn.fn, *hctx.args
                )
                if inspect.isawaitable(result):
                    result = await result
        except Interrupt as it:
            self._on_interrupt(hctx, record, entry, it.payload)
            return
        except _GuardRefused:
            return
        except asyncio.CancelledError:
            if record.ok is None:
                self._finish_record(
                    record,
                    ok=False,
                    error_code=ErrorCode.RUN_ABORTED,
                    message="cancelled: the run ended",
                    started=started,
                )
            raise
        except ApprovalDenied as denied:
            record.decision = "denied" if record.decision != "refused" else "refused"
            self._reply_error(
                seq,
                ErrorCode.RUN_APPROVAL_DENIED,
                denied.message,
                record,
                started=started,
                name="ApprovalDeniedError",
                entry=entry,
            )
            return
        except HostError as he:
            self._reply_error(
                seq,
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                he.message,
                record,
                started=started,
                host_code=he.code,
                details=he.details,
                entry=entry,
                error_message=f"HostError: {he.message}",
            )
            return
        except Exception as exc:
            self._reply_error(
                seq,
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{hctx.path}() failed ({type(exc).__name__}).",
                record,
                started=started,
                entry=entry,
                error_message=f"{type(exc).__name__}: {exc}",
                tb="".join(traceback.format_exception(exc)),
            )
            return
        try:
            wire = codec.encode(result)
        except Exception as exc:
            ce = (
                exc
                if isinstance(exc, codec.CodecError)
                else codec.CodecError(f"a value ({type(exc).__name__})", "$")
            )
            self._reply_error(
                seq,
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{hctx.path}() returned {ce.what} at {ce.path}, which cannot cross into the sandbox.",
                record,
                started=started,
                entry=entry,
                error_message=str(ce),
            )
            return
        if record.decision == "pending":
            record.decision = "approved"
        entry.ok = True
        entry.wire = wire
        entry.decision = record.decision
        self._finish_record(
            record, ok=True, started=started, result_text=wire[1:PREVIEW_TEXT_LIMIT]
        )
        self._settle(seq, True, wire[0], wire[1:], None, entry)

    async def _pass_guard(self, record: CallRecord, started: float) -> None:
        """The resume guard runs once, before the first live call; the others wait on it."""
        assert self.resume_guard is not None
        if self.guard_task is None:
            self.guard_task = self.loop.create_task(self.resume_guard())
        try:
            await asyncio.shield(self.guard_task)
            return
        except Exception as guard_exc:
            exc = guard_exc
        if record.ok is not None:
            raise _GuardRefused from exc  # another call already reported the refusal
        message = str(exc) or type(exc).__name__
        self._finish_record(
            record,
            ok=False,
            error_code=ErrorCode.RUN_CONTINUATION_INVALID,
            message=f"not run: {message}",
            started=started,
        )
        if self.final is not None and not self.final.done():
            self.ended_by_us = True
            self._end_worker()
            self._stop_tasks(ErrorCode.RUN_CONTINUATION_INVALID)
            self._fail(
                ErrorCode.RUN_CONTINUATION_INVALID,
                f"Cannot resume: {message}. Nothing was run.",
            )
        raise _GuardRefused from exc

    async def _apply_policy(self, fn: Any, hctx: HostFunctionContext, record: CallRecord) -> None:
        """Approval policy: 'allow' runs, 'deny' refuses, 'ask' interrupts for a person."""
        assert self.policy is not None
        mode = self.policy(hctx.path)
        if mode == "allow":
            return
        if mode == "deny":
            record.decision = "refused"
            raise ApprovalDenied(
                f"{hctx.path}() is not allowed here (the approval policy denies it)."
            )
        if mode == "ask":
            if hctx.resume is None:
                spec = getattr(fn, "approval", None)
                message = (
                    getattr(spec, "message", None)
                    or f"Allow {hctx.path}{codec.args_preview(hctx.args)}?"
                )
                if callable(message):
                    message = message(*hctx.args)
                hctx.interrupt(
                    {
                        "kind": "approval",
                        "message": str(message),
                        "path": hctx.path,
                        "args": hctx.args,
                    }
                )
            if hctx.resume is not None and hctx.resume.resolution is not True:
                record.decision = "denied"
                raise ApprovalDenied(
                    f"{hctx.path}() was not approved.", interruption_id=hctx.resume.interruption_id
                )
            if hctx.resume is not None:
                record.decision = "approved"
                # The decision has been used; the function itself must not see it as its own resume.
                hctx.resume = None

    def _on_interrupt(
        self, hctx: HostFunctionContext, record: CallRecord, entry: LedgerEntry, payload: Any
    ) -> None:
        import secrets

        if hctx.resume is not None:
            interruption_id = hctx.resume.interruption_id
        else:
            old = self.replay_by_seq.get(hctx.request_index) if self.replay else None
            interruption_id = (old.interruption_id if old and old.interruption_id else None) or (
                "int_" + secrets.token_hex(8)
            )
        entry.interruption_id = interruption_id
        entry.payload = payload
        record.decision = "pending"
        record.interruption_id = interruption_id
        self.interrupts.append(
            PendingInterrupt(interruption_id, hctx.request_index, hctx.path, hctx.args, payload)
        )
        self._emit_call(record)
        self._tell_interrupted(hctx.request_index)

    def _tell_interrupted(self, seq: int) -> None:
        # No answer goes back: the guest waits on this call until the run is resumed.
        self._send(frames.frame(frames.CALL_INTERRUPTED, frames.CALL.pack(seq, 0)))

    def _reply_error(
        self,
        seq: int,
        code: ErrorCode,
        message: str,
        record: CallRecord,
        *,
        started: float | None = None,
        name: str = "HostFunctionError",
        host_code: str | None = None,
        details: Any = None,
        entry: LedgerEntry | None = None,
        error_message: str | None = None,
        tb: str | None = None,
    ) -> None:
        body: dict[str, Any] = {"code": str(code), "message": message, "name": name}
        if host_code is not None:
            body["host_code"] = host_code
        if details is not None:
            body["details"] = details
        try:
            wire = codec.encode(body)
        except codec.CodecError:
            body.pop("details", None)
            wire = codec.encode(body)
        if entry is not None:
            entry.ok = False
            entry.wire = wire
            entry.decision = record.decision
        record.traceback = tb
        self._finish_record(
            record, ok=False, error_code=code, message=error_message or message, started=started
        )
        self._settle(seq, False, wire[0], wire[1:], None, entry)

    def _finish_record(
        self,
        record: CallRecord,
        *,
        ok: bool,
        error_code: ErrorCode | str | None = None,
        message: str | None = None,
        started: float | None = None,
        result_text: str | None = None,
        replayed: bool | None = None,
        duration_ms: float | None = None,
        decision: str | None = None,
    ) -> None:
        record.ok = ok
        if duration_ms is not None:
            record.duration_ms = duration_ms
        elif started is not None:
            record.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        else:
            record.duration_ms = round(self.elapsed_ms() - record.started_at_ms, 3)
        if error_code is not None:
            record.error_code = error_code
        if message is not None and not ok:
            record.error_message = message
        if result_text is not None:
            record.result_text = result_text
        if replayed is not None:
            record.replayed = replayed
        if decision is not None:
            record.decision = decision  # type: ignore[assignment]
        self._emit_call(record)

    def _settle(
        self,
        seq: int,
        ok: bool,
        mode: str,
        body: str,
        elapsed: float | None,
        entry: LedgerEntry | None = None,
    ) -> None:
        """Send one call's answer to the guest. While a replay still has recorded
        answers to give, live answers wait, so the guest sees the same order."""
        if elapsed is None and not self._replay_done():
            self.held_live.append((seq, ok, mode, body, entry))
            return
        clock = self.guest_clock() if elapsed is None else elapsed
        if entry is not None:
            entry.elapsed_ms = clock
            self.settle_order.append(seq)
        if self.worker is None:
            return
        header = frames.SETTLE.pack(seq, ok, mode.encode(), clock)
        data = frames.frame(frames.SETTLE_CALL, header + body.encode("utf-8", "surrogatepass"))
        if self.running > 1 or self.batch:
            # Other answers are coming in this turn of the loop: send them together.
            if not self.batch:
                self.loop.call_soon(self._send_batch)
            self.batch.append(data)
            return
        self._send(data)
        self._spin_for_reply()

    def _send_batch(self) -> None:
        batch, self.batch = self.batch, []
        if batch:
            self._send(b"".join(batch))

    def _spin_for_reply(self) -> None:
        """The guest usually answers an answer within tens of microseconds (its next
        call); polling briefly beats sleeping in the event loop and being woken."""
        worker = self.worker
        if worker is None or self.spinning or self.running > 1 or self.tasks_waiting():
            return  # other answers are coming: the event loop has work, no need to spin
        self.spinning = True
        try:
            until = time.perf_counter() + SPIN_SECONDS
            while time.perf_counter() < until and self.worker is worker:
                if self._read_once(worker):
                    return
                os.sched_yield()  # on a busy machine, let the worker have this core
        finally:
            self.spinning = False

    def _flush_held(self) -> None:
        held, self.held_live = self.held_live, []
        for seq, ok, mode, body, entry in held:
            self._settle(seq, ok, mode, body, None, entry)


def near_memory_limit(stats: dict[str, Any], memory_bytes: int) -> bool:
    """Whether the sandbox got close to its memory limit (its heap now, or the
    process's growth at its peak: a heap freed after the failure shows there)."""
    heap = stats.get("heap_bytes") or 0
    growth = stats.get("memory_growth_bytes") or 0
    return heap >= memory_bytes * 0.85 or growth >= memory_bytes * 0.75


def _args_preview(wire: str, args: Any, limit: int = 160) -> str:
    if not isinstance(args, list):
        return "(…)"
    if wire.startswith("J["):
        # Plain JSON arguments read well as they are: ("c1",2)
        text = "(" + wire[2:-1] + ")"
        return text if len(text) <= limit else text[: limit - 2] + "…)"
    return codec.args_preview(args, limit)


def _wire_code(wire: str | None) -> str | None:
    if not wire:
        return None
    try:
        value = codec.decode(wire)
    except Exception:
        return None
    return value.get("code") if isinstance(value, dict) else None


async def _swallow(awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception:
        traceback.print_exc()
