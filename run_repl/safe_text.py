"""Guest text made harmless for a terminal.

Logs, error messages and values come from untrusted snippets (and host data).
Printed raw, an escape sequence in them could recolour, move the cursor, set
the window title or the clipboard. Control characters (except newline and
tab) are shown as visible escapes instead; only the painter's own colours
(added after cleaning) reach the terminal as escapes.
"""

from __future__ import annotations

import re
from typing import Any

from .sandbox.result import CallRecord, LogLine, RunErrorInfo, RunResult

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1 = re.compile(r"[\x7f-\x9f]")


def clean(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable(painted: str) -> str:
    """The last pass over painted text: DEL and C1 controls, which JSON leaves
    as they are in values, become visible. The painter never writes them."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", painted)


def clean_log(line: LogLine) -> LogLine:
    return line.model_copy(update={"text": clean(line.text)})


def clean_call(call: CallRecord) -> CallRecord:
    return call.model_copy(
        update={
            "path": clean(call.path),
            "args_preview": clean(call.args_preview),
            "error_message": clean(call.error_message) if call.error_message else None,
        }
    )


def clean_error(error: RunErrorInfo) -> RunErrorInfo:
    return error.model_copy(
        update={
            "message": clean(error.message),
            "stack": clean(error.stack) if error.stack else None,
            "path": clean(error.path) if error.path else None,
            "did_you_mean": [clean(d) for d in error.did_you_mean] if error.did_you_mean else None,
        }
    )


def clean_result(result: RunResult) -> RunResult:
    """A copy of `result` whose raw texts (logs, calls, error) are safe to paint.
    Values are printed as JSON, which escapes C0 controls itself."""
    update: dict[str, Any] = {
        "logs": [clean_log(line) for line in result.logs],
        "calls": [clean_call(c) for c in result.calls],
    }
    if result.error is not None:
        update["error"] = clean_error(result.error)
    if result.value_window is not None:  # its path may quote a guest's key
        update["value_window"] = result.value_window.model_copy(
            update={"path": clean(result.value_window.path)}
        )
    return result.model_copy(update=update)
