"""The scenarios every client goes through, and what each must see: one list of steps
(driver.mjs's ops) and one check, whichever client ran them.

TOOL_STEPS: every tool on its ok path, and the error paths of `run` and of the protocol
(an unknown tool), then resources, prompts and ping. One run needs a person's approval:
it waits, with progress, until the test approves it from another process
(`approve_on_progress`), and returns the final result; approval_status then reports on it.

ERROR_STEPS: the error paths of expand_result, approval_status and docs. A client must
get each as a tool error result (isError, with the error's code in what it reads), never
as a protocol error: the TypeScript SDK checks a result's structured content against the
tool's output schema, and refuses content that does not fit it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from interop_harness import BIG, MODERN, PUBLISH, Seen, approve_elsewhere, call, decided, text_of


def step_ref(step: int, *path: str) -> dict[str, Any]:
    return {"$step": step, "path": list(path)}


TOOL_STEPS: list[dict[str, Any]] = [
    call("run", code="1 + 1"),  # 0
    call("run", code=BIG),  # 1
    call(  # 2: the page after the window, by the ref and count the run gave
        "expand_result",
        value_ref=step_ref(1, "structuredContent", "value_ref"),
        offset=step_ref(1, "structuredContent", "shown"),
        limit=3,
    ),
    call("docs"),  # 3
    call("docs", path="documents"),  # 4
    call("run", code=PUBLISH),  # 5: waits for a person, who approves it elsewhere
    call("approval_status", run_id=step_ref(5, "structuredContent", "run_id")),  # 6
    call("run", code="const x = ;"),  # 7
    call("run", code=["not", "a", "string"]),  # 8
    call("run", code="return await crm.listAcounts(1)"),  # 9
    call("expand_results", value_ref="res_x"),  # 10: no such tool
    {"op": "list_resources"},  # 11
    {"op": "read_resource", "uri": "run-repl://guide"},  # 12
    {"op": "list_prompts"},  # 13
    {"op": "get_prompt", "name": "run-repl-task", "arguments": {"task": "count accounts"}},  # 14
    {"op": "ping"},  # 15: the handshake revisions only (2026-07-28 has no ping)
]


def tool_steps(revision: str) -> list[dict[str, Any]]:
    return TOOL_STEPS if revision != MODERN else TOOL_STEPS[:-1]


class Approver:
    """A person in another terminal: on the first progress note of a call waiting for
    approval, `run-repl approvals approve ID` in another process (in a task of its own:
    that process resumes the run, so the call may return before it has ended)."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.tasks: list[asyncio.Future[str]] = []

    async def on_event(self, event: dict[str, Any]) -> None:
        if event["event"] == "progress" and not self.tasks:
            self.tasks.append(asyncio.ensure_future(approve_elsewhere(self.data)))

    async def approved(self) -> list[str]:
        return [await task for task in self.tasks]


def _structured(result: dict[str, Any]) -> dict[str, Any]:
    structured = result.get("structuredContent")
    assert isinstance(structured, dict), result
    return structured


def _tool_error(result: dict[str, Any], code: str) -> None:
    """A tool error result the model can act on: isError, and the code it names."""
    assert result.get("isError") is True, result
    structured = result.get("structuredContent") or {}
    named = (structured.get("error") or {}).get("code")
    assert named == code or code in text_of(result), (code, result)


def check_tool_steps(seen: Seen, revision: str, data: Path, approved: list[str]) -> None:
    connected = seen.connected
    assert connected["protocol_version"] == revision, connected
    assert connected["server"]["name"] == "run-repl"
    assert [t["name"] for t in connected["tools"]] == [
        "run",
        "expand_result",
        "docs",
        "approval_status",
    ]
    assert all(t["has_output_schema"] for t in connected["tools"])

    two = seen.result(0)
    assert not two.get("isError")
    assert _structured(two)["status"] == "ok" and _structured(two)["value"] == 2
    assert '"result": 2' in text_of(two)

    big = _structured(seen.result(1))
    assert big["status"] == "ok" and big["total"] == 300
    shown = big["shown"]
    assert 0 < shown < 300 and big["value_window"]["items"] == [{"n": i} for i in range(shown)]

    page = _structured(seen.result(2))
    assert page["ref"] == big["value_ref"] and page["offset"] == shown
    assert page["items"] == [{"n": shown + i} for i in range(3)] and page["has_more"] is True

    docs = _structured(seen.result(3))
    assert docs["host"] == "demo"
    publish = next(f for f in docs["functions"] if f["path"] == "documents.publish")
    assert publish["needs_approval"] is True
    assert "publish(" in docs["declarations"]
    only = _structured(seen.result(4))
    assert {f["path"].split(".")[0] for f in only["functions"]} == {"documents"}

    check_approved_run(seen, 5, data, approved)
    run = _structured(seen.result(5))
    status = _structured(seen.result(6))
    assert status["status"] == "done" and status["run_id"] == run["run_id"], status
    assert status["result"]["status"] == "ok" and status["result"]["value"]["published"] is True

    syntax = seen.result(7)
    _tool_error(syntax, "RUN_SYNTAX_ERROR")
    error = _structured(syntax)["error"]
    assert (error["line"], error["column"]) == (1, 11)
    _tool_error(seen.result(8), "TOOL_ARGUMENT_INVALID")
    unknown = seen.result(9)
    _tool_error(unknown, "RUN_UNKNOWN_MEMBER")
    assert "crm.listAccounts" in text_of(unknown)
    no_tool = seen.result(10)
    _tool_error(no_tool, "TOOL_UNKNOWN")
    assert "expand_result" in text_of(no_tool)

    resources = seen.result(11)["resources"]
    assert {r["uri"] for r in resources} == {"run-repl://host.d.ts", "run-repl://guide"}
    guide = seen.result(12)["contents"][0]
    assert guide["mimeType"] == "text/markdown" and "expand_result" in guide["text"]
    assert [p["name"] for p in seen.result(13)["prompts"]] == ["run-repl-task"]
    prompt = seen.result(14)["messages"][0]
    assert prompt["role"] == "user" and "count accounts" in prompt["content"]["text"]
    if revision != MODERN:
        seen.result(15)  # ping: an answer, not an error


ERROR_STEPS: list[dict[str, Any]] = [
    call("expand_result", value_ref="res_nope", offset=0),  # 0
    call("run", code=BIG),  # 1
    call(  # 2
        "expand_result", value_ref=step_ref(1, "structuredContent", "value_ref"), offset=999_999
    ),
    call("expand_result", offset=0),  # 3: no value_ref
    call("approval_status", run_id="run_nope"),  # 4
    call("approval_status", approval_ids=["int_nope"]),  # 5
    call("docs", path="nope"),  # 6
]
ERROR_CODES = {
    0: "RESULT_REF_NOT_FOUND",
    2: "RESULT_OFFSET_OUT_OF_RANGE",
    3: "TOOL_ARGUMENT_INVALID",
    4: "RUN_NOT_FOUND",
    5: "APPROVAL_NOT_FOUND",
    6: "RUN_UNKNOWN_MEMBER",
}


def check_error_steps(seen: Seen) -> None:
    """Every error path answered as a tool error, none as a protocol error (all are
    gathered first, so one failure lists them all)."""
    protocol_errors = {s: seen.error(s) for s in ERROR_CODES if seen.error(s) is not None}
    assert not protocol_errors, protocol_errors
    for step, code in ERROR_CODES.items():
        _tool_error(seen.result(step), code)


def check_approved_run(seen: Seen, step: int, data: Path, approved: list[str]) -> None:
    """A run that waited for a person, who approved it from another process: progress
    while it waited, then the final result in the same call; the call ran once."""
    [approval_id] = approved
    progress = seen.progress(step)
    assert progress, seen.events
    values = [p["progress"] for p in progress]
    assert values == sorted(values) and len(set(values)) == len(values), values
    assert "documents.publish" in progress[0]["message"], progress[0]
    result = seen.result(step)
    assert not result.get("isError"), result
    envelope = result["structuredContent"]
    assert envelope["status"] == "ok", envelope
    assert envelope["value"]["id"] == "draft_01" and envelope["value"]["published"] is True
    [publish] = [c for c in envelope["calls"] if c["path"] == "documents.publish"]
    assert publish["ok"] is True
    approval = decided(data, approval_id)
    assert approval.decision == "approve" and "tester" in (approval.decided_by or ""), approval
