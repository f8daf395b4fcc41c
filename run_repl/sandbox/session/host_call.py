"""Running one host call: check its arguments, apply the approval policy, call
the function (sync ones on a thread, async ones on the event loop), and turn
whatever happens into one `CallOutcome` for the guest and the audit.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
import threading
import time
import traceback
from asyncio.tasks import _enter_task, _leave_task  # Python 3.11's eager start (see start_call)
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any

from ..approval import ApprovalPolicy
from ..context import CancelledFlag, HostFunctionContext, Interrupt
from ..errors import ApprovalDenied, CodecError, ErrorCode, HostError, HostResultTooLarge
from ..handles import HandleTable
from ..result import Decision, HostErrorInfo
from ..wire import codec
from ..wire.nesting import MAX_SHOWN_NODES, cycle_in, expands_past
from .host_functions import HostFunction, check_arguments, js_parameters
from .host_threads import host_threads

PREVIEW_TEXT_LIMIT = 4 * 1024  # of a call's arguments and result kept for a person to read
# How long the loop waits on a lone sync call before going on (see _on_a_thread);
# it stops waiting while the calls take more than half of it.
SYNC_WAIT_S = 0.0002

# Awaited once per resumed run, before its first live host call; raising stops the run.
ResumeGuard = Callable[[], Coroutine[Any, Any, None]]


def start_call(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, None],
    context: contextvars.Context,
) -> asyncio.Task[None] | None:
    """Serve a call in a task of its own, whose first step is taken now (an eager
    task); None if the call finished in that step. Most host calls finish
    without waiting (a lookup, a cached value, an error): the guest gets its
    answer in this turn of the loop instead of the next. The function runs
    inside its task as before (`asyncio.current_task()`, `TaskGroup` and
    `asyncio.timeout` work from its first line)."""
    if sys.version_info >= (3, 12):
        task = asyncio.Task(coro, loop=loop, context=context, eager_start=True)  # type: ignore[call-arg]  # 3.12+; checked as 3.11
        return None if task.done() else task
    eager = _EagerStart(coro)
    task = loop.create_task(eager, context=context)
    outer = asyncio.current_task(loop)
    if outer is not None:
        _leave_task(loop, outer)
    _enter_task(loop, task)
    try:
        context.run(eager.first_step)
    finally:
        _leave_task(loop, task)
        if outer is not None:
            _enter_task(loop, outer)
    # Ended in that step (returned or raised): no task to keep, as 3.12's eager start.
    return None if eager.finished or eager.error is not None else task


class _EagerStart(Coroutine[Any, Any, None]):
    """Python 3.11's stand-in for an eager task: the task's coroutine, whose first
    step `start_call` takes at once. The task's own first step then only picks
    up where that left off: the future the call waits on, its end, or its error."""

    __slots__ = ("coro", "error", "finished", "handed_over", "waiting_on")

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self.coro = coro
        self.waiting_on: Any = None
        self.error: BaseException | None = None
        self.finished = False
        self.handed_over = False

    def first_step(self) -> None:
        try:
            self.waiting_on = self.coro.send(None)
        except StopIteration:
            self.finished = True
        except BaseException as exc:  # raised again in the task: reported as before
            self.error = exc

    def _take_over(self) -> Any:
        self.handed_over = True
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        if self.finished:
            raise StopIteration
        return self.waiting_on

    def send(self, value: Any) -> Any:
        if not self.handed_over:
            return self._take_over()
        return self.coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if not self.handed_over:
            self.handed_over = True
            if self.finished or self.error is not None:
                raise typ if val is None else val
            if isinstance(self.waiting_on, asyncio.Future):
                # Cancelled before the task's first step: cancel what the call waits on,
                # as a task cancels its own waiter (a semaphore's waiter then gives
                # nothing back); the task gets the CancelledError from it.
                self.waiting_on.cancel()
                return self.waiting_on
        return self.coro.throw(typ, val, tb) if val is not None else self.coro.throw(typ)

    def close(self) -> None:
        self.coro.close()

    def __await__(self) -> Generator[Any, Any, None]:
        raise TypeError("an eager host call is driven by its task only")


def _on_a_thread(
    loop: asyncio.AbstractEventLoop,
    fn: Callable[..., Any],
    args: list[Any],
    wait_s: float = 0.0,
) -> tuple[asyncio.Future[Any], list[float]]:
    """Call a sync host function on one of the process's host threads, in a copy of
    this context; the loop hears of its end once, directly (not through a
    concurrent future chained to an asyncio one: that costs more than a quick
    call itself). Returns the future and, once the function has ended, how long
    it ran (seconds, in a one-item list).

    With `wait_s`, the loop thread first waits that long for the end itself, the
    GIL released: a quick function's outcome is in the future when this returns,
    and the call goes on in the same turn. That saves the wake-up through the
    loop's self-pipe (20 us median here) and the later turn of the loop. Past
    the wait, the end comes through the loop as before."""
    future: asyncio.Future[Any] = loop.create_future()
    run = contextvars.copy_context().run
    handoff = _Handoff() if wait_s > 0 else None
    took = [0.0]

    def work() -> None:
        started = time.perf_counter()
        try:
            outcome = (True, run(fn, *args))
        except BaseException as exc:  # handed to the awaiting call, as the executor would
            outcome = (False, exc)
        took[0] = time.perf_counter() - started
        if handoff is not None and handoff.give(outcome):
            return
        try:
            loop.call_soon_threadsafe(_deliver, future, outcome)
        except RuntimeError:
            pass  # the loop has closed: nobody waits for this call any more

    host_threads().submit(work)
    if handoff is not None:
        handoff.wait(wait_s, future)
    return future, took


class _Handoff:
    """A sync call's outcome, handed straight to the loop thread while it waits.
    Exactly one of the two ends delivers it: the loop thread, if the host thread
    gave it while the loop thread still waited; else the host thread, through
    the loop."""

    __slots__ = ("mutex", "outcome", "ready", "waiting")

    def __init__(self) -> None:
        self.mutex = threading.Lock()
        self.ready = threading.Lock()
        self.ready.acquire()  # released when the outcome is given
        self.waiting = True
        self.outcome: tuple[bool, Any] = (False, None)

    def give(self, outcome: tuple[bool, Any]) -> bool:
        """On the host thread: True if the waiting loop thread takes the outcome."""
        with self.mutex:
            if not self.waiting:
                return False
            self.outcome = outcome
            self.ready.release()
            return True

    def wait(self, wait_s: float, future: asyncio.Future[Any]) -> None:
        """On the loop thread: deliver the outcome if it comes within `wait_s`.
        Whatever ends the wait (its time, a KeyboardInterrupt), an outcome given
        meanwhile is delivered; one given later comes through the loop."""
        got = False
        try:
            got = self.ready.acquire(timeout=wait_s)
        finally:
            if not got:
                with self.mutex:
                    self.waiting = False
                    got = self.ready.acquire(blocking=False)  # given since the wait ended
            if got:
                _deliver(future, self.outcome)


def _deliver(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # cancelled: the run ended (or its task was cancelled) meanwhile
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    elif isinstance(value, StopIteration):  # a future cannot hold one
        future.set_exception(RuntimeError(f"a host function raised {value!r}"))
    else:
        future.set_exception(value)


class GuardRefused(Exception):
    """The resume guard said no: the call did not run."""


class _Refused(ApprovalDenied):
    """The policy denies the path outright (nobody was asked)."""

    def __init__(
        self, message: str, *, details: Any = None, actions: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.details = details  # the snippet's caught error: e.details (`reason`: stable)
        self.actions = actions  # ... and e.nextActions


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
    next_actions: list[dict[str, Any]] | None = None,
) -> str:
    """The wire form of an error the guest's await throws."""
    body: dict[str, Any] = {"code": str(code), "message": message, "name": name}
    if host_code is not None:
        body["host_code"] = host_code
    if details is not None:
        body["details"] = details
    if next_actions is not None:
        body["next_actions"] = next_actions  # the snippet's caught error: e.nextActions
    # What cannot cross is left out, the host's own data first; the rest is text.
    for left_out in ((), ("next_actions",), ("details",), ("details", "next_actions")):
        try:
            return codec.encode({k: v for k, v in body.items() if k not in left_out})
        except CodecError:
            continue
    raise AssertionError("not reached: the remaining fields are text")


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
        # Calls (by seq) whose sync function is running on a host thread now: a
        # cancel cannot stop those, only wait for word of their end.
        self.on_threads: set[int] = set()
        self.sync_wait_s = SYNC_WAIT_S  # 0 while sync calls take long (see _invoke)

    async def run(
        self,
        fn: HostFunction,
        ctx: HostFunctionContext,
        handles: HandleTable | None = None,
        *,
        lone: bool = False,
    ) -> CallOutcome:
        """Serve one call. `lone`: the guest waits on this call alone (a sync
        function's end is then waited for on the loop thread, briefly)."""
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
            result = await self._invoke(fn, ctx, lone)
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
                details=getattr(denied, "details", None),
                next_actions=getattr(denied, "actions", None),
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
                next_actions=he.host_next_actions,
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

    async def _invoke(self, fn: HostFunction, ctx: HostFunctionContext, lone: bool = False) -> Any:
        if fn.is_async:
            return await fn.fn(*ctx.args)
        async with self.sync_slots:
            # Only a lone call is waited for: the guest waits on it and nothing else
            # of this run can go on meanwhile; calls made together run side by side.
            wait_s = self.sync_wait_s if lone else 0.0
            future, took = _on_a_thread(self.loop, fn.fn, ctx.args, wait_s)
            self.on_threads.add(ctx.request_index)
            try:
                result = await future
            finally:
                self.on_threads.discard(ctx.request_index)
                self.sync_wait_s = SYNC_WAIT_S if took[0] < SYNC_WAIT_S / 2 else 0.0
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
                # The call as the person saw it, so the denial says which one it was.
                raise ApprovalDenied(
                    f"{ctx.path}{codec.args_preview(list(ctx.args))} was not approved.",
                    interruption_id=resume.interruption_id,
                )
            return "approved"
        if mode == "allow":
            return None
        if expands_past(ctx.args):
            # The question must be shown whole; this one cannot be. A cycle is named as
            # one: written out it never ends, whatever its size.
            cycle = cycle_in(list(ctx.args))
            if cycle is not None:
                at, target = (_arg_path(p) for p in cycle)
                raise _Refused(
                    f"{ctx.path}() was refused without asking: its arguments refer back to "
                    f"themselves ({at} is {target} again), a cycle no question can show "
                    "whole. Pass a copy without the back-reference.",
                    details={"reason": "arguments_cyclic", "at": at, "refers_to": target},
                    actions=[
                        {
                            "type": "edit_request",
                            "why": f"Pass {ctx.path}() a copy of its arguments without the "
                            f"back-reference at {at}.",
                        }
                    ],
                )
            raise _Refused(
                f"{ctx.path}() was refused without asking: its arguments written out are "
                f"over {MAX_SHOWN_NODES:,} values (parts they share repeat each time), too "
                "many to show a person. Pass them without shared parts, or fewer.",
                details={"reason": "arguments_too_large_to_show"},
            )
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
        next_actions=[action],
        started=started,
    )
    outcome.error_code = ErrorCode.SECRET_REQUIRES_CLI
    outcome.host_error = HostErrorInfo(str(ErrorCode.SECRET_REQUIRES_CLI), message, [action])
    return outcome


def _arg_path(path: str) -> str:
    """`$[0].self` (a path in the argument list) as the snippet names it: `arguments[0].self`."""
    return "arguments" + path[1:]


def approval_message(fn: HostFunction, ctx: HostFunctionContext) -> str:
    spec = fn.approval
    message = getattr(spec, "message", None) or f"Allow {ctx.path}{codec.args_preview(ctx.args)}?"
    if callable(message):
        message = message(*ctx.args)
    return str(message)
