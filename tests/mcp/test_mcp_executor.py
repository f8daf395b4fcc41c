"""The MCP server is an executor of its host: a decision made anywhere resumes the run
in the server holding the agent's waiting call, and the agent gets its result there.

A person decides with `run-repl approvals approve ID` in another process: it records
the decision and returns at once, naming the server; the server resumes the run (its
host functions run in the server's process) and the waiting call answers with it.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_harness import GATE_HOST, cli, mcp_server

pytestmark = pytest.mark.slow  # a real server and a person in another process

LIMIT_S = 240  # a bound against a hang, not a timing
CODE = 'const w = await gate.wait("w");\nreturn [w, await rocket.launch("x")];'


async def test_the_server_holding_the_call_resumes_the_run_after_a_cli_decision(
    data: Path, gate: Path
) -> None:
    (gate / "open").touch()  # gate.wait returns at once, saying which process ran it
    async with mcp_server(data, host=GATE_HOST, gate=gate) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": CODE})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await server.waiting.wait()
                [pending] = server.pending()
                store = server.store()
                try:
                    [executor] = store.list_executors()
                finally:
                    store.close()
                assert executor.live and executor.kind == "mcp"
                assert pending.resume_by == executor.id  # the run names who started it
                decided = await anyio.to_thread.run_sync(
                    partial(
                        cli,
                        data,
                        "--host",
                        GATE_HOST,
                        "approvals",
                        "approve",
                        pending.id,
                        gate=gate,
                    )
                )
        store = server.store()
        try:
            done = store.get_approval(pending.id)
        finally:
            store.close()
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout == ""  # recorded, not resumed by the CLI
    assert f"resumes on {executor.label}" in decided.stderr, decided.stderr
    server_pid = (gate / "entered-w").read_text()
    assert executor.label.endswith(f"pid {server_pid}")
    result = outcome["result"]
    assert result.is_error is False, result
    assert result.structured_content["value"] == ["w", {"launched": "x"}]
    assert (gate / "launched-x").exists()
    assert done is not None and done.status == "approved" and done.outcome == "ok"
    assert done.claimed_by == executor.label  # resumed by the server, not the CLI
