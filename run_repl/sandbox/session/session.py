"""One run, seen from the parent: a worker, the calls it makes, and how it ends.

The session orchestrates: it sends the job, answers each host call (live
through the host-call runner, or from the record through the replay cursor),
streams logs and calls to the callbacks, enforces the deadline and
cancellation by ending the worker, and hands back a `SessionOutcome` for the
runner to turn into a `RunResult`. Pipe I/O lives in `channel`, replay in
`replay`, running a host function in `host_call`, the call records in `audit`,
the order answers go in `answers`; what the run is comes in as one `RunSpec`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import secrets
import signal
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..approval import ApprovalPolicy
from ..context import CancelledFlag, HostFunctionContext, Resume, bind
from ..errors import ErrorCode
from ..handles import HandleTable, split_handle_path
from ..limits import near_memory_limit
from ..process import frames
from ..process.source import PreparedSource
from ..result import CallRecord, HostErrorInfo, LogLine
from ..resume.replay import (
    THREE_JOB_AWAIT,
    Answer,
    LedgerEntry,
    PendingInterrupt,
    ReplayCursor,
    ReplayPlan,
    args_digest,
)
from ..wire import codec
from ..wire.nesting import ARGUMENTS_DEPTH
from .answers import AnswerOrder
from .audit import CallAudit
from .channel import WorkerChannel
from .handle_calls import HandleCalls, HandleProblem
from .host_call import (
    PREVIEW_TEXT_LIMIT,
    CallOutcome,
    GuardRefused,
    HostCallRunner,
    ResumeGuard,
    failed,
    start_call,
)
from .host_functions import HostFunction, did_you_mean
from .pool import WorkerPool, WorkerProcess
from .spec import CallCallback, LogCallback, RunHooks, RunSpec

# How long a cancelled run waits for its cancelled async host calls to end.
CANCEL_WAIT_S = 0.05
# A worker starts in milliseconds; one that has not said so by a deadline this long
# did not start (under a shorter deadline, a busy machine may be the reason).
NEVER_STARTED_MS = 1000
WORKER_STALLED_HINT = (
    "Run again: a fresh sandbox process starts. If this repeats, look at the machine "
    "(a stopped or starved run-repl process, or no processes left)."
)

OutcomeKind = Literal["done", "fail", "interrupted"]

__all__ = [
    "CallCallback",
    "LogCallback",
    "ResumeGuard",
    "RunHooks",
    "RunSession",
    "RunSpec",
    "SessionOutcome",
]


@dataclass
class SessionOutcome:
    kind: OutcomeKind
    report: dict[str, Any] = field(default_factory=dict)  # the worker's (or our) final report
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
    host_errors: dict[int, HostErrorInfo] = field(default_factory=dict)  # by call seq
    prepared: PreparedSource | None = None  # what the worker made of the source


def failure(code: ErrorCode, message: str, **extra: Any) -> SessionOutcome:
    """An ending the parent decides (timeout, cancel, crash...)."""
    error = {"code": str(code), "message": message, "name": None, "stack": None, **extra}
    return SessionOutcome("fail", {"error": error})


class RunSession:
    def __init__(
        self,
        spec: RunSpec,
        hooks: RunHooks,
        *,
        pool: WorkerPool,
        replay: ReplayPlan | None = None,
        policy: ApprovalPolicy | None = None,
        resume_guard: ResumeGuard | None = None,
    ) -> None:
        self.spec = spec
        self.hooks = hooks
        self.prepared: PreparedSource | None = None
        self.manifest = spec.manifest
        self.limits = spec.limits
        self.pool = pool
        self.policy = policy
        self.resume_guard = resume_guard if replay is not None else None
        self.replay = ReplayCursor(replay)
        self.answers = AnswerOrder(self.replay, self.guest_clock, lambda: self.running)
        self.logs: list[LogLine] = []
        self.audit = CallAudit(
            self.elapsed_ms, self._emit_call if hooks.on_call is not None else None
        )
        self.ledger: dict[int, LedgerEntry] = {}
        self.interrupts: list[PendingInterrupt] = []
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.cancelled = CancelledFlag()
        self.channel: WorkerChannel | None = None
        self.final: asyncio.Future[SessionOutcome] | None = None
        self.ended_by_us = False
        self.aborted = False  # cancelled by the caller: calls in flight get no grace
        self.worker_start_ms: float | None = None
        self.value_chunks: list[str] = []
        self.host_errors: dict[int, HostErrorInfo] = {}
        self.handles = HandleTable()
        if replay is not None:
            for recorded in replay.entries:
                self.handles.labels.update(recorded.handles)
            self.handles.next_id = max(self.handles.labels, default=0) + 1
        self.running = 0  # host calls being served live
        # What the worker has sent, counted here too: its runtime refuses calls past
        # the limits, but a worker whose QuickJS broke would not (see _past_limits).
        self.calls_received = 0
        self.argument_bytes = 0
        self.t0 = 0.0

    @property
    def worker(self) -> WorkerProcess | None:
        """The worker running this session, while it runs."""
        return self.channel.worker if self.channel is not None else None

    # ------------------------------------------------------------ clocks
    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def guest_clock(self) -> float:
        return self.replay.elapsed_ms + self.elapsed_ms()

    # ------------------------------------------------------------ lifecycle
    async def execute(self) -> SessionOutcome:
        loop = self.loop = asyncio.get_running_loop()
        self.t0 = time.perf_counter()
        self.final = loop.create_future()
        self.host_calls = HostCallRunner(
            loop=loop,
            policy=self.policy,
            resume_guard=self.resume_guard,
            max_result_bytes=self.limits.max_host_result_bytes,
            max_sync_in_flight=self.limits.max_sync_calls_in_flight,
        )
        plan = self.replay.plan
        self.handle_calls = HandleCalls(
            self.handles,
            self.manifest,
            self.host_calls,
            lambda: [*self.ledger.values(), *(plan.entries if plan else ())],
        )
        cancel = self.hooks.cancel
        if cancel is not None and cancel.is_set():
            return self._complete(
                failure(ErrorCode.RUN_ABORTED, "The run was cancelled before it started.")
            )
        try:
            worker = self.pool.take()
        except (OSError, RuntimeError) as exc:  # out of processes, no Python to start...
            return self._complete(
                failure(ErrorCode.RUN_WORKER_CRASHED, f"Could not start a sandbox process: {exc}.")
            )
        self.channel = WorkerChannel(
            loop,
            worker,
            on_message=self._on_message,
            on_eof=self._on_eof,
            on_garbled=self._on_garbled,
        )
        self.answers.channel = self.channel
        self.channel.send(frames.run_frame(self._job()))
        deadline = loop.call_later(self.limits.timeout_ms / 1000, self._on_timeout)
        watcher: asyncio.Task[Any] | None = None
        if cancel is not None:
            watcher = loop.create_task(cancel.wait())
            watcher.add_done_callback(self._on_cancel)
        try:
            outcome = await self.final
        except asyncio.CancelledError:
            self._end_worker()
            self.cancelled.set()
            self._abandon_calls("the run's task was cancelled")
            raise
        finally:
            deadline.cancel()
            if watcher is not None:
                watcher.cancel()
            self._end_worker()
        if self.tasks:
            if self.aborted:
                await self._stop_calls()
            else:
                await self._settle_calls(stopped=self.ended_by_us or outcome.kind == "fail")
        return self._complete(outcome)

    def _job(self) -> dict[str, Any]:
        limits = self.limits
        plan = self.replay.plan
        values_wire = self.spec.values_wire
        return {
            "source": self.spec.source,
            "memory_bytes": limits.memory_bytes,
            "stack_bytes": limits.stack_bytes,
            "timeout_ms": limits.timeout_ms,
            "max_value_bytes": limits.max_value_bytes,
            "max_argument_bytes": limits.max_host_argument_bytes,
            "max_argument_bytes_per_run": limits.max_host_argument_bytes_per_run,
            "guest": json.dumps(
                {
                    "namespaces": self.manifest.tree,
                    "maxLogLines": limits.max_log_lines,
                    "maxLogLineBytes": limits.max_log_line_bytes,
                    "maxValueBytes": limits.max_value_bytes,
                    "maxHostCalls": limits.max_host_calls,
                    "maxInFlight": limits.max_host_calls_in_flight,
                    "maxArgumentBytes": limits.max_host_argument_bytes,
                    "maxArgumentBytesPerRun": limits.max_host_argument_bytes_per_run,
                    "clockMs": self.spec.clock_ms,
                    "seed": self.spec.seed,
                    # Replaying a run recorded when an awaited host call took three jobs.
                    "legacyAwait": plan is not None and plan.guest_runtime == THREE_JOB_AWAIT,
                    "values": [values_wire[0], values_wire[1:]] if values_wire else None,
                }
            ),
        }

    def _complete(self, outcome: SessionOutcome) -> SessionOutcome:
        outcome.logs = self.logs
        outcome.calls = self.audit.ordered()
        outcome.ledger = [self.ledger[k] for k in sorted(self.ledger)]
        outcome.settle_order = list(self.answers.settle_order)
        outcome.interrupts = list(self.interrupts)
        outcome.duration_ms = self.elapsed_ms()
        outcome.worker_start_ms = self.worker_start_ms
        outcome.elapsed_ms = self.guest_clock()
        outcome.executed = self.host_calls.executed
        outcome.host_errors = self.host_errors
        outcome.prepared = self.prepared
        return outcome

    async def _settle_calls(self, *, stopped: bool) -> None:
        """The run has ended with host calls still running: it was stopped (its
        deadline passed, it was cancelled, the sandbox died), or the snippet
        returned without awaiting them. Give them the grace period (and, if the
        snippet just returned, the rest of its deadline) to finish, so the audit
        says what really happened. They can see `context.cancelled`."""
        pending = [t for t in self.tasks.values() if not t.done()]
        if not pending:
            return
        wait = self.limits.host_call_grace_ms / 1000
        if not stopped:
            wait += max(self.limits.timeout_ms / 1000 - (time.perf_counter() - self.t0), 0)
        self.cancelled.set()
        try:
            await asyncio.wait(pending, timeout=wait)
        except asyncio.CancelledError:
            self._abandon_calls("the run's task was cancelled")
            raise
        self._abandon_calls(
            f"still running {self.limits.host_call_grace_ms:,} ms after the run ended"
        )

    async def _stop_calls(self) -> None:
        """The run was cancelled with host calls still running: it answers now, with
        no grace. Async calls are cancelled the Python way (their task gets
        CancelledError; one that catches it may still finish, and its end is
        recorded); a sync call on its thread cannot be stopped: it is left
        `settled: false`, and its real end reaches on_call when it comes."""
        self.cancelled.set()
        stoppable = [
            task
            for seq, task in self.tasks.items()
            if not task.done() and seq not in self.host_calls.on_threads
        ]
        for task in stoppable:
            task.cancel()
        if stoppable:
            # A cancelled task ends in a turn or two of the loop; one that ignores
            # the cancellation is not waited for.
            wait = min(self.limits.host_call_grace_ms / 1000, CANCEL_WAIT_S)
            await asyncio.wait(stoppable, timeout=wait)
        self._abandon_calls("the run was cancelled while it ran")

    def _abandon_calls(self, why: str) -> None:
        """Calls still running: their outcome is unknown (`settled: false`), never a failure.
        An async one is cancelled; a sync one on its thread runs on, and its end,
        when it comes, is recorded and reaches on_call (see CallAudit.finish)."""
        for seq, task in self.tasks.items():
            if task.done():
                continue
            self.audit.abandon(seq, why)
            if seq not in self.host_calls.on_threads:
                task.cancel()  # an async host function stops here

    def _end_worker(self) -> WorkerProcess | None:
        channel = self.channel
        if channel is None or not channel.is_open:
            return None
        self.pool.release()
        return channel.close()

    def _resolve(self, outcome: SessionOutcome) -> None:
        if self.final is not None and not self.final.done():
            self.final.set_result(outcome)

    def _end(self, code: ErrorCode, message: str, **extra: Any) -> None:
        """End the run now, for a reason of the parent's: the worker goes, calls stop."""
        if self.final is None or self.final.done():
            return
        self.ended_by_us = True
        self._end_worker()
        self.cancelled.set()  # host functions still running may look, and stop
        self._resolve(failure(code, message, **extra))

    def _on_timeout(self) -> None:
        worker = self.worker
        why = worker.stalled() if worker is not None else None
        started = self.worker_start_ms is not None
        if why is None and not started and self.limits.timeout_ms >= NEVER_STARTED_MS:
            why = f"it never answered in the run's {self.limits.timeout_ms:,} ms"
        if why is not None:
            # Not a slow snippet: the sandbox process could not run it (stopped,
            # starved, or its template stuck). The pool replaces a stuck template.
            if started:
                message = f"The sandbox process stopped responding: {why}. " + (
                    "The calls listed did happen." if self.audit.calls else "No host call ran."
                )
            else:
                message = f"The sandbox process did not start: {why}. Nothing of the snippet ran."
            self._end(ErrorCode.RUN_WORKER_CRASHED, message, hint=WORKER_STALLED_HINT)
            return
        self._end(
            ErrorCode.RUN_TIMEOUT,
            f"The run passed its deadline of {self.limits.timeout_ms:,} ms and was stopped.",
            timeout_ms=self.limits.timeout_ms,
        )

    def _on_cancel(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and self.final is not None and not self.final.done():
            self.aborted = True
            self._end(ErrorCode.RUN_ABORTED, "The run was cancelled.")

    def _on_garbled(self, exc: Exception) -> None:
        self._resolve(
            failure(
                ErrorCode.RUN_WORKER_CRASHED,
                f"The sandbox sent a message the host could not read: {exc!r}",
            )
        )
        self._end_worker()

    def _on_eof(self, worker: WorkerProcess) -> None:
        self._end_worker()
        if self.final is None or self.final.done() or self.ended_by_us:
            return
        status = worker.exit_status()
        if status is not None and status < 0:
            try:
                how = f"signal {signal.Signals(-status).name}"
            except ValueError:
                how = f"signal {-status}"
        else:
            how = f"exit code {status}"
        self.cancelled.set()
        self._resolve(
            failure(ErrorCode.RUN_WORKER_CRASHED, f"The sandbox process died unexpectedly ({how}).")
        )

    # ------------------------------------------------------------ messages
    def _on_message(self, message: frames.WorkerMessage) -> None:
        match message:
            case frames.HostCall(seq, path, wire, nbytes):
                if not self._past_limits(seq, path, wire, nbytes):
                    self._on_host_call(seq, path, wire)
            case frames.RefusedCall(seq, path, code, text):
                self.audit.refused(seq, path, code, text)
            case frames.LogBatch(lines):
                self._on_logs(lines)
            case frames.Idle(stats):
                self._on_idle(stats)
            case frames.ValueChunk(text):
                self.value_chunks.append(text)
            case frames.Done(report, value_text):
                self._resolve(SessionOutcome("done", report, value_text, self.value_chunks))
            case frames.Fail(report):
                self._resolve(SessionOutcome("fail", report))
            case frames.Ready():
                self.worker_start_ms = round(self.elapsed_ms(), 3)
            case frames.Prepared(fields, code):
                self.prepared = PreparedSource.from_wire(fields, code)
            case frames.Internal(text):
                self._resolve(
                    failure(
                        ErrorCode.RUN_WORKER_CRASHED,
                        "The sandbox could not start: " + text.split("\n", 1)[0],
                    )
                )

    def _on_logs(self, lines: list[tuple[int, str]]) -> None:
        at_ms = round(self.elapsed_ms(), 3)
        levels = frames.LOG_LEVELS
        rewrite, prepared = self.hooks.rewrite_log, self.prepared
        for level, text in lines:
            if rewrite is not None and prepared is not None and "<input>:" in text:
                text = rewrite(text, prepared)
            line = LogLine(
                level=levels[level] if 0 <= level < len(levels) else "log",
                text=text,
                at_ms=at_ms,
            )
            self.logs.append(line)
            self._emit(self.hooks.on_log, line)

    def _on_idle(self, stats: dict[str, Any]) -> None:
        """The worker has run out of work. If no host call can still answer it,
        the run is interrupted (pending approvals) or stuck (a promise that
        nothing will settle)."""
        if (
            self.channel is None
            or not self.channel.is_open
            or self.final is None
            or self.final.done()
        ):
            return
        if not self.replay.done:
            self._end_worker()
            self._resolve(
                failure(
                    ErrorCode.RUN_REPLAY_MISMATCH,
                    "On replay, the snippet stopped before making the calls it made the first "
                    "time: it did not repeat what it did before.",
                )
            )
            return
        if self.interrupts:
            self._resolve(SessionOutcome("interrupted"))
            return
        if stats and near_memory_limit(stats, self.limits.memory_bytes):
            # Out of memory inside a promise job can leave nothing to report it.
            self._resolve(failure(ErrorCode.RUN_MEMORY_EXCEEDED, "The sandbox ran out of memory."))
            return
        self._resolve(
            failure(
                ErrorCode.RUN_EXCEPTION,
                "The snippet is waiting for a promise that nothing will ever settle (no host "
                "call is running): await host calls or resolve your own promises.",
            )
        )

    def _emit_call(self, record: CallRecord) -> None:
        self._emit(self.hooks.on_call, record)

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

    # ------------------------------------------------------------ host calls
    def _past_limits(self, seq: int, path: str, wire: str, nbytes: int) -> bool:
        """Whether this call breaks a limit the guest runtime enforces; if so the run
        ends here, nothing of the call runs, and the audit says why. A worker
        that follows its runtime never gets here: the guest refuses such calls
        itself (a catchable error) and never sends them."""
        limits = self.limits
        self.calls_received += 1
        self.argument_bytes += nbytes
        code, why = ErrorCode.RUN_BRIDGE_LIMIT, None
        if seq in self.ledger or seq in self.audit:
            code, why = ErrorCode.RUN_WORKER_CRASHED, f"sent host call #{seq} twice"
        elif self.calls_received > limits.max_host_calls or seq > limits.max_host_calls:
            why = f"sent more than max_host_calls ({limits.max_host_calls:,}) host calls"
        elif self.calls_received - self.answers.sent > limits.max_host_calls_in_flight:
            why = (
                f"had more than max_host_calls_in_flight ({limits.max_host_calls_in_flight:,}) "
                "host calls at once"
            )
        elif nbytes > limits.max_host_argument_bytes:
            code = ErrorCode.RUN_ARGUMENT_TOO_LARGE
            why = (
                f"sent {path}() {nbytes:,} bytes of arguments, over max_host_argument_bytes "
                f"({limits.max_host_argument_bytes:,})"
            )
        elif self.argument_bytes > limits.max_host_argument_bytes_per_run:
            code = ErrorCode.RUN_ARGUMENT_TOO_LARGE
            why = (
                f"sent more than max_host_argument_bytes_per_run "
                f"({limits.max_host_argument_bytes_per_run:,}) bytes of arguments"
            )
        if why is None:
            return False
        if seq not in self.audit:
            record = self.audit.make(
                seq, path, wire[: PREVIEW_TEXT_LIMIT + 1], None, self.elapsed_ms()
            )
            self.audit.emit(record)
            self.audit.finish(
                record, ok=False, error_code=code, message=f"not run: the sandbox {why}"
            )
        self._end(
            code,
            f"The sandbox {why}, past what its own runtime allows: it misbehaved, so the run "
            f"was stopped, and {path}() was not run.",
            path=path,
        )
        return True

    def _on_host_call(self, seq: int, path: str, wire: str) -> None:
        try:
            args = codec.decode(wire, levels=ARGUMENTS_DEPTH)
        except Exception:
            args = None
        on_handle = split_handle_path(path)
        # A call on a handle is recorded under the handle's label: api.project(…).functions.list
        shown = f"{self.handles.label(on_handle[0])}.{on_handle[1]}" if on_handle else path
        entry = LedgerEntry(seq=seq, path=path, args_digest=args_digest(wire))
        old = self.replay.recorded(seq)
        fn = self.manifest.functions.get(path)
        if old is None and isinstance(args, list) and (fn is not None or on_handle is not None):
            # The common case: a live call, not recorded yet (see _start_live).
            self.ledger[seq] = entry
            self._start_live(fn, on_handle, shown, args, None, entry, wire, self.elapsed_ms())
            return
        record = self.audit.make(seq, shown, wire, args, self.elapsed_ms())
        if old is not None:
            what = self.replay.mismatch(seq, path, entry.args_digest)
            if what is not None:
                self._replay_mismatch(record, path, old, what)
                return
            if old.settled:
                self._replay_settled(record, old)
                return
        self.audit.emit(record)
        self.ledger[seq] = entry
        if fn is None and on_handle is None:
            self._unknown_path(record, entry, path)
            return
        if not isinstance(args, list):
            self._unreadable_arguments(entry, path)
            return
        resume = None
        if old is not None and old.interruption_id:
            resume = self._resumed(record, entry, old)
            if resume is None:
                # Still undecided: the call is interrupted again, with the same id.
                self.interrupts.append(
                    PendingInterrupt(old.interruption_id, seq, shown, args, old.payload)
                )
                record.decision = "pending"
                record.ok = None
                self._tell_interrupted(seq)
                return
        self._start_live(fn, on_handle, shown, args, resume, entry, wire)

    def _replay_mismatch(self, record: CallRecord, path: str, old: LedgerEntry, what: str) -> None:
        """On replay, the guest made another call than the record has here: the run ends."""
        self.audit.emit(record)
        self.audit.finish(
            record,
            ok=False,
            error_code=ErrorCode.RUN_REPLAY_MISMATCH,
            message=f"replay expected {old.path}() here",
        )
        self._end_worker()
        self._resolve(
            failure(
                ErrorCode.RUN_REPLAY_MISMATCH,
                f"On replay, call #{record.seq} was {path}() with {what} than the recorded "
                f"{old.path}(): the snippet did not repeat what it did before.",
                path=path,
            )
        )

    def _replay_settled(self, record: CallRecord, old: LedgerEntry) -> None:
        """Finished before: answered from the ledger, in its recorded order."""
        record.replayed = True
        self.ledger[old.seq] = old
        self.audit.emit(record)
        self._answer_recorded(self.replay.ask(old))

    def _unknown_path(self, record: CallRecord, entry: LedgerEntry, path: str) -> None:
        # The guest's namespaces refuse unknown members before they get here;
        # this is a worker that does not follow the protocol.
        poll = self._finish_live(
            entry,
            failed(ErrorCode.RUN_UNKNOWN_MEMBER, f"The host has no {path}."),
        )
        record.error_message = (
            "unknown path; did you mean "
            f"{', '.join(did_you_mean(self.manifest.paths, path)) or 'nothing close'}"
        )
        if poll:
            self.answers.poll_next()

    def _unreadable_arguments(self, entry: LedgerEntry, path: str) -> None:
        poll = self._finish_live(
            entry,
            failed(
                ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
                f"The arguments to {path}() could not be read.",
            ),
        )
        if poll:
            self.answers.poll_next()

    def _resumed(self, record: CallRecord, entry: LedgerEntry, old: LedgerEntry) -> Resume | None:
        """A call that was interrupted before, on a resumed run: its decision as the
        function's `Resume`, or None if the resume does not answer it yet."""
        assert old.interruption_id is not None
        entry.interruption_id = old.interruption_id
        record.interruption_id = old.interruption_id
        has, value = self.replay.resolution(old.interruption_id)
        entry.payload = old.payload
        entry.by_policy = old.by_policy
        if not has:
            return None
        record.decision = "pending"
        plan = self.replay.plan
        if plan is not None and plan.issued_at is not None:
            record.wait_ms = round(max(0.0, time.time() - plan.issued_at) * 1000, 1)
        return Resume(old.interruption_id, old.payload, value, old.by_policy)

    def _start_live(
        self,
        fn: HostFunction | None,
        on_handle: tuple[int, str] | None,
        shown: str,
        args: list[Any],
        resume: Resume | None,
        entry: LedgerEntry,
        wire: str,
        started_at_ms: float | None = None,
    ) -> None:
        """Serve a live call. With `started_at_ms`, it has no record yet: one of
        many gets it now; a lone one when it turns out to run on, or, if it ends
        in its first step, once its answer has gone (see CallAudit.ensure)."""
        seq = entry.seq
        ctx = HostFunctionContext(
            shown, self.spec.logical_run_id, seq, args, self.cancelled, resume
        )
        entry.args_wire = wire  # kept past the call only if its result makes handles
        self.running += 1
        if self.running == 1 and not self.channel_frames_left():
            # A lone call (the guest awaits it): answered in this turn if it can be.
            if started_at_ms is not None:
                self.audit.defer(seq, shown, wire, args, started_at_ms)
            serve = self._serve(fn, on_handle, ctx, entry, lone=True)
            task = start_call(self.loop, serve, bind(ctx))
            if task is None:
                return  # answered, and recorded after its answer went
            self.tasks[seq] = task
            self.audit.ensure(seq)  # running on: on_call hears of it now
            return
        if started_at_ms is not None:
            self.audit.emit(self.audit.make(seq, shown, wire, args, started_at_ms))
        # One of many: their tasks start together, and their answers go together.
        serve = self._serve(fn, on_handle, ctx, entry)
        self.tasks[seq] = self.loop.create_task(serve, context=bind(ctx))

    def channel_frames_left(self) -> int:
        return self.channel.frames_left if self.channel is not None else 0

    async def _serve(
        self,
        fn: HostFunction | None,
        on_handle: tuple[int, str] | None,
        ctx: HostFunctionContext,
        entry: LedgerEntry,
        lone: bool = False,
    ) -> None:
        # `running` was counted when the task was made: an idle frame may come first.
        # A cancelled call (abandoned after the grace) was recorded by _abandon_calls.
        poll = False
        try:
            try:
                if on_handle is not None:
                    fn = await self.handle_calls.function(*on_handle, ctx.path)
                if entry.args_wire is not None:
                    await self.handle_calls.resolve_arguments(ctx.args, entry.args_wire)
                assert fn is not None
                outcome = await self.host_calls.run(fn, ctx, self.handles, lone=lone)
            except GuardRefused as refused:
                self._refused_by_guard(self.audit.ensure(entry.seq), str(refused))
                return
            except HandleProblem as problem:
                poll = self._finish_live(entry, failed(problem.code, problem.message))
                return
            except asyncio.CancelledError:
                self.audit.cancelled(entry.seq)
                raise
            if outcome.interrupted:
                entry.by_policy = outcome.by_policy or entry.by_policy
                self._on_interrupt(ctx, self.audit.ensure(entry.seq), entry, outcome.payload)
            else:
                poll = self._finish_live(entry, outcome)
        finally:
            ctx.settle()  # work the function left running cannot reach this call any more
            self.running -= 1
            # A finished call leaves the table: its task's context holds its arguments.
            self.tasks.pop(ctx.request_index, None)
            if entry.seq in self.audit.unrecorded:  # ended some other way: still in the audit
                self.audit.ensure(entry.seq)
            if poll:  # only now: the guest's next call finds this one ended and counted out
                self.answers.poll_next()

    def _refused_by_guard(self, record: CallRecord, why: str) -> None:
        if record.ok is None:
            self.audit.finish(
                record,
                ok=False,
                error_code=ErrorCode.RUN_CONTINUATION_INVALID,
                message=f"not run: {why}",
            )
        self._end(ErrorCode.RUN_CONTINUATION_INVALID, f"Cannot resume: {why}. Nothing was run.")

    def _finish_live(self, entry: LedgerEntry, outcome: CallOutcome) -> bool:
        """A live call ended: keep it in the ledger, answer the guest, record it.
        The answer goes before the audit's record is written (or made): the guest
        works on it meanwhile (both happen before anything else can). True if the
        caller should then poll for the guest's next message (`AnswerOrder.poll_next`)."""
        seq = entry.seq
        made = self.audit.get(seq)
        decision = outcome.decision or (made.decision if made is not None else None)
        if outcome.host_error is not None:
            self.host_errors[seq] = outcome.host_error
        entry.handles = outcome.handles_made
        if not entry.handles:
            entry.args_wire = None
        entry.ok = outcome.ok
        entry.wire = outcome.wire
        entry.decision = decision
        poll = self.answers.live(Answer(seq, outcome.ok, outcome.wire[0], outcome.wire[1:], entry))
        record = self.audit.ensure(seq)
        if record.decision != decision:
            record.decision = decision
        record.traceback = outcome.traceback
        self.audit.finish(
            record,
            ok=outcome.ok,
            error_code=outcome.error_code,
            message=outcome.message,
            started=outcome.started,
            result_text=outcome.result_text,
        )
        return poll

    def _on_interrupt(
        self, ctx: HostFunctionContext, record: CallRecord, entry: LedgerEntry, payload: Any
    ) -> None:
        if ctx.resume is not None:
            interruption_id = ctx.resume.interruption_id
        else:
            interruption_id = entry.interruption_id or "int_" + secrets.token_hex(8)
        entry.interruption_id = interruption_id
        entry.payload = payload
        record.decision = "pending"
        record.interruption_id = interruption_id
        fn = self.manifest.functions.get(ctx.path)  # None for a handle's method
        self.interrupts.append(
            PendingInterrupt(
                interruption_id,
                ctx.request_index,
                ctx.path,
                ctx.args,
                payload,
                idempotent=fn is not None and fn.idempotent,
            )
        )
        self.audit.emit(record)
        self._tell_interrupted(ctx.request_index)

    def _tell_interrupted(self, seq: int) -> None:
        # No answer goes back: the guest waits on this call until the run is resumed.
        if self.channel is not None:
            self.channel.send(frames.interrupted_frame(seq))

    # ------------------------------------------------------------ answers
    def _answer_recorded(self, entries: list[LedgerEntry]) -> None:
        poll = False
        for entry in entries:
            self.audit.replayed(entry)
            poll = self.answers.recorded(entry) or poll
        poll = self.answers.release() or poll
        if poll:
            self.answers.poll_next()


async def _swallow(awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception:
        traceback.print_exc()
