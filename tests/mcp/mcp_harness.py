"""The MCP tests drive a real `run-repl mcp` subprocess with the `mcp` package's own client.

Each server (and each `cli` command) is a process of its own forked from a
`forked_cli` zygote that imported run-repl once, instead of a fresh interpreter:
the same `main(argv)` on its own pipes and environment, ~0.7 s of CPU less per
process. The tests of a fresh `python -m run_repl.cli` (its start, its signals,
what it imports) launch one for real (test_mcp_runs.py, tests/cli).

    async with mcp_server(data) as server:           # stdio, the demo host
        result = await server.client.call_tool("run", {"code": "1 + 1"})

`in_own_task(mcp_server(data))` is the same server for a fixture that outlives one
test (pytest-asyncio sets a fixture up and tears it down in two different tasks).

`cli(data, "approvals", "approve", ID)` is a second run-repl process on the same
data directory (a person deciding in another terminal).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import forked_cli
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from run_repl.store import PendingApproval, SqliteStore

HERE = Path(__file__).parent
READ_TIMEOUT_S = 240  # a server that never answers fails the test instead of hanging it
GATE_HOST = str(HERE / "gate_host.py")

T = TypeVar("T")


def environment(data: Path, gate: Path | None = None) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(data),
        "RUN_REPL_CONFIG_DIR": str(data / "config"),
        "RUN_REPL_APPROVER": "tester",
    }
    if gate is not None:
        env["RUN_REPL_TEST_GATE"] = str(gate)
    return env


@dataclass
class Server:
    client: Client
    data: Path
    stderr: Path
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)
    waiting: anyio.Event = field(default_factory=anyio.Event)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))
        self.waiting.set()

    async def call(self, tool: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        return await self.client.call_tool(
            tool, arguments, progress_callback=self.on_progress, **kwargs
        )

    def store(self) -> SqliteStore:
        return SqliteStore(self.data / "run-repl.sqlite3")

    def pending(self) -> list[PendingApproval]:
        store = self.store()
        try:
            return store.list_approvals("pending")
        finally:
            store.close()


@asynccontextmanager
async def mcp_server(
    data: Path,
    *args: str,
    host: str | None = None,
    gate: Path | None = None,
    mode: str = "auto",
    elicitation: Any = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Server]:
    data.mkdir(parents=True, exist_ok=True)
    stderr = data / "server-stderr.txt"
    argv = ["mcp", "--data-dir", str(data), *args]
    if host:
        argv += ["--host", host]
    executable, *launch = forked_cli.command(*argv)
    environ = {**environment(data, gate), **(env or {})}
    params = StdioServerParameters(command=executable, args=launch, env=environ)
    with stderr.open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,
            elicitation_callback=elicitation,
            read_timeout_seconds=READ_TIMEOUT_S,
        ) as client:
            yield Server(client, data, stderr)


@asynccontextmanager
async def in_own_task(context: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter `context` in a task of its own and exit it there, whichever tasks come
    between: anyio's cancel scopes (the client's) must end in the task that began them."""
    entered: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        async with context as value:
            entered.set_result(value)
            await done.wait()

    task = asyncio.create_task(hold(), name="a shared MCP server")
    await asyncio.wait([task, entered], return_when=asyncio.FIRST_COMPLETED)
    if not entered.done():
        await task  # it failed before it was entered: its exception, here
    try:
        yield entered.result()
    finally:
        done.set()
        await task


def cli(data: Path, *args: str, gate: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`run-repl ARGS --data-dir DATA` in another process (a person in another terminal)."""
    return subprocess.run(
        forked_cli.command(*args, "--data-dir", str(data)),
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(data, gate),
    )


def text_of(result: Any) -> dict[str, Any]:
    """The one text block, which is `to_tool_output`'s JSON."""
    assert len(result.content) == 1, result.content
    return json.loads(result.content[0].text)
