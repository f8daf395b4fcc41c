"""A fence around the MCP SDK's private state the upstream connection reads.

`connection_closed` (run_repl/host/upstream/connection.py) reads the client's
dispatcher `_closed` flag to tell a process that died between calls (nothing sent:
the call goes to a new process) from one that died during a call (it may have run).
When the SDK moves the flag this fails here, and the connection falls back to a ping.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from run_repl.host.upstream.connection import connection_closed

SERVER = Path(__file__).with_name("upstream_server.py")
WHERE = "connection_closed in run_repl/host/upstream/connection.py"


@pytest.mark.slow  # an upstream process, killed
async def test_the_client_says_its_connection_closed_when_the_process_dies(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER)],
        env={**os.environ, "UPSTREAM_STATE": str(tmp_path)},
    )
    with open(tmp_path / "err.log", "w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            assert connection_closed(client) is False, f"the SDK's flag moved: {WHERE}"
            answered = await client.call_tool("echo", {"text": "hi"})
            assert not answered.is_error
            pid = await _server_pid(tmp_path)
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while connection_closed(client) is not True:
                assert time.monotonic() < deadline, f"the SDK never said it closed: {WHERE}"
                await asyncio.sleep(0.05)


async def _server_pid(state: Path) -> int:
    """The test server's pid: the process whose environment names this state directory."""
    wanted = f"UPSTREAM_STATE={state}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    return int(entry.name)
            except OSError:
                continue
    raise AssertionError("the test server is not running")
