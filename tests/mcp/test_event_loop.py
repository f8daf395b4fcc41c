"""The MCP server's event loop: uvloop's where installed, asyncio's when asked (or
where uvloop is not built), and the server works the same on either.

The rest of the MCP tests run the server on its default loop; here a stdio server
on asyncio's loop runs a snippet and waits out an approval decided in another
process, and an HTTP server on it answers a call."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from http_servers import client, start, stop
from mcp_harness import mcp_server
from test_mcp_approvals import PUBLISH, call_and_decide, published

from run_repl.mcp import event_loop

ON_ASYNCIO = {event_loop.LOOP_ENV: "asyncio"}


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_the_server_runs_on_uvloop_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.LOOP_ENV, raising=False)
    assert event_loop.run(loop_module()).startswith("uvloop")


def test_asked_for_asyncio_it_runs_on_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.LOOP_ENV, " AsyncIO ")
    assert event_loop.run(loop_module()) == "asyncio.unix_events"


def test_without_uvloop_it_runs_on_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.LOOP_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed
    assert event_loop.loop_factory() is None
    assert event_loop.run(loop_module()) == "asyncio.unix_events"


@pytest.mark.slow  # a real server and a person deciding in another process
async def test_a_stdio_server_on_asyncio_runs_and_waits_out_an_approval(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "120", env=ON_ASYNCIO) as server:
        trivial = await server.call("run", {"code": "1 + 1"})
        result, decided = await call_and_decide(server, PUBLISH, "approve")
    assert trivial.structured_content["value"] == 2
    assert decided.returncode == 0, decided.stderr
    assert result.is_error is False and result.structured_content["value"]["published"] is True
    assert published(data)


@pytest.mark.slow  # a real server
async def test_an_http_server_on_asyncio_answers(data: Path) -> None:
    server = start(data, env=ON_ASYNCIO)
    try:
        async with client(server.url) as connected:
            result = await connected.call_tool("run", {"code": "[1, 2].length"})
        assert result.structured_content["value"] == 2
    finally:
        stop(server)
