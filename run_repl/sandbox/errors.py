"""Every way a run can fail: a stable code for programs, a message for people,
and the one next step that helps.

`ErrorCode` names every failure; `next_actions(code, ...)` gives the step for
it. Exceptions the engine raises (or a host function raises on purpose) share
one base, `RunReplError`, whose `code` is one of these, so a caller can write
`except RunReplError as e: e.code`.

Every exception run-repl raises on purpose, in every layer, is a RunReplError
(tests/test_exception_tree.py keeps it so). A second base, in brackets, keeps
older `except` clauses working. The layers' own codes are plain strings.

* RunReplError (`code`, `message`, `next_actions`)
  + HostError                   raised by a host function, on purpose: its own code
  + ApprovalDenied              RUN_APPROVAL_DENIED
  + CodecError [ValueError]     RUN_VALUE_NOT_SERIALIZABLE
  | + HostResultTooLarge        RUN_HOST_RESULT_TOO_LARGE
  + ValueTooDeep [ValueError]   (sandbox/nesting.py)
  + ContinuationInvalid [ValueError]
  + ResolutionInvalid [ValueError]
  + SecretTooShort [ValueError]
  + ValuesError [ValueError]
  + HostFunctionsError [TypeError]
  + ResultRefNotFound [LookupError]
  + TypeScriptSyntaxError       RUN_SYNTAX_ERROR, with its line and column
  + StoreError [RuntimeError]   STORE_BUSY, STORE_DAMAGED, STORE_FULL, ... (store/store_error.py)
  + StoreUrlError [ValueError]  STORE_URL_INVALID (store/store_url.py)
  + ApprovalConflict [RuntimeError]  APPROVAL_CONFLICT (store/records.py)
  | + ApprovalStuck             APPROVAL_STUCK
  | + ApprovalRefused           APPROVAL_REFUSED
  + ClaimLost [RuntimeError]    APPROVAL_CLAIM_LOST
  + NoExecutor [RuntimeError]   APPROVAL_NO_EXECUTOR (store/approvals/dispatch.py)
  + HostLoadError               HOST_LOAD_FAILED (host/loader.py)
  | + DemoDatabaseBusy          HOST_DEMO_BUSY (host/demo.py)
  + UpstreamSpecError [ValueError]   UPSTREAM_SPEC_INVALID (host/upstream/spec.py)
  + NotPrivate [PermissionError]     PATH_NOT_PRIVATE (paths.py)
  + ConfigWriteError [OSError]  CONFIG_WRITE_FAILED (config.py)
  + WorkspaceError              WORKSPACE_UNUSABLE (workspace.py)
  + ThemeFileError [ValueError] THEME_FILE_INVALID (tui/themes.py)
  + AuthConfigError             MCP_AUTH_CONFIG_INVALID (mcp/http_auth.py)
  + ToolError                   a refused MCP tool call: its own code (mcp/tool_errors.py)
  + UsageError                  USAGE: bad usage of `run-repl` (cli.py)

Outside the tree on purpose: `context.Interrupt` (a BaseException, so a host
function's `except Exception` never swallows an approval's pause) and a few
exceptions that never leave the module raising them (the test names them).
"""

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
    RUN_ARGUMENT_TOO_LARGE = "RUN_ARGUMENT_TOO_LARGE"
    RUN_HOST_RESULT_TOO_LARGE = "RUN_HOST_RESULT_TOO_LARGE"
    RUN_UNKNOWN_MEMBER = "RUN_UNKNOWN_MEMBER"
    RUN_HOST_FUNCTION_ERROR = "RUN_HOST_FUNCTION_ERROR"
    RUN_DETACHED_CALL = "RUN_DETACHED_CALL"
    RUN_BRIDGE_LIMIT = "RUN_BRIDGE_LIMIT"
    RUN_BUSY = "RUN_BUSY"
    RUN_APPROVAL_DENIED = "RUN_APPROVAL_DENIED"
    RUN_CONTINUATION_INVALID = "RUN_CONTINUATION_INVALID"
    RUN_RESOLUTION_INVALID = "RUN_RESOLUTION_INVALID"
    RUN_REPLAY_MISMATCH = "RUN_REPLAY_MISMATCH"
    RUN_WORKER_CRASHED = "RUN_WORKER_CRASHED"
    RUN_INTERNAL_ERROR = "RUN_INTERNAL_ERROR"
    RUN_HOST_FUNCTIONS_INVALID = "RUN_HOST_FUNCTIONS_INVALID"
    RUN_SECRET_TOO_SHORT = "RUN_SECRET_TOO_SHORT"
    RUN_VALUES_INVALID = "RUN_VALUES_INVALID"
    SECRET_REQUIRES_CLI = "SECRET_REQUIRES_CLI"
    RESULT_REF_NOT_FOUND = "RESULT_REF_NOT_FOUND"


# Codes the guest may carry on an error object it throws; anything else a
# snippet throws is RUN_EXCEPTION, whatever `code` it claims.
GUEST_VISIBLE_CODES = frozenset(
    {
        ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE,
        ErrorCode.RUN_ARGUMENT_TOO_LARGE,
        ErrorCode.RUN_HOST_RESULT_TOO_LARGE,
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


# ------------------------------------------------------------------ next actions

_EDIT = "edit_request"
_RUN_AGAIN = "run_again"

# The one step for each code; codes with facts to fill in are handled below.
_STEPS: dict[ErrorCode, tuple[str, str]] = {
    ErrorCode.RUN_SYNTAX_ERROR: (_EDIT, "Fix the syntax at this line and column, then run again."),
    ErrorCode.RUN_EXCEPTION: (
        _EDIT,
        "The snippet threw: handle the error or fix its cause, then run again.",
    ),
    ErrorCode.RUN_ABORTED: (_RUN_AGAIN, "The run was cancelled; run it again when ready."),
    ErrorCode.RUN_MEMORY_EXCEEDED: (
        _EDIT,
        "The sandbox ran out of memory: hold less at once (page through results), "
        "or raise memory_bytes.",
    ),
    ErrorCode.RUN_SOURCE_TOO_LARGE: (_EDIT, "Shorten the snippet, or raise max_source_bytes."),
    ErrorCode.RUN_VALUE_TOO_LARGE: (
        _EDIT,
        "Select less in the snippet (fewer rows or fields), or raise max_value_bytes.",
    ),
    ErrorCode.RUN_ARGUMENT_TOO_LARGE: (
        _EDIT,
        "Send less to the host per call (ids instead of whole records, or several calls), "
        "or raise max_host_argument_bytes / max_host_argument_bytes_per_run.",
    ),
    ErrorCode.RUN_HOST_RESULT_TOO_LARGE: (
        _EDIT,
        "Ask the host for less per call (filter or page in the call's arguments), or raise "
        "max_host_result_bytes.",
    ),
    ErrorCode.RUN_VALUES_INVALID: (
        _EDIT,
        "Fix the values passed to run (the message names the entry).",
    ),
    ErrorCode.RUN_HOST_FUNCTION_ERROR: (
        _EDIT,
        "A host function failed: check its arguments, or catch the error in the snippet.",
    ),
    ErrorCode.RUN_DETACHED_CALL: (
        _EDIT,
        "Await every host call (or Promise.all them) before the snippet returns.",
    ),
    ErrorCode.RUN_BRIDGE_LIMIT: (
        _EDIT,
        "Make fewer host calls per run (batch them), or raise max_host_calls / "
        "max_host_calls_in_flight.",
    ),
    ErrorCode.RUN_APPROVAL_DENIED: (
        _EDIT,
        "The call was denied: catch the denial or take another path.",
    ),
    ErrorCode.RUN_CONTINUATION_INVALID: (
        _RUN_AGAIN,
        "This continuation cannot be used (tampered, expired, already used or for another "
        "run): run the snippet again from the start.",
    ),
    ErrorCode.RUN_RESOLUTION_INVALID: (
        _EDIT,
        "Fix the resolutions (the message names the entry): one {'interruption_id': ..., "
        "'value': ...} per pending interruption, then resume with the same continuation "
        "(nothing ran, so it is still good).",
    ),
    ErrorCode.RUN_REPLAY_MISMATCH: (
        _RUN_AGAIN,
        "The snippet made different calls on replay than before; run it again from the "
        "start (finished calls will run again).",
    ),
    ErrorCode.RUN_WORKER_CRASHED: (
        _RUN_AGAIN,
        "The sandbox process died; run again (a fresh one starts).",
    ),
    ErrorCode.RUN_INTERNAL_ERROR: (
        _RUN_AGAIN,
        "run-repl failed to read this run's result (a bug: please report it with the "
        "snippet); the calls listed did happen, so check them before running again.",
    ),
    ErrorCode.RUN_HOST_FUNCTIONS_INVALID: (
        _EDIT,
        "Fix the host functions passed to run (the message names the entry).",
    ),
    ErrorCode.RUN_SECRET_TOO_SHORT: (
        _EDIT,
        "Give a continuation secret of at least 32 bytes (e.g. 64 hex characters).",
    ),
    ErrorCode.RESULT_REF_NOT_FOUND: (
        _RUN_AGAIN,
        "That result is no longer stored (unknown, evicted or expired): run the snippet again.",
    ),
}


def next_actions(code: ErrorCode | str, **details: Any) -> list[dict[str, Any]]:
    """The next step for `code`, filled with what is known (line, path, ...)."""
    line, column = details.get("line"), details.get("column")
    where: dict[str, Any] = {}
    if line is not None:
        where["line"] = line
        if column is not None:
            where["column"] = column
    path = {"path": details["path"]} if details.get("path") else {}

    def edit(why: str, **extra: Any) -> list[dict[str, Any]]:
        return [{"type": _EDIT, **where, **extra, "why": why}]

    match code:
        case ErrorCode.RUN_TIMEOUT:
            ms = details.get("timeout_ms")
            limit = f" of {ms} ms" if ms else ""
            return edit(
                f"The run passed its deadline{limit}: do less per run (narrow the query, fewer "
                "calls), or raise timeout_ms. Calls listed as ok did happen."
            )
        case ErrorCode.RUN_VALUE_NOT_SERIALIZABLE:
            return edit(
                details.get("hint") or "Return JSON data: convert the value at this path first.",
                **path,
            )
        case ErrorCode.RUN_ARGUMENT_NOT_CLONEABLE:
            return edit(
                "Pass data to host functions: JSON values, undefined, Date, RegExp, Map, Set, "
                "BigInt, typed arrays or Errors.",
                **path,
            )
        case ErrorCode.RUN_UNKNOWN_MEMBER:
            return edit(
                "Call a function the host provides.",
                **path,
                did_you_mean=list(details.get("did_you_mean") or []),
            )
        case ErrorCode.RUN_WORKER_CRASHED if details.get("hint"):
            # The sandbox process never started or stopped answering: the engine says why.
            return [{"type": _RUN_AGAIN, "why": details["hint"]}]
        case ErrorCode.RUN_BUSY:
            return [
                {
                    "type": "retry",
                    "after_ms": details.get("after_ms", 250),
                    "why": "Too many runs are in flight; retry shortly.",
                }
            ]
    step = _STEPS.get(code) if isinstance(code, ErrorCode) else None
    if step is None:
        return []
    kind, why = step
    return edit(why) if kind == _EDIT else [{"type": kind, "why": why}]


# ------------------------------------------------------------------ exceptions


class RunReplError(Exception):
    """The base of every exception run-repl raises on purpose: a stable `code`
    for programs, the message for people, and `next_actions`."""

    code: ErrorCode | str = ErrorCode.RUN_INTERNAL_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def next_actions(self) -> list[dict[str, Any]]:
        return next_actions(self.code)


class HostError(RunReplError):
    """Raise from a host function to tell the snippet (and the run's caller) why.

    Any other exception reaches the guest as its class name only. This one
    carries `message`, and its own `code` (e.g. "PAYMENT_REQUIRED"),
    `details` (data) and `next_actions` (e.g. a `run_cli_command` with the
    exact `command`) when given."""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: Any = None,
        next_actions: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.host_code = code
        self.code = code or ErrorCode.RUN_HOST_FUNCTION_ERROR
        self.details = details
        self.host_next_actions = list(next_actions) if next_actions else None

    @property
    def next_actions(self) -> list[dict[str, Any]]:
        if self.host_next_actions is not None:
            return self.host_next_actions
        return next_actions(ErrorCode.RUN_HOST_FUNCTION_ERROR)


class ApprovalDenied(RunReplError):
    """Raised inside a host call when a person (or the policy) said no."""

    code = ErrorCode.RUN_APPROVAL_DENIED

    def __init__(self, message: str, interruption_id: str | None = None) -> None:
        super().__init__(message)
        self.interruption_id = interruption_id


class CodecError(RunReplError, ValueError):
    """A value that cannot cross the boundary; `path` names the offending part."""

    code = ErrorCode.RUN_VALUE_NOT_SERIALIZABLE

    def __init__(self, what: str, path: str) -> None:
        super().__init__(f"{what} at {path} cannot cross the sandbox boundary")
        self.what = what
        self.path = path


class ContinuationInvalid(RunReplError, ValueError):
    """Tampered, truncated, expired, used, or for another source, host, audience or context."""

    code = ErrorCode.RUN_CONTINUATION_INVALID


class ResolutionInvalid(RunReplError, ValueError):
    """A set of resolutions that cannot be used as it is: not a list, an entry that is
    not exactly {interruption_id, value}, two for one interruption, or an id the
    continuation does not wait on. The message names the entry."""

    code = ErrorCode.RUN_RESOLUTION_INVALID


class SecretTooShort(RunReplError, ValueError):
    """A continuation secret under 32 bytes, from any source."""

    code = ErrorCode.RUN_SECRET_TOO_SHORT


class HostResultTooLarge(CodecError):
    """A host function's result is over max_host_result_bytes (found before encoding ends)."""

    code = ErrorCode.RUN_HOST_RESULT_TOO_LARGE

    def __init__(self, limit: int, path: str) -> None:
        RunReplError.__init__(
            self, f"a value over max_host_result_bytes ({limit:,} bytes) at {path}"
        )
        self.what = f"a value over max_host_result_bytes ({limit:,} bytes)"
        self.path = path
        self.limit = limit


class ValuesError(RunReplError, ValueError):
    """The values= argument is malformed; the message names the entry."""

    code = ErrorCode.RUN_VALUES_INVALID


class HostFunctionsError(RunReplError, TypeError):
    """The host_functions argument is malformed; the message names the entry."""

    code = ErrorCode.RUN_HOST_FUNCTIONS_INVALID


class ResultRefNotFound(RunReplError, LookupError):
    """An unknown, evicted or expired ref."""

    code = ErrorCode.RESULT_REF_NOT_FOUND

    def __init__(self, ref: str) -> None:
        super().__init__(
            f"No stored result {ref!r}: it is unknown, or it was evicted or expired. "
            "Run the snippet again to get a fresh one."
        )
        self.ref = ref


class TypeScriptSyntaxError(RunReplError):
    """A construct that cannot run once types are stripped, at a 1-based line and column.

    The column counts characters (Python `str` indices) in the user's original text."""

    code = ErrorCode.RUN_SYNTAX_ERROR

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column

    def __repr__(self) -> str:
        return f"TypeScriptSyntaxError({self.message!r}, line={self.line}, column={self.column})"
