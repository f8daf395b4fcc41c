"""An agent's run waits for a person: approved, denied, or decided after the wait.

The person decides in another process (`run-repl approvals approve ID`, as from
another terminal); that process resumes the run through the store, and the
agent's waiting tool call returns the final result.
"""

from __future__ import annotations

import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_harness import GATE_HOST, Server, cli, mcp_server, text_of

from run_repl.workspace import open_workspace

# A real server and a person deciding in another process: out of the fast lane.
pytestmark = pytest.mark.slow

PUBLISH = (
    "const drafts = await documents.listDrafts();\n"
    "const draft = drafts.find((d) => !d.published);\n"
    "return await documents.publish(draft.id);"
)
LIMIT_S = 240  # a bound against a hang, not a timing: each story takes seconds
CATCH_DENIAL = (
    "try {\n"
    '  return await documents.publish("draft_01");\n'
    "} catch (e) {\n"
    "  return { denied: e.code };\n"
    "}"
)


def published(data: Path, draft_id: str = "draft_01") -> bool:
    db = sqlite3.connect(data / "demo.sqlite3")
    try:
        return bool(
            db.execute("SELECT published FROM drafts WHERE id = ?", (draft_id,)).fetchone()[0]
        )
    finally:
        db.close()


async def call_and_decide(server: Server, code: str, action: str) -> tuple[Any, Any]:
    """Call `run` and, once it waits (its first progress notification), decide its
    approval with `run-repl approvals ACTION ID` in another process."""
    outcome: dict[str, Any] = {}

    async def call() -> None:
        outcome["result"] = await server.call("run", {"code": code})

    with anyio.fail_after(LIMIT_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await server.waiting.wait()
            [approval] = server.pending()
            outcome["decided"] = await anyio.to_thread.run_sync(
                cli, server.data, "approvals", action, approval.id
            )
    return outcome["result"], outcome["decided"]


async def test_approved_from_another_process_while_the_tool_waits(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "120") as server:
        result, decided = await call_and_decide(server, PUBLISH, "approve")
    assert decided.returncode == 0, decided.stderr
    assert result.is_error is False
    envelope = result.structured_content
    assert envelope["status"] == "ok"
    assert envelope["value"]["id"] == "draft_01" and envelope["value"]["published"] is True
    publish = envelope["calls"][-1]
    assert (publish["path"], publish["decision"], publish["ok"]) == (
        "documents.publish",
        "approved",
        True,
    )
    assert envelope["calls"][0]["replayed"] is True  # listDrafts was answered from the record
    assert text_of(result)["ok"] is True
    assert published(data)
    # While it waited, the client heard what it waits for, and where to decide it.
    first = server.progress[0][2] or ""
    assert 'waiting for a person to approve documents.publish("draft_01") in run-repl' in first
    assert "run-repl approvals approve int_" in first
    assert [p for p, _, _ in server.progress] == sorted({p for p, _, _ in server.progress})


async def test_a_denial_reaches_the_snippet(data: Path) -> None:
    async with mcp_server(data) as server:
        result, decided = await call_and_decide(server, PUBLISH, "deny")
        server.waiting = anyio.Event()
        caught, _ = await call_and_decide(server, CATCH_DENIAL, "deny")
    assert decided.returncode == 0  # the denial took; the CLI's run ended with it
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "RUN_APPROVAL_DENIED"
    assert error["line"] == 3
    assert "RUN_APPROVAL_DENIED" in text_of(result)["error"]
    assert caught.structured_content["value"] == {"denied": "RUN_APPROVAL_DENIED"}
    assert not published(data)


async def test_the_wait_runs_out_and_approval_status_has_the_final_result(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "0.1") as server:
        paused = await server.call("run", {"code": PUBLISH})
        envelope = paused.structured_content
        assert paused.is_error is False
        assert envelope["status"] == "interrupted"
        [approval_id] = envelope["approval_ids"]
        run_id = envelope["run_id"]
        [action] = envelope["next_actions"]
        assert action["then"] == {"tool": "approval_status", "arguments": {"run_id": run_id}}
        words = text_of(paused)
        assert words["status"] == "waiting_for_approval"
        assert words["waiting"].startswith(
            "1 call in this code needs a person's approval and was NOT run yet"
        )
        assert "approval_status" in words["next"] and "Do not retry" in words["next"]
        assert "continuation" not in envelope

        still = await server.call("approval_status", {"run_id": run_id})
        assert still.structured_content["status"] == "waiting"
        assert [a["id"] for a in still.structured_content["approvals"]] == [approval_id]
        assert still.structured_content["approvals"][0]["state"] == "pending"
        assert "Still waiting" in text_of(still)["waiting"]
        assert not published(data)

        decided = await anyio.to_thread.run_sync(
            cli, data, "approvals", "approve", approval_id, "--wait"
        )
        assert decided.returncode == 0, decided.stderr

        for arguments in ({"run_id": run_id}, {"approval_ids": [approval_id]}):
            done = await server.call("approval_status", arguments)
            body = done.structured_content
            assert body["status"] == "done", body
            assert body["result"]["status"] == "ok"
            assert body["result"]["value"]["published"] is True
            assert text_of(done)["ok"] is True
    assert published(data)


async def test_approval_status_waits_for_the_decision_when_asked(data: Path) -> None:
    async with mcp_server(data, "--approval-wait", "0") as server:
        paused = await server.call("run", {"code": PUBLISH})
        run_id = paused.structured_content["run_id"]
        server.waiting = anyio.Event()
        outcome: dict[str, Any] = {}

        async def status() -> None:
            outcome["done"] = await server.call(
                "approval_status", {"run_id": run_id, "wait_seconds": 120}
            )

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(status)
                await server.waiting.wait()
                [approval] = server.pending()
                decided = await anyio.to_thread.run_sync(
                    cli, data, "approvals", "deny", approval.id
                )
        assert decided.returncode == 0  # the denial took
    body = outcome["done"].structured_content
    assert body["status"] == "done"
    assert body["result"]["error"]["code"] == "RUN_APPROVAL_DENIED"


@pytest.mark.slow
async def test_two_approvals_in_a_row_are_followed_to_the_end(data: Path) -> None:
    """The resumed run asks again (a second publish): the tool waits on, to the end."""
    code = 'const a = await documents.publish("draft_01");\nconst b = await documents.publish("draft_02");\nreturn [a.id, b.id]'
    async with mcp_server(data) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": code})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                for draft in ("draft_01", "draft_02"):
                    while True:  # the next approval appears once the first resume has run
                        waiting = [a for a in server.pending() if a.args == [draft]]
                        if waiting:
                            break
                        await anyio.sleep(0.05)
                    decided = await anyio.to_thread.run_sync(
                        cli, data, "approvals", "approve", waiting[0].id
                    )
                    assert decided.returncode in (0, 3), decided.stderr
    result = outcome["result"]
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["value"] == ["draft_01", "draft_02"]
    assert published(data, "draft_01") and published(data, "draft_02")
    messages = [m or "" for _, _, m in server.progress]
    assert any('documents.publish("draft_02")' in m for m in messages)


@pytest.mark.slow
async def test_two_calls_waiting_at_once_are_decided_one_by_one(data: Path, gate: Path) -> None:
    """Promise.all reaches two approvals at once (one batch): the person approves one,
    the resumed run still waits on the other, then denies it; the call ends with both."""
    code = (
        'const [a, b] = await Promise.allSettled([rocket.launch("a"), rocket.launch("b")]);\n'
        "return [a.status, b.status === 'rejected' ? b.reason.code : b.value]"
    )
    async with mcp_server(data, host=GATE_HOST, gate=gate) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": code})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await server.waiting.wait()
                pending = {a.args[0]: a for a in server.pending()}
                assert set(pending) == {"a", "b"}
                approved = await anyio.to_thread.run_sync(
                    partial(
                        cli,
                        data,
                        "--host",
                        GATE_HOST,
                        "approvals",
                        "approve",
                        pending["a"].id,
                        "--wait",
                        gate=gate,
                    )
                )
                assert approved.returncode == 3, approved.stderr  # the run waits on b
                denied = await anyio.to_thread.run_sync(
                    partial(
                        cli,
                        data,
                        "--host",
                        GATE_HOST,
                        "approvals",
                        "deny",
                        pending["b"].id,
                        "--wait",
                        gate=gate,
                    )
                )
                assert denied.returncode == 0, denied.stderr
    result = outcome["result"]
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["value"] == ["fulfilled", "RUN_APPROVAL_DENIED"]
    assert (gate / "launched-a").exists() and not (gate / "launched-b").exists()


async def test_an_approval_the_store_could_not_keep_is_said_at_once(data: Path) -> None:
    """The store fell back to memory: nobody else can see the approval, so the call
    does not wait for one; it says so, and what to do."""
    (data / "run-repl.sqlite3").write_bytes(b"this is not a database" * 100)
    async with mcp_server(data, "--approval-wait", "120") as server:
        with anyio.fail_after(LIMIT_S):
            result = await server.call("run", {"code": PUBLISH})
    assert result.structured_content["status"] == "interrupted"
    assert result.structured_content["next_actions"][0]["type"] == "run_again"
    words = text_of(result)["error"]
    assert "could NOT be saved" in words and "memory" in words
    assert server.progress == []  # it did not wait
    assert "in-memory store" in server.stderr.read_text()
    # Said once: at start, not again when the first run ends.
    assert server.stderr.read_text().count("in-memory store") == 1


async def test_a_decision_in_time_gives_the_final_result_even_if_the_resume_outlasts_the_wait(
    data: Path, gate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Approved within --approval-wait, the resume (in the approver's process: here,
    this test's) is still running when the wait ends: the call follows it to its end
    rather than answer paused. The approver decides in this process so that the
    decision surely lands within the 2 s wait; the resume holds at the gate until the
    call's wait is over (its progress says so)."""
    code = 'await rocket.launch("x");\nreturn await gate.wait("after")'
    monkeypatch.setenv("RUN_REPL_TEST_GATE", str(gate))
    async with mcp_server(data, "--approval-wait", "2", host=GATE_HOST, gate=gate) as server:
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["result"] = await server.call("run", {"code": code})

        with open_workspace(GATE_HOST, data_dir_override=str(data)) as ws:
            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await server.waiting.wait()
                    [approval] = server.pending()
                    tg.start_soon(partial(ws.decide, {approval.id: True}))
                    while not (gate / "entered-after").exists():  # the resume holds there
                        await anyio.sleep(0.02)
                    while not any(p >= 2.0 for p, _, _ in server.progress):
                        await anyio.sleep(0.02)  # the call's 2 s wait is over
                    assert "result" not in outcome, outcome["result"].content[0].text
                    (gate / "open").touch()
    result = outcome["result"]
    assert result.structured_content["status"] == "ok"
    assert result.structured_content["value"] == "after"
    assert (gate / "launched-x").exists()
