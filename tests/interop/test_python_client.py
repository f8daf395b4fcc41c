"""The `mcp` package's own Python client against `run-repl mcp`, over stdio and streamable
HTTP, on both revisions it speaks: 2025-11-25 (the handshake, mode="legacy") and
2026-07-28 (its default: no handshake, one self-contained request per call)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from interop_harness import (
    PUBLISH,
    REVISIONS,
    Principal,
    approve_elsewhere,
    call,
    python_session,
    python_steps,
)
from interop_scenarios import (
    ERROR_STEPS,
    TOOL_SERVER_ARGS,
    check_approved_run,
    check_error_steps,
    check_tool_steps,
    tool_steps,
)

TRANSPORTS = ["stdio", "http"]
both = pytest.mark.parametrize(
    ("transport", "revision"), [(t, r) for t in TRANSPORTS for r in REVISIONS]
)


@both
async def test_every_tool_on_its_ok_and_error_paths(
    transport: str, revision: str, data: Path, alice: Principal
) -> None:
    async with python_session(transport, data, alice, revision, *TOOL_SERVER_ARGS) as client:
        seen = await python_steps(client, tool_steps(revision))
        errors = await python_steps(client, ERROR_STEPS)
    check_tool_steps(seen, revision)
    check_error_steps(errors)


@both
async def test_progress_while_a_call_waits_and_a_person_approves_from_another_process(
    transport: str, revision: str, data: Path, alice: Principal
) -> None:
    approving: list[asyncio.Future[str]] = []

    async def on_event(event: dict[str, Any]) -> None:
        # Once, on the first progress, in a task of its own: the approver's process
        # resumes the run, so the call may return before that process has ended.
        if event["event"] == "progress" and not approving:
            approving.append(asyncio.ensure_future(approve_elsewhere(data)))

    async with python_session(transport, data, alice, revision, "--approval-wait", "120") as client:
        seen = await python_steps(client, [call("run", code=PUBLISH)], on_event)
    check_approved_run(seen, data, [await a for a in approving])
