"""Real `run-repl mcp --http` servers on 127.0.0.1 for the HTTP tests, and clients for them.

    server = start(data, token="...")                  # a process; stop(server) ends it
    async with client(server.url, token) as c: ...     # the `mcp` package's own client

Every server listens on 127.0.0.1 (or another loopback address), on a port of
its own, and is ended by its pid. Each is a process of its own forked from the
`forked_cli` zygote (as mcp_harness's stdio servers are): ~1 s of CPU less per server
than a fresh interpreter; test_mcp_runs.py starts fresh ones.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import forked_cli
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_harness import READ_TIMEOUT_S, environment

TOKEN = "tok-agent-0123456789abcdefghijklmnop"  # 36 characters: a usable token
ALICE = "tok-alice-0123456789abcdefghijklmnop"
BOB = "tok-bob-0123456789abcdefghijklmnopqr"


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    url: str
    port: int
    said: list[str]  # its stderr up to the start line


def tokens_file(data: Path, **tokens: str) -> Path:
    """A private tokens file naming each principal's token."""
    path = data / "tokens.toml"
    path.write_text("[tokens]\n" + "".join(f'"{n}" = "{t}"\n' for n, t in tokens.items()))
    path.chmod(0o600)
    return path


def config(data: Path, text: str) -> None:
    directory = data / "config"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text(text)


def launch(
    data: Path,
    *args: str,
    bind: str = "127.0.0.1:0",
    token: str | None = TOKEN,
    env: dict[str, str] | None = None,
    gate: Path | None = None,
) -> subprocess.Popen[str]:
    environ = environment(data, gate)
    if token is not None:
        environ["RUN_REPL_MCP_TOKEN"] = token
    environ.update(env or {})
    return subprocess.Popen(
        forked_cli.command("mcp", "--http", bind, "--data-dir", str(data), *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )


def start(data: Path, *args: str, **kwargs: Any) -> HttpServer:
    process = launch(data, *args, **kwargs)
    assert process.stderr is not None
    said: list[str] = []
    for line in process.stderr:
        said.append(line.rstrip())
        found = re.search(r"serving (http://(\S+):(\d+)/mcp)$", line.rstrip())
        if found:
            return HttpServer(process, found.group(1), int(found.group(3)), said)
    process.wait(timeout=30)
    raise AssertionError(f"no address announced (exit {process.returncode}): {said}")


def stop(server: HttpServer) -> str:
    """End the server (by its pid); what it said on stderr after starting."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGINT)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=30)
    rest = server.process.stderr.read() if server.process.stderr else ""
    for pipe in (server.process.stdout, server.process.stderr):
        if pipe is not None:
            pipe.close()
    return rest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Alternating(httpx2.AsyncBaseTransport):
    """A balancer with no stickiness: each request goes to the next server's port."""

    def __init__(self, ports: list[int]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.ports = ports
        self.sent: list[tuple[str, int]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self.ports[len(self.sent) % len(self.ports)]
        self.sent.append((request.method, port))
        request.url = request.url.copy_with(port=port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def client(
    url: str,
    token: str | None = TOKEN,
    *,
    mode: str = "legacy",
    transport: httpx2.AsyncBaseTransport | None = None,
    **kwargs: Any,
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(30, read=READ_TIMEOUT_S),
        transport=transport,
    )
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            read_timeout_seconds=READ_TIMEOUT_S,
            **kwargs,
        ) as connected,
    ):
        yield connected
