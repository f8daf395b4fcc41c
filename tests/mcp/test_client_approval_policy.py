"""`--approve-via client` under an approvals policy ([approvals.deciders]): the policy
judges the person, not the channel their answer came through; a refusal is said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_harness import text_of
from test_mcp_approvals import published
from test_mcp_client_approval import Person, decided_by, decided_via, run_asking

# A real server asking its client, and a person in another process: out of the fast lane.
pytestmark = pytest.mark.slow


def deciders(data: Path, names: str) -> None:
    config = data / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(f'[approvals.deciders]\n"documents" = [{names}]\n')


async def test_a_person_the_policy_names_decides_through_the_client(data: Path) -> None:
    deciders(data, '"tester"')  # the name the harness gives (RUN_REPL_APPROVER)
    _, result = await run_asking(data, Person("approve"))
    assert result.structured_content["status"] == "ok", result.structured_content
    assert published(data)
    # Who decided is the person (the settings' name); the channel is kept beside it.
    assert decided_by(data) == ["tester"]
    [via] = decided_via(data)
    assert (
        via is not None and via.startswith("MCP client ") and via.endswith(" over stdio")
    )  # the audit keeps the channel


async def test_a_refused_decision_is_said_and_nothing_is_recorded(data: Path) -> None:
    deciders(data, '"carol"')
    _, result = await run_asking(data, Person("approve"), "--approval-wait", "1")
    assert not published(data)
    assert decided_by(data) == [None]  # still pending: someone the policy names decides
    words = json.dumps(text_of(result))  # what the model reads
    assert "tester may not decide" in words and "carol" in words, words
