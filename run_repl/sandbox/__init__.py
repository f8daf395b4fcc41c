"""The engine: runs a snippet in a fresh QuickJS worker whose only doors are host functions.

A library on its own: it imports no UI toolkit and no store.
"""

from .approval import requires_approval
from .cli_only import requires_cli
from .context import HostFunctionContext, Resume, get_host_function_context
from .errors import ApprovalDenied, ErrorCode, HostError, RunReplError, ValuesError
from .handles import handle
from .limits import Limits
from .result import CallRecord, Interruption, LogLine, RunErrorInfo, RunResult, ValueWindow
from .runner import Runner, create_runner, run, run_sync
from .values import (
    NO_CAUSE,
    UNDEFINED,
    JSArrayBuffer,
    JSBigInt,
    JSDate,
    JSError,
    JSMap,
    JSRegExp,
    JSSet,
    JSTypedArray,
    JSUint8Array,
)

__all__ = [
    "NO_CAUSE",
    "UNDEFINED",
    "ApprovalDenied",
    "CallRecord",
    "ErrorCode",
    "HostError",
    "HostFunctionContext",
    "Interruption",
    "JSArrayBuffer",
    "JSBigInt",
    "JSDate",
    "JSError",
    "JSMap",
    "JSRegExp",
    "JSSet",
    "JSTypedArray",
    "JSUint8Array",
    "Limits",
    "LogLine",
    "Resume",
    "RunErrorInfo",
    "RunReplError",
    "RunResult",
    "Runner",
    "ValueWindow",
    "ValuesError",
    "create_runner",
    "get_host_function_context",
    "handle",
    "requires_approval",
    "requires_cli",
    "run",
    "run_sync",
]
