"""The `--http` listening socket: what every connection accepted on it inherits.

A response goes out as two writes (its head, then its body). With Nagle's algorithm
on, the kernel holds the body until the client acknowledges the head, and a client
with nothing to send delays that acknowledgement by 40 ms: every call made right
after the previous one answered took ~45 ms instead of ~5. asyncio turns Nagle off
only for sockets whose protocol is IPPROTO_TCP, so `bind` must say so; uvloop's loop
(the server's, where installed) must keep it off too."""

from __future__ import annotations

import asyncio
import socket

import pytest
import uvloop

from run_repl.mcp.server import bind

LOOPS = {"asyncio": None, "uvloop": uvloop.new_event_loop}


async def nodelay_of_an_accepted_connection(host: str) -> int:
    listening = bind(host, 0)
    nodelay: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Keep(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            nodelay.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Keep, sock=listening)
    try:
        _, writer = await asyncio.open_connection(host, listening.getsockname()[1])
        writer.close()
        return await asyncio.wait_for(nodelay, 10)
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("loop", sorted(LOOPS))
@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_connections_accepted_on_the_bound_socket_send_at_once(host: str, loop: str) -> None:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        assert runner.run(nodelay_of_an_accepted_connection(host)) != 0
