"""Every reply, ok or error, fits the output schema its tool advertises.

A client that validates structured content (the TypeScript SDK does, even when
`isError` is true) turns a reply that does not fit into a protocol error, and
the model never reads the tool error meant for it. So each tool is driven on
its ok and error paths, and each reply's structured content is checked with a
real JSON Schema validator against the schema `tools/list` gave, under the
dialect the spec defaults to (2020-12) and under draft-07 (what Ajv, the
TypeScript SDK's validator, assumes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from mcp_harness import Server, cli, in_own_task, mcp_server
from seeded_data import seeded

from run_repl.mcp import tool_models
from run_repl.mcp.tool_errors import ToolError
from run_repl.mcp.tools import (
    ToolSettings,
    parse_docs,
    parse_expand,
    parse_run,
    parse_status,
    tool_list,
)


def shared(test: Any) -> Any:
    """A test on the module's one server (its client lives in the module's event loop)."""
    return pytest.mark.asyncio(loop_scope="module")(pytest.mark.xdist_group("mcp-schemas")(test))


PUBLISH = 'return await documents.publish("draft_02")'


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(
    tmp_path_factory: pytest.TempPathFactory, _demo_db_template: Path
) -> AsyncIterator[Server]:
    data = seeded(tmp_path_factory.mktemp("schemas") / "data", _demo_db_template)
    async with in_own_task(mcp_server(data, "--approval-wait", "0.1")) as server:
        yield server


async def schemas(server: Server) -> dict[str, dict[str, Any]]:
    listed = await server.client.list_tools()
    return {t.name: t.output_schema for t in listed.tools}


def fits(schema: dict[str, Any], reply: Any, case: str) -> None:
    assert reply.structured_content is not None, case
    for dialect in (Draft202012Validator, Draft7Validator):
        dialect.check_schema(schema)
        errors = [e.message for e in dialect(schema).iter_errors(reply.structured_content)]
        assert not errors, (case, dialect.__name__, errors[:3], reply.structured_content)


@shared
async def test_the_output_schemas_are_self_contained_objects(server: Server) -> None:
    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            return [k for k in node if k == "$ref"] + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    listed = await server.client.list_tools()
    for tool in listed.tools:
        for schema in (tool.input_schema, tool.output_schema):
            assert schema["type"] == "object", tool.name
            # A client resolves nothing: every schema says it all in one document.
            assert not refs(schema), tool.name


@shared
async def test_every_reply_of_every_tool_fits_its_output_schema(server: Server) -> None:
    output = await schemas(server)
    big = await server.call("run", {"code": "return Array.from({length: 500}, (_, i) => i)"})
    ref = big.structured_content["value_ref"]
    logged = await server.call(
        "run", {"code": "for (let i = 0; i < 80; i++) console.log('line', i); return 1"}
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("run", {"code": "return 6 * 7"}),
        ("run", {"code": "return undefined"}),
        ("run", {"code": 'return await crm.getAccount("acc_0001")'}),
        ("run", {"code": "const x = ;"}),
        ("run", {"code": "throw new Error('no')"}),
        ("run", {"code": "return crm.nope()"}),
        ("run", {"code": "return new Map([[1, 2]])"}),
        ("run", {"code": "while (true) {}", "timeout_seconds": 0.05}),
        ("run", {"code": 'return await crm.getAccount("nope")'}),
        ("run", {}),
        ("run", {"code": 5}),
        ("run", {"code": "1", "extra": True}),
        ("run", {"code": "x" * (300 * 1024)}),
        ("expand_result", {"value_ref": ref, "offset": 10}),
        ("expand_result", {"value_ref": ref, "offset": 490, "limit": 50}),
        ("expand_result", {"value_ref": logged.structured_content["logs_ref"], "offset": 50}),
        ("expand_result", {"value_ref": "res_nope", "offset": 0}),
        ("expand_result", {"value_ref": ref, "offset": 999999}),
        ("expand_result", {"value_ref": ref}),
        ("docs", {}),
        ("docs", {"path": "crm"}),
        ("docs", {"path": "nope"}),
        ("docs", {"path": 3}),
        ("approval_status", {"run_id": "run_nope"}),
        ("approval_status", {"approval_ids": ["int_nope"]}),
        ("approval_status", {}),
        ("approval_status", {"run_id": "r", "wait_seconds": -1}),
    ]
    fits(output["run"], big, "run big")
    fits(output["run"], logged, "run logged")
    errors = 0
    for tool, arguments in calls:
        reply = await server.call(tool, arguments)
        errors += bool(reply.is_error)
        fits(output[tool], reply, f"{tool} {str(arguments)[:60]}")
    assert errors >= 18  # the error paths were taken, not only the ok ones


@shared
async def test_paused_waiting_decided_and_denied_replies_fit_too(server: Server) -> None:
    output = await schemas(server)
    paused = await server.call("run", {"code": PUBLISH})
    assert paused.structured_content["status"] == "interrupted"
    fits(output["run"], paused, "paused")
    run_id = paused.structured_content["run_id"]
    [approval_id] = paused.structured_content["approval_ids"]
    waiting = await server.call("approval_status", {"run_id": run_id})
    assert waiting.structured_content["status"] == "waiting"
    fits(output["approval_status"], waiting, "waiting")
    decided = await anyio.to_thread.run_sync(
        cli, server.data, "approvals", "approve", approval_id, "--wait"
    )
    assert decided.returncode == 0, decided.stderr
    done = await server.call("approval_status", {"approval_ids": [approval_id]})
    assert done.structured_content["status"] == "done"
    fits(output["approval_status"], done, "done")

    again = await server.call("run", {"code": 'return await documents.publish("draft_03")'})
    [denied_id] = again.structured_content["approval_ids"]
    denied = await anyio.to_thread.run_sync(
        cli, server.data, "approvals", "deny", denied_id, "--wait"
    )
    assert denied.returncode == 0, denied.stderr  # the denial took
    after = await server.call("approval_status", {"run_id": again.structured_content["run_id"]})
    assert after.structured_content["status"] == "done"
    assert after.structured_content["result"]["error"]["code"] == "RUN_APPROVAL_DENIED"
    fits(output["approval_status"], after, "denied")


# ---------------------------------------------------------------- one definition
SETTINGS = ToolSettings()
PARSERS = {
    "run": lambda a: parse_run(a, SETTINGS),
    "expand_result": parse_expand,
    "docs": parse_docs,
    "approval_status": lambda a: parse_status(a, SETTINGS),
}
INPUTS = {t.name: t.input_schema for t in tool_list(SETTINGS, "demo")}
NAMES = ["code", "timeout_seconds", "value_ref", "offset", "limit", "path", "run_id"]
NAMES += ["approval_ids", "wait_seconds", "sorce"]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=2**64),
    st.sampled_from([0, 1, 2, 50, 299, 300, 301, 1000, 1001]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=2e19),
    st.sampled_from([0.5, 1.0, 2.0, 300.0, 300.5]),
    st.text(max_size=5),
    st.lists(st.one_of(st.text(max_size=3), st.integers(0, 3)), max_size=3),
    st.lists(st.text(max_size=3), min_size=99, max_size=102),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from(list(PARSERS)),
    arguments=st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=4),
)
def test_the_advertised_input_schema_and_the_check_agree(
    tool: str, arguments: dict[str, Any]
) -> None:
    """What the schema a client reads admits is what the server accepts, and the
    reverse, but for the one rule a schema a model reads best leaves out:
    approval_status needs run_id or approval_ids."""
    valid = Draft202012Validator(INPUTS[tool]).is_valid(arguments)
    try:
        PARSERS[tool](arguments)
        accepted = True
    except ToolError as exc:
        assert exc.code == "TOOL_ARGUMENT_INVALID", exc.code
        accepted = False
    if tool == "approval_status" and arguments.get("run_id") is None:
        if arguments.get("approval_ids") is None:
            assert not accepted
            return
    assert valid == accepted, (tool, arguments)


def test_the_listed_schemas_are_the_models_schemas() -> None:
    models = tool_models.input_models(SETTINGS)
    for tool in tool_list(SETTINGS, "demo"):
        assert tool.input_schema == tool_models.input_schema(models[tool.name]), tool.name
        assert tool.output_schema == tool_models.output_schema(tool.name), tool.name
