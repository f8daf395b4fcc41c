"""What `--http` checks before a request reaches MCP: Host and Origin (DNS
rebinding), and the limits that keep slow or greedy clients from holding it.

    hosts = allowed_hosts("0.0.0.0", extra=["mcp.internal"])
    app = HostOriginGuard(app, hosts, origins_of(hosts, extra=[]))
    uvicorn.Config(app, http=guarded_protocol(HttpLimits()), ...)

Host and Origin are checked on every bind (not only loopback ones): a page a
browser loads from `evil.example` that resolves to this machine sends
`Host: evil.example` and `Origin: http://evil.example`, and gets 421 / 403. A
request with no Origin (any non-browser client) passes the Origin check.

uvicorn times out idle keep-alive connections, but not a request whose headers
or body never finish; `guarded_protocol` adds both deadlines, a bound on open
connections (one past it is closed at once, so a flood cannot use up the
process's file descriptors), and, on the httptools parser (which has none of
its own), a bound on the size of a request's head.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class HttpLimits:
    """The limits of `--http` (the config's [mcp] table)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    max_connections: int = 256
    max_request_bytes: int = 1 << 20
    max_header_bytes: int = 16 * 1024


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(bind_host: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The Host header values this server answers to (any port unless one is given):
    the bound address, loopback names for a loopback or wildcard bind, this
    machine's names for a wildcard bind, and `extra`."""
    names: list[str] = []
    bound = bind_host.strip("[]")
    if bound in WILDCARDS:
        names += [*LOOPBACK_NAMES, socket.gethostname(), socket.getfqdn()]
    elif bound in ("127.0.0.1", "::1", "localhost"):
        names += list(LOOPBACK_NAMES)
    else:
        names.append(_bracket(bound))
    names += [_bracket(e.strip()) if e.count(":") > 1 else e.strip() for e in extra if e.strip()]
    seen: list[str] = []
    for name in names:
        if name and name.lower() not in seen:
            seen.append(name.lower())
    return seen


def origins_of(hosts: list[str], extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The Origin values allowed: each allowed host, http or https, and `extra` whole."""
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return origins + [e.strip().rstrip("/").lower() for e in extra if e.strip()]


def _split_port(value: str) -> tuple[str, str | None]:
    if value.startswith("["):
        end = value.find("]")
        if end != -1:
            rest = value[end + 1 :]
            return value[: end + 1], rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, None


def host_allowed(value: str, hosts: list[str]) -> bool:
    name, port = _split_port(value.strip().lower())
    if port is not None and not port.isdigit():
        return False
    for allowed in hosts:
        a_name, a_port = _split_port(allowed)
        if name == a_name and (a_port is None or a_port == port):
            return True
    return False


def origin_allowed(value: str, origins: list[str]) -> bool:
    text = value.strip().rstrip("/").lower()
    scheme, sep, rest = text.partition("://")
    if not sep:
        return False
    for allowed in origins:
        a_scheme, _, a_rest = allowed.partition("://")
        if a_scheme == scheme and host_allowed(rest, [a_rest]):
            return True
    return False


class HostOriginGuard:
    """421 for a Host this server does not answer to, 403 for a foreign Origin."""

    def __init__(self, app: ASGIApp, hosts: list[str], origins: list[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode(): v.decode("latin-1")
            for k, v in scope["headers"]
            if k in (b"host", b"origin")
        }
        host = headers.get("host")
        if host is None or not host_allowed(host, self.hosts):
            await _plain(send, 421, f"Host {host!r} is not one this run-repl answers to.")
            return
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.origins):
            await _plain(send, 403, f"Origin {origin!r} may not call this run-repl.")
            return
        await self.app(scope, receive, send)


class BodyLimit:
    """413 for a request body over `max_bytes` (declared, or as it arrives)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _plain(send, 413, f"The request body is over {self.max_bytes:,} bytes.")
            return
        from mcp.server.transport_security import RequestBodyLimitMiddleware

        await RequestBodyLimitMiddleware(self.app, self.max_bytes)(scope, receive, send)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


HEADERS_TOO_BIG = "Request headers too large."


class _HeadersTooBig(Exception):
    """Raised from a parser callback: the parser stops, and uvicorn answers 400."""


def http_parser() -> str:
    """Which HTTP/1.1 parser `--http` uses: httptools (C, llhttp) when installed, else
    h11 (pure Python: about 0.1 ms more CPU per request)."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


def guarded_protocol(limits: HttpLimits, parser: str | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (`parser`: "httptools" or "h11", default the fastest
    installed) with read deadlines, a header size bound and a connection bound."""
    parser = parser or http_parser()
    base: Any
    if parser == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    else:
        # h11 bounds the headers itself (uvicorn's h11_max_incomplete_event_size).
        from uvicorn.protocols.http.h11_impl import H11Protocol as base
    bound_headers = parser == "httptools"

    class GuardedProtocol(base):  # a base chosen at run time (Any to mypy)
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline: asyncio.TimerHandle | None = None
            self._reading: str | None = None  # "headers" | "body" | None (answering)
            self._header_bytes = 0  # bytes received since the head began (a trickle's bound)
            self._head_bytes = 0  # the parsed head's size: its URL and headers

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                self.logger.warning(
                    "run-repl mcp: %d connections open: refusing another", limits.max_connections
                )
                transport.abort()
                return
            self._expect("headers")

        def _expect(self, what: str | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._reading = what
            self._header_bytes = 0
            if what is not None:
                seconds = limits.header_timeout_s if what == "headers" else limits.body_timeout_s
                self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                # Half a request: nothing was dispatched for it, so nothing is lost.
                self.transport.abort()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            if bound_headers and self._reading == "headers":
                self._header_bytes += len(data)
            super().data_received(data)
            if (
                bound_headers
                and self._reading == "headers"
                and self.cycle is before
                and self._header_bytes > limits.max_header_bytes
                and not self.transport.is_closing()
            ):  # still no end of the headers, past the bound: nothing was dispatched
                self.send_400_response(HEADERS_TOO_BIG)
                return
            self._follow(before)

        # httptools' callbacks, as it parses a request's head (h11 bounds its own).
        def on_message_begin(self) -> None:
            self._head_bytes = 0
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            self._count_head(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count_head(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count_head(self, size: int) -> None:
            self._head_bytes += size
            if self._head_bytes > limits.max_header_bytes:
                raise _HeadersTooBig(HEADERS_TOO_BIG)

        def _follow(self, before: Any) -> None:
            cycle = self.cycle
            if self._reading == "headers" and cycle is not None and cycle is not before:
                self._expect("body" if cycle.more_body else None)
            elif self._reading == "body" and cycle is not None and not cycle.more_body:
                self._expect(None)

        def on_response_complete(self) -> None:
            before = self.cycle
            super().on_response_complete()
            if self.transport.is_closing():
                self._expect(None)
                return
            # Idle until the next request: uvicorn's keep-alive timer; once its first
            # bytes arrive, the header deadline (armed here, so a trickle cannot hold it).
            self._expect("headers")
            self._follow(before)

        def connection_lost(self, exc: Exception | None) -> None:
            self._expect(None)
            super().connection_lost(exc)

    GuardedProtocol.__name__ = f"Guarded{base.__name__}"
    return GuardedProtocol


__all__ = [
    "BodyLimit",
    "HostOriginGuard",
    "HttpLimits",
    "allowed_hosts",
    "guarded_protocol",
    "host_allowed",
    "http_parser",
    "origin_allowed",
    "origins_of",
]
