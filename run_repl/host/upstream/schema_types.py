"""JSON Schema as TypeScript, for the `.d.ts` a snippet's author reads, and the check a
call's arguments pass before they are sent.

    ts_type({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    # '{ n: number }'
    check_arguments(schema, {"n": "x"})   # '$.n: \'x\' is not of type \'integer\''

The TypeScript is a reader's guide, not a proof: what it cannot say (patterns,
bounds, conditionals) is `unknown` or left out, and the schema check on the host
side is what refuses a bad call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema import validators

MAX_DEPTH = 8
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SIMPLE = {
    "string": "string",
    "number": "number",
    "integer": "number",
    "boolean": "boolean",
    "null": "null",
}


def _key(name: str) -> str:
    return name if IDENTIFIER.match(name) else json.dumps(name)


def _literal(value: Any) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return json.dumps(value)
    return "unknown"


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if not ref.startswith("#/"):
        return None  # a remote schema is never fetched
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


def _union(parts: list[str]) -> str:
    seen: list[str] = []
    for p in parts:
        if p not in seen:
            seen.append(p)
    if "unknown" in seen:
        return "unknown"
    return " | ".join(seen) if seen else "never"


def ts_type(schema: Any, root: Mapping[str, Any] | None = None, depth: int = 0) -> str:
    """The TypeScript type a value of `schema` has (`unknown` where it cannot say)."""
    if schema is True or schema == {}:
        return "unknown"
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return "unknown"
    root = root if root is not None else schema
    if "$ref" in schema:
        target = _resolve(str(schema["$ref"]), root)
        return ts_type(target, root, depth + 1) if target is not None else "unknown"
    if "const" in schema:
        return _literal(schema["const"])
    if "enum" in schema and isinstance(schema["enum"], list):
        return _union([_literal(v) for v in schema["enum"]])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return _union([_wrap(ts_type(s, root, depth + 1)) for s in schema[key]])
    if isinstance(schema.get("allOf"), list):
        parts = [_wrap(ts_type(s, root, depth + 1)) for s in schema["allOf"]]
        parts = [p for p in parts if p != "unknown"]
        return " & ".join(parts) if parts else "unknown"
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([ts_type({**schema, "type": k}, root, depth) for k in kind])
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, list):  # draft 7 tuples
            return "[" + ", ".join(ts_type(i, root, depth + 1) for i in items) + "]"
        if isinstance(schema.get("prefixItems"), list):
            return "[" + ", ".join(ts_type(i, root, depth + 1) for i in schema["prefixItems"]) + "]"
        return _wrap(ts_type(items, root, depth + 1) if items is not None else "unknown") + "[]"
    if kind == "object" or "properties" in schema:
        return _object(schema, root, depth)
    return "unknown"


def _wrap(ts: str) -> str:
    return f"({ts})" if (" | " in ts or " & " in ts) and not ts.startswith("{") else ts


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> str:
    props = schema.get("properties")
    required = set(schema.get("required") or ())
    fields: list[str] = []
    if isinstance(props, Mapping):
        for name, sub in props.items():
            optional = "" if name in required else "?"
            fields.append(f"{_key(str(name))}{optional}: {ts_type(sub, root, depth + 1)}")
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and extra:
        fields.append(f"[key: string]: {ts_type(extra, root, depth + 1)}")
    elif not fields and extra is not False:
        return "Record<string, unknown>"
    return "{ " + "; ".join(fields) + " }" if fields else "{}"


def described_fields(schema: Any) -> list[str]:
    """`name: description` lines of an object schema's documented properties."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    out = []
    for name, sub in schema["properties"].items():
        if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
            out.append(f"{name}: {' '.join(sub['description'].split())}")
    return out


def validator_for(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator | None:
    """A checker for `schema` (its `$schema` draft, else 2020-12); None when the schema
    itself is broken (the upstream's problem: its calls then go unchecked here)."""
    plain = dict(schema)
    cls = validators.validator_for(plain, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(plain)
    except jsonschema.SchemaError:
        return None
    return cls(plain)


def check_arguments(checker: jsonschema.protocols.Validator | None, value: Any) -> str | None:
    """None when `value` fits; else the first problem as 'PATH: what is wrong'."""
    if checker is None:
        return None
    best = jsonschema.exceptions.best_match(checker.iter_errors(value))
    if best is None:
        return None
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path)
    return f"{path}: {best.message}"
