"""Every way a run can fail: a stable code for programs, a message for people,
and the one next step that helps (seed 000's table is the model)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    RUN_SYNTAX_ERROR = "RUN_SYNTAX_ERROR"
    RUN_EXCEPTION = "RUN_EXCEPTION"
    RUN_TIMEOUT = "RUN_TIMEOUT"
    RUN_ABORTED = "RUN_ABORTED"
    RUN_MEMORY_EXCEEDED = "RUN_MEMORY_EXCEEDED"
    RUN_SOURCE_TOO_LARGE = "RUN_SOURCE_TOO_LARGE"
    RUN_VALUE_NOT_SERIALIZABLE = "RUN_VALUE_NOT_SERIALIZABLE"
    RUN_VALUE_TOO_LARGE = "RUN_VALUE_TOO_LARGE"
    RUN_ARGUMENT_NOT_CLONEABLE = "RUN_ARGUMENT_NOT_CLONEABLE"
    RUN_UNKNOWN_MEMBER = "RUN_UNKNOWN_MEMBER"
    RUN_HOST_FUNCTION_ERROR = "RUN_HOST_FUNCTION_ERROR"
    RUN_DETACHED_CALL = "RUN_DETACHED_CALL"
    RUN_BRIDGE_LIMIT = "RUN_BRIDGE_LIMIT"
    RUN_BUSY = "RUN_BUSY"
    RUN_APPROVAL_DENIED = "RUN_APPROVAL_DENIED"
    RUN_CONTINUATION_INVALID = "RUN_CONTINUATION_INVALID"
    RUN_REPLAY_MISMATCH = "RUN_REPLAY_MISMATCH"
    RUN_WORKER_CRASHED = "RUN_WORKER_CRASHED"
    RUN_INTERNAL_ERROR = "RUN_INTERNAL_ERROR"
    RESULT_REF_NOT_FOUND = "RESULT_REF_NOT_FOUND"


# Codes the guest may carry on an error object it throws; anything else a
# snippet throws is RUN_EXCEPTION, whatever `code` it claims.
GUEST_VISIBLE_CODES = frozenset(
    {
        ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
        ErrorCode.RUN_UNKNOWN_MEMBER,
        ErrorCode.RUN_HOST_FUNCTION_ERROR,
        ErrorCode.RUN_BRIDGE_LIMIT,
        ErrorCode.RUN_APPROVAL_DENIED,
        ErrorCode.RUN_DETACHED_CALL,
        ErrorCode.RUN_VALUE_NOT_SERIALIZABLE,
        ErrorCode.RUN_VALUE_TOO_LARGE,
        ErrorCode.RUN_REPLAY_MISMATCH,
    }
)


def next_actions(code: ErrorCode, **details: Any) -> list[dict[str, Any]]:
    """The next step for `code`, filled with what is known (line, path, ...)."""
    line, column = details.get("line"), details.get("column")
    where: dict[str, Any] = {}
    if line is not None:
        where["line"] = line
        if column is not None:
            where["column"] = column

    def edit(why: str, **extra: Any) -> list[dict[str, Any]]:
        return [{"type": "edit_request", **where, **extra, "why": why}]

    match code:
        case ErrorCode.RUN_SYNTAX_ERROR:
            return edit("Fix the syntax at this line and column, then run again.")
        case ErrorCode.RUN_EXCEPTION:
            return edit("The snippet threw: handle the error or fix its cause, then run again.")
        case ErrorCode.RUN_TIMEOUT:
            ms = details.get("timeout_ms")
            limit = f" of {ms} ms" if ms else ""
            return edit(
                f"The run passed its deadline{limit}: do less per run (narrow the query, fewer "
                "calls), or raise timeout_ms. Calls listed as ok did happen."
            )
        case ErrorCode.RUN_ABORTED:
            return [{"type": "run_again", "why": "The run was cancelled; run it again when ready."}]
        case ErrorCode.RUN_MEMORY_EXCEEDED:
            return edit(
                "The sandbox ran out of memory: hold less at once (page through results), "
                "or raise memory_bytes."
            )
        case ErrorCode.RUN_SOURCE_TOO_LARGE:
            return edit("Shorten the snippet, or raise max_source_bytes.")
        case ErrorCode.RUN_VALUE_NOT_SERIALIZABLE:
            hint = details.get("hint")
            return edit(
                hint or "Return JSON data: convert the value at this path first.",
                **({"path": details["path"]} if details.get("path") else {}),
            )
        case ErrorCode.RUN_VALUE_TOO_LARGE:
            return edit(
                "Select less in the snippet (fewer rows or fields), or raise max_value_bytes."
            )
        case ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE:
            return edit(
                "Pass data to host functions: JSON values, undefined, Date, RegExp, Map, Set, "
                "BigInt, typed arrays or Errors.",
                **({"path": details["path"]} if details.get("path") else {}),
            )
        case ErrorCode.RUN_UNKNOWN_MEMBER:
            extra: dict[str, Any] = {}
            if details.get("path"):
                extra["path"] = details["path"]
            extra["did_you_mean"] = list(details.get("did_you_mean") or [])
            return edit("Call a function the host provides.", **extra)
        case ErrorCode.RUN_HOST_FUNCTION_ERROR:
            return edit(
                "A host function failed: check its arguments, or catch the error in the snippet."
            )
        case ErrorCode.RUN_DETACHED_CALL:
            return edit("Await every host call (or Promise.all them) before the snippet returns.")
        case ErrorCode.RUN_BRIDGE_LIMIT:
            return edit(
                "Make fewer host calls per run (batch them), or raise max_host_calls / "
                "max_host_calls_in_flight."
            )
        case ErrorCode.RUN_BUSY:
            return [
                {
                    "type": "retry",
                    "after_ms": details.get("after_ms", 250),
                    "why": "Too many runs are in flight; retry shortly.",
                }
            ]
        case ErrorCode.RUN_APPROVAL_DENIED:
            return edit("The call was denied: catch the denial or take another path.")
        case ErrorCode.RUN_CONTINUATION_INVALID:
            return [
                {
                    "type": "run_again",
                    "why": "This continuation cannot be used (tampered, expired or for another "
                    "run): run the snippet again from the start.",
                }
            ]
        case ErrorCode.RUN_REPLAY_MISMATCH:
            return [
                {
                    "type": "run_again",
                    "why": "The snippet made different calls on replay than before; run it "
                    "again from the start (finished calls will run again).",
                }
            ]
        case ErrorCode.RUN_WORKER_CRASHED:
            return [
                {
                    "type": "run_again",
                    "why": "The sandbox process died; run again (a fresh one starts).",
                }
            ]
        case ErrorCode.RUN_INTERNAL_ERROR:
            return [
                {
                    "type": "run_again",
                    "why": "run-repl failed to read this run's result (a bug: please report it with "
                    "the snippet); the calls listed did happen, so check them before running again.",
                }
            ]
        case ErrorCode.RESULT_REF_NOT_FOUND:
            return [
                {
                    "type": "run_again",
                    "why": "That result is no longer stored (unknown, evicted or expired): run "
                    "the snippet again.",
                }
            ]
    return []
