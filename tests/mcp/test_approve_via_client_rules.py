"""No agent approves its own call: over HTTP a client's answer counts only from an
authenticated principal that [approvals.deciders] names; otherwise `--approve-via
client` is refused at start."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from http_servers import ALICE, BOB, client, config, launch, start, stop, tokens_file
from test_mcp_approvals import LIMIT_S, PUBLISH, published
from test_mcp_client_approval import Person, decided_by, decided_via

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = pytest.mark.slow


def test_over_http_without_credentials_it_is_refused_at_start(data: Path) -> None:
    process = launch(data, "--no-auth", "--approve-via", "client", token=None)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "--approve-via client over --http needs credentials" in err
    assert "would approve its own calls" in err and "Traceback" not in err


def test_over_http_with_no_principal_named_a_decider_it_is_refused(data: Path) -> None:
    process = launch(data, "--approve-via", "client")  # RUN_REPL_MCP_TOKEN: principal "agent"
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "no principal of the tokens (agent) is named in [approvals.deciders]" in err


async def _publish_asking(url: str, token: str, person: Person) -> object:
    async with client(url, token, elicitation_callback=person) as c:
        with anyio.fail_after(LIMIT_S):
            return await c.call_tool("run", {"code": PUBLISH})


async def test_only_a_principal_the_policy_names_decides_through_its_client(data: Path) -> None:
    path = tokens_file(data, alice=ALICE, bob=BOB)
    config(data, '[approvals.deciders]\n"documents" = ["alice"]\n')
    server = start(
        data,
        "--tokens-file",
        str(path),
        "--approve-via",
        "client",
        "--approval-wait",
        "2",
        token=None,
    )
    try:
        bob_answers = Person("approve")  # the agent answering its own question
        bobs = await _publish_asking(server.url, BOB, bob_answers)
        assert not published(data) and bob_answers.questions == []  # never asked
        assert decided_by(data) == [None]
        alice_answers = Person("approve")
        alices = await _publish_asking(server.url, ALICE, alice_answers)
    finally:
        said = stop(server)
    assert bobs.structured_content["status"] == "interrupted"  # type: ignore[attr-defined]
    assert alices.structured_content["status"] == "ok"  # type: ignore[attr-defined]
    assert len(alice_answers.questions) == 1
    assert published(data)
    # Bob's run still waits for someone the policy names; Alice's was decided by her.
    assert sorted(d or "" for d in decided_by(data)) == ["", "alice"]
    assert any(v and v.endswith(" over http") for v in decided_via(data))
    assert "Traceback" not in said
