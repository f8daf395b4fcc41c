"""Host functions that may safely run again, and the key that lets a host dedupe a call.

A call's idempotency key (`get_host_function_context().idempotency_key`) is the same
for the same call of the same run chain: on every replay, on the run resumed from a
continuation (a new run id: the key comes from the chain's first run, which the
token carries), and on a second resume of that continuation by another process (a
takeover after its executor died). It differs between calls and between runs. A host
that records the key with the call's effect, and skips an effect it already has under
that key, gets each call exactly once.

`@idempotent` (or `@requires_approval(idempotent=True)`) declares that a function does
so: running it again with the same key does no harm. A resume taken over after its
first live call may then call it again instead of leaving the approval `unfinished`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])

MARK = "__run_repl_idempotent__"


@overload
def idempotent(fn: F) -> F: ...
@overload
def idempotent() -> Callable[[F], F]: ...


def idempotent(fn: Any = None) -> Any:
    """Declare that a host function may run again with the same idempotency key.

    @idempotent
    def set_status(order_id: str, status: str) -> None:
        db.upsert(key=get_host_function_context().idempotency_key, ...)
    """
    if fn is not None:
        return mark_idempotent(fn)
    return mark_idempotent


def mark_idempotent(f: F) -> F:
    try:
        setattr(f, MARK, True)
    except AttributeError:
        raise TypeError(f"idempotent cannot mark {f!r}: wrap it in a function") from None
    return f


def is_idempotent(fn: Any) -> bool:
    return getattr(fn, MARK, False) is True


def idempotency_key(logical_run_id: str, seq: int) -> str:
    """The key of call `seq` (its place among the run's host calls, which replay checks
    is the same call) of the run chain that began as `logical_run_id`."""
    return f"{logical_run_id}.call{seq}"
