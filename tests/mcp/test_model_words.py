"""What a model reads after a timeout, a pause, a resume and a denial says what
happened and what to call, in the tools' own terms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp_harness import cli, mcp_server, text_of
from test_mcp_approvals import PUBLISH, call_and_decide


async def test_a_timeout_names_the_tools_argument_and_is_no_refusal(data: Path) -> None:
    async with mcp_server(data) as server:
        result = await server.call("run", {"code": "while (true) {}", "timeout_seconds": 0.2})
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "RUN_TIMEOUT"
    [action] = error["next_actions"]
    assert action["type"] == "edit_request" and action["argument"] == "timeout_seconds"
    assert "timeout_seconds" in action["why"] and "timeout_ms" not in action["why"]
    assert "0.2 s" in action["why"] and "300" in action["why"]
    words = text_of(result)["error"]
    assert words.startswith("Timed out (RUN_TIMEOUT): ")
    assert "Denied" not in words and "timeout_ms" not in words
    assert "timeout_seconds" in words


async def test_a_paused_run_says_it_waits_and_what_to_call(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "0.1") as server:
        paused = await server.call("run", {"code": PUBLISH})
        run_id = paused.structured_content["run_id"]
        still = await server.call("approval_status", {"run_id": run_id})
    for reply in (paused, still):
        assert reply.is_error is False
        words = text_of(reply)
        # Not a failure to retry: no `ok: false`, a status that says it waits.
        assert "ok" not in words and "error" not in words, words
        assert words["status"] == "waiting_for_approval"
        assert words["run_id"] == run_id
        assert 'documents.publish("draft_01")' in words["waiting"]
        assert "NOT run" in words["waiting"]
        assert "approval_status" in words["next"] and run_id in words["next"]
        assert "Do not retry" in words["next"]


async def test_a_run_resumed_after_approval_says_which_run_it_resumed(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "0.1") as server:
        paused = await server.call("run", {"code": PUBLISH})
        first = paused.structured_content["run_id"]
        [approval_id] = paused.structured_content["approval_ids"]
        decided = await anyio.to_thread.run_sync(
            cli, data, "approvals", "approve", approval_id, "--wait"
        )
        assert decided.returncode == 0, decided.stderr
        done = await server.call("approval_status", {"run_id": first})
    body = done.structured_content
    resumed = body["result"]["run_id"]
    assert resumed != first  # the resumed run is a run of its own in the history
    assert body["result"]["resumed_from"] == first
    words = text_of(done)
    assert words["ok"] is True and words["run_id"] == resumed
    assert first in words["note"] and resumed in words["note"]


async def test_a_run_approved_while_the_call_waits_says_which_run_it_resumed(
    data: Path,
) -> None:
    async with mcp_server(data, "--approval-wait", "120") as server:
        result, decided = await call_and_decide(server, PUBLISH, "approve")
        [run] = [r for r in _runs(server) if r.id != result.structured_content["run_id"]]
    assert decided.returncode == 0, decided.stderr
    envelope = result.structured_content
    assert envelope["status"] == "ok" and envelope["resumed_from"] == run.id
    words = text_of(result)
    assert run.id in words["note"] and envelope["run_id"] in words["note"]


async def test_a_denial_names_the_call_with_its_arguments(data: Path) -> None:
    async with mcp_server(data) as server:
        result, decided = await call_and_decide(server, PUBLISH, "deny")
    assert decided.returncode == 0  # the denial took
    error = result.structured_content["error"]
    assert error["code"] == "RUN_APPROVAL_DENIED"
    assert 'documents.publish("draft_01")' in error["message"]
    assert 'documents.publish("draft_01")' in text_of(result)["error"]


def _runs(server: Any) -> list[Any]:
    store = server.store()
    try:
        return [r for r in store.list_runs(limit=100) if r.source == PUBLISH]
    finally:
        store.close()
