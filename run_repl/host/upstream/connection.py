"""One shared MCP client per upstream, kept on a background event loop.

Front ends run snippets on loops of their own (the IDE's for its life, the CLI's
for one command, the MCP server's), and an upstream's process must outlive any
one of them and serve them all, so every upstream lives on one daemon thread's
loop. A host call awaits its request from whatever loop it runs on; cancelling
that await cancels the request there, and the SDK tells the upstream
(`notifications/cancelled`).

The process starts on first use (the catalog's listing or a call). When it dies
or cannot start, calls fail at once with UPSTREAM_UNAVAILABLE until a backoff
(0.5 s doubling to 30 s) has passed; the next call then starts it again. A call
in flight when it dies is never sent again: it may have run (UPSTREAM_CALL_LOST).
A process that died between calls has been sent nothing: a call that finds the
connection closed starts it again at once (the first time; a process that keeps
dying backs off) and goes to the new one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from ...sandbox.errors import HostError
from .spec import UpstreamSpec

T = TypeVar("T")

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
MAX_TOOL_PAGES = 100  # a server whose pages never end cannot hang a start

UPSTREAM_UNAVAILABLE = "UPSTREAM_UNAVAILABLE"
UPSTREAM_TIMEOUT = "UPSTREAM_TIMEOUT"
UPSTREAM_CALL_LOST = "UPSTREAM_CALL_LOST"
UPSTREAM_PROTOCOL_ERROR = "UPSTREAM_PROTOCOL_ERROR"


class UpstreamLoop:
    """The daemon thread and event loop every upstream client lives on."""

    _shared: UpstreamLoop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="run-repl-upstreams", daemon=True
        )
        self.thread.start()

    @classmethod
    def shared(cls) -> UpstreamLoop:
        with cls._lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the upstream loop from any other loop; cancelling this await
        cancels it there."""
        return await asyncio.wrap_future(self.submit(coro))

    def run_blocking(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise


def _unavailable(spec: UpstreamSpec, why: str, retry_in: float | None = None) -> HostError:
    later = f"; run-repl tries again in {retry_in:.1f} s" if retry_in else ""
    return HostError(
        f"upstream {spec.name!r} ({spec.where}) is not available: {why}{later}.",
        code=UPSTREAM_UNAVAILABLE,
        details={"upstream": spec.name, "retry_in_s": retry_in},
        next_actions=[{"type": "retry", "after_ms": int((retry_in or 0) * 1000)}],
    )


class UpstreamConnection:
    """An upstream's client, its tools, and its health; every coroutine here runs on
    the upstream loop (callers go through `UpstreamLoop.run`)."""

    def __init__(
        self,
        spec: UpstreamSpec,
        log_path: Path,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spec = spec
        self.log_path = log_path
        self._clock = clock
        self._client: Any = None
        self._starting: asyncio.Future[Any] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.failures = 0
        self.retry_at = 0.0
        self.last_error: str | None = None
        self.starts = 0
        self.tools: list[Any] = []  # mcp Tool models, as last listed
        self.tools_changed: list[Callable[[list[Any]], None]] = []

    # ------------------------------------------------------------------ health
    def _failed(self, why: str) -> None:
        self.failures += 1
        self.last_error = why
        delay = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** (self.failures - 1))
        self.retry_at = self._clock() + delay

    async def client(self) -> Any:
        """The live client, starting the process when there is none (and the backoff
        allows)."""
        if self._client is not None:
            return self._client
        if self._starting is None:
            wait = self.retry_at - self._clock()
            if self.failures and wait > 0:
                raise _unavailable(self.spec, self.last_error or "it stopped", wait)
            self._starting = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(self._starting, self._stop)
            )
        starting = self._starting
        try:
            return await asyncio.wait_for(asyncio.shield(starting), self.spec.start_timeout_s)
        except TimeoutError:
            self._broken(f"it did not start within {self.spec.start_timeout_s:g} s")
            raise _unavailable(
                self.spec, self.last_error or "", self.retry_at - self._clock()
            ) from None

    def _call_failed(self, client: Any, why: str) -> None:
        """A call on `client` found its process gone. Calls in flight together all fail
        so: the first stops the process, the rest find it stopped (or a newer one
        running, which they leave alone)."""
        if client is self._client:
            self._broken(why)

    def _broken(self, why: str) -> None:
        """Stop this process (it failed); the next call after the backoff starts another."""
        self._failed(why)
        self._client = None
        if self._starting is not None and not self._starting.done():
            self._starting.set_exception(_unavailable(self.spec, why))
            self._starting.exception()  # retrieved: no "never retrieved" warning
        self._starting = None
        if self._stop is not None:
            self._stop.set()

    async def _supervise(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        self.starts += 1
        try:
            from mcp import Client

            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "a", buffering=1, encoding="utf-8", errors="replace") as log:
                log.write(f"--- run-repl starts upstream {self.spec.name}: {self.spec.where}\n")
                async with Client(
                    self._transport(log),
                    message_handler=self._on_message,
                    cache=None,  # the catalog refreshes on list_changed, never from a stale cache
                ) as client:
                    tools = await self._list(client)
                    if self._starting is not ready or stop.is_set():
                        return  # given up on as too slow to start: it goes with the context
                    self.tools = tools
                    self._client = client
                    self.failures = 0
                    if not ready.done():
                        ready.set_result(client)
                    self._announce(tools)
                    follow = asyncio.get_running_loop().create_task(self._follow(client))
                    try:
                        await stop.wait()
                    finally:
                        follow.cancel()
        except Exception as exc:  # the process would not start, or its protocol broke
            why = _describe(exc)
            if self._starting is ready:
                self._broken(why)
            elif not ready.done():
                ready.set_exception(_unavailable(self.spec, why))
        finally:
            if self._starting is ready:
                self._client = None
                self._starting = None

    def _transport(self, log: Any) -> Any:
        if self.spec.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(
                headers=dict(self.spec.headers), timeout=self.spec.call_timeout_s
            )
            return streamable_http_client(self.spec.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self.spec.command or "",
            args=list(self.spec.args),
            env=dict(self.spec.env) or None,
            cwd=self.spec.cwd,
        )
        return stdio_client(params, errlog=log)

    async def _list(self, client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _follow(self, client: Any) -> None:
        """Hear tool-list changes on a 2026-07-28 connection (a listen stream); older
        ones send `notifications/tools/list_changed`, which `_on_message` hears."""
        from mcp.client.subscriptions import ListenNotSupportedError

        caps = client.server_capabilities
        if caps is None or caps.tools is None or not caps.tools.list_changed:
            return
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    await self._refresh(client)
        except ListenNotSupportedError:
            return
        except Exception as exc:  # the catalog stays as it is; calls still work
            self._note(f"stopped hearing tool-list changes: {_describe(exc)}")

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            client = self._client
            if client is not None:
                # Off the reader: listing waits for a reply this handler would block.
                asyncio.get_running_loop().create_task(self._refresh(client))

    async def _refresh(self, client: Any) -> None:
        try:
            tools = await self._list(client)
        except Exception as exc:  # the old catalog stays; the log says why
            self._note(f"could not list the changed tools: {_describe(exc)}")
            return
        self.tools = tools
        self._announce(tools)

    def _announce(self, tools: list[Any]) -> None:
        for listener in list(self.tools_changed):
            try:
                listener(tools)
            except Exception as exc:
                self._note(f"a catalog listener failed: {_describe(exc)}")

    def _note(self, text: str) -> None:
        with contextlib.suppress(OSError), open(self.log_path, "a", encoding="utf-8") as log:
            log.write(f"--- run-repl: {text}\n")

    # ------------------------------------------------------------------ calls
    async def list_tools(self) -> list[Any]:
        await self.client()
        return self.tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """The tool's CallToolResult; HostError with an UPSTREAM_* code when the call
        could not be made or its outcome is unknown."""
        from mcp.shared.exceptions import MCPError

        client = await self._checked_client()
        try:
            async with asyncio.timeout(self.spec.call_timeout_s):
                return await client.call_tool(name, arguments)
        except TimeoutError:
            raise HostError(
                f"upstream {self.spec.name!r} tool {name!r} did not answer within "
                f"{self.spec.call_timeout_s:g} s; the call was cancelled (it may have run in part).",
                code=UPSTREAM_TIMEOUT,
                details={"upstream": self.spec.name, "tool": name},
                next_actions=[{"type": "retry"}],
            ) from None
        except MCPError as exc:
            if _connection_closed(exc):
                self._call_failed(client, f"it stopped during a call ({_describe(exc)})")
                raise _lost(self.spec, name) from None
            raise HostError(
                f"upstream {self.spec.name!r} refused the call to {name!r}: {exc}",
                code=UPSTREAM_PROTOCOL_ERROR,
                details={"upstream": self.spec.name, "tool": name, "mcp_code": exc.code},
            ) from None
        except (asyncio.CancelledError, HostError):
            raise
        except Exception as exc:  # the stream broke: the process died or the network went
            self._call_failed(client, f"it stopped during a call ({_describe(exc)})")
            raise _lost(self.spec, name) from None

    async def _checked_client(self) -> Any:
        """The client, unless the SDK saw its connection end (a process that died
        between calls): nothing was sent to that one, so it is replaced (at once the
        first time, else after the backoff) before the call goes anywhere."""
        client = await self.client()
        if connection_closed(client) is not True:
            return client
        first = self.failures == 0
        self._call_failed(client, "it stopped between calls")
        if first:
            self.retry_at = self._clock()  # one death is not a crash loop: start again now
        return await self.client()

    async def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
        self._client = None
        self._starting = None


def _lost(spec: UpstreamSpec, name: str) -> HostError:
    return HostError(
        f"upstream {spec.name!r} stopped while {name!r} was running: it may or may not have "
        "taken effect, so run-repl does not send it again. Check, then run again.",
        code=UPSTREAM_CALL_LOST,
        details={"upstream": spec.name, "tool": name},
        next_actions=[{"type": "run_again"}],
    )


def connection_closed(client: Any) -> bool | None:
    """Whether the SDK's client saw its connection end (its dispatcher's `_closed`, set
    when the reader meets the end of the stream: a dead process); None when this SDK
    keeps it elsewhere (tests/host/test_mcp_private_apis.py fails then, and a call
    after such a death is reported lost, as before)."""
    dispatcher = getattr(getattr(client, "_session", None), "_dispatcher", None)
    closed = getattr(dispatcher, "_closed", None)
    return closed if isinstance(closed, bool) else None


def _connection_closed(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
