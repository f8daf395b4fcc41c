"""Replay: the record of a run's host calls, and the cursor that answers a
resumed run from it.

A resumed run starts the snippet again from the top. Calls that finished the
first time are answered from the ledger, in the order they were first
answered, each once the guest has asked for it again; nothing of the host runs
for them. While recorded answers remain, live answers wait their turn, so the
guest sees events in the same order as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a type only: replaying needs no pydantic
    from ..result import Decision


def args_digest(wire: str) -> str:
    """What the ledger keeps of a call's arguments: enough to tell a different call.
    Short arguments are their own digest (no hashing on the common path)."""
    if len(wire) <= 32:
        return "=" + wire
    return hashlib.sha256(wire.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class LedgerEntry:
    """A host call as it happened: what the guest asked, and what it got."""

    seq: int
    path: str
    args_digest: str
    ok: bool | None = None
    wire: str | None = None  # mode + JSON text of the value or of the error
    elapsed_ms: float = 0.0  # the guest clock when it settled
    interruption_id: str | None = None
    payload: Any = None  # the interrupt's payload, for whoever decides
    by_policy: bool = False  # the approval policy interrupted it, not the function itself
    decision: Decision | None = None
    handles: dict[int, str] = field(default_factory=dict)  # handles its result made: id -> label
    args_wire: str | None = None  # kept only for a call that made handles: to make them again

    @property
    def settled(self) -> bool:
        return self.ok is not None


def handle_maker(entries: Iterable[LedgerEntry], hid: int) -> LedgerEntry | None:
    """The recorded call whose result made handle `hid`."""
    return next((e for e in entries if hid in e.handles), None)


@dataclass(frozen=True)
class PendingInterrupt:
    """A call waiting for a decision when the run ended."""

    id: str
    seq: int
    path: str
    args: list[Any]
    payload: Any
    idempotent: bool = False  # its function may run again with the same idempotency key


# How the guest runtime schedules an awaited host call; a replay must schedule it
# as the recorded run did, or calls made side by side may come in another order.
THREE_JOB_AWAIT = 1  # through a thenable, three jobs (run-repl before 2026-12-01)
GUEST_RUNTIME = 2  # as a native promise, one job
GUEST_RUNTIMES = (THREE_JOB_AWAIT, GUEST_RUNTIME)


@dataclass(frozen=True)
class ReplayPlan:
    """What a resumed run knows: finished calls, and answers for interrupted ones."""

    entries: list[LedgerEntry]
    settle_order: list[int]
    resolutions: Mapping[str, Any]
    elapsed_ms: float = 0.0
    issued_at: float | None = None  # when the run was interrupted: approval wait counts from it
    guest_runtime: int = GUEST_RUNTIME  # how the recorded run awaited host calls


@dataclass(frozen=True)
class Answer:
    """One call's answer for the guest (live or from the record)."""

    seq: int
    ok: bool
    mode: str
    body: str
    entry: LedgerEntry | None = None  # set for a live answer: its ledger entry


@dataclass
class ReplayCursor:
    """Answers a resumed run's recorded calls in their recorded order."""

    plan: ReplayPlan | None
    _next: int = 0  # index into plan.settle_order
    _asked: dict[int, LedgerEntry] = field(default_factory=dict)
    _given: set[int] = field(default_factory=set)
    _held: list[Answer] = field(default_factory=list)
    _by_seq: dict[int, LedgerEntry] = field(init=False)

    def __post_init__(self) -> None:
        self._by_seq = {e.seq: e for e in self.plan.entries} if self.plan else {}

    @property
    def resuming(self) -> bool:
        return self.plan is not None

    @property
    def done(self) -> bool:
        """No recorded answer is left to give."""
        return self.plan is None or self._next >= len(self.plan.settle_order)

    @property
    def waiting(self) -> bool:
        """Answers are queued (asked for but not yet due, or live ones held back)."""
        return bool(self._held or self._asked)

    @property
    def elapsed_ms(self) -> float:
        return self.plan.elapsed_ms if self.plan else 0.0

    def recorded(self, seq: int) -> LedgerEntry | None:
        return self._by_seq.get(seq)

    def mismatch(self, seq: int, path: str, digest: str) -> str | None:
        """Why call `seq` is not the call the record has there, or None."""
        old = self._by_seq.get(seq)
        if old is None:
            return None
        if old.path != path:
            return "another function"
        if old.args_digest != digest:
            return "other arguments"
        return None

    def resolution(self, interruption_id: str) -> tuple[bool, Any]:
        """(True, value) if the resume answers this interruption."""
        if self.plan is None or interruption_id not in self.plan.resolutions:
            return False, None
        return True, self.plan.resolutions[interruption_id]

    def ask(self, entry: LedgerEntry) -> list[LedgerEntry]:
        """The guest asked again for a call that finished before; the recorded
        answers now due, in order."""
        self._asked[entry.seq] = entry
        return self._due()

    def _due(self) -> list[LedgerEntry]:
        assert self.plan is not None
        order = self.plan.settle_order
        out: list[LedgerEntry] = []
        while self._next < len(order):
            seq = order[self._next]
            entry = self._asked.pop(seq, None)
            if entry is None:
                recorded = self._by_seq.get(seq)
                if seq in self._given or recorded is None or recorded.ok is None:
                    self._next += 1  # nothing to give for it
                    continue
                break  # not asked for yet
            self._next += 1
            self._given.add(seq)
            out.append(entry)
        return out

    def hold(self, answer: Answer) -> bool:
        """Keep a live answer back while recorded ones remain; False if it may go now."""
        if self.done:
            return False
        self._held.append(answer)
        return True

    def release_held(self) -> list[Answer]:
        """Live answers held back, once the record is exhausted."""
        if not self.done:
            return []
        held, self._held = self._held, []
        return held
