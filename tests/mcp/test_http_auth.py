"""`--http` needs credentials; each principal sees only its own runs, results and approvals."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import forked_cli
import httpx2
import pytest
from http_servers import ALICE, BOB, TOKEN, client, launch, start, stop, tokens_file
from mcp_harness import environment

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow

BIG = "return Array.from({ length: 400 }, (_, i) => ({ i, secret: 'A_SECRET_' + i }))"
WAIT_FOR_APPROVAL = "return await documents.publish('draft_01')"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def test_a_first_start_without_credentials_says_how_to_make_one(data: Path) -> None:
    process = launch(data, token=None)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert "needs credentials" in err and "run-repl mcp --add-token NAME" in err
    assert "RUN_REPL_MCP_TOKEN" in err and "--no-auth" in err
    assert out == "" and "Traceback" not in err


def test_a_request_without_a_known_token_gets_401_and_the_challenge(data: Path) -> None:
    server = start(data)
    try:
        bare = httpx2.post(server.url, json=INIT, headers=HEADERS, timeout=30)
        wrong = httpx2.post(
            server.url, json=INIT, headers={**HEADERS, "authorization": "Bearer nope"}, timeout=30
        )
        right = httpx2.post(
            server.url,
            json=INIT,
            headers={**HEADERS, "authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
    finally:
        said = stop(server)
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == 'Bearer realm="run-repl"'
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert right.status_code == 200
    assert TOKEN not in said and TOKEN not in "\n".join(server.said)  # tokens are never logged


def test_add_token_prints_one_that_works_and_keeps_only_its_digest(data: Path) -> None:
    env = environment(data)
    made = subprocess.run(
        forked_cli.command("mcp", "--add-token", "alice", "--data-dir", str(data)),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    path = data / "config" / "mcp-tokens.toml"
    assert len(token) >= 40 and token not in path.read_text()
    assert 'alice = "sha256:' in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    server = start(data, token=None)
    try:
        import anyio

        async def use() -> object:
            async with client(server.url, token) as c:
                return await c.call_tool("run", {"code": "1 + 1"})

        result = anyio.run(use)
    finally:
        stop(server)
    assert result.structured_content["value"] == 2  # type: ignore[attr-defined]
    assert any("bearer tokens for alice" in line for line in server.said)


def test_a_tokens_file_others_can_read_is_refused(data: Path) -> None:
    path = tokens_file(data, alice=ALICE)
    path.chmod(0o644)
    process = launch(data, "--tokens-file", str(path), token=None)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "can be read or changed by others" in err and f"chmod 600 {path}" in err


async def test_another_principals_ids_read_as_unknown_ones(data: Path) -> None:
    path = tokens_file(data, alice=ALICE, bob=BOB)
    server = start(data, "--tokens-file", str(path), "--approval-wait", "0", token=None)
    try:
        async with client(server.url, ALICE) as alice:
            big = (await alice.call_tool("run", {"code": BIG})).structured_content
            paused = (await alice.call_tool("run", {"code": WAIT_FOR_APPROVAL})).structured_content
            own_page = await alice.call_tool(
                "expand_result", {"value_ref": big["value_ref"], "offset": 0}
            )
            own_status = await alice.call_tool("approval_status", {"run_id": paused["run_id"]})
        async with client(server.url, BOB) as bob:
            theirs = await bob.call_tool(
                "expand_result", {"value_ref": big["value_ref"], "offset": 0}
            )
            made_up = await bob.call_tool(
                "expand_result", {"value_ref": "res_00000000deadbeef", "offset": 0}
            )
            run_status = await bob.call_tool("approval_status", {"run_id": paused["run_id"]})
            unknown_run = await bob.call_tool("approval_status", {"run_id": "run_00000000deadbeef"})
            approvals = await bob.call_tool(
                "approval_status", {"approval_ids": paused["approval_ids"]}
            )
    finally:
        stop(server)
    assert paused["status"] == "interrupted"
    assert not own_page.is_error and "A_SECRET_0" in str(own_page.structured_content)
    assert not own_status.is_error and own_status.structured_content["status"] == "waiting"
    # Bob learns nothing: the same answers as for ids that do not exist.
    assert theirs.is_error and "A_SECRET" not in str(theirs.content)
    err, unknown = theirs.structured_content["error"], made_up.structured_content["error"]
    assert err["code"] == unknown["code"] == "RESULT_REF_NOT_FOUND"
    assert err["message"].replace(big["value_ref"], "REF") == unknown["message"].replace(
        "res_00000000deadbeef", "REF"
    )
    assert run_status.is_error and unknown_run.is_error
    assert run_status.structured_content["error"]["code"] == "RUN_NOT_FOUND"
    assert run_status.structured_content["error"]["message"].replace(
        paused["run_id"], "ID"
    ) == unknown_run.structured_content["error"]["message"].replace("run_00000000deadbeef", "ID")
    assert approvals.is_error
    assert approvals.structured_content["error"]["code"] == "APPROVAL_NOT_FOUND"


def test_no_auth_serves_and_says_so_loudly(data: Path) -> None:
    server = start(data, "--no-auth", token=None)
    try:
        answer = httpx2.post(server.url, json=INIT, headers=HEADERS, timeout=30)
    finally:
        stop(server)
    assert answer.status_code == 200
    assert any("--no-auth: NO CREDENTIALS" in line for line in server.said)
