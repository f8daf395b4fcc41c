"""`run`'s idempotency_key: a retry gets the first call's run, never a second run and
never a second question to a person, on any server of the team."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import pytest
from http_servers import ALICE, BOB, client, start, stop, tokens_file
from mcp_harness import cli, mcp_server
from test_mcp_approvals import LIMIT_S, PUBLISH, published
from test_stateless_http import _pending

from run_repl.store import SqliteStore

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow


def _runs(data: Path) -> list[str]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return [r.id for r in store.list_runs(limit=100)]
    finally:
        store.close()


def _approvals(data: Path) -> list[str]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return [a.id for a in store.list_approvals(status=None)]
    finally:
        store.close()


async def test_a_retry_with_the_same_key_gets_the_same_run(data: Path) -> None:
    code = "return crypto.randomUUID()"
    async with mcp_server(data) as server:
        first = await server.call("run", {"code": code, "idempotency_key": "k-1"})
        again = await server.call("run", {"code": code, "idempotency_key": "k-1"})
        other = await server.call("run", {"code": code, "idempotency_key": "k-2"})
        reused = await server.call("run", {"code": "return 2", "idempotency_key": "k-1"})
        tools = await server.client.list_tools()
    a, b, c = (r.structured_content for r in (first, again, other))
    assert a["run_id"] == b["run_id"] and a["value"] == b["value"]
    assert c["run_id"] != a["run_id"]
    assert len(_runs(data)) == 2  # k-1 ran once, k-2 once
    assert reused.is_error
    assert reused.structured_content["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    run_tool = next(t for t in tools.tools if t.name == "run")
    assert "idempotency_key" in run_tool.input_schema["properties"]
    assert "idempotency_key" in (run_tool.description or "")


async def test_a_retry_on_another_server_follows_the_first_calls_approval(data: Path) -> None:
    first_server = start(data, "--approval-wait", "0")
    second_server = start(data)
    try:
        async with client(first_server.url) as c:
            paused = (
                await c.call_tool("run", {"code": PUBLISH, "idempotency_key": "publish-1"})
            ).structured_content
        [asked] = _pending(data)
        heard = anyio.Event()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            heard.set()

        result = None
        async with client(second_server.url) as c:

            async def retry() -> None:
                nonlocal result
                result = await c.call_tool(
                    "run",
                    {"code": PUBLISH, "idempotency_key": "publish-1"},
                    progress_callback=on_progress,
                )

            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(retry)
                    await heard.wait()
                    assert _approvals(data) == [asked]  # nobody is asked a second time
                    decided = await anyio.to_thread.run_sync(
                        lambda: cli(data, "approvals", "approve", asked)
                    )
                    assert decided.returncode == 0, decided.stderr
    finally:
        stop(first_server)
        stop(second_server)
    assert paused["status"] == "interrupted"
    assert result is not None and result.structured_content["status"] == "ok", result
    assert result.structured_content["value"]["published"] is True
    assert published(data)
    assert _approvals(data) == [asked]
    # The first run and its resume: no second run of the snippet.
    assert len(_runs(data)) == 2


async def test_keys_are_per_principal(data: Path) -> None:
    path = tokens_file(data, alice=ALICE, bob=BOB)
    server = start(data, "--tokens-file", str(path), token=None)
    try:
        async with client(server.url, ALICE) as alice:
            mine = await alice.call_tool("run", {"code": "return 1", "idempotency_key": "same"})
        async with client(server.url, BOB) as bob:
            theirs = await bob.call_tool("run", {"code": "return 2", "idempotency_key": "same"})
    finally:
        stop(server)
    assert mine.structured_content["value"] == 1
    assert theirs.structured_content["value"] == 2  # Bob's key is his own


async def test_a_retry_while_the_first_call_still_runs_waits_for_its_run(
    data: Path, gate: Path
) -> None:
    from mcp_harness import GATE_HOST

    server = start(data, "--host", GATE_HOST, gate=gate)
    code = 'return await gate.wait("once")'
    results: list[object] = []
    notes: list[str | None] = []
    waiting = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        notes.append(message)
        waiting.set()

    try:
        async with client(server.url) as first, client(server.url) as second:

            async def call(c: object, **kwargs: object) -> None:
                results.append(
                    await c.call_tool(  # type: ignore[attr-defined]
                        "run", {"code": code, "idempotency_key": "slow"}, **kwargs
                    )
                )

            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, first)
                    while not (gate / "entered-once").exists():
                        await anyio.sleep(0.05)
                    # The retry, while the run is at the gate: it says it waits for it.
                    tg.start_soon(partial(call, second, progress_callback=on_progress))
                    await waiting.wait()
                    (gate / "open").touch()
    finally:
        stop(server)
    a, b = (r.structured_content for r in results)  # type: ignore[attr-defined]
    assert a["value"] == b["value"] == "once"
    assert a["run_id"] == b["run_id"]
    assert len(_runs(data)) == 1
    assert "the first call with this idempotency_key is still running" in notes
