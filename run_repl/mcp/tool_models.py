"""Each tool's arguments and replies, defined once, as pydantic models.

The schemas a client reads in `tools/list` (`inputSchema`, `outputSchema`)
are generated from these models, and the same models check the arguments
and build the replies, so what is advertised and what is done cannot drift.

Every tool's reply may also be a tool error, `{status: "error", error}`:
the spec wants any `structuredContent` to conform to the tool's
`outputSchema`, and clients check it even when `isError` is true (the
TypeScript SDK does), so each output schema admits that shape too.

The generated schemas are self-contained (no `$ref`: not every client
resolves one), carry no pydantic titles, and describe what a reply holds: an
optional field a reply leaves out is simply not required.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    create_model,
    model_serializer,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import core_schema

from ..sandbox.result import RunErrorInfo, RunResult
from ..sandbox.wire.result_store import MAX_PAGE
from ..store.json_budget import (  # one escaping rule, where the history needs it too
    escaped,
    json_data,
)

MAX_STATUS_IDS = 100
MAX_IDEMPOTENCY_KEY = 200
MAX_OFFSET = (1 << 63) - 1  # what the stores can hold as an integer


# ---------------------------------------------------------------- arguments
@dataclass(frozen=True)
class Says:
    """How an error names an argument: what it is, and what JSON it must be."""

    what: str
    kind: str
    unit: str = ""


class Arguments(BaseModel):
    """A tool's arguments: exactly these names, each of exactly its JSON type."""

    model_config = ConfigDict(strict=True, extra="forbid")


def _whole(value: Any) -> Any:
    # JSON has one kind of number: 3.0 is the whole number 3 (as JSON Schema's integer says).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# Whole numbers within bounds (constraints first, so the schema shows them).
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET), BeforeValidator(_whole)]
PageSize = Annotated[int, Field(ge=1, le=MAX_PAGE), BeforeValidator(_whole)]


def input_models(
    settings: Any,
) -> dict[str, type[Arguments]]:
    """The four tools' argument models; bounds and defaults follow the server's settings."""
    default_s, max_s = settings.default_timeout_s, settings.max_timeout_s

    class RunArguments(Arguments):
        code: Annotated[str, Says("the snippet's JavaScript or TypeScript source", "a string")] = (
            Field(
                description="The snippet: JavaScript or TypeScript, the body of an async function."
            )
        )
        timeout_seconds: Annotated[
            Annotated[float, Field(gt=0, le=max_s, allow_inf_nan=False)] | None,
            Says("the run's wall-clock limit", "a number", "seconds"),
        ] = Field(
            default_s,
            description=(
                f"Wall-clock limit of the run, in seconds: {default_s:g} s by default, at most "
                f"{max_s:g} s. Time spent waiting for a person's approval does not count."
            ),
        )
        idempotency_key: Annotated[
            Annotated[str, Field(min_length=1, max_length=MAX_IDEMPOTENCY_KEY)] | None,
            Says(
                "a unique string you reuse on every retry of this call",
                f"a string of 1 to {MAX_IDEMPOTENCY_KEY} characters",
            ),
        ] = Field(
            None,
            description=(
                "Set it when you may retry this call: a unique string (a UUID) you reuse on "
                "every retry. Within a day, the same key with the same code returns the first "
                "call's run instead of running it again."
            ),
        )

    class ExpandArguments(Arguments):
        value_ref: Annotated[str, Says("a run's value_ref or logs_ref (res_...)", "a string")] = (
            Field(description="A value_ref or logs_ref from a run (res_...).")
        )
        offset: Annotated[
            Offset,
            Says("the first item to return, counted from 0", "a whole number"),
        ] = Field(
            description="The first item to return, counted from 0 (a run's `shown`, or a page's "
            "`next_offset`)."
        )
        limit: Annotated[
            PageSize | None,
            Says("how many items", "a whole number"),
        ] = Field(None, description=f"How many items, 1-{MAX_PAGE} (default: what fits 200 lines).")

    class DocsArguments(Arguments):
        path: Annotated[
            str | None, Says("a namespace or a function, e.g. crm.getAccount", "a string")
        ] = Field(
            None,
            description="Only this namespace or function (e.g. `crm` or `crm.getAccount`).",
        )

    class StatusArguments(Arguments):
        run_id: Annotated[
            str | None, Says("the run_id of the paused run (run_...)", "a string")
        ] = Field(None, description="The run_id of the paused run.")
        approval_ids: Annotated[
            Annotated[list[str], Field(min_length=1, max_length=MAX_STATUS_IDS)] | None,
            Says(
                "the approval ids the run returned (int_...)",
                f"a list of 1 to {MAX_STATUS_IDS} strings",
            ),
        ] = Field(None, description="Or the approval ids it returned (int_...).")
        wait_seconds: Annotated[
            Annotated[float, Field(ge=0, le=max_s, allow_inf_nan=False)] | None,
            Says("how long to wait for a decision", "a number", "seconds"),
        ] = Field(0, description="Wait up to this long for a decision (default 0: answer at once).")

    return {
        "run": RunArguments,
        "expand_result": ExpandArguments,
        "docs": DocsArguments,
        "approval_status": StatusArguments,
    }


def says(model: type[Arguments], name: str) -> Says:
    for item in model.model_fields[name].metadata:
        if isinstance(item, Says):
            return item
    return Says(name, "a value")


def bounds(model: type[Arguments], name: str) -> tuple[float | None, bool, float | None]:
    """An argument's range: (low, whether low itself is excluded, high)."""
    low: float | None = None
    above = False
    high: float | None = None

    def visit(node: Any) -> None:
        nonlocal low, above, high
        for item in getattr(node, "metadata", ()) or ():
            if getattr(item, "gt", None) is not None:
                low, above = item.gt, True
            if getattr(item, "ge", None) is not None:
                low = item.ge
            if getattr(item, "le", None) is not None:
                high = item.le
        for arg in getattr(node, "__args__", ()) or ():
            visit(arg)
        for item in getattr(node, "__metadata__", ()) or ():
            visit(item)

    field = model.model_fields[name]
    visit(field)
    visit(field.annotation)
    return low, above, high


# ---------------------------------------------------------------- replies
class Reply(BaseModel):
    """A reply's data: a field that does not apply is left out, not written as null."""

    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class ToolFailure(Reply):
    """A call the server refused or could not finish: a code, a message, the next step."""

    status: Literal["error"]
    error: RunErrorInfo
    run_id: str | None = Field(
        None, description="The run this call made, when it ran one (it is in run-repl's history)."
    )


_ENVELOPE_WORDS = {
    "status": "ok, error, or interrupted (a call waits for a person's approval).",
    "value": "The result, whole, when its pretty JSON fits 200 lines.",
    "value_ref": "Pass to expand_result to page the value.",
    "shown": "Items shown (in value or value_window).",
    "total": "Items in the whole value.",
    "value_window": "A large value's leading items; path says where they live "
    "($, $.rows, $entries, $lines).",
    "logs_ref": "Pass to expand_result to page the logs past the first 50.",
    "calls": "Every host call, in order: the audit trail of what the snippet did.",
    "error": "Why the run failed: a stable code, a message, line and column when known, "
    "and the next action.",
    "interruptions": "The calls waiting for a person's approval (status interrupted).",
    "next_actions": "For a paused run: what to do next.",
    "run_id": "This run, in run-repl's history.",
}


def _envelope_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {
        # It stays in the store: only a person's decision resumes a run.
        "continuation": (None, Field(None, exclude=True)),
        "approval_ids": (
            list[str] | None,
            Field(None, description="The approvals a paused run waits on (int_...)."),
        ),
        "resumed_from": (
            str | None,
            Field(
                None,
                description="The run_id of the paused run this one resumed, once a person "
                "decided (a resumed run is a run of its own, under its own run_id).",
            ),
        ),
    }
    for name, words in _ENVELOPE_WORDS.items():
        info = copy.copy(RunResult.model_fields[name])
        info.description = words
        fields[name] = (info.annotation, info)
    return fields


# The engine's envelope (one definition: RunResult), as a client receives it.
RunEnvelope = create_model("RunEnvelope", __base__=RunResult, **_envelope_fields())


class Page(Reply):
    ref: str
    path: str | None = Field(
        None, description="Where the items live ($, $.rows, $entries, $lines)."
    )
    offset: int
    items: list[Any]
    total: int
    has_more: bool
    next_offset: int | None = Field(None, description="The offset of the next page.")
    rest: dict[str, Any] | None = Field(
        None, description="For $.field paths: the object's other fields."
    )


class FunctionDoc(Reply):
    path: str
    signature: str
    doc: str
    needs_approval: bool
    approval: Literal["allow", "ask", "deny"]
    python_signature: str


class Docs(Reply):
    host: str
    functions: list[FunctionDoc]
    declarations: str = Field(description="TypeScript declarations (.d.ts).")


class ApprovalInfo(Reply):
    id: str
    run_id: str
    path: str
    args: list[Any]
    message: str
    state: str
    described: str
    decision: str | None = None
    decided_by: str | None = None


class Standing(Reply):
    status: Literal["waiting", "done", "ended"] = Field(
        description="waiting: a person has not decided (or the run is resuming); done: result "
        "holds the final result; ended: it ended without one (approvals say why)."
    )
    run_id: str | None = None
    approvals: list[ApprovalInfo]
    result: RunEnvelope | None = None
    note: str | None = None


OUTPUTS: dict[str, type[BaseModel]] = {
    "run": RunEnvelope,
    "expand_result": Page,
    "docs": Docs,
    "approval_status": Standing,
}


# ---------------------------------------------------------------- schemas
class _Generate(GenerateJsonSchema):
    """Pydantic's schemas, as a reply is written: excluded fields are not there."""

    def field_is_present(self, field: Any) -> bool:
        if field.get("serialization_exclude"):
            return False
        return super().field_is_present(field)


class _GenerateOutput(_Generate):
    # A reply leaves a field that does not apply out; it never writes it as null.
    def nullable_schema(self, schema: core_schema.NullableSchema) -> Any:
        return self.generate_inner(schema["schema"])


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


def _clean(node: Any, defs: dict[str, Any], *, drop: frozenset[str]) -> Any:
    """`node` with every $ref inlined and the keywords in `drop` left out (only where a
    schema stands: a property named `title` stays)."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        target = {k: v for k, v in defs[name].items() if k != "description"}  # a docstring
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs, drop=drop)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop or key == "$defs":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: _clean(v, defs, drop=drop) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean(v, defs, drop=drop) for v in value]
        elif key in _SCHEMA_ONE:
            out[key] = _clean(value, defs, drop=drop)
        else:
            out[key] = value
    return out


def _schema(
    model: type[BaseModel],
    generator: type[GenerateJsonSchema],
    mode: JsonSchemaMode,
    drop: frozenset[str],
) -> dict[str, Any]:
    raw = model.model_json_schema(schema_generator=generator, mode=mode)
    cleaned: dict[str, Any] = _clean(raw, raw.get("$defs", {}), drop=drop)
    cleaned.pop("description", None)  # the model's docstring: the tool's description says it
    return cleaned


def input_schema(model: type[Arguments]) -> dict[str, Any]:
    """The inputSchema of a tool: an optional argument may be left out or sent as null."""
    return _schema(model, _Generate, "validation", frozenset({"title"}))


def output_schema(tool: str) -> dict[str, Any]:
    """The outputSchema of a tool: its reply's shape, or a tool error's."""
    drop = frozenset({"title", "default"})
    reply = _schema(OUTPUTS[tool], _GenerateOutput, "validation", drop)
    failure = _schema(ToolFailure, _GenerateOutput, "validation", drop)
    if tool == "run":
        return reply  # a run's envelope already has status "error" and its error
    return {"type": "object", "anyOf": [reply, failure]}


def dump(model: BaseModel) -> dict[str, Any]:
    """A reply's structured content, as its model writes it."""
    return json_data(model)


__all__ = [
    "MAX_IDEMPOTENCY_KEY",
    "MAX_STATUS_IDS",
    "OUTPUTS",
    "ApprovalInfo",
    "Arguments",
    "Docs",
    "FunctionDoc",
    "Page",
    "Reply",
    "RunEnvelope",
    "Says",
    "Standing",
    "ToolFailure",
    "bounds",
    "dump",
    "escaped",
    "input_models",
    "input_schema",
    "json_data",
    "output_schema",
    "says",
]
