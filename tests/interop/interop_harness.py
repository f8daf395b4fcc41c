"""Real MCP clients that nobody on this project wrote, against `run-repl mcp`.

- The TypeScript SDK's client (`@modelcontextprotocol/sdk`, pinned in package.json,
  installed by `npm ci --prefix tests/interop`), driven by driver.mjs: `drive(scenario)`
  runs one scenario and returns what the client saw, as data (`Seen`).
- The `mcp` package's Python client: `python_client(target, revision)`.

The servers are the real `run-repl mcp` (stdio) and `run-repl mcp --http` on a fresh data
directory holding the demo host: each forked from the tests' zygote (`forked_cli`), or,
with `real=True`, a fresh `python -m run_repl.cli` as a user's client starts it.

Protocol revisions: the TypeScript SDK 1.32 offers 2025-11-25 in its handshake, the
Python client speaks 2026-07-28 (no handshake) by default and 2025-11-25 with
mode="legacy". `REVISIONS` maps each name the tests use to the client's mode.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import forked_cli
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

import run_repl
from run_repl.store import PendingApproval, SqliteStore

HERE = Path(__file__).parent
DRIVER = HERE / "driver.mjs"
NODE_MODULES = HERE / "node_modules"
REPO = Path(run_repl.__file__).resolve().parents[1]  # the run_repl these tests import
PINNED = json.loads((HERE / "package.json").read_text())["dependencies"]
NPM_STEP = "npm ci --prefix tests/interop (the npm step of .ci/run)"
TIMEOUT_S = 120  # a client or server that never answers fails the test instead of hanging it

TS_REVISION = "2025-11-25"  # what the TypeScript SDK 1.32 offers, and run-repl accepts
# name -> Client(mode=...): "auto" asks server/discover first, and adopts 2026-07-28
REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
MODERN = "2026-07-28"  # no handshake, and no ping

# A value past the 200-line window: it comes as value_window + value_ref, and pages.
BIG = "Array.from({ length: 300 }, (_, i) => ({ n: i }))"
PUBLISH = 'return await documents.publish("draft_01")'


def node_modules_problem() -> str | None:
    """Why the TypeScript clients cannot run here, or None when `npm ci` installed them."""
    if shutil.which("node") is None:
        return "node is not on PATH (Node 20 or later runs these clients)"
    for name, version in PINNED.items():
        manifest = NODE_MODULES / name / "package.json"
        if not manifest.exists():
            return f"{name} is not installed in {NODE_MODULES}: run {NPM_STEP}"
        found = json.loads(manifest.read_text())["version"]
        if found != version:
            return f"{name} {found} is installed, package.json pins {version}: run {NPM_STEP}"
    return None


# ------------------------------------------------------------------ servers
def environment(data: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A server's or approver's whole environment: nothing of the test process's."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(data),
        "PYTHONPATH": str(REPO),  # for a real `python -m run_repl.cli`: this tree's run_repl
        "RUN_REPL_CONFIG_DIR": str(data / "config"),
        "RUN_REPL_APPROVER": "tester",
        **(extra or {}),
    }


def server_command(data: Path, *args: str, real: bool = False) -> list[str]:
    argv = ["mcp", "--data-dir", str(data), *args]
    if real:
        return [sys.executable, "-m", "run_repl.cli", *argv]
    return forked_cli.command(*argv)


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    url: str  # where a client on this machine reaches it (loopback)
    announced: str  # the address the server said it serves
    stderr: list[str] = field(default_factory=list)


ANNOUNCED = re.compile(r"serving (http://(\S+):(\d+)/mcp)$")


@contextmanager
def http_server(
    data: Path,
    *args: str,
    bind: str = "127.0.0.1",
    env: dict[str, str] | None = None,
    real: bool = False,
) -> Iterator[HttpServer]:
    """`run-repl mcp --http BIND:0` until the block ends (then SIGINT, as Ctrl-C)."""
    command = server_command(data, "--http", f"{bind}:0", *args, real=real)
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(data, env),
    )
    assert process.stderr is not None
    said: list[str] = []
    server: HttpServer | None = None
    for line in process.stderr:
        said.append(line)
        found = ANNOUNCED.search(line.rstrip())
        if found:
            url = f"http://127.0.0.1:{found.group(3)}/mcp"
            server = HttpServer(process, url, found.group(1), said)
            break
    if server is None:
        process.wait(timeout=30)
        raise AssertionError(f"no address announced (exit {process.returncode}): {''.join(said)}")
    # Keep reading what it says, so a full pipe never stalls it.
    drain = threading.Thread(target=lambda: said.extend(process.stderr or ()), daemon=True)
    drain.start()
    try:
        yield server
    finally:
        process.send_signal(2)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        drain.join(timeout=10)
        process.stderr.close()


# ------------------------------------------------------------------ principals
@dataclass(frozen=True)
class Principal:
    """Who an HTTP client is to the server. The server learns its principal's token from
    RUN_REPL_MCP_TOKEN; a client proves it with `Authorization: Bearer TOKEN`. Every
    server of these tests is started with a principal and every client sends its token,
    so the tests that work without credentials today work once credentials are required."""

    name: str
    token: str

    def server_env(self) -> dict[str, str]:
        return {"RUN_REPL_MCP_TOKEN": self.token, "RUN_REPL_MCP_PRINCIPAL": self.name}

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


# ------------------------------------------------------------------ the TypeScript client
@dataclass
class Seen:
    """What the TypeScript client saw, as driver.mjs printed it."""

    events: list[dict[str, Any]]
    stderr: str

    @property
    def connected(self) -> dict[str, Any]:
        [event] = [e for e in self.events if e["event"] == "connected"] or [self.connect_error]
        return event

    @property
    def connect_error(self) -> dict[str, Any] | None:
        errors = [e["error"] for e in self.events if e["event"] == "connect_error"]
        return errors[0] if errors else None

    def result(self, step: int) -> dict[str, Any]:
        """Step `step`'s result (CallToolResult etc.); a protocol error fails the test."""
        [event] = [e for e in self.events if e["event"] == "result" and e["step"] == step]
        assert event["ok"], f"step {step}: {event['error']}"
        return event["result"]

    def error(self, step: int) -> dict[str, Any] | None:
        """Step `step`'s protocol error, or None when it got a result."""
        [event] = [e for e in self.events if e["event"] == "result" and e["step"] == step]
        return None if event["ok"] else event["error"]

    def progress(self, step: int) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == "progress" and e["step"] == step]


OnEvent = Callable[[dict[str, Any]], Awaitable[None]]


async def drive(
    scenario: dict[str, Any], on_event: OnEvent | None = None, *, driver_args: list[str] = ()
) -> Seen:
    """Run driver.mjs on `scenario`; `on_event` hears each event as it comes (a test
    acts on the progress of a call still waiting)."""
    argv = list(driver_args) or [json.dumps(scenario)]
    process = await asyncio.create_subprocess_exec(
        "node",
        str(DRIVER),
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(HERE),
        limit=64 << 20,
    )
    assert process.stdout is not None and process.stderr is not None
    events: list[dict[str, Any]] = []
    stderr = asyncio.ensure_future(process.stderr.read())

    async def read() -> None:
        assert process.stdout is not None
        async for line in process.stdout:
            event = json.loads(line)
            events.append(event)
            if on_event is not None:
                await on_event(event)

    try:
        await asyncio.wait_for(read(), TIMEOUT_S)
        await asyncio.wait_for(process.wait(), TIMEOUT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    said = (await stderr).decode(errors="replace")
    assert process.returncode == 0, f"driver.mjs exited {process.returncode}: {said}"
    assert events and events[-1] == {"event": "done"}, (events, said)
    return Seen(events, said)


def stdio_scenario(
    data: Path, steps: list[dict[str, Any]], *args: str, real: bool = False
) -> dict[str, Any]:
    return {
        "transport": "stdio",
        "command": server_command(data, *args, real=real),
        "env": environment(data),
        "cwd": str(data),
        "steps": steps,
    }


def http_scenario(
    url: str, steps: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"transport": "http", "url": url, "headers": headers or {}, "steps": steps}


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"op": "call", "tool": tool, "arguments": arguments}


# ------------------------------------------------------------------ the Python client
@asynccontextmanager
async def python_client(
    target: Path | str,
    revision: str,
    *args: str,
    headers: dict[str, str] | None = None,
    statuses: list[int] | None = None,
) -> AsyncIterator[Client]:
    """The `mcp` package's Client on `revision`: over stdio to a server on data dir
    `target` (a Path), or over streamable HTTP to `target` (a URL), sending `headers`
    and noting each HTTP response's status in `statuses` (its errors do not say it)."""
    mode = REVISIONS[revision]
    if isinstance(target, Path):
        executable, *launch = server_command(target, *args)
        params = StdioServerParameters(command=executable, args=launch, env=environment(target))
        with (target / "server-stderr.txt").open("a") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), mode=mode, read_timeout_seconds=TIMEOUT_S
            ) as client:
                yield client
        return
    async with create_mcp_http_client(headers=headers or {}) as http:
        if statuses is not None:

            async def note(response: Any) -> None:
                statuses.append(response.status_code)

            http.event_hooks["response"].append(note)
        async with Client(
            streamable_http_client(target, http_client=http),
            mode=mode,
            read_timeout_seconds=TIMEOUT_S,
        ) as client:
            yield client


# ------------------------------------------------------------------ a person, elsewhere
def pending(data: Path) -> list[PendingApproval]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return store.list_approvals("pending")
    finally:
        store.close()


def decided(data: Path, approval_id: str) -> PendingApproval:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        approval = store.get_approval(approval_id)
        assert approval is not None, approval_id
        return approval
    finally:
        store.close()


async def approve_elsewhere(data: Path) -> str:
    """`run-repl approvals approve ID` in another process, as a person in another
    terminal does, for the one approval waiting; its id."""
    [approval] = await asyncio.to_thread(pending, data)
    done = await asyncio.to_thread(
        subprocess.run,
        forked_cli.command("approvals", "approve", approval.id, "--data-dir", str(data)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=environment(data),
    )
    assert done.returncode == 0, done.stderr
    return approval.id


def text_of(result: Any) -> str:
    """A tool result's text blocks, joined (from either client's result)."""
    content = result["content"] if isinstance(result, dict) else result.content
    return "\n".join(c["text"] if isinstance(c, dict) else c.text for c in content)


def _resolve(value: Any, results: list[Any]) -> Any:
    """driver.mjs's {"$step": N, "path": [...]}: part of an earlier step's result."""
    if isinstance(value, list):
        return [_resolve(v, results) for v in value]
    if not isinstance(value, dict):
        return value
    if "$step" in value:
        at = results[value["$step"]]
        for key in value["path"]:
            at = at[key]
        return at
    return {k: _resolve(v, results) for k, v in value.items()}


def _as_data(result: Any) -> Any:
    """A Python client's result as the TypeScript client's JSON (camelCase, no nulls)."""
    if hasattr(result, "model_dump"):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return result


async def python_steps(
    client: Client, steps: list[dict[str, Any]], on_event: OnEvent | None = None
) -> Seen:
    """driver.mjs's scenario steps, through the Python client: the same Seen."""
    tools = await client.list_tools()
    events: list[dict[str, Any]] = [
        {
            "event": "connected",
            "protocol_version": client.protocol_version,
            "server": _as_data(client.server_info),
            "tools": [
                {"name": t.name, "has_output_schema": t.output_schema is not None}
                for t in tools.tools
            ],
        }
    ]

    async def say(event: dict[str, Any]) -> None:
        events.append(event)
        if on_event is not None:
            await on_event(event)

    results: list[Any] = []
    for index, s in enumerate(steps):

        async def progress(
            p: float, total: float | None, message: str | None, index: int = index
        ) -> None:
            event = {"event": "progress", "step": index, "progress": p, "total": total}
            await say({**event, "message": message})

        try:
            op = s["op"]
            if op == "call":
                arguments = _resolve(s.get("arguments", {}), results)
                answer: Any = await client.call_tool(
                    s["tool"], arguments, progress_callback=progress
                )
            elif op == "list_tools":
                answer = await client.list_tools()
            elif op == "list_resources":
                answer = await client.list_resources()
            elif op == "read_resource":
                answer = await client.read_resource(s["uri"])
            elif op == "list_prompts":
                answer = await client.list_prompts()
            elif op == "get_prompt":
                answer = await client.get_prompt(s["name"], s.get("arguments", {}))
            elif op == "ping":
                with warnings.catch_warnings():  # it says ping is gone in 2026-07-28: known
                    warnings.simplefilter("ignore")
                    answer = await client.send_ping()
            else:
                raise AssertionError(f"unknown op {op!r}")
        except Exception as exc:
            results.append(None)
            error = {
                "name": type(exc).__name__,
                "code": getattr(exc, "code", None),
                "message": str(exc),
                "data": getattr(exc, "data", None),
            }
            await say({"event": "result", "step": index, "ok": False, "error": error})
        else:
            results.append(_as_data(answer))
            await say({"event": "result", "step": index, "ok": True, "result": results[-1]})
    events.append({"event": "done"})
    return Seen(events, "")


# ------------------------------------------------------------------ one server, any transport
ScenarioOf = Callable[[list[dict[str, Any]]], dict[str, Any]]


@contextmanager
def ts_scenarios(
    transport: str, data: Path, principal: Principal, *args: str, real: bool = False
) -> Iterator[ScenarioOf]:
    """steps -> a driver.mjs scenario against one server on `data`: over stdio (the
    client starts the server), or over HTTP (a server started here, the client sending
    the principal's token)."""
    if transport == "stdio":
        yield lambda steps: stdio_scenario(data, steps, *args, real=real)
        return
    with http_server(data, *args, env=principal.server_env(), real=real) as server:
        yield lambda steps: http_scenario(server.url, steps, principal.headers())


@asynccontextmanager
async def python_session(
    transport: str, data: Path, principal: Principal, revision: str, *args: str
) -> AsyncIterator[Client]:
    """The Python client on `revision`, to one server on `data` over `transport`."""
    if transport == "stdio":
        async with python_client(data, revision, *args) as client:
            yield client
        return
    with http_server(data, *args, env=principal.server_env()) as server:
        async with python_client(server.url, revision, headers=principal.headers()) as client:
            yield client


async def python_refused(url: str, revision: str, headers: dict[str, str]) -> list[int | str]:
    """The HTTP statuses the Python client got as it connected and called `run` (its
    exception does not say them), and "served" when it was served."""
    statuses: list[int | str] = []
    try:
        async with python_client(url, revision, headers=headers, statuses=statuses) as client:  # type: ignore[arg-type]
            await client.call_tool("run", {"code": "1"})
    except Exception:  # refused: the statuses say how
        return statuses
    return [*statuses, "served"]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": TS_REVISION,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def raw_post(url: str, headers: dict[str, str], body: Any = INITIALIZE) -> tuple[int, Any]:
    """One POST as any HTTP client sends it: (status, response headers)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers
