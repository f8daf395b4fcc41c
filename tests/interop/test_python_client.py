"""The `mcp` package's own Python client against `run-repl mcp`, over stdio and streamable
HTTP, on both revisions it speaks: 2025-11-25 (the handshake, mode="legacy") and
2026-07-28 (its default: no handshake, one self-contained request per call)."""

from __future__ import annotations

from pathlib import Path

import pytest
from interop_harness import REVISIONS, Principal, python_session, python_steps
from interop_scenarios import (
    ERROR_STEPS,
    Approver,
    check_error_steps,
    check_tool_steps,
    tool_steps,
)

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow

TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize(("transport", "revision"), [(t, r) for t in TRANSPORTS for r in REVISIONS])
async def test_every_tool_on_its_ok_and_error_paths_and_an_approval_decided_in_another_process(
    transport: str, revision: str, data: Path, alice: Principal
) -> None:
    person = Approver(data)
    async with python_session(transport, data, alice, revision) as client:
        seen = await python_steps(client, tool_steps(revision), person.on_event)
        errors = await python_steps(client, ERROR_STEPS)
    check_tool_steps(seen, revision, data, await person.approved())
    check_error_steps(errors)
