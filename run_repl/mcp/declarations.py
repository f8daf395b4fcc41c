"""A host's functions as TypeScript declarations (a `.d.ts`), read from their Python hints.

    text = host_declarations(host, approval_mode)     # declare namespace crm { ... }

What a model needs to write a correct snippet without guessing: each
function's parameters and return type as the guest sees them (every call
returns a Promise), its docstring, and whether it asks a person first. A
TypedDict, dataclass or pydantic model in a hint becomes an interface; an
Enum or Literal a union of its values; anything the guest cannot name is
`unknown`. The mapping follows the codec (DESIGN.md, values across the
boundary): datetime is Date, bytes Uint8Array, a big int bigint.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import inspect
import json
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..host.loader import LoadedHost
from ..sandbox.values import (
    JSArrayBuffer,
    JSBigInt,
    JSError,
    JSMap,
    JSRegExp,
    JSSet,
    JSTypedArray,
    JSUint8Array,
)

UNKNOWN = "unknown"
MAX_DEPTH = 8

_SIMPLE: dict[Any, str] = {
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    decimal.Decimal: "number",
    type(None): "null",
    None: "null",
    dt.datetime: "Date",
    dt.date: "Date",
    uuid.UUID: "string",
    bytes: "Uint8Array",
    bytearray: "Uint8Array",
    JSUint8Array: "Uint8Array",
    JSBigInt: "bigint",
    JSRegExp: "RegExp",
    JSError: "Error",
    JSArrayBuffer: "ArrayBuffer",
    JSTypedArray: "ArrayBufferView",
    JSMap: "Map<unknown, unknown>",
    JSSet: "Set<unknown>",
    object: UNKNOWN,
    Any: UNKNOWN,
}


@dataclass
class _Namer:
    """Turns Python hints into TypeScript, collecting the interfaces they name."""

    interfaces: dict[str, str] = field(default_factory=dict)  # name -> declaration
    names: dict[Any, str] = field(default_factory=dict)  # class -> interface name

    def ts(self, hint: Any, depth: int = 0) -> str:
        if depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(hint, str):  # an annotation that could not be evaluated
            return UNKNOWN
        if hint in _SIMPLE:
            return _SIMPLE[hint]
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated:
            return self.ts(args[0], depth + 1)
        if origin in (typing.Union, types.UnionType):
            parts = _unique(self.ts(a, depth + 1) for a in args)
            return " | ".join(parts) if UNKNOWN not in parts else UNKNOWN
        if origin is typing.Literal:
            return " | ".join(_unique(_literal(a) for a in args))
        if origin in (list, set, frozenset, Sequence, Iterable, cabc.Collection):
            inner = self.ts(args[0], depth + 1) if args else UNKNOWN
            if origin in (set, frozenset):
                return f"Set<{inner}>"
            return f"{_wrap(inner)}[]"
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return f"{_wrap(self.ts(args[0], depth + 1))}[]"
            return "[" + ", ".join(self.ts(a, depth + 1) for a in args) + "]"
        if origin in (dict, Mapping, cabc.MutableMapping):
            key, value = (*args, Any, Any)[:2]
            value_ts = self.ts(value, depth + 1)
            if key is str:
                return f"Record<string, {value_ts}>"
            return f"Map<{self.ts(key, depth + 1)}, {value_ts}>"
        if origin in (cabc.Awaitable, cabc.Coroutine):
            return self.ts(args[-1], depth + 1) if args else UNKNOWN
        if origin is not None:
            return self.ts(origin, depth + 1)
        if hint in (list, tuple, set, frozenset):
            return "Set<unknown>" if hint in (set, frozenset) else "unknown[]"
        if hint is dict:
            return "Record<string, unknown>"
        if isinstance(hint, type):
            if issubclass(hint, enum.Enum):
                return " | ".join(_unique(_literal(m.value) for m in hint)) or UNKNOWN
            if issubclass(hint, bool):
                return "boolean"
            if issubclass(hint, int):
                return "number"
            if issubclass(hint, str):
                return "string"
            fields = _fields_of(hint)
            if fields is not None:
                return self._interface(hint, fields, depth)
        return UNKNOWN

    def _interface(self, cls: type, fields: list[tuple[str, Any, bool]], depth: int) -> str:
        if cls in self.names:
            return self.names[cls]
        name = cls.__name__ if _is_identifier(cls.__name__) else "Value"
        base, n = name, 2
        while name in self.interfaces:
            name, n = f"{base}{n}", n + 1
        self.names[cls] = name
        self.interfaces[name] = ""  # reserved: a field may refer back to it
        lines = [f"interface {name} {{"]
        doc = inspect.getdoc(cls)
        if doc and not _is_default_doc(cls, doc):
            lines[:0] = _jsdoc(doc, "")
        for key, hint, optional in fields:
            prop = key if _is_identifier(key) else json.dumps(key)
            lines.append(f"  {prop}{'?' if optional else ''}: {self.ts(hint, depth + 1)};")
        lines.append("}")
        self.interfaces[name] = "\n".join(lines)
        return name


def _unique(parts: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for p in parts:
        if p not in seen:
            seen.append(p)
    return seen


def _wrap(ts: str) -> str:
    return f"({ts})" if " " in ts and not ts.startswith(("Record<", "Map<", "Set<")) else ts


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, enum.Enum):
        return _literal(value.value)
    return UNKNOWN


def _is_identifier(name: str) -> bool:
    return name.isidentifier()


def _is_default_doc(cls: type, doc: str) -> bool:
    # dataclasses and TypedDicts without a docstring get a generated one: not documentation.
    return doc.startswith(f"{cls.__name__}(") or doc in (
        inspect.getdoc(dict),
        inspect.getdoc(object),
    )


def _hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:  # an annotation naming what the module never imported, say
        return dict(getattr(obj, "__annotations__", {}) or {})


def _typeddict_fields(cls: type) -> list[tuple[str, Any, bool]]:
    """A TypedDict's keys; `NotRequired[...]` read from the hint itself, since string
    annotations (`from __future__ import annotations`) hide it from `__optional_keys__`."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:
        hints = dict(getattr(cls, "__annotations__", {}) or {})
    optional_keys: frozenset[str] = getattr(cls, "__optional_keys__", frozenset())
    fields = []
    for key, hint in hints.items():
        optional = key in optional_keys
        origin = typing.get_origin(hint)
        if origin is typing.NotRequired or origin is typing.Required:
            optional = origin is typing.NotRequired
            hint = typing.get_args(hint)[0]
        fields.append((key, hint, optional))
    return fields


def _fields_of(cls: type) -> list[tuple[str, Any, bool]] | None:
    """(name, hint, optional) of a TypedDict, dataclass or pydantic model; else None."""
    if typing.is_typeddict(cls):
        return _typeddict_fields(cls)
    if dataclasses.is_dataclass(cls):
        hints = _hints(cls)
        return [(f.name, hints.get(f.name, Any), False) for f in dataclasses.fields(cls)]
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(cls, "model_dump"):
        return [
            (info.alias or name, info.annotation, not info.is_required())
            for name, info in model_fields.items()
        ]
    return None


@dataclass(frozen=True)
class Declared:
    """One host function as TypeScript."""

    path: str
    signature: str  # "crm.getAccount(accountId: string): Promise<Account>"
    declaration: str  # "function getAccount(accountId: string): Promise<Account>;"
    doc: str
    approval: str  # "allow" | "ask" | "deny"


def declare_function(
    path: str, fn: Callable[..., Any], namer: _Namer, doc: str, approval: str
) -> Declared:
    name = path.rsplit(".", 1)[-1]
    typed = getattr(fn, "__run_repl_typescript__", None)
    if typed is not None:  # written from a JSON Schema (an upstream MCP tool), not hints
        params_ts, returns_ts = typed
        tail = f"({params_ts}): Promise<{returns_ts}>"
        return Declared(path, path + tail, f"function {name}{tail};", doc, approval)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    hints = _hints(fn)
    params: list[str] = []
    if sig is None:
        params.append("...args: unknown[]")
    else:
        for p in sig.parameters.values():
            if p.kind == p.VAR_KEYWORD or p.kind == p.KEYWORD_ONLY:
                continue  # the guest passes positional arguments only
            ts = namer.ts(hints.get(p.name, Any))
            if p.kind == p.VAR_POSITIONAL:
                params.append(f"...{p.name}: {_wrap(ts)}[]")
            else:
                optional = "?" if p.default is not p.empty else ""
                params.append(f"{p.name}{optional}: {ts}")
    returns = namer.ts(hints.get("return", Any))
    tail = f"({', '.join(params)}): Promise<{returns}>"
    return Declared(path, path + tail, f"function {name}{tail};", doc, approval)


def _jsdoc(text: str, indent: str) -> list[str]:
    body = [t.rstrip().replace("*/", "*\\/") for t in text.strip().splitlines()]
    if len(body) == 1:
        return [f"{indent}/** {body[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {t}".rstrip() for t in body), f"{indent} */"]


APPROVAL_NOTES = {
    "ask": (
        "Asks a person to approve each call before it runs (the run waits). A denial throws "
        'an Error whose code is "RUN_APPROVAL_DENIED".'
    ),
    "deny": 'Always denied here: a call throws an Error whose code is "RUN_APPROVAL_DENIED".',
}


def declarations(
    host: LoadedHost, approval_mode: Callable[[str], str], only: str | None = None
) -> tuple[str, list[Declared]]:
    """The `.d.ts` text of the host's functions (those under `only`), and each one declared."""
    namer = _Namer()
    declared: list[Declared] = []
    for path, fn in host.manifest.functions.items():
        if only and not (path == only or path.startswith(only + ".")):
            continue
        doc = fn.doc
        if fn.cli_only is not None:
            doc = (doc + "\n\n" if doc else "") + (
                'Refused in the sandbox (code "SECRET_REQUIRES_CLI"): a person runs it from the CLI.'
            )
        declared.append(declare_function(path, fn.fn, namer, doc, approval_mode(path)))
    return _render(host.name, declared, namer), declared


def _render(host_name: str, declared: list[Declared], namer: _Namer) -> str:
    out = [
        f"// The host functions of run-repl host {host_name!r}, as a snippet sees them.",
        "// Every call returns a Promise: await it (Promise.all runs calls at once).",
    ]
    for text in namer.interfaces.values():
        out += ["", text]
    tree: dict[str, Any] = {}
    for d in declared:
        node = tree
        parts = d.path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = d

    def emit(node: dict[str, Any], indent: str, top: bool) -> list[str]:
        lines: list[str] = []
        for name, value in node.items():
            lines.append("")
            if isinstance(value, Declared):
                text = value.doc
                note = APPROVAL_NOTES.get(value.approval)
                if note:
                    text = (text + "\n\n" if text else "") + "@approval " + note
                if text:
                    lines += _jsdoc(text, indent)
                lines.append(indent + ("declare " if top else "") + value.declaration)
            else:
                lines.append(f"{indent}{'declare ' if top else ''}namespace {name} {{")
                lines += [x for x in emit(value, indent + "  ", False)][1:]
                lines.append(indent + "}")
        return lines

    out += emit(tree, "", True)
    return "\n".join(out) + "\n"


__all__ = ["APPROVAL_NOTES", "Declared", "declarations", "declare_function"]
