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

A 2026-07-28 request (no handshake version in `MCP-Protocol-Version`) that asks
for no progress goes to the SDK's own per-request path in its JSON mode, which
runs the handler in the request's task (its SSE mode adds a memory stream, a task
group and two tasks to every request: about 0.5 ms of CPU). What SSE mode does
for a handler still silent after its window (15 s), this does too: it commits the
response to an event stream and pings it, so a proxy's idle timeout cannot cut a
long run, and the answer comes as the stream's last event. Any other request
goes to the SDK's SSE mode.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
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
# As the SDK's 2026-07-28 SSE mode: how long a silent handler may run before the
# response becomes an event stream with keep-alive pings, and that stream's headers.
SILENT_WINDOW_S = 15.0
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
_PING = b": ping\r\n\r\n"
_LISTEN = b"subscriptions/listen"


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
            watch.add_done_callback(lambda done: None if done.cancelled() else cancel.cancel())
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


class ModernShortPath:
    """A 2026-07-28 request that asks for no progress: the SDK's per-request path in its
    JSON mode, in this task, turned into an event stream with pings if it runs silent
    past `SILENT_WINDOW_S` (as the SDK's SSE mode does); cancelled when the client
    goes away. A request whose Accept the SSE mode refuses goes to `fallback` (it)."""

    def __init__(self, server: Any, security: Any, fallback: ASGIApp) -> None:
        self.server = server
        self.security = security
        self.fallback = fallback
        self.lifespan_state: Any = None

    async def __call__(self, scope: Scope, body: bytes, receive: Receive, send: Send) -> None:
        from mcp.server._streamable_http_modern import handle_modern_request
        from starlette.requests import Request

        # SSE mode's 406, as it says it; a listen (its answer is a stream of its own).
        if not all(_accepts(Request(scope).headers)) or _LISTEN in body:
            await self.fallback(scope, _replay(body, receive), send)
            return
        stream = _SilentWindow(send)
        with anyio.CancelScope() as cancel:
            watch = asyncio.ensure_future(_disconnected(receive))
            watch.add_done_callback(lambda done: None if done.cancelled() else cancel.cancel())
            try:
                await handle_modern_request(
                    self.server,
                    self.security,
                    True,
                    self.lifespan_state,
                    scope,
                    _replay(body, _never),
                    stream.send,
                )
            finally:
                watch.cancel()
                await stream.close()


def _accepts(headers: Mapping[str, str]) -> tuple[bool, bool]:
    from mcp.server.streamable_http import CONTENT_TYPE_JSON, CONTENT_TYPE_SSE

    accepted = [
        t.strip().split(";")[0].strip().lower() for t in headers.get("accept", "").split(",")
    ]
    wildcard = "*/*" in accepted
    return (
        wildcard or any(t in (CONTENT_TYPE_JSON, "application/*") for t in accepted),
        wildcard or any(t in (CONTENT_TYPE_SSE, "text/*") for t in accepted),
    )


class _SilentWindow:
    """`send` for a JSON answer that becomes an event stream with pings when none has
    started after `SILENT_WINDOW_S`: the answer's body is then the stream's last event."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._streaming = False
        self._pinger: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(SILENT_WINDOW_S, self._start)

    def _start(self) -> None:
        self._pinger = asyncio.ensure_future(self._ping())

    async def _ping(self) -> None:
        self._streaming = True  # the head goes out before this task first waits
        await self._send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        while True:
            await self._send({"type": "http.response.body", "body": _PING, "more_body": True})
            await asyncio.sleep(SILENT_WINDOW_S)

    async def close(self) -> None:
        self._timer.cancel()
        pinger, self._pinger = self._pinger, None
        if pinger is not None:
            pinger.cancel()
            with suppress(asyncio.CancelledError):
                await pinger

    async def send(self, message: Message) -> None:
        await self.close()
        if not self._streaming:
            await self._send(message)
        elif message["type"] == "http.response.body":
            event = b"event: message\r\ndata: " + message.get("body", b"") + b"\r\n\r\n"
            await self._send({"type": "http.response.body", "body": event, "more_body": False})
        # (the JSON answer's own head: the stream's went out already)


async def _never() -> Message:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class ResponseChoice:
    """POSTs that cannot want a stream go to `short` (2025-11-25, and on to the SDK's
    JSON responses) or `modern` (2026-07-28); every other request to `streaming`
    (the SDK's default)."""

    def __init__(self, streaming: ASGIApp, short: ShortPath, modern: ModernShortPath) -> None:
        self.streaming = streaming
        self.short = short
        self.modern = modern

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
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
        elif _handshake_era(scope):
            await self.short(scope, whole, receive, send)
        else:
            await self.modern(scope, whole, receive, send)


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
    modern = ModernShortPath(server, security, StreamableHTTPASGIApp(streaming))

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with streaming.run(), plain.run(), server.lifespan(server) as state:
            short.lifespan_state = modern.lifespan_state = state
            yield

    choice = ResponseChoice(StreamableHTTPASGIApp(streaming), short, modern)
    return Starlette(routes=[Route(MCP_PATH, endpoint=choice)], lifespan=lifespan)


__all__ = ["ModernShortPath", "ResponseChoice", "ShortPath", "may_want_stream", "stateless_mcp_app"]
