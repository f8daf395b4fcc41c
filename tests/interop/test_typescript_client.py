"""The TypeScript SDK's client (1.32.2, what the MCP Inspector bundles) against `run-repl mcp`,
over stdio and streamable HTTP, on the revision it speaks (2025-11-25)."""

from __future__ import annotations

from pathlib import Path

import pytest
from interop_harness import TS_REVISION, Principal, drive, ts_scenarios
from interop_scenarios import (
    ERROR_STEPS,
    TOOL_STEPS,
    Approver,
    check_error_steps,
    check_tool_steps,
)

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = [pytest.mark.usefixtures("node_clients"), pytest.mark.slow]
TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_and_an_approval_decided_in_another_process(
    transport: str, data: Path, alice: Principal
) -> None:
    # Over stdio the client starts the server as a user's client does: a fresh
    # `python -m run_repl.cli mcp`.
    person = Approver(data)
    with ts_scenarios(transport, data, alice, real=transport == "stdio") as scenario:
        seen = await drive(scenario(TOOL_STEPS), person.on_event)
    check_tool_steps(seen, TS_REVISION, data, await person.approved())


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_errors_of_expand_result_docs_and_approval_status_reach_the_client(
    transport: str, data: Path, alice: Principal
) -> None:
    with ts_scenarios(transport, data, alice) as scenario:
        seen = await drive(scenario(ERROR_STEPS))
    check_error_steps(seen)
