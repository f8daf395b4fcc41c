"""A finished session as the envelope a person or a model reads.

`build_envelope` turns the session's outcome into a `RunResult` (the value
inline or as a window, logs inline and the rest by ref, the calls, stats, the
error mapped to the user's text) plus what must be stored for `expand`. It
never raises for anything the guest sent: a report it cannot read becomes an
error envelope that keeps the audit trail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ErrorCode
from ..limits import Limits
from ..process.source import PreparedSource
from ..result import (
    Interruption,
    LogLine,
    RunResult,
    RunStats,
    ValueKind,
    ValueWindow,
    plain_error,
)
from ..wire.json_data import as_json_data
from ..wire.nesting import (
    MAX_DEPTH,
    PAYLOAD_DEPTH,
    ValueTooDeep,
    flatten_hint,
    loads,
)
from ..wire.result_store import StoredItems, new_ref
from ..wire.value_window import Window, chunk_texts, window_of_chunks, window_of_value
from .guest_errors import map_error
from .session import SessionOutcome

INLINE_LOGS = 50


@dataclass
class Envelope:
    """The result, and what to keep so its value and logs page later."""

    result: RunResult
    stored: list[StoredItems] = field(default_factory=list)
    log_lines: list[LogLine] | None = None  # to encode into the logs ref's chunks (off the loop)


def build_envelope(
    outcome: SessionOutcome,
    prepared: PreparedSource | None,
    limits: Limits,
    run_id: str,
    namespaces: Iterable[str] = (),
) -> Envelope:
    try:
        return _build(outcome, prepared, limits, run_id, namespaces)
    except Exception as exc:  # whatever the guest sent, the caller gets an envelope
        return Envelope(_unreadable(outcome, run_id, exc))


def _build(
    outcome: SessionOutcome,
    prepared: PreparedSource | None,
    limits: Limits,
    run_id: str,
    namespaces: Iterable[str],
) -> Envelope:
    report = outcome.report
    worker_stats = report.get("stats") or {}
    stats = RunStats(
        host_calls=len(outcome.calls),
        host_calls_replayed=sum(1 for c in outcome.calls if c.replayed),
        host_calls_executed=outcome.executed,
        heap_bytes=worker_stats.get("heap_bytes"),
        memory_peak_bytes=worker_stats.get("memory_peak_bytes"),
        memory_limit_bytes=limits.memory_bytes,
        value_bytes=report.get("value_bytes"),
        worker_start_ms=outcome.worker_start_ms,
        worker_mode=worker_stats.get("worker_mode"),
        confinement=worker_stats.get("confinement"),
    )
    envelope = Envelope(RunResult(status="error"))
    logs, logs_ref = outcome.logs, None
    if len(logs) > INLINE_LOGS:
        logs_ref = new_ref()
        envelope.stored.append(
            StoredItems(logs_ref, "$logs", len(logs), [], kind="logs", run_id=run_id)
        )
        envelope.log_lines = logs
        logs = logs[:INLINE_LOGS]
    dropped = int(report.get("logs_dropped") or 0)
    common: dict[str, Any] = {
        "run_id": run_id,
        "logs": logs,
        "logs_ref": logs_ref,
        "logs_total": len(outcome.logs) + dropped,
        "logs_dropped": dropped,
        "calls": outcome.calls,
        "duration_ms": round(outcome.duration_ms, 3),
        "stats": stats,
    }
    if outcome.kind == "done":
        if report.get("kind") == "undefined":
            envelope.result = RunResult(status="ok", value=None, value_kind="undefined", **common)
            return envelope
        window = _window(outcome)
        ref = new_ref()
        envelope.stored.append(
            StoredItems(ref, window.path, window.total, window.chunks, window.rest, run_id=run_id)
        )
        fields: dict[str, Any] = {"value_ref": ref, "shown": window.shown, "total": window.total}
        if window.inline:
            fields.update(value=window.value, value_kind=_value_kind(window.value))
        else:
            fields.update(
                value_kind=_kind_of_path(window.path),
                value_window=ValueWindow(
                    path=window.path,
                    items=window.items,
                    rest=window.window_rest,
                    rest_omitted=window.rest_omitted,
                ),
            )
        envelope.result = RunResult(status="ok", **fields, **common)
        return envelope
    if outcome.kind == "interrupted":
        envelope.result = RunResult(
            status="interrupted",
            interruptions=[
                Interruption(
                    id=i.id,
                    path=i.path,
                    args=[jsonable(a) for a in i.args],
                    payload=jsonable(i.payload, PAYLOAD_DEPTH),
                    idempotent=i.idempotent,
                )
                for i in outcome.interrupts
            ],
            **common,
        )
        return envelope
    error = map_error(
        report.get("error") or {},
        prepared,
        stats=worker_stats,
        memory_bytes=limits.memory_bytes,
        host_errors=outcome.host_errors,
        namespaces=namespaces,
    )
    envelope.result = RunResult(status="error", error=error, **common)
    return envelope


def _window(outcome: SessionOutcome) -> Window:
    report = outcome.report
    if report.get("mode") == "chunked":
        return window_of_chunks(
            report["path"], int(report["total"]), outcome.value_chunks, outcome.value_text or None
        )
    return window_of_value(loads(outcome.value_text or "null"))


def _unreadable(outcome: SessionOutcome, run_id: str, exc: Exception) -> RunResult:
    """The run ended, but its report could not be read (a value nested too
    deep, fields of the wrong type...): say so, and keep the audit trail."""
    if isinstance(exc, ValueTooDeep | RecursionError):
        path = exc.path if isinstance(exc, ValueTooDeep) else None
        error = plain_error(
            ErrorCode.RUN_VALUE_NOT_SERIALIZABLE,
            f"The run's value nests deeper than {MAX_DEPTH} levels of arrays and objects"
            + (f" (at {path})" if path else "")
            + ": flatten it.",
            path=path,
            hint=flatten_hint(),
        )
    else:
        error = plain_error(
            ErrorCode.RUN_INTERNAL_ERROR,
            f"run-repl could not read the run's result ({type(exc).__name__}: {str(exc)[:300]}). "
            "The calls listed did happen.",
        )
    return RunResult(
        status="error",
        error=error,
        run_id=run_id,
        calls=outcome.calls,
        logs=outcome.logs[:INLINE_LOGS],
        duration_ms=round(outcome.duration_ms, 3),
        stats=RunStats(
            host_calls=len(outcome.calls),
            host_calls_replayed=sum(1 for c in outcome.calls if c.replayed),
            host_calls_executed=outcome.executed,
        ),
    )


def log_chunks(lines: list[LogLine]) -> list[str]:
    """A run's log lines as the chunks of its logs ref."""
    return chunk_texts(
        [{"level": line.level, "text": line.text, "at_ms": line.at_ms} for line in lines]
    )


def _kind_of_path(path: str) -> ValueKind:
    if path == "$":
        return "array"
    if path == "$lines":
        return "string"
    return "object"


def _value_kind(value: Any) -> ValueKind:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def jsonable(value: Any, levels: int = MAX_DEPTH) -> Any:
    """Host-side values as JSON data for the envelope, part by part (see json_data):
    a payload with a BigInt or a cycle stays a payload a program and a person read."""
    return as_json_data(value, levels)
