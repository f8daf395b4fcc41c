"""The result envelope: what a run gives back, as pydantic models.

`RunResult.model_dump()` is the JSON envelope. Optional fields that do not
apply are left out rather than written as null, so a reader (person or model)
sees only what happened; `value` is the one field that may be a real null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from .errors import ErrorCode, next_actions

Status = Literal["ok", "error", "interrupted"]
# What became of a call that needed a person's approval (the one type for it).
Decision = Literal["approved", "denied", "refused", "pending"]
LogLevel = Literal["log", "info", "warn", "error", "debug"]
ValueKind = Literal["undefined", "null", "boolean", "number", "string", "array", "object"]


@dataclass(frozen=True)
class HostErrorInfo:
    """A host's own error, as it should reach the envelope if the snippet does
    not catch it: its code, message and next actions, unchanged."""

    code: str
    message: str
    next_actions: list[dict[str, Any]] | None = None


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        keep_null, drop_false = self._keep_null(), self._drop_false()
        return {
            k: v
            for k, v in data.items()
            if (v is not None or k in keep_null) and (v is not False or k not in drop_false)
        }

    def _keep_null(self) -> frozenset[str]:
        return frozenset()

    def _drop_false(self) -> frozenset[str]:
        """Flags written only when true (an envelope that predates them reads the same)."""
        return frozenset()


class LogLine(_Envelope):
    """One console line: its level, its text (cut to max_log_line_bytes) and when."""

    level: LogLevel
    text: str
    at_ms: float


class CallRecord(_Envelope):
    """One host call in the audit trail.

    `on_call` sees it twice: when it starts (`ok` is None) and when it ends.
    """

    seq: int
    path: str
    args_preview: str
    ok: bool | None = None
    duration_ms: float | None = None
    error_code: ErrorCode | str | None = None
    error_message: str | None = None
    replayed: bool = False
    decision: Decision | None = None
    # False: the run ended (timeout, crash: after the grace period; cancel: at once) and
    # the call was still running, so whether its effect happened is unknown. Never
    # "failed". True: it was False, and the call has ended since (`ok` says how); on_call
    # hears of that end even after the run returned.
    settled: bool | None = None
    # The interruption this call is (or was) waiting on: set in the run that paused,
    # and in the resumed run that answers it.
    interruption_id: str | None = None
    started_at_ms: float = 0.0
    wait_ms: float | None = None
    # Full texts for a person looking at one call; left out of the envelope.
    args_text: str = Field("", exclude=True)
    result_text: str | None = Field(None, exclude=True)
    traceback: str | None = Field(None, exclude=True)


class NextAction(_Envelope):
    model_config = ConfigDict(extra="allow")

    type: Literal["edit_request", "retry", "run_again", "approve", "run_cli_command"]
    why: str | None = None


class RunErrorInfo(_Envelope):
    code: ErrorCode | str
    message: str
    name: str | None = None
    line: int | None = None
    column: int | None = None
    stack: str | None = None
    # RUN_EXCEPTION: the `code` the snippet's own error carried, if any (never an engine code).
    guest_code: str | None = None
    path: str | None = None
    did_you_mean: list[str] | None = None
    next_actions: list[NextAction] = Field(default_factory=list)


class ValueWindow(_Envelope):
    """The leading whole items of a value too big to show inline."""

    path: str
    items: list[Any]
    rest: dict[str, Any] | None = None
    # Other fields too long to show beside the items (more than half the window): by
    # name only; every page `expand` returns carries them whole in its `rest`.
    rest_omitted: list[str] | None = None


class Interruption(_Envelope):
    id: str
    path: str
    args: list[Any]
    payload: Any = None
    # The function is declared idempotent (`@idempotent`, `@requires_approval(idempotent=
    # True)`): it may run again with the same idempotency key. Written only when true.
    idempotent: bool = False

    def _keep_null(self) -> frozenset[str]:
        return frozenset({"payload"})

    def _drop_false(self) -> frozenset[str]:
        return frozenset({"idempotent"})


class RunStats(_Envelope):
    host_calls: int = 0
    host_calls_replayed: int = 0
    host_calls_executed: int = (
        0  # host functions this run invoked live (0: nothing of the host ran)
    )
    heap_bytes: int | None = None  # the sandbox's heap at the end (what memory_bytes limits)
    memory_peak_bytes: int | None = None  # the worker process's peak resident size
    memory_limit_bytes: int | None = None
    value_bytes: int | None = None
    worker_start_ms: float | None = None
    # "fork" (a child of the template process) or "spawn" (a process of its own)
    worker_mode: Literal["fork", "spawn"] | None = None
    # The OS walls the worker ran behind (see run_repl.sandbox.process.confine), in order
    confinement: list[str] | None = None


class RunResult(_Envelope):
    """What a run gives back. `status` says which of the other fields matter."""

    status: Status
    value: Any = None
    value_kind: ValueKind | None = None
    value_ref: str | None = None
    shown: int | None = None
    total: int | None = None
    value_window: ValueWindow | None = None
    logs: list[LogLine] = Field(default_factory=list)
    logs_ref: str | None = None
    logs_total: int = 0
    logs_dropped: int = 0
    calls: list[CallRecord] = Field(default_factory=list)
    duration_ms: float = 0.0
    stats: RunStats = Field(default_factory=RunStats)
    error: RunErrorInfo | None = None
    interruptions: list[Interruption] | None = None
    continuation: str | None = None
    next_actions: list[dict[str, Any]] | None = None  # for an interrupted run: what to decide
    run_id: str | None = None

    def _keep_null(self) -> frozenset[str]:
        # A windowed value leaves `value` out; an inline one keeps even null.
        if self.status == "ok" and self.value_window is None:
            return frozenset({"value"})
        return frozenset()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_tool_output(self, **options: Any) -> dict[str, Any]:
        """This result worded for a model: `{ok, result, logs?}` or `{ok: false, error}`
        (see run_repl.sandbox.tool_output)."""
        from .tool_output import to_tool_output  # the wording imports this module

        return to_tool_output(self, **options)


def plain_error(code: ErrorCode, message: str, **details: Any) -> RunErrorInfo:
    """An error the parent finds itself (before or around the guest), with its next step."""
    return RunErrorInfo(
        code=code,
        message=message,
        line=details.get("line"),
        column=details.get("column"),
        path=details.get("path"),
        next_actions=[NextAction(**a) for a in next_actions(code, **details)],
    )
