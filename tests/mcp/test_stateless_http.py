"""A 2025-handshake client behind a balancer with no stickiness: its requests alternate
between two servers on one store, and its session works, approval waits included."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx2
import pytest
from http_servers import TOKEN, Alternating, client, start, stop
from mcp_harness import cli
from test_mcp_approvals import LIMIT_S, PUBLISH, published

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow


async def test_a_legacy_session_works_across_two_servers(data: Path) -> None:
    one, two = start(data), start(data)
    balancer = Alternating([one.port, two.port])
    progress: list[str | None] = []
    heard = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)
        heard.set()

    try:
        async with client(one.url, mode="legacy", transport=balancer) as c:
            tools = await c.list_tools()
            first = await c.call_tool(
                "run", {"code": "const [a] = await crm.listAccounts(1); a.id"}
            )
            again = await c.call_tool("run", {"code": "1 + 1"})
            result = None

            async def call() -> None:
                nonlocal result
                result = await c.call_tool("run", {"code": PUBLISH}, progress_callback=on_progress)

            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await heard.wait()  # the call waits for a person, and says so
                    [pending] = _pending(data)
                    decided = await anyio.to_thread.run_sync(
                        lambda: cli(data, "approvals", "approve", pending)
                    )
                    assert decided.returncode == 0, decided.stderr
    finally:
        stop(one)
        stop(two)
    assert tools.tools[0].name == "run"
    assert first.structured_content["value"] == "acc_0001"
    assert again.structured_content["value"] == 2
    assert result is not None and result.structured_content["status"] == "ok"
    assert published(data)
    assert any(m and "waiting for a person to approve" in m for m in progress)
    assert {port for _, port in balancer.sent} == {one.port, two.port}
    posts = [port for method, port in balancer.sent if method == "POST"]
    assert posts[0] != posts[1]  # the initialize and what follows went to different servers


CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "run", "arguments": {"code": "1 + 1"}},
}
LEGACY = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "authorization": f"Bearer {TOKEN}",
    "mcp-protocol-version": "2025-11-25",
}


def test_a_legacy_call_gets_a_stream_only_when_it_asks_for_progress(data: Path) -> None:
    """Without a session nothing but progress can come before the answer: a call that
    asked for none gets one JSON response, one with a progressToken the SSE stream."""
    server = start(data)
    try:
        plain = httpx2.post(server.url, json=CALL, headers=LEGACY)
        asking = {**CALL, "params": {**CALL["params"], "_meta": {"progressToken": "p-1"}}}
        streamed = httpx2.post(server.url, json=asking, headers=LEGACY)
    finally:
        stop(server)
    assert plain.status_code == 200 and streamed.status_code == 200
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["structuredContent"]["value"] == 2
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert '"value":2' in streamed.text


def _pending(data: Path) -> list[str]:
    from run_repl.store import SqliteStore

    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return [a.id for a in store.list_approvals("pending")]
    finally:
        store.close()
