"""The official MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance`
0.1.13, the last release that runs on Node 20) against `run-repl mcp --http`.

The suite is written against its own reference server: most scenarios call that server's
fixtures (a tool `test_image_content`, a prompt `test_simple_prompt`, a resource
`test://static-text`) or capabilities run-repl does not declare. Those cannot pass here,
and should not: run-repl is not that server. The rest check the protocol itself, and
must pass. A scenario the pinned suite adds must be sorted into one of the lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from interop_harness import Principal, drive, http_server

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = [pytest.mark.usefixtures("node_clients"), pytest.mark.slow]

APPLICABLE = {
    "server-initialize": "the initialize handshake",
    "ping": "ping answers",
    "tools-list": "every tool has a name, a description and an input schema",
    "resources-list": "resources/list",
    "prompts-list": "prompts/list",
    "dns-rebinding-protection": "a foreign Host or Origin refused, a loopback one served",
}
# These call a tool run-repl does not have (the suite's fixture), and pass on run-repl's
# answer to an unknown tool: a text result (simple-text), marked isError (error). They
# show that answer is well formed, no more.
BY_THE_UNKNOWN_TOOL_ANSWER = {
    "tools-call-simple-text": "calls test_simple_text; wants text content",
    "tools-call-error": "calls test_error_handling; wants isError with a message",
}
NOT_APPLICABLE = {
    "server-sse-multiple-streams": "its one check wants an Mcp-Session-Id: HTTP is "
    "stateless, so that any server of a team answers any request (a session would live "
    "in one process)",
    "logging-set-level": "run-repl declares no logging capability (-32601 is right)",
    "tools-call-with-logging": "the same, and a fixture tool",
    "completion-complete": "run-repl declares no completions capability",
    "resources-subscribe": "resources.subscribe is false in run-repl's capabilities",
    "resources-unsubscribe": "the same",
    "tools-call-image": "fixture tool test_image_content",
    "tools-call-audio": "fixture tool test_audio_content",
    "tools-call-embedded-resource": "fixture tool test_embedded_resource",
    "tools-call-mixed-content": "fixture tool test_multiple_content_types",
    "tools-call-with-progress": "fixture tool test_tool_with_progress (run-repl's progress "
    "during an approval wait is checked by the client tests)",
    "tools-call-sampling": "fixture tool test_sampling; run-repl never samples",
    "tools-call-elicitation": "fixture tool test_elicitation",
    "elicitation-sep1034-defaults": "fixture tool test_elicitation_sep1034_defaults",
    "elicitation-sep1330-enums": "fixture tool test_elicitation_sep1330_enums",
    "resources-read-text": "fixture resource test://static-text",
    "resources-read-binary": "fixture resource test://static-binary",
    "resources-templates-read": "fixture resource template test://template/{id}/data",
    "prompts-get-simple": "fixture prompt test_simple_prompt",
    "prompts-get-with-args": "fixture prompt test_prompt_with_arguments",
    "prompts-get-embedded-resource": "fixture prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": "fixture prompt test_prompt_with_image",
}


async def conformance(url: str, principal: Principal, out: Path, *scenario: str) -> Any:
    seen = await drive({}, driver_args=["--conformance", url, principal.token, str(out), *scenario])
    [event] = [e for e in seen.events if e["event"] == "conformance"]
    return event["checks"]


def failures(checks: dict[str, list[dict[str, Any]]], names: Any) -> dict[str, Any]:
    """Each scenario's checks that did not succeed (INFO is a note, not a check), and
    the scenarios that succeeded at nothing."""
    bad: dict[str, Any] = {}
    for name in names:
        ran = checks.get(name, [])
        failed = [
            {k: c.get(k) for k in ("id", "status", "errorMessage")}
            for c in ran
            if c["status"] not in ("SUCCESS", "INFO")
        ]
        if failed or not any(c["status"] == "SUCCESS" for c in ran):
            bad[name] = failed or ran
    return bad


async def test_the_conformance_scenarios_that_apply_pass(
    data: Path, alice: Principal, tmp_path: Path
) -> None:
    with http_server(data, env=alice.server_env()) as server:
        checks = await conformance(server.url, alice, tmp_path / "conformance")
    known = APPLICABLE.keys() | BY_THE_UNKNOWN_TOOL_ANSWER.keys() | NOT_APPLICABLE.keys()
    assert set(checks) == known, set(checks) ^ known
    assert failures(checks, [*APPLICABLE, *BY_THE_UNKNOWN_TOOL_ANSWER]) == {}


async def test_dns_rebinding_is_refused_on_a_wildcard_bind(
    data: Path, alice: Principal, tmp_path: Path
) -> None:
    # The suite's DNS-rebinding scenario, against a server bound to every interface
    # (reached on loopback, as the scenario needs): its Host and Origin checks hold there too.
    with http_server(data, bind="0.0.0.0", env=alice.server_env()) as server:
        checks = await conformance(
            server.url, alice, tmp_path / "conformance", "dns-rebinding-protection"
        )
    assert set(checks) == {"dns-rebinding-protection"}
    assert failures(checks, ["dns-rebinding-protection"]) == {}
