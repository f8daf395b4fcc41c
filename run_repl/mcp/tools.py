"""The tools a model sees: names, descriptions, schemas, and their arguments checked.

The descriptions are the model's only documentation, so they say what a
snippet may do, what comes back and what to do next, in the model's terms.
The schemas are generated from each tool's models (tool_models.py), and the
same models check the arguments, here, once, before anything runs: a bad one
is a ToolError naming the argument and what to send instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from ..sandbox.errors import ErrorCode, next_actions
from ..sandbox.session.source_check import check_source
from .tool_errors import (
    TOOL_ARGUMENT_INVALID,
    ToolError,
    bad_argument,
    closest,
    edit,
    json_type,
)
from .tool_models import (
    Arguments,
    bounds,
    input_schema,
    output_schema,
    says,
)
from .tool_models import input_models as _input_models

RUN = "run"
EXPAND = "expand_result"
DOCS = "docs"
APPROVAL_STATUS = "approval_status"


@dataclass(frozen=True)
class ToolSettings:
    """What the descriptions and the checks depend on (the command line's options)."""

    default_timeout_s: float = 60
    max_timeout_s: float = 300
    max_source_bytes: int = 256 * 1024
    approval_wait_s: float = 120
    max_runs_in_flight: int = 4


@lru_cache(maxsize=16)
def input_models(settings: ToolSettings) -> dict[str, type[Arguments]]:
    """The tools' argument models for these settings (built once per settings)."""
    return _input_models(settings)


def tool_list(settings: ToolSettings, host_summary: str) -> list[types.Tool]:
    """The four tools, described for a model; their schemas come from their models."""
    wait = _seconds(settings.approval_wait_s)
    models = input_models(settings)
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
                "runs and you get the final result (the resumed run has a run_id of its own; "
                "`resumed_from` names the paused one). Denied: the awaited call throws an Error "
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
            input_schema=input_schema(models[RUN]),
            output_schema=output_schema(RUN),
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
            input_schema=input_schema(models[EXPAND]),
            output_schema=output_schema(EXPAND),
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
            input_schema=input_schema(models[DOCS]),
            output_schema=output_schema(DOCS),
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
                "result (the same shape `run` returns, with `resumed_from`). Pass the run's `run_id`, or its "
                "`approval_ids`. With `wait_seconds`, waits up to that long for a decision before "
                "answering. Do not run the operation another way while it waits."
            ),
            input_schema=input_schema(models[APPROVAL_STATUS]),
            output_schema=output_schema(APPROVAL_STATUS),
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


def _checked(tool: str, model: type[Arguments], arguments: dict[str, Any]) -> Any:
    """The arguments, checked by the tool's model; a bad one is a ToolError that names it."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise _refusal(tool, model, arguments, exc) from None


def _refusal(
    tool: str, model: type[Arguments], arguments: dict[str, Any], exc: ValidationError
) -> ToolError:
    allowed = tuple(model.model_fields)
    errors = exc.errors()
    # An unknown name first: a misspelt argument explains the "missing" one too.
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    error = errors[0]
    name = str(error["loc"][0]) if error["loc"] else allowed[0]
    if error["type"] == "extra_forbidden":
        close = closest(name, allowed)
        hint = f": did you mean {close}?" if close else f" (it takes {', '.join(allowed)})"
        return bad_argument(
            name,
            f"{tool} has no argument {name!r}{hint}",
            f"Call {tool} with {', '.join(allowed)} only.",
        )
    said = says(model, name)
    default = model.model_fields[name].default
    leave_out = "" if model.model_fields[name].is_required() else _or_leave_out(default)
    if error["type"] == "missing":
        return bad_argument(
            name, f"{tool} needs {name}: {said.what}.", f"Pass {name}: {said.what}."
        )
    value = arguments.get(name)
    low, above, high = bounds(model, name)
    if error["type"] in _RANGE and isinstance(value, int | float) and low is not None:
        unit = f" {said.unit}" if said.unit else ""
        bound = f"more than {_number(low)}" if above else f"at least {_number(low)}"
        top = f" and at most {_number(high)}{unit}" if high is not None else ""
        return bad_argument(
            name,
            f"{name} is {_number(value)}: it must be {bound}{top}.",
            f"Pass {name} {bound}{top}{leave_out}.",
        )
    kind = said.kind + (f" of {said.unit}" if said.unit else "")
    count = f" of {len(value)}" if isinstance(value, list) else ""
    return bad_argument(
        name,
        f"{name} must be {kind} ({said.what}), not {json_type(value)}{count}.",
        f"Pass {name} as {said.kind}{leave_out}.",
    )


_RANGE = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def _or_leave_out(default: Any) -> str:
    if isinstance(default, int | float):
        return f", or leave it out ({_number(default)})"
    return ", or leave it out"


def _number(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


def parse_run(arguments: dict[str, Any], settings: ToolSettings) -> RunArgs:
    checked = _checked(RUN, input_models(settings)[RUN], arguments)
    timeout = checked.timeout_seconds
    code: str = checked.code
    problem = check_source(code, settings.max_source_bytes)
    if problem is not None and problem.code == ErrorCode.RUN_SOURCE_TOO_LARGE:
        # Refused before it is run or kept: a huge source must not fill the history.
        raise ToolError(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            problem.message,
            next_actions(ErrorCode.RUN_SOURCE_TOO_LARGE)[0],
        )
    return RunArgs(
        code,
        float(settings.default_timeout_s if timeout is None else timeout),
        checked.idempotency_key,
    )


def parse_expand(arguments: dict[str, Any]) -> ExpandArgs:
    # expand_result's and docs' arguments do not depend on the server's settings.
    checked = _checked(EXPAND, input_models(ToolSettings())[EXPAND], arguments)
    return ExpandArgs(checked.value_ref, checked.offset, checked.limit)


def parse_docs(arguments: dict[str, Any]) -> DocsArgs:
    checked = _checked(DOCS, input_models(ToolSettings())[DOCS], arguments)
    path: str | None = checked.path
    return DocsArgs(path.strip() or None if path is not None else None)


def parse_status(arguments: dict[str, Any], settings: ToolSettings) -> StatusArgs:
    checked = _checked(APPROVAL_STATUS, input_models(settings)[APPROVAL_STATUS], arguments)
    if checked.run_id is None and checked.approval_ids is None:
        raise bad_argument(
            "run_id",
            "approval_status needs run_id (or approval_ids).",
            "Pass the run_id of the run that returned status interrupted.",
        )
    wait = checked.wait_seconds
    return StatusArgs(checked.run_id, checked.approval_ids, float(wait or 0))


__all__ = [
    "APPROVAL_STATUS",
    "DOCS",
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
