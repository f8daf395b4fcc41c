"""Cut JSON to a byte budget, keeping its shape: the history's envelopes.

A run's envelope can be as big as what the guest made (a 15 MB error
message, ten thousand calls); the history keeps at most a budget of it per
run. Long strings are cut with a note saying how much went, long lists and
objects keep their first members, and very deep nesting ends in a note, so
the result is still the same kind of document (a cut envelope still
validates as a RunResult).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

MAX_DEPTH = 64
# (longest string, most members) tried in turn until the document fits.
_STEPS = ((16_384, 1_000), (4_096, 200), (1_024, 50), (256, 10), (64, 3))


def dumps(value: Any) -> str:
    """Compact JSON, ASCII only: a lone surrogate becomes an escape, never an error."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str, every surrogate is lone


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escaped(value: Any) -> Any:
    """`value` with every lone surrogate, in its strings and its keys, as `\\uXXXX`."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(_escape, value)
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escaped(v) for v in value]
    return value


def json_data(model: BaseModel) -> dict[str, Any]:
    """`model` as JSON data. A lone surrogate (JavaScript strings may hold one) in an
    object key stops pydantic's JSON mode: such data comes with every lone surrogate
    as its visible `\\uXXXX` escape (as the MCP replies show it), so it is still kept."""
    try:
        data: dict[str, Any] = model.model_dump(mode="json")
    except PydanticSerializationError:
        data = json.loads(json.dumps(escaped(model.model_dump()), default=str))
    return data


def _size(value: Any) -> int | None:
    try:
        return len(dumps(value))
    except (RecursionError, ValueError):
        return None


def _cut(value: Any, max_str: int, max_items: int, depth: int) -> Any:
    if isinstance(value, str):
        if len(value) <= max_str:
            return value
        return value[:max_str] + f"… [{len(value) - max_str:,} more characters cut]"
    if depth >= MAX_DEPTH and isinstance(value, list | dict):
        return "[cut: nested too deep]"
    if isinstance(value, list):
        return [_cut(v, max_str, max_items, depth + 1) for v in value[:max_items]]
    if isinstance(value, dict):
        kept = list(value.items())[:max_items]
        return {str(k): _cut(v, max_str, max_items, depth + 1) for k, v in kept}
    return value


def fit_json(value: Any, max_bytes: int) -> tuple[Any, bool]:
    """`value` itself if its JSON fits `max_bytes`, else a cut copy that does
    (or the smallest cut tried), and whether it was cut."""
    size = _size(value)
    if size is not None and size <= max_bytes:
        return value, False
    cut: Any = value
    for max_str, max_items in _STEPS:
        cut = _cut(value, max_str, max_items, 0)
        size = _size(cut)
        if size is not None and size <= max_bytes:
            break
    return cut, True


def fit_envelope(envelope: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any], bool]:
    """A run's envelope for the history, within `max_bytes`.

    The continuation is never kept here (it is a bearer token; the approvals
    table holds the one that matters). What is left over the budget is cut;
    if even that is too big, the envelope keeps only how the run ended."""
    kept = {k: v for k, v in envelope.items() if k != "continuation"}
    fitted, cut = fit_json(kept, max_bytes)
    size = _size(fitted)
    if isinstance(fitted, dict) and size is not None and size <= max_bytes:
        return fitted, cut
    error = envelope.get("error") if isinstance(envelope.get("error"), dict) else None
    bare: dict[str, Any] = {
        "status": envelope.get("status", "error"),
        "duration_ms": envelope.get("duration_ms", 0.0),
    }
    if envelope.get("run_id"):
        bare["run_id"] = envelope["run_id"]
    if error is not None:
        bare["error"] = {
            "code": str(error.get("code", "")),
            "message": _cut(str(error.get("message", "")), 512, 1, 0),
        }
    return bare, True


__all__ = ["dumps", "escaped", "fit_envelope", "fit_json", "json_data"]
