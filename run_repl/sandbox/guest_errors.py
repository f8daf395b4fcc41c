"""Errors as the guest reports them, turned into what the user reads: the
code, a message, and the line and column in the user's own text."""

from __future__ import annotations

import re
from typing import Any

from .errors import GUEST_VISIBLE_CODES, ErrorCode, next_actions
from .frames import PRELUDE_LINE_BASE
from .limits import near_memory_limit
from .result import NextAction, RunErrorInfo, plain_error
from .source import WRAPPER_FUNCTION_NAME, PreparedSource

__all__ = ["map_error", "plain_error", "rewrite_positions", "user_frames"]

_FRAME = re.compile(r"^\s*at (?:(?P<name>.*?) \()?<input>:(?P<line>\d+):(?P<col>\d+)\)?\s*$")
_SYNTAX_POS = re.compile(r"<input>:(\d+):(\d+)")
SNIPPET_NAME = "snippet"


def user_frames(stack: str | None, prepared: PreparedSource | None) -> list[tuple[str, int, int]]:
    """The snippet's own frames, outermost last: (function name, line, column)."""
    if not stack or prepared is None:
        return []
    out: list[tuple[str, int, int]] = []
    for raw in stack.splitlines():
        m = _FRAME.match(raw)
        if not m:
            continue
        line = int(m["line"])
        if line >= PRELUDE_LINE_BASE:
            continue
        name = m["name"] or ""
        if name == WRAPPER_FUNCTION_NAME:
            name = "<snippet>"
        user_line, user_col = prepared.to_user_position(line, int(m["col"]))
        out.append((name or "<anonymous>", user_line, user_col))
    return out


_POSITION = re.compile(r"<input>:(\d+):(\d+)")


def rewrite_positions(text: str, prepared: PreparedSource) -> str:
    """Stack text the snippet printed (console.log(err)): the engine's own frames
    dropped, positions mapped to the user's text."""
    out = []
    for line in text.split("\n"):
        m = _POSITION.search(line)
        if m is None:
            out.append(line)
            continue
        if int(m[1]) >= PRELUDE_LINE_BASE and line.lstrip().startswith("at "):
            continue
        user_line, user_col = prepared.to_user_position(int(m[1]), int(m[2]))
        line = _POSITION.sub(f"{SNIPPET_NAME}:{user_line}:{user_col}", line, count=1)
        out.append(line.replace(WRAPPER_FUNCTION_NAME, "<snippet>"))
    return "\n".join(out)


def format_stack(frames: list[tuple[str, int, int]], header: str) -> str:
    lines = [header]
    for name, line, col in frames:
        lines.append(f"    at {name} ({SNIPPET_NAME}:{line}:{col})")
    return "\n".join(lines)


def map_error(
    err: dict[str, Any],
    prepared: PreparedSource | None,
    *,
    stats: dict[str, Any] | None = None,
    memory_bytes: int | None = None,
) -> RunErrorInfo:
    code = str(err.get("code") or ErrorCode.RUN_EXCEPTION)
    if code not in ErrorCode.__members__:
        code = ErrorCode.RUN_EXCEPTION
    if err.get("origin") == "guest" and code not in GUEST_VISIBLE_CODES:
        # Engine codes (timeouts, crashes, memory, busy...) come only from the parent.
        code = ErrorCode.RUN_EXCEPTION
    name = _text(err.get("name")) or None
    message = _text(err.get("message")) or ""
    line = column = None
    stack_text: str | None = None

    if code == ErrorCode.RUN_SYNTAX_ERROR:
        first, *_ = message.split("\n", 1)
        pos = _SYNTAX_POS.search(message)
        if pos and prepared is not None:
            line, column = prepared.to_user_position(int(pos[1]), int(pos[2]))
        name = "SyntaxError"
        detail = first.split(": ", 1)[1] if first.startswith("SyntaxError: ") else first
        message = f"SyntaxError: {detail}" + (f" (line {line}, column {column})" if line else "")
    else:
        if err.get("engine_oom") is True:
            code = ErrorCode.RUN_MEMORY_EXCEEDED
        elif (
            err.get("thrown_null") and memory_bytes and near_memory_limit(stats or {}, memory_bytes)
        ):
            # Out of memory can surface as a thrown null.
            code = ErrorCode.RUN_MEMORY_EXCEEDED
        frames = user_frames(_text(err.get("stack")), prepared)
        site_frames = user_frames(_text(err.get("site")), prepared)
        if code == ErrorCode.RUN_EXCEPTION or code not in GUEST_VISIBLE_CODES:
            where = frames
        else:
            # Our own errors point at the snippet's call that caused them.
            where = site_frames or frames
        if where:
            line, column = where[0][1], where[0][2]
        if code == ErrorCode.RUN_EXCEPTION:
            if err.get("is_error", True) is False:
                message = f"The snippet threw a non-Error value: {message}"
                name = None
            else:
                message = f"{name}: {message}" if name and message else (name or message or "Error")
        if where:
            stack_text = format_stack(where, message)
        if code == ErrorCode.RUN_MEMORY_EXCEEDED and not message.startswith("The sandbox"):
            limit = f" of {memory_bytes // (1 << 20)} MiB" if memory_bytes else ""
            message = f"The sandbox ran out of memory (memory_bytes{limit})."
    path = _text(err.get("path"))
    suggestions = err.get("did_you_mean")
    did_you_mean = (
        [s for s in suggestions if isinstance(s, str)] if isinstance(suggestions, list) else None
    )
    timeout_ms = err.get("timeout_ms")
    details = {
        "line": line,
        "column": column,
        "path": path,
        "did_you_mean": did_you_mean,
        "hint": _text(err.get("hint")),
        "timeout_ms": timeout_ms if isinstance(timeout_ms, int) else None,
    }
    return RunErrorInfo(
        code=code,
        message=message,
        name=name,
        line=line,
        column=column,
        stack=stack_text,
        guest_code=_text(err.get("guest_code")) if code == ErrorCode.RUN_EXCEPTION else None,
        path=path
        if code
        in (
            ErrorCode.RUN_UNKNOWN_MEMBER,
            ErrorCode.RUN_VALUE_NOT_SERIALIZABLE,
            ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
            ErrorCode.RUN_HOST_FUNCTION_ERROR,
            ErrorCode.RUN_DETACHED_CALL,
            ErrorCode.RUN_APPROVAL_DENIED,
            ErrorCode.RUN_REPLAY_MISMATCH,
        )
        else None,
        did_you_mean=did_you_mean if code == ErrorCode.RUN_UNKNOWN_MEMBER else None,
        next_actions=[NextAction(**a) for a in next_actions(ErrorCode(code), **details)],
    )


def _text(value: Any) -> str | None:
    """A field the guest filled in: text, or nothing (never a number or an object)."""
    return value if isinstance(value, str) else None
