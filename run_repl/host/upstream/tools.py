"""An upstream's tools as host functions: `await git.git_log({repo_path: "."})`.

Each tool becomes one async function of one object argument. Before anything is
sent, the argument is checked against the tool's `inputSchema` (a bad field is
UPSTREAM_INVALID_ARGUMENTS with its path). What comes back is data: the tool's
`structuredContent` when it gives one, else its text parsed when it is JSON, else
the text; images, audio and resources are described, not dropped. `isError` is
UPSTREAM_TOOL_ERROR with the tool's own message.

Whether a person is asked follows the tool's annotations as the MCP spec defines
their defaults: a tool that is not read-only and may be destructive (the default
when a tool says nothing) asks; the run's `[approvals]` policy overrides per path.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...sandbox.approval import ApprovalSpec
from ...sandbox.errors import HostError
from .connection import UpstreamConnection, UpstreamLoop
from .schema_types import check_arguments, described_fields, ts_type, validator_for

UPSTREAM_TOOL_ERROR = "UPSTREAM_TOOL_ERROR"
UPSTREAM_INVALID_ARGUMENTS = "UPSTREAM_INVALID_ARGUMENTS"
UPSTREAM_TOOL_GONE = "UPSTREAM_TOOL_GONE"

# Names a function in a namespace may not have: a thenable namespace, or one that
# shadows what every object has.
_AWKWARD = frozenset({"then", "constructor", "prototype", "__proto__", "toString", "valueOf"})


def identifier_for(tool_name: str, taken: set[str]) -> str:
    """A JavaScript identifier for a tool's name (`list-files` -> `list_files`), unique
    among `taken`."""
    ident = re.sub(r"[^A-Za-z0-9_$]", "_", tool_name) or "tool"
    if ident[0].isdigit():
        ident = "_" + ident
    if ident in _AWKWARD or keyword.iskeyword(ident):
        ident += "_"
    base, n = ident, 2
    while ident in taken:
        ident = f"{base}_{n}"
        n += 1
    taken.add(ident)
    return ident


def _hint(annotations: Any, name: str) -> bool | None:
    if annotations is None:
        return None
    value = getattr(annotations, name, None)
    return value if isinstance(value, bool) else None


def asks_by_default(tool: Any) -> bool:
    """A person is asked unless the tool says it is read-only or not destructive
    (readOnlyHint defaults to false, destructiveHint to true)."""
    annotations = getattr(tool, "annotations", None)
    if _hint(annotations, "read_only_hint") is True:
        return False
    return _hint(annotations, "destructive_hint") is not False


def map_result(upstream: str, tool_name: str, result: Any) -> Any:
    """A CallToolResult as the value the snippet gets (or the HostError it throws)."""
    content = list(getattr(result, "content", None) or [])
    if getattr(result, "is_error", False):
        text = " ".join(
            c.text for c in content if getattr(c, "type", None) == "text" and c.text
        ).strip()
        raise HostError(
            f"{upstream}.{tool_name}: {text or 'the tool reported an error without a message'}",
            code=UPSTREAM_TOOL_ERROR,
            details={
                "upstream": upstream,
                "tool": tool_name,
                "content": [_item(c) for c in content],
            },
        )
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    items = [_item(c) for c in content]
    if len(items) == 1:
        return items[0]
    return items


def _decoded_size(b64: str) -> int:
    """How many bytes a base64 text holds, without decoding it."""
    b64 = b64.strip()
    return len(b64) * 3 // 4 - (len(b64) - len(b64.rstrip("=")))


def _item(c: Any) -> Any:
    kind = getattr(c, "type", None)
    if kind == "text":
        text = c.text
        stripped = text.strip()
        if stripped[:1] in ("{", "[") or stripped in ("true", "false", "null"):
            try:
                return json.loads(stripped)
            except ValueError:
                pass
        return text
    if kind in ("image", "audio"):
        data = getattr(c, "data", "") or ""
        return {
            "type": kind,
            "mimeType": getattr(c, "mime_type", None),
            "bytes": _decoded_size(data),
        }
    if kind == "resource_link":
        return {"type": kind, "uri": str(c.uri), "name": getattr(c, "name", None)}
    if kind == "resource":
        res = c.resource
        out: dict[str, Any] = {"type": kind, "uri": str(res.uri), "mimeType": res.mime_type}
        if getattr(res, "text", None) is not None:
            out["text"] = res.text
        else:
            out["bytes"] = _decoded_size(getattr(res, "blob", "") or "")
        return out
    return {"type": str(kind)}


def _approval_message(upstream: str, tool: Any) -> Callable[..., str]:
    destructive = _hint(getattr(tool, "annotations", None), "destructive_hint") is not False

    def message(*_args: Any) -> str:
        effect = "may change or delete data" if destructive else "changes data"
        return f"Run upstream {upstream!r} tool {tool.name!r}? It {effect} (its MCP annotations)."

    return message


def short_parameters(schema: Mapping[str, Any]) -> str:
    """`({repo_path, max_count?})`: the one object a tool takes, by its fields."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping) or not props:
        return "()"
    required = set(schema.get("required") or ())
    names = [n if n in required else f"{n}?" for n in props]
    inner = "{" + ", ".join(names) + "}"
    return f"({inner})" if required else f"({inner}?)"


def tool_function(conn: UpstreamConnection, namespace: str, ident: str, tool: Any) -> Any:
    """The host function for one tool."""
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    checker = validator_for(schema) if schema else None
    name = tool.name
    path = f"{namespace}.{ident}"

    async def call(arguments: dict[str, Any] | None = None) -> Any:
        args = {} if arguments is None else arguments
        if not isinstance(args, Mapping):
            raise HostError(
                f"{path} takes one object of named arguments, e.g. {path}({{...}}); "
                f"got a {type(args).__name__}.",
                code=UPSTREAM_INVALID_ARGUMENTS,
                next_actions=[{"type": "edit_request"}],
            )
        problem = check_arguments(checker, dict(args))
        if problem is not None:
            raise HostError(
                f"{path}: {problem} (checked against the tool's input schema; nothing was sent)",
                code=UPSTREAM_INVALID_ARGUMENTS,
                details={"upstream": namespace, "tool": name},
                next_actions=[{"type": "edit_request"}],
            )
        result = await UpstreamLoop.shared().run(conn.call_tool(name, dict(args)))
        return map_result(namespace, name, result)

    call.__name__ = ident
    call.__qualname__ = path
    doc = (tool.description or "").strip()
    fields = described_fields(schema)
    lines = [doc] if doc else []
    if ident != name:
        lines.append(f"MCP tool {name!r} of upstream {namespace!r}.")
    else:
        lines.append(f"MCP tool of upstream {namespace!r}.")
    if fields:
        lines += ["", "Arguments:", *(f"  {f}" for f in fields)]
    call.__doc__ = "\n".join(lines)
    output = getattr(tool, "output_schema", None)
    returns = ts_type(output) if isinstance(output, Mapping) else "unknown"
    args_ts = ts_type(schema) if schema else "Record<string, unknown>"
    optional = "" if schema.get("required") else "?"
    call.__run_repl_typescript__ = (f"arguments{optional}: {args_ts}", returns)  # type: ignore[attr-defined]  # marks on a function object
    call.__run_repl_upstream__ = (namespace, name)  # type: ignore[attr-defined]  # marks on a function object
    # What the catalog and completion show, as for a Python function's parameters.
    call.__run_repl_parameters__ = short_parameters(schema)  # type: ignore[attr-defined]  # marks on a function object
    if asks_by_default(tool):
        call.__run_repl_approval__ = ApprovalSpec(_approval_message(namespace, tool))  # type: ignore[attr-defined]  # marks on a function object
    return call


def namespace_functions(conn: UpstreamConnection, tools: list[Any]) -> dict[str, Any]:
    """{identifier: host function} for an upstream's tools, in their listed order."""
    taken: set[str] = set()
    out: dict[str, Any] = {}
    for tool in tools:
        ident = identifier_for(tool.name, taken)
        out[ident] = tool_function(conn, conn.spec.name, ident, tool)
    return out
