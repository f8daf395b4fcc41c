"""Running one host call: check its arguments, apply the approval policy, call
the function (sync ones on a thread, async ones on the event loop), and turn
whatever happens into one `CallOutcome` for the guest and the audit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from . import codec
from .approval import ApprovalPolicy
from .context import CancelledFlag, HostFunctionContext, Interrupt
from .errors import ApprovalDenied, CodecError, ErrorCode, HostError, HostResultTooLarge
from .handles import HandleTable
from .host_functions import HostFunction, check_arguments, js_parameters

PREVIEW_TEXT_LIMIT = 4 * 1024  # of a call's arguments and result kept for a person to read

Decision = Literal["approved", "denied", "refused", "pending"]
# Awaited once per resumed run, before its first live host call; raising stops the run.
ResumeGuard = Callable[[], Awaitable[None]]

_EXECUTOR: concurrent.futures.ThreadPoolExecutor | None = None


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    # Sync host functions run here, off the event loop; many may wait on I/O at once.
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = concurrent.futures.ThreadPoolExecutor(
            max_workers=128, thread_name_prefix="run-repl-host"
        )
    return _EXECUTOR


class GuardRefused(Exception):
    """The resume guard said no: the call did not run."""


class _Refused(ApprovalDenied):
    """The policy denies the path outright (nobody was asked)."""


@dataclass(frozen=True)
class HostErrorInfo:
    """A host's own error, as it should reach the envelope if the snippet does
    not catch it: its code, message and next actions, unchanged."""

    code: str
    message: str
    next_actions: list[dict[str, Any]] | None = None


@dataclass
class CallOutcome:
    """What came of one host call: the guest's answer, and the audit's facts."""

    ok: bool
    wire: str = ""  # mode + JSON text: the value, or the error {code, message, name, ...}
    error_code: ErrorCode | str | None = None
    message: str | None = None  # for the audit: the error as a person reads it
    traceback: str | None = None
    decision: Decision | None = None
    interrupted: bool = False
    payload: Any = None  # the interrupt's payload
    by_policy: bool = False  # the approval policy interrupted it (not the function itself)
    host_error: HostErrorInfo | None = None
    handles_made: dict[int, str] = field(default_factory=dict)  # id -> label
    started: float = field(default_factory=time.perf_counter)

    @property
    def result_text(self) -> str | None:
        return self.wire[1 : PREVIEW_TEXT_LIMIT + 1] if self.ok else None


def error_wire(
    code: ErrorCode | str,
    message: str,
    *,
    name: str = "HostFunctionError",
    host_code: str | None = None,
    details: Any = None,
) -> str:
    """The wire form of an error the guest's await throws."""
    body: dict[str, Any] = {"code": str(code), "message": message, "name": name}
    if host_code is not None:
        body["host_code"] = host_code
    if details is not None:
        body["details"] = details
    try:
        return codec.encode(body)
    except CodecError:
        body.pop("details", None)
        return codec.encode(body)


def failed(
    code: ErrorCode | str,
    message: str,
    *,
    audit: str | None = None,
    started: float | None = None,
    **wire_fields: Any,
) -> CallOutcome:
    outcome = CallOutcome(
        ok=False,
        wire=error_wire(code, message, **wire_fields),
        error_code=code,
        message=audit or message,
    )
    if started is not None:
        outcome.started = started
    return outcome


class HostCallRunner:
    """Runs a session's host calls: one per `run()`, each in its own task."""

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        policy: ApprovalPolicy | None,
        resume_guard: ResumeGuard | None,
        max_result_bytes: int,
        max_sync_in_flight: int,
    ) -> None:
        self.loop = loop
        self.policy = policy
        self.resume_guard = resume_guard
        self.max_result_bytes = max_result_bytes
        # A run's sync calls take at most this many threads of the shared pool,
        # so one busy run cannot starve another's calls.
        self.sync_slots = asyncio.Semaphore(max_sync_in_flight)
        self.guard_task: asyncio.Task[None] | None = None
        self.executed = 0  # host functions invoked live

    async def run(
        self, fn: HostFunction, ctx: HostFunctionContext, handles: HandleTable | None = None
    ) -> CallOutcome:
        started = time.perf_counter()
        problem = check_arguments(fn.fn, ctx.args)
        if problem is not None:
            # The call's shape is the snippet's business: say what the function takes.
            n = len(ctx.args)
            return failed(
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{ctx.path}{js_parameters(fn.fn)} cannot take {n} argument"
                f"{'s' if n != 1 else ''}: {problem}.",
                started=started,
            )
        if fn.cli_only is not None:
            return _cli_only(fn, ctx, started)
        decision: Decision | None = None
        try:
            try:
                decision = self._decide(fn, ctx)
            except Interrupt as it:
                return CallOutcome(
                    ok=False,
                    interrupted=True,
                    payload=it.payload,
                    by_policy=True,
                    decision="pending",
                    started=started,
                )
            if self.resume_guard is not None:
                await self._pass_guard()
            self.executed += 1
            result = await self._invoke(fn, ctx)
        except Interrupt as it:
            return CallOutcome(
                ok=False, interrupted=True, payload=it.payload, decision="pending", started=started
            )
        except ApprovalDenied as denied:
            outcome = failed(
                ErrorCode.RUN_APPROVAL_DENIED,
                denied.message,
                name="ApprovalDeniedError",
                started=started,
            )
            outcome.decision = "refused" if isinstance(denied, _Refused) else "denied"
            return outcome
        except HostError as he:
            outcome = failed(
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                he.message,
                audit=f"HostError: {he.message}",
                host_code=he.host_code,
                details=he.details,
                started=started,
            )
            # The audit carries the host's own code; so does the envelope, if the
            # snippet lets the error through.
            outcome.error_code = he.host_code or ErrorCode.RUN_HOST_FUNCTION_ERROR
            outcome.host_error = HostErrorInfo(
                str(outcome.error_code), he.message, he.host_next_actions
            )
            outcome.decision = decision
            return outcome
        except GuardRefused:
            raise
        except Exception as exc:
            outcome = failed(
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{ctx.path}() failed ({type(exc).__name__}).",
                audit=f"{type(exc).__name__}: {exc}",
                started=started,
            )
            outcome.traceback = "".join(traceback.format_exception(exc))
            outcome.decision = decision
            return outcome
        try:
            wire, made = self.encode_result(result, ctx.path, handles)
        except HostResultTooLarge as big:
            outcome = failed(
                ErrorCode.RUN_HOST_RESULT_TOO_LARGE,
                f"{ctx.path}() returned more than max_host_result_bytes "
                f"({big.limit:,} bytes as JSON; over it at {big.path}): ask for less per call.",
                name="HostResultTooLargeError",
                started=started,
            )
            outcome.decision = decision
            return outcome
        except Exception as exc:
            ce = (
                exc
                if isinstance(exc, CodecError)
                else CodecError(f"a value ({type(exc).__name__})", "$")
            )
            outcome = failed(
                ErrorCode.RUN_HOST_FUNCTION_ERROR,
                f"{ctx.path}() returned {ce.what} at {ce.path}, which cannot cross into the sandbox.",
                audit=str(ce),
                started=started,
            )
            outcome.decision = decision
            return outcome
        return CallOutcome(
            ok=True, wire=wire, decision=decision, started=started, handles_made=made
        )

    def encode_result(
        self, result: Any, path: str, handles: HandleTable | None
    ) -> tuple[str, dict[int, str]]:
        """The result's wire text, and the handles it made (registered in `handles`)."""
        if handles is None:
            return codec.encode(result, max_bytes=self.max_result_bytes), {}
        handles.label_prefix, handles.made = f"{path}(…)", []
        wire = codec.encode(result, max_bytes=self.max_result_bytes, handles=handles)
        return wire, {hid: handles.labels[hid] for hid in handles.made}

    async def remake(self, fn: HostFunction, args: list[Any]) -> Any:
        """Call again the function that made a handle (on resume, when a live call needs it)."""
        if self.resume_guard is not None:
            await self._pass_guard()
        self.executed += 1
        ctx = HostFunctionContext(fn.path, "", 0, args, CancelledFlag(), None)
        return await self._invoke(fn, ctx)

    async def _invoke(self, fn: HostFunction, ctx: HostFunctionContext) -> Any:
        if fn.is_async:
            return await fn.fn(*ctx.args)
        async with self.sync_slots:
            result = await self.loop.run_in_executor(
                _executor(), contextvars.copy_context().run, fn.fn, *ctx.args
            )
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _pass_guard(self) -> None:
        """The resume guard runs once, before the first live call; the others wait on it."""
        assert self.resume_guard is not None
        if self.guard_task is None:
            self.guard_task = self.loop.create_task(self.resume_guard())
        try:
            await asyncio.shield(self.guard_task)
        except Exception as exc:
            raise GuardRefused(str(exc) or type(exc).__name__) from exc

    def _decide(self, fn: HostFunction, ctx: HostFunctionContext) -> Decision | None:
        """Whether the call may run: 'allow' runs, 'deny' refuses, 'ask' interrupts
        for a person; on resume, what the person decided holds, whatever the
        policy says now (only a 'deny' is stronger than their yes)."""
        mode = self.policy.mode(ctx.path) if self.policy is not None else "allow"
        if mode == "deny":
            raise _Refused(f"{ctx.path}() is not allowed here (the approval policy denies it).")
        resume = ctx.resume
        if resume is not None and resume.by_policy:
            # The decision is used here: the function must not see it as its own resume.
            ctx.resume = None
            if resume.resolution is not True:
                raise ApprovalDenied(
                    f"{ctx.path}() was not approved.", interruption_id=resume.interruption_id
                )
            return "approved"
        if mode == "allow":
            return None
        ctx.interrupt(
            {
                "kind": "approval",
                "message": approval_message(fn, ctx),
                "path": ctx.path,
                "args": ctx.args,
            }
        )
        return None  # not reached: interrupt raises


def _cli_only(fn: HostFunction, ctx: HostFunctionContext, started: float) -> CallOutcome:
    """A function whose input or output is a one-time secret: refused before it runs,
    with the command that does the same for a person at a terminal."""
    spec = fn.cli_only
    command = spec.command(*ctx.args) if callable(spec.command) else spec.command
    message = (
        f"{ctx.path}() handles a one-time secret, so it runs only from the command line: "
        f"`{command}`."
    )
    action = {"type": "run_cli_command", "command": str(command), "why": spec.why}
    outcome = failed(
        ErrorCode.RUN_HOST_FUNCTION_ERROR,
        message,
        name="SecretRequiresCliError",
        host_code=str(ErrorCode.SECRET_REQUIRES_CLI),
        started=started,
    )
    outcome.error_code = ErrorCode.SECRET_REQUIRES_CLI
    outcome.host_error = HostErrorInfo(str(ErrorCode.SECRET_REQUIRES_CLI), message, [action])
    return outcome


def approval_message(fn: HostFunction, ctx: HostFunctionContext) -> str:
    spec = fn.approval
    message = getattr(spec, "message", None) or f"Allow {ctx.path}{codec.args_preview(ctx.args)}?"
    if callable(message):
        message = message(*ctx.args)
    return str(message)
