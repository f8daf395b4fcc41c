"""Errors as the guest reports them, turned into what the user reads: the
code, a message, and the line and column in the user's own text."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import GUEST_VISIBLE_CODES, ErrorCode, next_actions
from ..limits import near_memory_limit
from ..process.frames import PRELUDE_LINE_BASE
from ..process.source import WRAPPER_FUNCTION_NAME, PreparedSource
from ..result import HostErrorInfo, NextAction, RunErrorInfo, plain_error

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


# Globals a snippet may reach for that this sandbox does not have, and what to do instead.
ABSENT_GLOBALS = {
    "setTimeout": "the sandbox has no timers (a run is bounded by its deadline): to wait, call "
    "a host function that waits; to defer work, await it",
    "setInterval": "the sandbox has no timers: loop with await over host calls instead",
    "setImmediate": "the sandbox has no timers: await the work instead",
    "clearTimeout": "the sandbox has no timers, so there is nothing to clear",
    "clearInterval": "the sandbox has no timers, so there is nothing to clear",
    "queueMicrotask": "use `await null` or a resolved promise instead",
    "fetch": "the sandbox has no network: call a host function that fetches",
    "require": "the sandbox has no modules: everything it can use is a global",
    "process": "the sandbox has no process object: pass what you need through host functions",
}
_NOT_DEFINED = re.compile(r"^'?([A-Za-z_$][A-Za-z0-9_$]*)'? is not defined$")

_PATH_CODES = frozenset(
    {
        ErrorCode.RUN_UNKNOWN_MEMBER,
        ErrorCode.RUN_VALUE_NOT_SERIALIZABLE,
        ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
        ErrorCode.RUN_ARGUMENT_TOO_LARGE,
        ErrorCode.RUN_HOST_FUNCTION_ERROR,
        ErrorCode.RUN_HOST_RESULT_TOO_LARGE,
        ErrorCode.RUN_DETACHED_CALL,
        ErrorCode.RUN_APPROVAL_DENIED,
        ErrorCode.RUN_REPLAY_MISMATCH,
    }
)


def map_error(
    err: dict[str, Any],
    prepared: PreparedSource | None,
    *,
    stats: dict[str, Any] | None = None,
    memory_bytes: int | None = None,
    host_errors: Mapping[int, HostErrorInfo] | None = None,
    namespaces: Iterable[str] = (),
) -> RunErrorInfo:
    """The error a run ended with, as the user reads it."""
    code: ErrorCode | str = str(err.get("code") or ErrorCode.RUN_EXCEPTION)
    if code not in ErrorCode.__members__:
        code = ErrorCode.RUN_EXCEPTION
    code = ErrorCode(code)
    if err.get("origin") == "guest" and code not in GUEST_VISIBLE_CODES:
        # Engine codes (timeouts, crashes, memory, busy...) come only from the parent.
        code = ErrorCode.RUN_EXCEPTION
    name = _text(err.get("name")) or None
    message = _text(err.get("message")) or ""
    path = _text(err.get("path"))
    suggestions = err.get("did_you_mean")
    did_you_mean = (
        [s for s in suggestions if isinstance(s, str)] if isinstance(suggestions, list) else None
    )
    line = column = None
    stack_text: str | None = None
    host_error = None

    if code == ErrorCode.RUN_SYNTAX_ERROR:
        first, *_ = message.split("\n", 1)
        pos = _SYNTAX_POS.search(message)
        if pos and prepared is not None:
            line, column = prepared.to_user_position(int(pos[1]), int(pos[2]))
        elif type(err.get("line")) is int and type(err.get("column")) is int:
            # Found before QuickJS (stripping types): already the user's position.
            line, column = err["line"], err["column"]
        name = "SyntaxError"
        detail = first.split(": ", 1)[1] if first.startswith("SyntaxError: ") else first
        message = f"SyntaxError: {detail}" + (f" (line {line}, column {column})" if line else "")
    else:
        near_limit = bool(memory_bytes) and near_memory_limit(stats or {}, memory_bytes or 0)
        engine = err.get("engine_internal") is True
        oom_text = name == "InternalError" and message in ("null", "out of memory")
        if (engine and message == "out of memory") or (
            near_limit and (err.get("thrown_null") or oom_text)
        ):
            # The engine's own out-of-memory error; or, with the memory figures near the
            # limit (which no snippet fakes), what running out of memory surfaces as.
            code = ErrorCode.RUN_MEMORY_EXCEEDED
        frames = user_frames(_text(err.get("stack")), prepared)
        site_frames = user_frames(_text(err.get("site")), prepared)
        # Our own errors point at the snippet's call that caused them.
        where = frames if code not in GUEST_VISIBLE_CODES else (site_frames or frames)
        if where:
            line, column = where[0][1], where[0][2]
        seq = err.get("seq")
        if code == ErrorCode.RUN_HOST_FUNCTION_ERROR and host_errors and isinstance(seq, int):
            host_error = host_errors.get(seq)
        if code == ErrorCode.RUN_EXCEPTION:
            if err.get("is_error", True) is False:
                message = f"The snippet threw a non-Error value: {message}"
                name = None
            else:
                if name == "ReferenceError":
                    message, did_you_mean = _reference_hint(message, namespaces)
                message = f"{name}: {message}" if name and message else (name or message or "Error")
        if where:
            stack_text = format_stack(where, message)
        if code == ErrorCode.RUN_MEMORY_EXCEEDED:
            name = None  # never "null": the message says what happened
            if not message.startswith("The sandbox"):
                limit = f" of {memory_bytes // (1 << 20)} MiB" if memory_bytes else ""
                message = f"The sandbox ran out of memory (memory_bytes{limit})."
    timeout_ms = err.get("timeout_ms")
    details = {
        "line": line,
        "column": column,
        "path": path,
        "did_you_mean": did_you_mean,
        "hint": _text(err.get("hint")),
        "timeout_ms": timeout_ms if isinstance(timeout_ms, int) else None,
    }
    actions = next_actions(code, **details)
    final_code: ErrorCode | str = code
    if host_error is not None:
        # A host's own error the snippet let through: its code, message and next actions, unchanged.
        final_code, message = host_error.code, host_error.message
        if host_error.next_actions is not None:
            actions = host_error.next_actions
    return RunErrorInfo(
        code=final_code,
        message=message,
        name=name,
        line=line,
        column=column,
        stack=stack_text,
        guest_code=_text(err.get("guest_code")) if code == ErrorCode.RUN_EXCEPTION else None,
        path=path if code in _PATH_CODES else None,
        did_you_mean=did_you_mean
        if code in (ErrorCode.RUN_UNKNOWN_MEMBER, ErrorCode.RUN_EXCEPTION) and did_you_mean
        else None,
        next_actions=[NextAction(**a) for a in actions],
    )


def _reference_hint(message: str, namespaces: Iterable[str]) -> tuple[str, list[str] | None]:
    """A global the sandbox lacks gets what to do instead; a misspelt host
    namespace gets the names it was probably meant to be."""
    m = _NOT_DEFINED.match(message)
    if m is None:
        return message, None
    name = m[1]
    if name in ABSENT_GLOBALS:
        return f"{message}: {ABSENT_GLOBALS[name]}", None
    close = difflib.get_close_matches(name, list(namespaces), n=3, cutoff=0.6)
    if not close:
        return message, None
    return f"{message} (did you mean {' or '.join(close)}?)", close


def _text(value: Any) -> str | None:
    """A field the guest filled in: text, or nothing (never a number or an object)."""
    return value if isinstance(value, str) else None
