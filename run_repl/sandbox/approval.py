"""Approval: a person says yes or no before a sensitive host function runs.

Sugar over interrupts (the ask/deny/allow modes): `@requires_approval` marks a
function, or a runner's policy map says `ask`, `deny` or `allow` per path
(glob patterns allowed). `ask` interrupts the run with
`{kind: "approval", message, path, args}`; a `true` resolution runs the
function, anything else makes the guest's await throw RUN_APPROVAL_DENIED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, TypeVar, overload

from .idempotency import mark_idempotent

F = TypeVar("F", bound=Callable[..., Any])

Mode = Literal["ask", "deny", "allow"]
MODES: tuple[Mode, ...] = ("ask", "deny", "allow")


@dataclass(frozen=True)
class ApprovalSpec:
    # A fixed text, or a function of the call's arguments that writes one.
    message: str | Callable[..., str] | None = None


@overload
def requires_approval(fn: F) -> F: ...
@overload
def requires_approval(
    *, message: str | Callable[..., str] | None = None, idempotent: bool = False
) -> Callable[[F], F]: ...


def requires_approval(fn: Any = None, *, message: Any = None, idempotent: bool = False) -> Any:
    """Mark a host function as needing a person's approval before it runs.

    @requires_approval(message=lambda draft_id: f"Publish draft {draft_id}?")
    async def publish(draft_id: str) -> dict: ...

    `idempotent=True` also declares it safe to run again with the same
    `get_host_function_context().idempotency_key` (see `run_repl.idempotent`).
    """

    def mark(f: F) -> F:
        try:
            f.__run_repl_approval__ = ApprovalSpec(message)  # type: ignore[attr-defined]  # a mark on the function
        except AttributeError:
            raise TypeError(f"requires_approval cannot mark {f!r}: wrap it in a function") from None
        if idempotent:
            mark_idempotent(f)
        return f

    if fn is not None:
        return mark(fn)
    return mark


def check_policy(approvals: Mapping[str, str]) -> dict[str, Mode]:
    """A policy map, checked: every mode is 'ask', 'deny' or 'allow'."""
    for pattern, mode in approvals.items():
        if not isinstance(pattern, str) or mode not in MODES:
            raise ValueError(f"approvals[{pattern!r}] is {mode!r}: use 'ask', 'deny' or 'allow'.")
    return dict(approvals)  # type: ignore[arg-type]  # every mode was checked above


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which mode applies to a path: an exact entry of the map first, then the
    first glob that matches, else 'ask' for a @requires_approval function and
    'allow' for the rest."""

    rules: tuple[tuple[str, Mode], ...]
    decorated: frozenset[str]

    @classmethod
    def build(
        cls, approvals: Mapping[str, Mode], decorated: Iterable[str]
    ) -> ApprovalPolicy | None:
        """The policy for a run, or None when nothing needs one."""
        marked = frozenset(decorated)
        if not approvals and not marked:
            return None
        return cls(tuple(approvals.items()), marked)

    def mode(self, path: str) -> Mode:
        for pattern, mode in self.rules:
            if pattern == path:
                return mode
        for pattern, mode in self.rules:
            if fnmatchcase(path, pattern):
                return mode
        return "ask" if path in self.decorated else "allow"
