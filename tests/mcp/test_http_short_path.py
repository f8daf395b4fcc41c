"""The stateless `--http` answers a plain 2025-11-25 request on a short path of its own
(no per-request SDK transport, session or task group), and answers every request,
well formed or not, exactly as the SDK's JSON-response path does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.server import streamable_http
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from run_repl.mcp import RunReplMcp
from run_repl.mcp.http_streams import stateless_mcp_app
from run_repl.workspace import open_workspace

URL = "http://127.0.0.1:8000/mcp"
LEGACY = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1", "127.0.0.1:*"],
    allowed_origins=["http://127.0.0.1", "http://127.0.0.1:*"],
)


def call(name: str, arguments: Any, id: Any = 2) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@asynccontextmanager
async def apps(data: Path) -> AsyncIterator[tuple[httpx2.AsyncClient, httpx2.AsyncClient]]:
    """Clients of this server's stateless app and of the SDK's own stateless
    JSON-response app, over one workspace."""
    with open_workspace(None, data_dir_override=str(data)) as ws:
        server = RunReplMcp(ws).build()
        ours = stateless_mcp_app(server, SECURITY, 1 << 20)
        sdk = StreamableHTTPSessionManager(
            app=server, json_response=True, stateless=True, security_settings=SECURITY
        )
        reference = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sdk))])
        async with (
            ours.router.lifespan_context(ours),
            sdk.run(),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ours)) as a,
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=reference)) as b,
        ):
            yield a, b


async def test_a_plain_legacy_call_takes_no_per_request_sdk_transport(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[object] = []
    real = streamable_http.StreamableHTTPServerTransport.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(streamable_http.StreamableHTTPServerTransport, "__init__", counted)
    async with apps(data) as (ours, _):
        answer = await ours.post(URL, json=call("run", {"code": "1 + 1"}), headers=LEGACY)
        refused = await ours.post(URL, json=call("run", {"code": 5}, id="x"), headers=LEGACY)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["id"] == 2
    assert answer.json()["result"]["structuredContent"]["value"] == 2
    assert refused.json()["id"] == "x" and refused.json()["result"]["isError"] is True
    assert made == []


# (body, headers) pairs: the common requests, and every way a request can be wrong.
CASES: list[tuple[Any, dict[str, str]]] = [
    (INITIALIZE, LEGACY),
    ({"jsonrpc": "2.0", "id": 3, "method": "ping"}, LEGACY),
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, LEGACY),
    (call("docs", {}), LEGACY),
    (call("run", {"code": 5}), LEGACY),  # a tool's refusal: a result with isError
    (call("nope", {}), LEGACY),  # an unknown tool
    ({"jsonrpc": "2.0", "id": 5, "method": "no/such"}, LEGACY),  # METHOD_NOT_FOUND
    ({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"x": 1}}, LEGACY),
    ({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "x:y"}}, LEGACY),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, LEGACY),  # 202
    ({"jsonrpc": "2.0", "id": 8, "result": {}}, LEGACY),  # a response: 202
    ([{"jsonrpc": "2.0", "id": 9, "method": "ping"}], LEGACY),  # a batch
    ({"jsonrpc": "1.0", "id": 10, "method": "ping"}, LEGACY),
    ("{not json", LEGACY),
    ({"jsonrpc": "2.0", "id": 11, "method": "ping"}, {**LEGACY, "content-type": "text/plain"}),
    ({"jsonrpc": "2.0", "id": 12, "method": "ping"}, {**LEGACY, "accept": "text/event-stream"}),
    ({"jsonrpc": "2.0", "id": 13, "method": "ping"}, {**LEGACY, "accept": "*/*"}),
    ({"jsonrpc": "2.0", "id": 14, "method": "ping"}, {**LEGACY, "origin": "http://evil.example"}),
    ({"jsonrpc": "2.0", "id": 15, "method": "ping"}, {**LEGACY, "host": "evil.example"}),
    (
        {"jsonrpc": "2.0", "id": 16, "method": "ping"},
        {k: v for k, v in LEGACY.items() if k != "mcp-protocol-version"},
    ),
    (
        {"jsonrpc": "2.0", "id": 17, "method": "tools/list"},
        {**LEGACY, "mcp-protocol-version": "2025-06-18"},
    ),
]


@pytest.mark.parametrize("body,headers", CASES, ids=[str(i) for i in range(len(CASES))])
async def test_every_request_is_answered_as_the_sdk_answers_it(
    data: Path, body: Any, headers: dict[str, str]
) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    async with apps(data) as (ours, sdk):
        mine = await ours.post(URL, content=content, headers=headers)
        theirs = await sdk.post(URL, content=content, headers=headers)
    assert mine.status_code == theirs.status_code
    assert mine.headers.get("content-type") == theirs.headers.get("content-type")
    if theirs.headers.get("content-type") == "application/json" and theirs.content:
        assert mine.json() == theirs.json()
    else:
        assert mine.content == theirs.content


# ---------------------------------------------------------------- 2026-07-28
MODERN = {**LEGACY, "mcp-protocol-version": "2026-07-28"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


def modern(method: str, params: dict[str, Any] | None = None, id: Any = 2) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {**(params or {}), "_meta": ENVELOPE},
    }


def routed(body: Any, headers: dict[str, str]) -> dict[str, str]:
    """`headers` with the routing headers a 2026-07-28 request carries (Mcp-Method,
    Mcp-Name), as its body says."""
    if not isinstance(body, dict) or "method" not in body:
        return headers
    params = body.get("params") or {}
    name = params.get("name", params.get("uri"))
    return {"mcp-method": body["method"], **({"mcp-name": name} if name else {}), **headers}


@asynccontextmanager
async def sse_apps(data: Path) -> AsyncIterator[tuple[httpx2.AsyncClient, httpx2.AsyncClient]]:
    """As `apps`, with the SDK's own stateless app in its default (SSE) mode."""
    with open_workspace(None, data_dir_override=str(data)) as ws:
        server = RunReplMcp(ws).build()
        ours = stateless_mcp_app(server, SECURITY, 1 << 20)
        sdk = StreamableHTTPSessionManager(app=server, stateless=True, security_settings=SECURITY)
        reference = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sdk))])
        async with (
            ours.router.lifespan_context(ours),
            sdk.run(),
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=ours)) as a,
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=reference)) as b,
        ):
            yield a, b


async def test_a_plain_2026_call_takes_no_stream_or_task_group(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    streams: list[object] = []
    real = anyio.create_memory_object_stream

    def counted(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        streams.append(made)
        return made

    async with apps(data) as (ours, _):
        monkeypatch.setattr(anyio, "create_memory_object_stream", counted)
        body = modern("tools/call", {"name": "run", "arguments": {"code": "1 + 1"}})
        answer = await ours.post(URL, json=body, headers=routed(body, MODERN))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["result"]["structuredContent"]["value"] == 2
    assert streams == []


MODERN_CASES: list[tuple[Any, dict[str, str]]] = [
    (modern("tools/list"), MODERN),
    (modern("tools/call", {"name": "docs", "arguments": {}}), MODERN),
    (modern("tools/call", {"name": "run", "arguments": {"code": 5}}), MODERN),
    (modern("tools/call", {"name": "nope", "arguments": {}}), MODERN),
    (modern("no/such"), MODERN),  # METHOD_NOT_FOUND: its HTTP status too
    (modern("resources/read", {"uri": "x:y"}), MODERN),
    ({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, MODERN),  # no envelope
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}, MODERN),
    ([modern("tools/list")], MODERN),
    ("{not json", MODERN),
    (modern("tools/list"), {**MODERN, "mcp-protocol-version": "2099-01-01"}),
    (modern("tools/list"), {**MODERN, "accept": "application/json"}),  # SSE mode: 406
    (modern("tools/list"), {**MODERN, "accept": "text/event-stream"}),
    (modern("tools/list"), {**MODERN, "content-type": "text/plain"}),
    (modern("tools/list"), {**MODERN, "origin": "http://evil.example"}),
    (modern("tools/list"), {**MODERN, "mcp-method": "tools/call"}),  # a routing mismatch
]


@pytest.mark.parametrize(
    "body,headers", MODERN_CASES, ids=[str(i) for i in range(len(MODERN_CASES))]
)
async def test_every_2026_request_is_answered_as_the_sdk_answers_it(
    data: Path, body: Any, headers: dict[str, str]
) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    headers = routed(body, headers)
    async with sse_apps(data) as (ours, sdk):
        mine = await ours.post(URL, content=content, headers=headers)
        theirs = await sdk.post(URL, content=content, headers=headers)
    assert mine.status_code == theirs.status_code
    assert mine.headers.get("content-type") == theirs.headers.get("content-type")
    if theirs.headers.get("content-type") == "application/json" and theirs.content:
        assert mine.json() == theirs.json()
    else:
        assert mine.content == theirs.content


async def test_a_2026_call_silent_past_the_window_becomes_a_stream_with_pings(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the SDK's SSE mode: a proxy's idle timeout cannot cut a long call."""
    from run_repl.mcp import http_streams

    monkeypatch.setattr(http_streams, "SILENT_WINDOW_S", 0.01)
    slow = "let n = 0; for (let i = 0; i < 1e6; i++) n += 1; n / 5e5"  # a while, silent
    async with apps(data) as (ours, _):
        body = modern("tools/call", {"name": "run", "arguments": {"code": slow}})
        answer = await ours.post(URL, json=body, headers=routed(body, MODERN))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/event-stream"
    text = answer.text
    assert text.startswith(": ping\r\n\r\n")
    last = text.rstrip("\r\n").split("\r\n\r\n")[-1]
    assert last.startswith("event: message\r\ndata: ")
    reply = json.loads(last.split("data: ", 1)[1])
    assert reply["id"] == 2 and reply["result"]["structuredContent"]["value"] == 2
