"""The event loop the MCP server runs on: uvloop's where it is installed, else asyncio's.

    run(serve_stdio(app))

uvloop (libuv, in C) does the loop's own work (its ready queue, timers, epoll and
socket reads and writes) where asyncio's loop runs Python: the SDK's streams,
uvicorn's protocol and our channels to the sandbox pass through the loop a few
hundred times a call, and a trivial call costs 0.17-0.30 ms of CPU less on it (about
7 %, measured interleaved on both transports). It is a dependency where it is built
(not on Windows); the server works the same on asyncio's loop, which the tests check."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# For a comparison or a suspicion: RUN_REPL_EVENT_LOOP=asyncio runs on asyncio's own loop.
LOOP_ENV = "RUN_REPL_EVENT_LOOP"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop maker, or None for asyncio's (not installed, or asked for)."""
    if os.environ.get(LOOP_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the server's loop."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
