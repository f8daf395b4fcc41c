"""How a stateless `--http` answers: one JSON response unless something can come
before the answer, and the common request on a short path of its own.

    app = stateless_mcp_app(server, security, max_request_bytes)

A stateless server cannot ask a client anything (there is no session for the
answer to come back to), so the only messages a request's response stream can
carry before the answer are progress notes, and those a client gets only when it
asked for them (a `progressToken`). Such a request gets the SDK's SSE stream.

Every other 2025-11-25 request, well formed (a JSON-RPC request with the headers
the SDK's transport asks for), is answered here with one JSON response: the SDK's
own request handling (`serve_one`: its validation, middleware, our handlers, the
result's shaping) under a dispatch context that can carry nothing but the answer,
and no per-request transport, session, dispatcher, memory streams or task group
(that machinery cost about 1.2 ms of CPU per request, a trivial run's engine
about 1.1). What this does not take (a notification, a response, a malformed
body, a refused header) goes to the SDK's JSON-response path, which answers it as
it always did. A call answered here is still cancelled when its client goes away:
this watches the connection for the disconnect, as the SSE response does.

2026-07-28 requests (no handshake version in `MCP-Protocol-Version`) go to the
SDK's own per-request path.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MCP_PATH = "/mcp"
_VERSION_HEADER = b"mcp-protocol-version"
# A request asks for progress with `_meta.progressToken`. Any body holding these bytes
# (or a \u escape, which could spell them) gets the stream: when in doubt, stream.
_MAY_ASK_PROGRESS = (b"progressToken", b"\\u")
_JSON_HEADERS = [(b"content-type", b"application/json")]


def may_want_stream(body: bytes) -> bool:
    """Whether a request body may ask for progress notes (False: it surely does not)."""
    return any(mark in body for mark in _MAY_ASK_PROGRESS)


def _handshake_era(scope: Scope) -> bool:
    version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


def _takes_json(headers: Mapping[str, str]) -> bool:
    """The SDK's JSON-response transport's header checks (its Content-Type, Accept and
    media type), all passed: False sends the request to it, to be refused as it does."""
    kind = headers.get("content-type", "").lower()
    if not kind.startswith("application/json"):
        return False
    if not any(p.strip() == "application/json" for p in kind.split(";")[0].split(",")):
        return False
    accepted = [
        t.strip().split(";")[0].strip().lower() for t in headers.get("accept", "").split(",")
    ]
    return any(t in ("*/*", "application/json", "application/*") for t in accepted)


@dataclass
class _OneAnswer:
    """The dispatch context of a request answered with one JSON response: the answer
    is all that reaches the client (no progress was asked for; a notification would
    have no wire, as in the SDK's JSON-response mode; a stateless server cannot ask)."""

    transport: Any
    request_id: RequestId
    message_metadata: Any
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        from mcp.shared.exceptions import NoBackChannelError

        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


class ShortPath:
    """A well-formed 2025-11-25 JSON-RPC request with no progress asked, answered with
    the SDK's request handling and one JSON response; anything else to `fallback`
    (the SDK's JSON-response path)."""

    def __init__(self, server: Any, security: Any, fallback: ASGIApp) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.server = server
        self.security = TransportSecurityMiddleware(security)
        self.fallback = fallback
        self.lifespan_state: Any = None

    async def __call__(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        from starlette.requests import Request

        request = Request(scope, _replay(body, receive))
        message = None
        if (
            _takes_json(request.headers)
            and await self.security.validate_request(request, is_post=True) is None
        ):
            try:
                message = jsonrpc_message_adapter.validate_json(body, by_name=False)
            except ValueError:  # pydantic's ValidationError too: the SDK says what is wrong
                message = None
        if not isinstance(message, JSONRPCRequest):
            await self.fallback(scope, _replay(body, receive), send)
            return
        answer = await self._answer(scope, request, message, receive)
        if answer is None:
            return  # the client went away: nobody to answer
        await send({"type": "http.response.start", "status": 200, "headers": _JSON_HEADERS})
        await send({"type": "http.response.body", "body": answer})

    async def _answer(
        self, scope: Scope, request: Any, message: JSONRPCRequest, receive: Receive
    ) -> bytes | None:
        """The JSON-RPC answer's bytes, or None when the client went away first (which
        cancels the handler: a run stops and is kept as aborted)."""
        from mcp.server.connection import Connection
        from mcp.server.runner import serve_one
        from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
        from mcp.shared.message import ServerMessageMetadata
        from mcp.shared.transport_context import TransportContext

        version = request.headers.get("mcp-protocol-version", DEFAULT_NEGOTIATED_VERSION)
        # As the SDK's stateless transport sets it up: born ready, at the header's version.
        connection = Connection.from_envelope(version, None, None)
        context = _OneAnswer(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        reply: JSONRPCResponse | JSONRPCError
        with anyio.CancelScope() as cancel:
            # The only reader of the connection once the body is in: its disconnect.
            watch = asyncio.ensure_future(_disconnected(receive))
            watch.add_done_callback(lambda done: done.cancelled() or cancel.cancel())
            try:
                result = await serve_one(
                    self.server,
                    context,
                    message.method,
                    message.params,
                    connection=connection,
                    lifespan_state=self.lifespan_state,
                )
                reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
            except Exception as exc:  # the SDK dispatcher's own mapping onto the wire
                error = handler_exception_to_error_data(exc) or ErrorData(code=0, message=str(exc))
                reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
            finally:
                watch.cancel()
        if cancel.cancelled_caught:
            return None
        return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class ResponseChoice:
    """POSTs of the handshake era that cannot want a stream go to `short` (and on to
    `plain`, JSON responses), every other request to `streaming` (the SDK's default)."""

    def __init__(self, streaming: ASGIApp, short: ShortPath) -> None:
        self.streaming = streaming
        self.short = short

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
        await self.short(scope, whole, receive, send)


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
    """The stateless streamable-HTTP app at /mcp: the SDK's two session managers (SSE
    and JSON responses), the short path, and `ResponseChoice` between them."""
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
    short = ShortPath(server, security, StreamableHTTPASGIApp(plain))

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with streaming.run(), plain.run(), server.lifespan(server) as state:
            short.lifespan_state = state
            yield

    choice = ResponseChoice(StreamableHTTPASGIApp(streaming), short)
    return Starlette(routes=[Route(MCP_PATH, endpoint=choice)], lifespan=lifespan)


__all__ = ["ResponseChoice", "ShortPath", "may_want_stream", "stateless_mcp_app"]
