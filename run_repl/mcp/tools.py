"""The tools a model sees: names, descriptions, JSON schemas, and their arguments checked.

The descriptions are the model's only documentation, so they say what a
snippet may do, what comes back and what to do next, in the model's terms.
Arguments are checked here, once, before anything runs: a bad one is a
ToolError naming the argument and what to send instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ..sandbox.errors import ErrorCode, next_actions
from ..sandbox.result_store import MAX_PAGE
from ..sandbox.source import check_source
from .tool_errors import (
    TOOL_ARGUMENT_INVALID,
    ToolError,
    bad_argument,
    closest,
    edit,
    json_type,
)

RUN = "run"
EXPAND = "expand_result"
DOCS = "docs"
APPROVAL_STATUS = "approval_status"
MAX_STATUS_IDS = 100
MAX_IDEMPOTENCY_KEY = 200


@dataclass(frozen=True)
class ToolSettings:
    """What the descriptions and the checks depend on (the command line's options)."""

    default_timeout_s: float = 60
    max_timeout_s: float = 300
    max_source_bytes: int = 256 * 1024
    approval_wait_s: float = 120
    max_runs_in_flight: int = 4


# ---------------------------------------------------------------- schemas
_NEXT_ACTIONS = {
    "type": "array",
    "description": "What to do next: one step, {type, why, ...} (edit_request, retry, run_again, approve, run_cli_command).",
    "items": {
        "type": "object",
        "properties": {"type": {"type": "string"}, "why": {"type": "string"}},
    },
}
_ERROR = {
    "type": "object",
    "description": "Why the run failed: a stable code, a message, line and column when known, and the next action.",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "line": {"type": "integer"},
        "column": {"type": "integer"},
        "next_actions": _NEXT_ACTIONS,
    },
    "required": ["code", "message"],
}
ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["ok", "error", "interrupted"]},
        "value": {"description": "The result, whole, when its pretty JSON fits 200 lines."},
        "value_kind": {"type": "string"},
        "value_ref": {"type": "string", "description": "Pass to expand_result to page the value."},
        "shown": {"type": "integer", "description": "Items shown (in value or value_window)."},
        "total": {"type": "integer", "description": "Items in the whole value."},
        "value_window": {
            "type": "object",
            "description": "A large value's leading items; path says where they live ($, $.rows, $entries, $lines).",
            "properties": {
                "path": {"type": "string"},
                "items": {"type": "array"},
                "rest": {"type": "object"},
            },
        },
        "logs": {"type": "array", "items": {"type": "object"}},
        "logs_ref": {"type": "string"},
        "logs_total": {"type": "integer"},
        "calls": {
            "type": "array",
            "description": "Every host call, in order: the audit trail of what the snippet did.",
            "items": {"type": "object"},
        },
        "duration_ms": {"type": "number"},
        "error": _ERROR,
        "interruptions": {
            "type": "array",
            "description": "The calls waiting for a person's approval (status interrupted).",
            "items": {"type": "object"},
        },
        "approval_ids": {"type": "array", "items": {"type": "string"}},
        "next_actions": _NEXT_ACTIONS,
        "run_id": {"type": "string"},
    },
    "required": ["status"],
}
PAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ref": {"type": "string"},
        "path": {"type": "string"},
        "offset": {"type": "integer"},
        "items": {"type": "array"},
        "total": {"type": "integer"},
        "has_more": {"type": "boolean"},
        "next_offset": {"type": "integer", "description": "The offset of the next page."},
        "rest": {"type": "object", "description": "For $.field paths: the object's other fields."},
    },
    "required": ["ref", "offset", "items", "total", "has_more"],
}
DOCS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "host": {"type": "string"},
        "functions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "signature": {"type": "string"},
                    "doc": {"type": "string"},
                    "needs_approval": {"type": "boolean"},
                    "approval": {"type": "string", "enum": ["allow", "ask", "deny"]},
                },
            },
        },
        "declarations": {"type": "string", "description": "TypeScript declarations (.d.ts)."},
    },
    "required": ["host", "functions", "declarations"],
}
STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": ["waiting", "done", "ended"],
            "description": "waiting: a person has not decided (or the run is resuming); done: result holds the final result; ended: it ended without one (approvals say why).",
        },
        "run_id": {"type": ["string", "null"]},
        "approvals": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "path": {"type": "string"},
                    "args": {"type": "array"},
                    "message": {"type": "string"},
                    "state": {"type": "string"},
                },
            },
        },
        "result": ENVELOPE_SCHEMA,
        "note": {"type": "string"},
    },
    "required": ["status", "approvals"],
}


def tool_list(settings: ToolSettings, host_summary: str) -> list[types.Tool]:
    """The four tools, described for a model."""
    wait = _seconds(settings.approval_wait_s)
    return [
        types.Tool(
            name=RUN,
            title="Run a JavaScript/TypeScript snippet against the host's functions",
            description=(
                "Run a JavaScript or TypeScript snippet in a QuickJS sandbox whose only doors are "
                f"the host's functions ({host_summary}; call `docs` for their TypeScript "
                "signatures before you write code against them).\n\n"
                "- The code is the body of an async function: top-level `await` works, and the "
                "value of an explicit `return`, else of the last expression statement, is the "
                "result. TypeScript types are stripped, not compiled: `enum`, `namespace`, "
                "parameter properties and decorators are syntax errors.\n"
                "- Every host function returns a Promise: await it. Independent calls run at "
                "once under `Promise.all`.\n"
                "- Globals: the ECMAScript builtins, `console` (captured into logs), `URL`, "
                "`TextEncoder`, `TextDecoder`, `structuredClone`, `crypto.randomUUID`, and the "
                "host's namespaces. There is no fetch, no timers, no require or import, no "
                "filesystem. Each run starts fresh: nothing survives from one run to the next.\n"
                "- The result must be JSON data (a Date becomes its ISO string): convert a Map "
                "with `Object.fromEntries(map)`, a Set with `[...set]`, a BigInt with `String(n)`. "
                "A result whose pretty JSON is over 200 lines comes as `value_window` (its first "
                "items) with `value_ref`: page the rest with `expand_result`, or select less.\n"
                "- Some host functions need a person's approval (`docs` marks them). The call "
                f"then waits up to {wait} for a person to decide in run-repl. Approved: the call "
                "runs and you get the final result. Denied: the awaited call throws an Error "
                'whose code is "RUN_APPROVAL_DENIED" (catch it to take another path). Nobody '
                'decided in time: status "interrupted" with `approval_ids`; call '
                "`approval_status` later with the run_id. Never retry the operation another way "
                "meanwhile: the person's decision still applies to this run.\n"
                "- If you may send this call again (a timeout, a dropped connection, a restart), "
                "set `idempotency_key` to a fresh unique string and reuse it on every retry of "
                "this call: a retry with the same key and code gets the first call's run (its "
                "result, or where it stands) instead of running again or asking a person twice.\n"
                "- A failure has `error.code`, `error.message` (with line and column when known) "
                "and `error.next_actions`: what to do next. RUN_BUSY means "
                f"{settings.max_runs_in_flight} runs are already in flight: retry shortly.\n\n"
                'Example: `const [a, b] = await Promise.all([crm.getAccount("acc_0001"), '
                'billing.listInvoices("acc_0001")]);\nreturn { name: a.name, open: b.filter((i) '
                '=> i.status !== "paid").length };`'
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "The snippet: JavaScript or TypeScript, the body of an async function.",
                    },
                    "timeout_seconds": {
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "maximum": settings.max_timeout_s,
                        "default": settings.default_timeout_s,
                        "description": (
                            f"Wall-clock limit of the run, in seconds: {_seconds(settings.default_timeout_s)} "
                            f"by default, at most {_seconds(settings.max_timeout_s)}. Time spent "
                            "waiting for a person's approval does not count."
                        ),
                    },
                    "idempotency_key": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_IDEMPOTENCY_KEY,
                        "description": (
                            "Set it when you may retry this call: a unique string (a UUID) you "
                            "reuse on every retry. Within a day, the same key with the same code "
                            "returns the first call's run instead of running it again."
                        ),
                    },
                },
                "required": ["code"],
                "additionalProperties": False,
            },
            output_schema=ENVELOPE_SCHEMA,
            annotations=types.ToolAnnotations(
                title="Run a snippet",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=True,
            ),
        ),
        types.Tool(
            name=EXPAND,
            title="Page through a stored result or log",
            description=(
                "The next items of a run's value (or its logs) without running the snippet again. "
                "Pass the run's `value_ref` (or `logs_ref`) and `offset`: the run's `shown` for the "
                "first page after its window, then this tool's `next_offset`. Items are what the "
                "window counts: an array's elements ($), the rows of an object's largest array "
                "($.rows, with the other fields in `rest`), an object's entries as {key, value} "
                "($entries), or a string's lines ($lines). Without `limit`, a page holds as many "
                "whole items as fit 200 lines of pretty JSON."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "value_ref": {
                        "type": "string",
                        "description": "A value_ref or logs_ref from a run (res_...).",
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The first item to return, counted from 0 (a run's `shown`, or a page's `next_offset`).",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_PAGE,
                        "description": f"How many items, 1-{MAX_PAGE} (default: what fits 200 lines).",
                    },
                },
                "required": ["value_ref", "offset"],
                "additionalProperties": False,
            },
            output_schema=PAGE_SCHEMA,
            annotations=types.ToolAnnotations(
                title="Page a result", read_only_hint=True, open_world_hint=False
            ),
        ),
        types.Tool(
            name=DOCS,
            title="The host's functions, as TypeScript",
            description=(
                "The host functions a `run` snippet can call: TypeScript declarations with each "
                "function's parameters, return type and documentation, and which ones ask a person "
                "for approval first (or are always denied). Read it before writing a snippet; pass "
                "`path` (a namespace such as `crm`, or a function such as `crm.getAccount`) to see "
                "part of a large host."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Only this namespace or function (e.g. `crm` or `crm.getAccount`).",
                    }
                },
                "additionalProperties": False,
            },
            output_schema=DOCS_SCHEMA,
            annotations=types.ToolAnnotations(
                title="Host documentation", read_only_hint=True, open_world_hint=False
            ),
        ),
        types.Tool(
            name=APPROVAL_STATUS,
            title="Where a run waiting for a person's approval stands",
            description=(
                'For a run that returned status "interrupted" (a call waits for a person\'s '
                "approval): whether the person has decided, and once they have, the run's final "
                "result (the same shape `run` returns). Pass the run's `run_id`, or its "
                "`approval_ids`. With `wait_seconds`, waits up to that long for a decision before "
                "answering. Do not run the operation another way while it waits."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "run_id": {"type": "string", "description": "The run_id of the paused run."},
                    "approval_ids": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": MAX_STATUS_IDS,
                        "description": "Or the approval ids it returned (int_...).",
                    },
                    "wait_seconds": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": settings.max_timeout_s,
                        "default": 0,
                        "description": "Wait up to this long for a decision (default 0: answer at once).",
                    },
                },
                "additionalProperties": False,
            },
            output_schema=STATUS_SCHEMA,
            annotations=types.ToolAnnotations(
                title="Approval status", read_only_hint=True, open_world_hint=False
            ),
        ),
    ]


def _seconds(value: float) -> str:
    return f"{value:g} s"


# ---------------------------------------------------------------- arguments
@dataclass(frozen=True)
class RunArgs:
    code: str
    timeout_s: float
    idempotency_key: str | None = None


@dataclass(frozen=True)
class ExpandArgs:
    ref: str
    offset: int
    limit: int | None


@dataclass(frozen=True)
class DocsArgs:
    path: str | None


@dataclass(frozen=True)
class StatusArgs:
    run_id: str | None
    approval_ids: list[str] | None
    wait_s: float


def _known(tool: str, arguments: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for name in arguments:
        if name not in allowed:
            close = closest(name, allowed)
            hint = f": did you mean {close}?" if close else f" (it takes {', '.join(allowed)})"
            raise bad_argument(
                name,
                f"{tool} has no argument {name!r}{hint}",
                f"Call {tool} with {', '.join(allowed)} only.",
            )


def _string(tool: str, arguments: dict[str, Any], name: str, what: str) -> str:
    if name not in arguments:
        raise bad_argument(name, f"{tool} needs {name}: {what}.", f"Pass {name}: {what}.")
    value = arguments[name]
    if not isinstance(value, str):
        raise bad_argument(
            name,
            f"{name} must be a string ({what}), not {json_type(value)}.",
            f"Pass {name} as a string.",
        )
    return value


def _number(
    arguments: dict[str, Any],
    name: str,
    low: float,
    high: float,
    default: float,
    *,
    above_low: bool = False,
) -> float:
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise bad_argument(
            name,
            f"{name} must be a number of seconds, not {json_type(value)}.",
            f"Pass {name} as a number from {low:g} to {high:g}, or leave it out ({default:g}).",
        )
    if value < low or value > high or (above_low and value == low):
        bound = f"more than {low:g}" if above_low else f"at least {low:g}"
        raise bad_argument(
            name,
            f"{name} is {value:g}: it must be {bound} and at most {high:g} seconds.",
            f"Pass {name} from {max(low, 1):g} to {high:g}, or leave it out ({default:g}).",
        )
    return float(value)


def _integer(name: str, value: Any, low: int, high: int, why: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_argument(name, f"{name} must be a whole number, not {json_type(value)}.", why)
    if not low <= value <= high:
        raise bad_argument(name, f"{name} is {value}: it must be from {low} to {high:,}.", why)
    return value


def parse_run(arguments: dict[str, Any], settings: ToolSettings) -> RunArgs:
    _known(RUN, arguments, ("code", "timeout_seconds", "idempotency_key"))
    code = _string(RUN, arguments, "code", "the snippet's JavaScript or TypeScript source")
    timeout = _number(
        arguments,
        "timeout_seconds",
        0,
        settings.max_timeout_s,
        settings.default_timeout_s,
        above_low=True,
    )
    problem = check_source(code, settings.max_source_bytes)
    if problem is not None and problem.code == ErrorCode.RUN_SOURCE_TOO_LARGE:
        # Refused before it is run or kept: a huge source must not fill the history.
        raise ToolError(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            problem.message,
            next_actions(ErrorCode.RUN_SOURCE_TOO_LARGE)[0],
        )
    key = None
    if arguments.get("idempotency_key") is not None:
        key = _string(RUN, arguments, "idempotency_key", "a unique string you reuse on retries")
        if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY:
            raise bad_argument(
                "idempotency_key",
                f"idempotency_key is {len(key)} characters: it must be 1 to {MAX_IDEMPOTENCY_KEY}.",
                "Pass a short unique string (a UUID), the same on every retry of this call.",
            )
    return RunArgs(code, timeout, key)


def parse_expand(arguments: dict[str, Any]) -> ExpandArgs:
    _known(EXPAND, arguments, ("value_ref", "offset", "limit"))
    ref = _string(EXPAND, arguments, "value_ref", "a run's value_ref or logs_ref (res_...)")
    if "offset" not in arguments:
        raise bad_argument(
            "offset",
            "expand_result needs offset: the first item to return, counted from 0.",
            "Pass offset: the run's `shown` for the page after its window, or a page's `next_offset`.",
        )
    offset = _integer(
        "offset",
        arguments["offset"],
        0,
        (1 << 63) - 1,
        "Pass offset as a whole number from 0 (the run's `shown`, or a page's `next_offset`).",
    )
    limit = None
    if arguments.get("limit") is not None:
        limit = _integer(
            "limit",
            arguments["limit"],
            1,
            MAX_PAGE,
            f"Pass limit from 1 to {MAX_PAGE}, or leave it out.",
        )
    return ExpandArgs(ref, offset, limit)


def parse_docs(arguments: dict[str, Any]) -> DocsArgs:
    _known(DOCS, arguments, ("path",))
    if arguments.get("path") is None:
        return DocsArgs(None)
    path = _string(DOCS, arguments, "path", "a namespace or a function, e.g. crm.getAccount")
    return DocsArgs(path.strip() or None)


def parse_status(arguments: dict[str, Any], settings: ToolSettings) -> StatusArgs:
    _known(APPROVAL_STATUS, arguments, ("run_id", "approval_ids", "wait_seconds"))
    run_id = arguments.get("run_id")
    ids = arguments.get("approval_ids")
    if run_id is None and ids is None:
        raise bad_argument(
            "run_id",
            "approval_status needs run_id (or approval_ids).",
            "Pass the run_id of the run that returned status interrupted.",
        )
    if run_id is not None and not isinstance(run_id, str):
        raise bad_argument(
            "run_id",
            f"run_id must be a string, not {json_type(run_id)}.",
            "Pass run_id as a string (run_...).",
        )
    if ids is not None:
        if (
            not isinstance(ids, list)
            or not ids
            or len(ids) > MAX_STATUS_IDS
            or not all(isinstance(i, str) for i in ids)
        ):
            raise bad_argument(
                "approval_ids",
                f"approval_ids must be a list of 1 to {MAX_STATUS_IDS} strings, not {json_type(ids)}"
                + (f" of {len(ids)}" if isinstance(ids, list) else "")
                + ".",
                'Pass approval_ids as a list of ids, e.g. ["int_..."], or pass run_id.',
            )
    wait = _number(arguments, "wait_seconds", 0, settings.max_timeout_s, 0)
    return StatusArgs(run_id, list(ids) if ids is not None else None, wait)


__all__ = [
    "APPROVAL_STATUS",
    "DOCS",
    "ENVELOPE_SCHEMA",
    "EXPAND",
    "RUN",
    "TOOL_ARGUMENT_INVALID",
    "DocsArgs",
    "ExpandArgs",
    "RunArgs",
    "StatusArgs",
    "ToolSettings",
    "edit",
    "parse_docs",
    "parse_expand",
    "parse_run",
    "parse_status",
    "tool_list",
]
