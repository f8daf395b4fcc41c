"""`--http` against DNS rebinding (Host and Origin on every bind) and slow or greedy
clients (half-sent requests time out, an over-size body gets 413, connections are bounded).

Raw sockets on loopback addresses only; every bound here is a ceiling against a
hang, far above the short timeouts the tests configure."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx2
import pytest
from http_servers import TOKEN, config, start, stop
from test_http_auth import HEADERS, INIT

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow

AUTH = {**HEADERS, "authorization": f"Bearer {TOKEN}"}
CEILING_S = 30.0  # a connection the server should close within 1 s that is still open: fail


@pytest.mark.parametrize("bind", ["0.0.0.0", "127.0.0.2"])
def test_a_foreign_host_or_origin_is_refused_on_any_bind(data: Path, bind: str) -> None:
    server = start(data, bind=f"{bind}:0")
    target = server.url.replace("0.0.0.0", "127.0.0.1")
    reach = "127.0.0.1" if bind == "0.0.0.0" else bind
    try:
        foreign_host = httpx2.post(target, json=INIT, headers={**AUTH, "host": "evil.example"})
        foreign_origin = httpx2.post(
            target, json=INIT, headers={**AUTH, "origin": "http://evil.example"}
        )
        rebound = httpx2.post(
            target,
            json=INIT,
            headers={
                **AUTH,
                "host": f"evil.example:{server.port}",
                "origin": "http://evil.example",
            },
        )
        own = httpx2.post(
            target,
            json=INIT,
            headers={**AUTH, "origin": f"http://{reach}:{server.port}"},
        )
    finally:
        stop(server)
    assert foreign_host.status_code == 421
    assert foreign_origin.status_code == 403
    assert rebound.status_code == 421
    assert own.status_code == 200


def test_allow_host_and_origin_add_a_balancers_names(data: Path) -> None:
    server = start(data, "--allow-host", "mcp.internal", "--allow-origin", "https://app.example")
    try:
        named = httpx2.post(
            server.url,
            json=INIT,
            headers={**AUTH, "host": "mcp.internal", "origin": "https://app.example"},
        )
        other = httpx2.post(server.url, json=INIT, headers={**AUTH, "host": "other.internal"})
    finally:
        stop(server)
    assert named.status_code == 200
    assert other.status_code == 421


def _closed_within(sock: socket.socket, ceiling_s: float) -> float:
    """Seconds until the server closed `sock` (reading what it sent); fails past the ceiling."""
    sock.settimeout(ceiling_s)
    began = time.monotonic()
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        raise AssertionError(
            f"the server kept a half-sent request open over {ceiling_s} s"
        ) from None
    except ConnectionResetError:
        pass
    return time.monotonic() - began


def _slow_config(data: Path, **values: object) -> None:
    settings = {"header_timeout_s": 1, "body_timeout_s": 1, **values}
    config(data, "[mcp]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()))


def test_half_sent_requests_are_closed(data: Path) -> None:
    _slow_config(data)
    server = start(data)
    try:
        headers_only = socket.create_connection(("127.0.0.1", server.port))
        headers_only.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        body_short = socket.create_connection(("127.0.0.1", server.port))
        body_short.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b'\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"json'
        )
        _closed_within(headers_only, CEILING_S)
        _closed_within(body_short, CEILING_S)
        after = httpx2.post(server.url, json=INIT, headers=AUTH)  # the server is fine
    finally:
        stop(server)
    assert after.status_code == 200


def _answer(sock: socket.socket) -> bytes:
    """What the server sent before it closed `sock`."""
    sock.settimeout(CEILING_S)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_an_over_size_head_is_refused_whole_or_trickled(data: Path) -> None:
    """A request head over the bound (16 KiB) is refused, sent at once or a little at a
    time (the header deadline is far away: only the bound can close it)."""
    _slow_config(data, header_timeout_s=120)
    server = start(data)
    big = b"X-Big: " + b"a" * (20 * 1024) + b"\r\n"
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    try:
        whole = socket.create_connection(("127.0.0.1", server.port))
        whole.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + big
            + b"Authorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        refused = _answer(whole)
        trickled = socket.create_connection(("127.0.0.1", server.port))
        trickled.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(40):  # 40 x 1 KiB of one header that never ends
            try:
                trickled.sendall(b"X-Slow: " + b"b" * 1024)
            except (BrokenPipeError, ConnectionResetError):
                break
        _closed_within(trickled, CEILING_S)
        after = httpx2.post(server.url, json=INIT, headers=AUTH)  # the server is fine
    finally:
        stop(server)
    assert refused.startswith(b"HTTP/1.1 400"), refused[:200]
    assert after.status_code == 200


def test_an_over_size_body_gets_413(data: Path) -> None:
    _slow_config(data, max_request_bytes=65536 * 12)
    server = start(data)
    try:
        huge = httpx2.post(
            server.url,
            content=b'{"x": "' + b"a" * (65536 * 13) + b'"}',
            headers=AUTH,
            timeout=60,
        )
    finally:
        stop(server)
    assert huge.status_code == 413


def test_connections_past_the_bound_are_closed_at_once(data: Path) -> None:
    _slow_config(data, header_timeout_s=120, max_connections=3)
    server = start(data)
    held: list[socket.socket] = []
    try:
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(b"POST /mcp HTTP/1.1\r\n")
            held.append(s)
        time.sleep(0.5)  # let the server accept them (not a timing: they stay open)
        extra = socket.create_connection(("127.0.0.1", server.port))
        extra.sendall(b"POST /mcp HTTP/1.1\r\n")
        _closed_within(extra, CEILING_S)
        for s in held:
            s.close()
        deadline = time.monotonic() + CEILING_S
        while True:  # once they are gone, service is back
            answer = httpx2.post(server.url, json=INIT, headers=AUTH)
            if answer.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        for s in held:
            s.close()
        stop(server)
    assert answer.status_code == 200
