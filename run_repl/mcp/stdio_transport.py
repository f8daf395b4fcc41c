"""MCP over stdin/stdout on the event loop itself: no thread hop per line.

    async with stdio_streams() as (read, write):
        await server.run(read, write, options)

The SDK's `stdio_server` reads and writes through `anyio.wrap_file`: every line
read, every write and every flush is a call on a worker thread and a wake-up of
the loop (about 0.1 ms of CPU and latency each, three per request). Here stdin
is a pipe transport feeding a StreamReader and stdout a pipe transport behind a
StreamWriter, and the server gets the same context-carrying memory streams the
SDK's transport hands it.

As with the SDK's transport, while it serves fd 0 reads the null device and fd 1
writes to stderr (a host function, or a child it starts, can neither eat a
request nor print onto the wire); both are restored at the end. Only a pipe or
socket is served this way: a terminal or a file is shared with other processes,
and a pipe transport makes its descriptor non-blocking for all of them, so those
use the SDK's transport (`stdio_server` here picks).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

log = logging.getLogger("run_repl.mcp")

# One JSON-RPC line may be this long (the SDK's transport has no bound; a run's source
# is bounded far below it by the runner's max_source_bytes).
MAX_LINE_BYTES = 256 << 20
FLUSH_AT_END_S = 5.0  # the last replies reach a client still reading; one that is not, ends


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def stdio_server() -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """The (read, write) streams of MCP over this process's stdin and stdout: on the
    event loop when both are pipes or sockets (as every MCP client launches a server),
    else the SDK's own transport."""
    if _is_pipe(0) and _is_pipe(1):
        return stdio_streams()
    from mcp.server.stdio import stdio_server as sdk_stdio_server

    return sdk_stdio_server()


class _Claim:
    """fd 0 and fd 1 moved aside while the wire is served from private duplicates."""

    def __init__(self) -> None:
        self.wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        try:
            self.wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        except OSError:
            os.close(self.wire_in)
            raise
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        # Duplicates for the restore: the transports close the wire ones when they end.
        self.keep_in = fcntl.fcntl(self.wire_in, fcntl.F_DUPFD_CLOEXEC, 3)
        self.keep_out = fcntl.fcntl(self.wire_out, fcntl.F_DUPFD_CLOEXEC, 3)

    def release(self) -> None:
        for fd, kept in ((0, self.keep_in), (1, self.keep_out)):
            try:
                os.set_blocking(kept, True)  # as it was given (the transports made it not)
                os.dup2(kept, fd)
            except OSError:
                pass
            finally:
                os.close(kept)


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """Serve MCP over stdin and stdout (pipes or sockets) from the event loop."""
    loop = asyncio.get_running_loop()
    claim = _Claim()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(claim.wire_in, "rb", buffering=0)
    )
    out_transport, out_protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
        os.fdopen(claim.wire_out, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(out_transport, out_protocol, None, loop)

    read_stream_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_stream_reader = create_context_streams[SessionMessage](0)

    async def stdin_reader() -> None:
        async with read_stream_writer:
            while True:
                try:
                    line = await reader.readline()
                except ValueError as exc:  # a line over MAX_LINE_BYTES: dropped, said
                    await read_stream_writer.send(exc)
                    continue
                if not line:
                    return  # EOF: the client closed stdin
                if not line.strip():
                    continue
                text = line.decode("utf-8", errors="replace")  # as the SDK's transport reads
                try:
                    message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                except Exception as exc:
                    await read_stream_writer.send(exc)
                    continue
                await read_stream_writer.send(SessionMessage(message))

    async def stdout_writer() -> None:
        async with write_stream_reader:
            async for session_message in write_stream_reader:
                json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(json.encode("utf-8") + b"\n")
                try:
                    await writer.drain()
                except ConnectionResetError:  # the reader end closed: as a write to it says
                    raise BrokenPipeError("the client closed stdout") from None

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin_reader)
            tg.start_soon(stdout_writer)
            yield read_stream, write_stream
    finally:
        read_transport.close()
        if not out_transport.is_closing():
            out_transport.close()  # after what it holds is written (a reader that reads)
            with anyio.CancelScope(shield=True), anyio.move_on_after(FLUSH_AT_END_S):
                with suppress(OSError):  # the client is gone: nothing more to write
                    await writer.wait_closed()
        claim.release()


__all__ = ["MAX_LINE_BYTES", "stdio_server", "stdio_streams"]
