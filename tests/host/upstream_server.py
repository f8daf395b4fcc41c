"""A small MCP server for the upstream tests: tools of each shape run-repl must handle,
and a state directory (UPSTREAM_STATE) where it writes what it was asked to do, so a
test can count calls from outside.

    python tests/host/upstream_server.py     # stdio
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

STATE = Path(os.environ["UPSTREAM_STATE"])
READ = ToolAnnotations(readOnlyHint=True)
server = MCPServer("run-repl-test-upstream")


def note(name: str, text: str) -> None:
    with open(STATE / name, "a", encoding="utf-8") as f:
        f.write(text + "\n")


@server.tool(annotations=READ)
def echo(text: str, times: int = 1) -> dict[str, object]:
    """Say it back."""
    note("echo.log", text)
    return {"text": text * times}


@server.tool(name="write-note", annotations=ToolAnnotations(destructiveHint=True))
def write_note(key: str, value: str) -> str:
    """Keep a note (destructive: replaces one of the same key)."""
    note("writes.log", json.dumps([key, value]))
    return f"kept {key}"


@server.tool()
def touch(key: str) -> str:
    """No annotations at all: the spec's defaults make it destructive."""
    note("touches.log", key)
    return "touched"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def append(line: str) -> str:
    """Adds without destroying."""
    note("appends.log", line)
    return "appended"


@server.tool(annotations=READ)
async def slow(seconds: float) -> str:
    note("slow.log", "started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        note("slow.log", "cancelled")
        raise
    note("slow.log", "finished")
    return "slept"


@server.tool(annotations=READ)
def crash() -> str:
    """Dies mid-call."""
    note("crash.log", "crashing")
    os._exit(3)


@server.tool(annotations=READ)
def fail(why: str) -> str:
    raise ToolError(f"refused: {why}")


@server.tool(annotations=READ, structured_output=False)
def json_text() -> str:
    return json.dumps({"rows": [1, 2, 3]})


@server.tool(annotations=READ, structured_output=False)
def plain_text() -> str:
    return "just words"


@server.tool(annotations=READ)
def picture() -> Image:
    return Image(data=b"\x89PNG\r\n\x1a\n" + b"0" * 92, format="png")


@server.tool(annotations=READ)
async def grow(ctx: Context) -> str:
    """Adds a tool `extra`, and says the list changed."""

    def extra(n: int) -> int:
        return n + 1

    server.add_tool(extra, name="extra", annotations=READ)
    await ctx.notify_tools_changed()
    return "grown"


if __name__ == "__main__":
    server.run()
