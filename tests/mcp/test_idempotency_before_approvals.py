"""An idempotency key names its run before anyone can be asked about it.

A server may die at any moment after it saved a run's approvals. A retry on another
server finds the first call's run by its key: if the key still named no run then, the
retry answered RUN_OUTCOME_UNKNOWN while a person was being asked, and the run went on
once they decided (seen in CI as a flake of test_server_killed_mid_run). So the key is
named once the history has the run, and the approvals are saved after that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from test_mcp_approvals import PUBLISH

from run_repl.mcp.idempotency import LOCAL_OWNER
from run_repl.mcp.server import McpOptions, RunReplMcp
from run_repl.workspace import open_workspace


async def test_the_key_names_the_run_before_its_approvals_are_saved(data: Path) -> None:
    seen: list[Any] = []
    with open_workspace(None, data_dir_override=str(data)) as ws:
        store = ws.store
        add_approvals = store.add_approvals

        def looking(approvals: Any) -> None:
            key = store.get_run_key(LOCAL_OWNER, "publish-1")
            seen.append(
                (key and key.run_id, key and key.run_id and store.get_run(key.run_id) is not None)
            )
            add_approvals(approvals)

        store.add_approvals = looking  # type: ignore[method-assign]
        app = RunReplMcp(ws, McpOptions(approval_wait_s=0))
        async with Client(app.build()) as client:
            paused = await client.call_tool(
                "run", {"code": PUBLISH, "idempotency_key": "publish-1"}
            )
        [asked] = store.list_approvals("pending")
    envelope = paused.structured_content
    assert envelope["status"] == "interrupted", envelope
    assert asked.run_id == envelope["run_id"]
    # When the approval was saved, the key already named the run, and the history had it.
    assert seen == [(envelope["run_id"], True)]
