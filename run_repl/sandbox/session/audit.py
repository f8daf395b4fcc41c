"""The run's call audit: one `CallRecord` per host call, as `RunResult.calls`
and `on_call` tell it.

Records are made lazily for speed: a lone live call that ends in its first step
gets its record after its answer has gone (see `CallAudit.ensure`). Each change a
listener should hear of goes to `on_call` as its own copy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ErrorCode
from ..result import CallRecord
from ..resume.replay import LedgerEntry
from ..wire import codec
from .host_call import PREVIEW_TEXT_LIMIT

__all__ = ["CallAudit"]


@dataclass(slots=True)
class _Unrecorded:
    """A live call whose audit record is not made yet (see CallAudit.ensure)."""

    shown: str
    wire: str
    args: list[Any]
    started_at_ms: float


class CallAudit:
    """The records of one run's host calls, by seq; `clock` is the run's
    milliseconds so far, `notify` hears each change (a copy), if anyone listens."""

    def __init__(
        self, clock: Callable[[], float], notify: Callable[[CallRecord], None] | None
    ) -> None:
        self.calls: dict[int, CallRecord] = {}
        self.unrecorded: dict[int, _Unrecorded] = {}
        self._clock = clock
        self._notify = notify

    def __contains__(self, seq: int) -> bool:
        """Whether the audit knows this call (recorded, or about to be)."""
        return seq in self.calls or seq in self.unrecorded

    def __bool__(self) -> bool:
        return bool(self.calls) or bool(self.unrecorded)

    def get(self, seq: int) -> CallRecord | None:
        return self.calls.get(seq)

    def emit(self, record: CallRecord) -> None:
        # Each event gets its own copy: a listener may keep the start and the end.
        if self._notify is not None:
            self._notify(record.model_copy())

    def make(self, seq: int, shown: str, wire: str, args: Any, started_at_ms: float) -> CallRecord:
        """A call's audit record, in the audit from now on."""
        record = self.calls[seq] = CallRecord(
            seq=seq,
            path=shown,
            args_preview=_args_preview(wire, args),
            started_at_ms=round(started_at_ms, 3),
            args_text=wire[1 : PREVIEW_TEXT_LIMIT + 1],
        )
        return record

    def defer(self, seq: int, shown: str, wire: str, args: list[Any], started_at_ms: float) -> None:
        """A lone live call: its record is made when first needed (see ensure)."""
        self.unrecorded[seq] = _Unrecorded(shown, wire, args, started_at_ms)

    def ensure(self, seq: int) -> CallRecord:
        """The call's audit record. A live call's is made when it is first needed:
        when the call turns out to run on (on_call then hears it start), or when
        it ended in its first step, after its answer went (on_call then hears its
        start and its end at once). Either way, before anything else happens."""
        record = self.calls.get(seq)
        if record is None:
            facts = self.unrecorded.pop(seq)
            record = self.make(seq, facts.shown, facts.wire, facts.args, facts.started_at_ms)
            self.emit(record)
        return record

    def ordered(self) -> list[CallRecord]:
        """Every call's record, by seq (the lazy ones made now)."""
        for seq in list(self.unrecorded):
            self.ensure(seq)
        return [self.calls[k] for k in sorted(self.calls)]

    def finish(
        self,
        record: CallRecord,
        *,
        ok: bool,
        error_code: ErrorCode | str | None = None,
        message: str | None = None,
        started: float | None = None,
        result_text: str | None = None,
    ) -> None:
        """The call has ended: how, and how long it took."""
        if record.settled is False:
            # The run gave up on this call, and now it has ended: the audit (and
            # on_call, even after the run returned) says how.
            record.settled = True
            record.error_message = None
        record.ok = ok
        if started is not None:
            record.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        else:
            record.duration_ms = round(self._clock() - record.started_at_ms, 3)
        if error_code is not None:
            record.error_code = error_code
        if message is not None and not ok:
            record.error_message = message
        if result_text is not None:
            record.result_text = result_text
        self.emit(record)

    def refused(self, seq: int, path: str, code: str, message: str) -> None:
        """A call the guest refused before sending it: in the audit, never run."""
        if seq in self.calls:
            return
        record = CallRecord(
            seq=seq,
            path=path,
            args_preview="(…)",
            started_at_ms=round(self._clock(), 3),
            ok=False,
            duration_ms=0.0,
            error_code=code if code in ErrorCode.__members__ else ErrorCode.RUN_EXCEPTION,
            error_message=message[:PREVIEW_TEXT_LIMIT],
        )
        self.calls[seq] = record
        self.emit(record)

    def abandon(self, seq: int, why: str) -> None:
        """A call still running when the run gave up on it: its outcome is unknown
        (`settled: false`), never a failure (see finish, for when it ends)."""
        record = self.calls.get(seq)
        if record is not None and record.ok is None and record.settled is None:
            record.settled = False
            record.error_message = f"{why}: whether it took effect is unknown"
            record.duration_ms = round(self._clock() - record.started_at_ms, 3)
            self.emit(record)

    def cancelled(self, seq: int) -> None:
        """A live call's task was cancelled (the run was cancelled): it stopped."""
        record = self.calls.get(seq)
        if record is None and seq in self.unrecorded:
            record = self.ensure(seq)
        if record is None or record.ok is not None or record.settled is not None:
            return  # given up on already (its record says so) or ended
        if record.decision == "pending":
            return  # waiting for a decision, not running
        self.finish(
            record,
            ok=False,
            error_code=ErrorCode.RUN_ABORTED,
            message="cancelled with the run (its task got CancelledError)",
        )

    def replayed(self, entry: LedgerEntry) -> None:
        """A call answered from the ledger: what it did the first time."""
        record = self.calls[entry.seq]
        wire = entry.wire or "Jnull"
        record.ok = bool(entry.ok)
        record.duration_ms = 0.0
        record.replayed = True
        record.decision = entry.decision
        record.result_text = wire[1 : PREVIEW_TEXT_LIMIT + 1]
        if not entry.ok:
            record.error_code = _wire_code(entry.wire)
        self.emit(record)


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
