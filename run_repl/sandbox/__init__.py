"""The engine: runs a snippet in a fresh QuickJS worker whose only doors are host functions.

A library on its own: it imports no UI toolkit and no store.

The names below load on first use (PEP 562), so importing a sub-package (the
child process imports `run_repl.sandbox.process`, which must stay small) runs
none of the rest, and pydantic only loads with the types that need it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .approval import requires_approval
    from .cli_only import requires_cli
    from .context import HostFunctionContext, Resume, get_host_function_context
    from .errors import ApprovalDenied, ErrorCode, HostError, RunReplError, ValuesError
    from .handles import handle
    from .idempotency import idempotent
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

# Each public name, and the module that defines it.
_HOMES = {
    "requires_approval": "approval",
    "requires_cli": "cli_only",
    "HostFunctionContext": "context",
    "Resume": "context",
    "get_host_function_context": "context",
    "ApprovalDenied": "errors",
    "ErrorCode": "errors",
    "HostError": "errors",
    "RunReplError": "errors",
    "ValuesError": "errors",
    "handle": "handles",
    "idempotent": "idempotency",
    "Limits": "limits",
    "CallRecord": "result",
    "Interruption": "result",
    "LogLine": "result",
    "RunErrorInfo": "result",
    "RunResult": "result",
    "ValueWindow": "result",
    "Runner": "runner",
    "create_runner": "runner",
    "run": "runner",
    "run_sync": "runner",
    "NO_CAUSE": "values",
    "UNDEFINED": "values",
    "JSArrayBuffer": "values",
    "JSBigInt": "values",
    "JSDate": "values",
    "JSError": "values",
    "JSMap": "values",
    "JSRegExp": "values",
    "JSSet": "values",
    "JSTypedArray": "values",
    "JSUint8Array": "values",
}

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
    "idempotent",
    "requires_approval",
    "requires_cli",
    "run",
    "run_sync",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        # AttributeError lets `from run_repl.sandbox import wire` find the sub-package
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
