"""A tool call the server refuses before it runs anything: a code, a message, one next step.

The engine's own failures (a syntax error, a timeout, RUN_BUSY) come back as
the run's envelope. These are the server's: an argument missing or of the
wrong type or range, a ref or run it does not know, an offset past the end.
The model reads them as a tool error (`isError: true`) and fixes its call.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from ..sandbox.errors import RunReplError

TOOL_ARGUMENT_INVALID = "TOOL_ARGUMENT_INVALID"
TOOL_UNKNOWN = "TOOL_UNKNOWN"
RESULT_OFFSET_OUT_OF_RANGE = "RESULT_OFFSET_OUT_OF_RANGE"
APPROVAL_NOT_FOUND = "APPROVAL_NOT_FOUND"
RUN_NOT_FOUND = "RUN_NOT_FOUND"
INTERNAL_ERROR = "RUN_INTERNAL_ERROR"


class ToolError(RunReplError):
    """Raised by a tool's handler; the server answers with it as a tool error."""

    def __init__(self, code: str, message: str, next_action: dict[str, Any]) -> None:
        super().__init__(message)
        self.code = code
        self.next_action = next_action

    @property
    def next_actions(self) -> list[dict[str, Any]]:
        return [self.next_action]

    def to_json(self) -> dict[str, Any]:
        """The envelope's error shape, so a model reads every failure the same way."""
        return {"code": self.code, "message": self.message, "next_actions": self.next_actions}


def edit(why: str, **details: Any) -> dict[str, Any]:
    """The next step for a request the caller has to change."""
    return {"type": "edit_request", **details, "why": why}


def bad_argument(name: str, message: str, why: str) -> ToolError:
    return ToolError(TOOL_ARGUMENT_INVALID, message, edit(why, argument=name))


def closest(word: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return found[0] if found else None


def json_type(value: Any) -> str:
    """A value's type as JSON names it (what the caller sent, in its words)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


__all__ = [
    "APPROVAL_NOT_FOUND",
    "INTERNAL_ERROR",
    "RESULT_OFFSET_OUT_OF_RANGE",
    "RUN_NOT_FOUND",
    "TOOL_ARGUMENT_INVALID",
    "TOOL_UNKNOWN",
    "ToolError",
    "bad_argument",
    "closest",
    "edit",
    "json_type",
]
