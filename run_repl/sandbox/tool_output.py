"""A run's result worded for a model (a chat tool's output).

The envelope (`RunResult.model_dump()`) is for programs; this is what an
agent reads after calling a `run` tool. Four shapes:

    {"ok": true, "result": ..., "logs": [...]}
    {"ok": false, "error": "TypeError: x is not a function (line 3). Next: ..."}
    {"ok": false, "error": "Timed out (RUN_TIMEOUT): The run passed its deadline ... Next: ..."}
    {"ok": false, "error": "Paused: 1 operation in this code needs the user's approval and was NOT run. ..."}

A large value comes as its window (the leading items) with how to page the
rest, never whole; each failure carries its next action in one sentence.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .errors import ErrorCode

if TYPE_CHECKING:
    from .result import RunResult

# Failures where the sandbox said no, rather than the code: how each kind is worded. A
# refusal is "Denied"; a run stopped by a limit or a cancel was not refused anything.
DENIALS = frozenset(
    {
        ErrorCode.RUN_SOURCE_TOO_LARGE,
        ErrorCode.RUN_BUSY,
        ErrorCode.RUN_APPROVAL_DENIED,
        ErrorCode.SECRET_REQUIRES_CLI,
    }
)
LIMITS = frozenset(
    {
        ErrorCode.RUN_MEMORY_EXCEEDED,
        ErrorCode.RUN_VALUE_TOO_LARGE,
        ErrorCode.RUN_BRIDGE_LIMIT,
        ErrorCode.RUN_ARGUMENT_TOO_LARGE,
        ErrorCode.RUN_HOST_RESULT_TOO_LARGE,
    }
)
STOPS: dict[str, str] = {ErrorCode.RUN_TIMEOUT: "Timed out", ErrorCode.RUN_ABORTED: "Stopped"}
MAX_LOG_LINES = 20
DEFAULT_PAUSED_NEXT = (
    "A person decides in run-repl; the run then resumes where it paused. Do not retry "
    "these operations another way."
)


def to_tool_output(result: RunResult, *, paused_next: str = DEFAULT_PAUSED_NEXT) -> dict[str, Any]:
    """The result in the shapes a model reads best (ok, paused or failed, each with what to do next)."""
    if result.status == "ok":
        out: dict[str, Any] = {"ok": True}
        if result.value_window is not None:
            window = result.value_window
            out["result"] = (
                window.items if window.rest is None else {**window.rest, "…": window.items}
            )
            out["shown"], out["total"] = result.shown, result.total
            out["next"] = (
                f"This is the first {result.shown} of {result.total} items (at {window.path}): "
                f"call expand_result with value_ref {result.value_ref!r} and offset {result.shown} "
                "for more."
            )
            if window.rest_omitted:
                out["next"] += f" The fields {', '.join(window.rest_omitted)} come with each page."
        elif result.value_kind == "undefined":
            out["result"] = None
            out["note"] = "The snippet returned nothing (undefined): return the value you want."
        else:
            out["result"] = result.value
        logs = _logs(result)
        if logs:
            out["logs"] = logs
        return out
    if result.status == "interrupted":
        return {"ok": False, "error": _paused(result, paused_next)}
    return {"ok": False, "error": _error(result)}


def _logs(result: RunResult) -> list[str]:
    lines = [
        (f"[{line.level}] " if line.level not in ("log", "info") else "") + line.text
        for line in result.logs[:MAX_LOG_LINES]
    ]
    more = result.logs_total - len(lines)
    if more > 0:
        where = f" (logs_ref {result.logs_ref})" if result.logs_ref else ""
        lines.append(f"… {more} more line{'s' if more != 1 else ''}{where}")
    return lines


def _error(result: RunResult) -> str:
    error = result.error
    if error is None:
        return "The run failed without an error report."
    where = (
        f" (line {error.line})" if error.line and f"line {error.line}" not in error.message else ""
    )
    if error.code in DENIALS:
        text = f"Denied ({error.code}): {error.message}"
    elif error.code in LIMITS:
        text = f"Over a limit ({error.code}): {error.message}"
    elif error.code in STOPS:
        text = f"{STOPS[error.code]} ({error.code}): {error.message}"
    else:
        text = f"{error.message}{where}"
        if error.code not in (ErrorCode.RUN_EXCEPTION, ErrorCode.RUN_SYNTAX_ERROR):
            text = f"{text} [{error.code}]"
    said = "did you mean" in error.message.lower()  # the message offers them already
    if error.did_you_mean and not (said and all(n in error.message for n in error.did_you_mean)):
        text += f" Did you mean: {', '.join(error.did_you_mean)}?"
    step = _next_step(error.next_actions)
    if step:
        text += f" Next: {step}"
    ran = [c for c in result.calls if c.ok]
    if ran:
        text += f" ({len(ran)} host call{'s' if len(ran) != 1 else ''} did complete before this.)"
    return text


def _next_step(actions: list[Any]) -> str:
    if not actions:
        return ""
    action = actions[0]
    data = action.model_dump() if hasattr(action, "model_dump") else dict(action)
    if data.get("type") == "run_cli_command" and data.get("command"):
        return (
            f"ask the person to run `{data['command']}` themselves. {data.get('why') or ''}".strip()
        )
    return str(data.get("why") or "")


def _paused(result: RunResult, next_step: str) -> str:
    waiting = result.interruptions or []
    n = len(waiting)
    calls = "; ".join(f"{i.path}({_args(i.args)})" for i in waiting)
    verb = "needs" if n == 1 else "need"
    was = "was" if n == 1 else "were"
    return (
        f"Paused: {n} operation{'s' if n != 1 else ''} in this code {verb} the user's approval "
        f"and {was} NOT run: {calls}. {next_step}"
    )


def _args(args: list[Any]) -> str:
    text = ", ".join(json.dumps(a, ensure_ascii=False, default=str) for a in args)
    return text if len(text) <= 200 else text[:199] + "…"
