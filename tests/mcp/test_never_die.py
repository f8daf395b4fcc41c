"""No value kills the server, and no failure inside a tool loses the call.

A JavaScript string may hold a lone surrogate, which no UTF-8 writer can
encode: the reply carries it as the visible `\\uXXXX` escape, as every other
front end shows it. Over stdio a reply that cannot be written used to end the
server (and every call in flight); now each call gets its answer and the next
call on the same server works.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_harness import mcp_server, text_of

from run_repl.mcp import server as mcp_server_module
from run_repl.mcp.server import RunReplMcp
from run_repl.workspace import open_workspace

ESCAPED = "\\ud800"  # the six characters a person (or a model) reads

CASES: list[tuple[str, str]] = [
    ("value", "return '\\ud800'"),
    ("value in an array", "return ['\\ud800'.repeat(3000)]"),
    ("object key", "return {['\\ud800']: 1}"),
    ("error message", "throw new Error('\\ud800')"),
    ("log line", "console.log('a\\ud800b'); return 1"),
    ("value_window", "return Array.from({length: 400}, (_, i) => '\\udfff' + i)"),
]


@pytest.mark.parametrize(("where", "code"), CASES, ids=[c[0] for c in CASES])
async def test_a_lone_surrogate_gets_a_reply_and_the_server_keeps_serving(
    data: Path, where: str, code: str
) -> None:
    async with mcp_server(data) as server:
        result = await server.call("run", {"code": code})
        after = await server.call("run", {"code": "return 42"})
    assert after.structured_content["value"] == 42  # the same server, still serving
    envelope = result.structured_content
    assert envelope["run_id"].startswith("run_")
    wire = json.dumps(envelope, ensure_ascii=False)
    wire.encode("utf-8")  # writable: no lone surrogate left
    text_of(result)  # the text block is JSON too
    if where == "value":
        assert envelope["value"] == ESCAPED
    elif where == "value in an array":
        assert envelope["value"] == [ESCAPED * 3000]
    elif where == "object key":
        assert result.is_error is False
        assert envelope["value"] == {ESCAPED: 1}
    elif where == "error message":
        assert result.is_error is True
        assert envelope["error"]["code"] == "RUN_EXCEPTION"
        assert ESCAPED in envelope["error"]["message"]
    elif where == "log line":
        assert envelope["value"] == 1 and len(envelope["logs"]) == 1
    else:
        assert envelope["value_window"]["items"][0] == "\\udfff0"


async def test_a_page_of_lone_surrogates_is_escaped_too(data: Path) -> None:
    async with mcp_server(data) as server:
        run = await server.call(
            "run", {"code": "return Array.from({length: 400}, (_, i) => '\\udfff' + i)"}
        )
        ref = run.structured_content["value_ref"]
        page = await server.call("expand_result", {"value_ref": ref, "offset": 390})
        after = await server.call("run", {"code": "return 7"})
    assert page.is_error is False
    assert page.structured_content["items"][0] == "\\udfff390"
    assert after.structured_content["value"] == 7


async def test_a_failure_inside_a_tool_is_a_tool_error_with_the_run_id(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug after the run ran: the model gets a tool error that names the run (kept
    in the history), and the server answers the next call."""
    calls = {"n": 0}
    real = mcp_server_module.run_reply

    def failing(result: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the reply could not be made")
        return real(result, **kwargs)

    monkeypatch.setattr(mcp_server_module, "run_reply", failing)
    with open_workspace(None, data_dir_override=str(data)) as ws:
        app = RunReplMcp(ws)
        async with Client(app.build()) as client:
            broken = await client.call_tool("run", {"code": "return 1"})
            fine = await client.call_tool("run", {"code": "return 2"})
            unknown = await client.call_tool("approval_status", {"run_id": "run_nope"})
        runs = ws.store.list_runs(limit=10)
    assert broken.is_error is True
    error = broken.structured_content["error"]
    assert error["code"] == "RUN_INTERNAL_ERROR"
    [kept] = [r for r in runs if r.source == "return 1"]
    assert broken.structured_content["run_id"] == kept.id
    assert kept.id in error["message"] and kept.id in text_of(broken)["error"]
    assert "RuntimeError" in error["message"]
    assert fine.structured_content["value"] == 2
    # A tool error names a run only when the call made one.
    assert unknown.structured_content["error"]["code"] == "RUN_NOT_FOUND"
    assert "run_id" not in unknown.structured_content
