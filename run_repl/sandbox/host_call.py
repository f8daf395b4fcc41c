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
from .context import HostFunctionContext, Interrupt
from .errors import ApprovalDenied, CodecError, ErrorCode, HostError
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
            max_workers=64, thread_name_prefix="run-repl-host"
        )
    return _EXECUTOR


class GuardRefused(Exception):
    """The resume guard said no: the call did not run."""


class _Refused(ApprovalDenied):
    """The policy denies the path outright (nobody was asked)."""


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
    ) -> None:
        self.loop = loop
        self.policy = policy
        self.resume_guard = resume_guard
        self.guard_task: asyncio.Task[None] | None = None
        self.executed = 0  # host functions invoked live

    async def run(self, fn: HostFunction, ctx: HostFunctionContext) -> CallOutcome:
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
        decision: Decision | None = None
        try:
            if self.policy is not None:
                decision = self._apply_policy(fn, ctx)
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
            wire = codec.encode(result)
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
        return CallOutcome(ok=True, wire=wire, decision=decision, started=started)

    async def _invoke(self, fn: HostFunction, ctx: HostFunctionContext) -> Any:
        if fn.is_async:
            return await fn.fn(*ctx.args)
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

    def _apply_policy(self, fn: HostFunction, ctx: HostFunctionContext) -> Decision | None:
        """'allow' runs, 'deny' refuses, 'ask' interrupts for a person (or, on
        resume, runs or refuses as they decided)."""
        assert self.policy is not None
        mode = self.policy.mode(ctx.path)
        if mode == "allow":
            return None
        if mode == "deny":
            raise _Refused(f"{ctx.path}() is not allowed here (the approval policy denies it).")
        if ctx.resume is None:
            ctx.interrupt(
                {
                    "kind": "approval",
                    "message": approval_message(fn, ctx),
                    "path": ctx.path,
                    "args": ctx.args,
                }
            )
        assert ctx.resume is not None
        if ctx.resume.resolution is not True:
            raise ApprovalDenied(
                f"{ctx.path}() was not approved.", interruption_id=ctx.resume.interruption_id
            )
        # The decision has been used; the function itself must not see it as its own resume.
        ctx.resume = None
        return "approved"


def approval_message(fn: HostFunction, ctx: HostFunctionContext) -> str:
    spec = fn.approval
    message = getattr(spec, "message", None) or f"Allow {ctx.path}{codec.args_preview(ctx.args)}?"
    if callable(message):
        message = message(*ctx.args)
    return str(message)
