"""Which answer a 2025-11-25 request gets from a stateless `--http`: a stream only
when something can come before the answer.

    app = stateless_mcp_app(server, security, max_request_bytes)

A stateless server cannot ask a client anything (there is no session for the
answer to come back to), so the only messages a request's response stream can
carry before the answer are progress notes, and those a client gets only when it
asked for them (a `progressToken`). Such a request gets the SDK's SSE stream;
every other one gets the SDK's one JSON response, which costs about 1 ms of CPU
less per request (no stream, no stream tasks, no pings). A call answered that
way is still cancelled when its client goes away: this watches the connection
for the disconnect, as the SSE response does. 2026-07-28 requests (no handshake
version in `MCP-Protocol-Version`) go to the SDK's own per-request path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MCP_PATH = "/mcp"
_VERSION_HEADER = b"mcp-protocol-version"
# A request asks for progress with `_meta.progressToken`. Any body holding these bytes
# (or a \u escape, which could spell them) gets the stream: when in doubt, stream.
_MAY_ASK_PROGRESS = (b"progressToken", b"\\u")


def may_want_stream(body: bytes) -> bool:
    """Whether a request body may ask for progress notes (False: it surely does not)."""
    return any(mark in body for mark in _MAY_ASK_PROGRESS)


def _handshake_era(scope: Scope) -> bool:
    version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


class ResponseChoice:
    """POSTs of the handshake era that cannot want a stream go to `plain` (JSON
    responses), every other request to `streaming` (the SDK's default)."""

    def __init__(self, streaming: ASGIApp, plain: ASGIApp) -> None:
        self.streaming = streaming
        self.plain = plain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _handshake_era(scope):
            await self.streaming(scope, receive, send)
            return
        body = bytearray()
        while True:  # the body is bounded by the layer in front (BodyLimit)
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # gone before it finished asking: nothing was dispatched
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        whole = bytes(body)
        if may_want_stream(whole):
            await self.streaming(scope, _replay(whole, receive), send)
            return
        await self._answer_plain(scope, whole, receive, send)

    async def _answer_plain(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        gone = anyio.Event()
        given = False

        async def replayed() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                # The only reader of the connection once the body is in: a client that
                # goes away cancels the call (its run stops and is kept as aborted).
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone.set()
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            await self.plain(scope, replayed, send)
            tg.cancel_scope.cancel()


def _replay(body: bytes, receive: Receive) -> Receive:
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def stateless_mcp_app(server: Any, security: Any, max_request_bytes: int) -> Any:
    """The SDK's stateless streamable-HTTP app at /mcp, with two session managers (SSE
    and JSON responses) and `ResponseChoice` between them."""
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from starlette.applications import Starlette
    from starlette.routing import Route

    def manager(json_response: bool) -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=server,
            json_response=json_response,
            stateless=True,
            security_settings=security,
            max_request_body_size=max_request_bytes,
        )

    streaming, plain = manager(False), manager(True)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with streaming.run(), plain.run():
            yield

    choice = ResponseChoice(StreamableHTTPASGIApp(streaming), StreamableHTTPASGIApp(plain))
    return Starlette(routes=[Route(MCP_PATH, endpoint=choice)], lifespan=lifespan)


__all__ = ["ResponseChoice", "may_want_stream", "stateless_mcp_app"]
