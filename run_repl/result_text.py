"""A run's result as text for a person at a terminal (`run-repl run`, the line REPL).

The JSON envelope (`--json`) is for programs; this is for reading: the value
or its first page, then logs, calls, and an error with its place in the
snippet and the one next step.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from .sandbox.result import CallRecord, LogLine, RunErrorInfo, RunResult

_CODES = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
    "dim": "2",
    "bold": "1",
}
LEVEL_COLOR = {"log": "", "info": "cyan", "warn": "yellow", "error": "red", "debug": "dim"}


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class Painter:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *styles: str) -> str:
        codes = [_CODES[s] for s in styles if s in _CODES]
        if not self.color or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def format_log(line: LogLine, paint: Painter) -> str:
    level = paint(f"{line.level:<5}", LEVEL_COLOR.get(line.level, ""))
    return f"{paint(f'{line.at_ms:8.1f}ms', 'dim')} {level} {line.text}"


def format_call(call: CallRecord, paint: Painter) -> str:
    if call.ok is None:
        state = paint("waiting" if call.decision == "pending" else "running", "yellow")
    elif call.ok:
        state = paint("ok", "green")
    else:
        state = paint(str(call.error_code or "error"), "red")
    bits = [f"#{call.seq}", paint(call.path, "bold") + call.args_preview]
    if call.duration_ms is not None:
        bits.append(f"{call.duration_ms:.1f} ms")
    bits.append(state)
    if call.replayed:
        bits.append(paint("(replayed)", "dim"))
    if call.decision and call.decision != "pending":
        bits.append(paint(f"[{call.decision}]", "magenta"))
    if call.wait_ms:
        bits.append(paint(f"waited {call.wait_ms / 1000:.1f} s for approval", "dim"))
    return "  ".join(bits)


def snippet_excerpt(source: str, line: int, column: int | None, paint: Painter) -> list[str]:
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return []
    width = len(str(line))
    out = [paint(f"  {line:>{width}} | ", "dim") + lines[line - 1]]
    if column:
        out.append(
            paint(f"  {'':>{width}} | ", "dim") + " " * (column - 1) + paint("^", "red", "bold")
        )
    return out


def format_error(error: RunErrorInfo, source: str | None, paint: Painter) -> list[str]:
    where = f" at line {error.line}, column {error.column}" if error.line else ""
    out = [paint(f"{error.code}{where}", "red", "bold") + f": {error.message}"]
    if source and error.line:
        out += snippet_excerpt(source, error.line, error.column, paint)
    if error.did_you_mean:
        out.append(f"  did you mean: {', '.join(error.did_you_mean)}")
    if error.stack and error.code == "RUN_EXCEPTION":
        out += ["  " + s for s in error.stack.splitlines()[1:]]
    for action in error.next_actions:
        data = action.model_dump()
        why = data.get("why") or ""
        extra = f" `{data['command']}`" if data.get("command") else ""
        out.append(paint(f"  next ({action.type}): ", "cyan") + why + extra)
    return out


def value_lines(result: RunResult, paint: Painter) -> list[str]:
    if result.value_window is None:
        if result.value_kind == "undefined":
            return [paint("undefined", "dim")]
        return pretty(result.value).splitlines()
    window = result.value_window
    total = result.total or 0
    shown = result.shown or 0
    out = [paint(f"{window.path}: items 1–{shown:,} of {total:,}", "dim")]
    if window.rest:
        out.append(
            paint("rest: ", "dim") + json.dumps(window.rest, ensure_ascii=False, default=str)
        )
    for item in window.items:
        out += pretty(item).splitlines()
    if shown < total and result.value_ref:
        out.append(
            paint(
                f"… {total - shown:,} more: run-repl expand {result.value_ref} --offset {shown}",
                "dim",
            )
        )
    return out


def format_result(
    result: RunResult, *, source: str | None = None, color: bool = False, logs: bool = True
) -> str:
    paint = Painter(color)
    out: list[str] = []
    if logs and result.logs:
        for line in result.logs:
            out.append(format_log(line, paint))
        more = result.logs_total - len(result.logs) - result.logs_dropped
        if more > 0 and result.logs_ref:
            out.append(paint(f"… {more} more log lines: run-repl expand {result.logs_ref}", "dim"))
        if result.logs_dropped:
            out.append(paint(f"… {result.logs_dropped} log lines dropped (max_log_lines)", "dim"))
    if result.calls:
        out.append(paint(f"calls ({len(result.calls)}):", "dim"))
        out += ["  " + format_call(c, paint) for c in result.calls]
    if result.status == "ok":
        out += value_lines(result, paint)
    elif result.status == "error" and result.error is not None:
        out += format_error(result.error, source, paint)
    elif result.status == "interrupted":
        for it in result.interruptions or []:
            message = it.payload.get("message") if isinstance(it.payload, dict) else None
            out.append(
                paint(f"waiting for approval: {it.path}", "yellow", "bold") + f"  (id {it.id})"
            )
            if message:
                out.append(f"  {message}")
            out.append(f"  args: {json.dumps(it.args, ensure_ascii=False, default=str)}")
    status = {
        "ok": paint("ok", "green"),
        "error": paint("error", "red"),
        "interrupted": paint("interrupted", "yellow"),
    }
    out.append(paint(f"{status[result.status]} in {result.duration_ms:.1f} ms", "dim"))
    return "\n".join(out)


def write_result(
    result: RunResult, *, source: str | None = None, stream: TextIO | None = None
) -> None:
    """Print for a terminal: guest text cannot send escape sequences of its own."""
    from .safe_text import clean_result, printable

    stream = stream or sys.stdout
    text = format_result(clean_result(result), source=source, color=use_color(stream))
    stream.write(printable(text) + "\n")
    stream.flush()
