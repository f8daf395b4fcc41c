"""The TypeScript SDK's client (1.32.2, what the MCP Inspector bundles) against `run-repl mcp`,
over stdio and streamable HTTP, on the revision it speaks (2025-11-25)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from interop_harness import (
    PUBLISH,
    TS_REVISION,
    Principal,
    approve_elsewhere,
    call,
    drive,
    ts_scenarios,
)
from interop_scenarios import (
    ERROR_STEPS,
    TOOL_SERVER_ARGS,
    TOOL_STEPS,
    check_approved_run,
    check_error_steps,
    check_tool_steps,
)

pytestmark = pytest.mark.usefixtures("node_clients")
TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_and_the_errors_of_run(
    transport: str, data: Path, alice: Principal
) -> None:
    # The server as a user's client starts it: a fresh `python -m run_repl.cli mcp`.
    with ts_scenarios(transport, data, alice, *TOOL_SERVER_ARGS, real=True) as scenario:
        seen = await drive(scenario(TOOL_STEPS))
    check_tool_steps(seen, TS_REVISION)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_errors_of_expand_result_docs_and_approval_status_reach_the_client(
    transport: str, data: Path, alice: Principal
) -> None:
    with ts_scenarios(transport, data, alice) as scenario:
        seen = await drive(scenario(ERROR_STEPS))
    check_error_steps(seen)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_progress_while_a_call_waits_and_a_person_approves_from_another_process(
    transport: str, data: Path, alice: Principal
) -> None:
    approving: list[asyncio.Future[str]] = []

    async def on_event(event: dict[str, Any]) -> None:
        # Once, on the first progress, in a task of its own: the approver's process
        # resumes the run, so the call may return before that process has ended.
        if event["event"] == "progress" and not approving:
            approving.append(asyncio.ensure_future(approve_elsewhere(data)))

    with ts_scenarios(transport, data, alice, "--approval-wait", "120") as scenario:
        seen = await drive(scenario([call("run", code=PUBLISH)]), on_event)
    check_approved_run(seen, data, [await a for a in approving])
