"""What a host function knows about the call it is serving.

`get_host_function_context()` works inside a host function, sync or async,
and in work it awaits; anywhere else it raises, and so does work the call left
running once the call has settled (Python copies context variables into the
tasks a function starts, so the engine ends each context when its call
settles). `interrupt(payload)` ends the run as `interrupted`; when the run
resumes, the same call is made again with `resume` set. `idempotency_key` names
the call across replays, resumes and takeovers (see `run_repl.sandbox.idempotency`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from dataclasses import dataclass, field
from typing import Any

from .idempotency import idempotency_key
from .wire import codec
from .wire.nesting import PAYLOAD_DEPTH


class Interrupt(BaseException):
    """Raised by `HostFunctionContext.interrupt`. A BaseException, so a host
    function's own `except Exception` does not swallow it."""

    def __init__(self, payload: Any) -> None:
        super().__init__("run interrupted")
        self.payload = payload


class CancelledFlag:
    """Set when the run is cancelled or times out. Usable from threads and
    from asyncio: `is_set()`, `wait_sync(timeout)`, `await wait()`."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._event.is_set()

    def __bool__(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        with self._lock:
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            loop.call_soon_threadsafe(lambda f=fut: f.done() or f.set_result(None))  # type: ignore[misc]  # mypy cannot type a lambda's default

    def wait_sync(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                return
            self._waiters.append((loop, fut))
        await fut


@dataclass(frozen=True)
class Resume:
    """How an interrupted call is answered when the run resumes."""

    interruption_id: str
    payload: Any
    resolution: Any
    by_policy: bool = False  # asked by the approval policy; decided before the function runs


@dataclass
class HostFunctionContext:
    path: str
    logical_run_id: str
    request_index: int
    args: list[Any]
    cancelled: CancelledFlag
    resume: Resume | None = None
    approval_wait_ms: float | None = None
    _interrupted: bool = field(default=False, repr=False)
    _settled: bool = field(default=False, repr=False)

    @property
    def idempotency_key(self) -> str:
        """A string naming this call of this run chain: the same on every replay, on the
        run resumed from a continuation (a new run id), and on another resume of that
        continuation (another process taking over a dead one's resume); different for
        every other call and every other run. Keep it with the call's effect and skip
        an effect already kept under it: the call then happens exactly once."""
        return idempotency_key(self.logical_run_id, self.request_index)

    def settle(self) -> None:
        """The call has its outcome: from now on nothing can fetch or act on this
        context (its fields stay readable, as a record of the call)."""
        self._settled = True

    def interrupt(self, payload: Any = None) -> None:
        """End the run as `interrupted`, with `payload` for whoever decides.

        Never returns. The payload must be data that can cross the boundary."""
        if self._settled:
            raise RuntimeError(
                f"interrupt() was called on the context of {self.path}(), a host call that "
                f"has ended: {_LIFETIME}"
            )
        try:
            codec.encode(payload, levels=PAYLOAD_DEPTH)
        except codec.CodecError as exc:
            raise TypeError(f"interrupt payload is not data: {exc}") from None
        self._interrupted = True
        raise Interrupt(payload)


_current: contextvars.ContextVar[HostFunctionContext | None] = contextvars.ContextVar(
    "run_repl_host_function_context", default=None
)


def get_host_function_context() -> HostFunctionContext:
    """The context of the host call being served. Raises outside a host call."""
    ctx = _current.get()
    if ctx is None:
        raise RuntimeError(
            "get_host_function_context() was called outside a host function call: call it "
            "from inside a function the sandbox is running."
        )
    if ctx._settled:
        raise RuntimeError(
            f"get_host_function_context() was called from work that the host call "
            f"{ctx.path}() left running, after that call had ended: {_LIFETIME}"
        )
    return ctx


_LIFETIME = (
    "a call's context lives only until the call returns. Await the work inside the "
    "call, or give work that outlives it what it needs (ctx.args, ...) as plain values."
)


def bind(ctx: HostFunctionContext) -> contextvars.Context:
    """A copy of the current context where `get_host_function_context()` is `ctx`."""
    copied = contextvars.copy_context()
    copied.run(_current.set, ctx)
    return copied
