"""The tools as an MCP client sees them: listed, described, run, paged, documented.

The tests that only call tools share one server (`server`, one per test process):
each runs its own snippets and reads only what they made. The handshake era and the
command line's limits need servers of their own."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp_harness import Server, in_own_task, mcp_server, text_of
from seeded_data import seeded

from run_repl.sandbox.wire.nesting import MAX_DEPTH

# One event loop for the module, as the shared server's client lives in it; the
# group keeps the tests that share it on one xdist worker, so it starts once.
pytestmark = pytest.mark.asyncio(loop_scope="module")
shared = pytest.mark.xdist_group("mcp-tools-server")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(
    tmp_path_factory: pytest.TempPathFactory, _demo_db_template: Path
) -> AsyncIterator[Server]:
    data = seeded(tmp_path_factory.mktemp("shared") / "data", _demo_db_template)
    async with in_own_task(mcp_server(data)) as server:
        yield server


def kept(server: Server) -> list[Any]:
    """Every run in the server's history."""
    store = server.store()
    try:
        return store.list_runs(limit=1_000_000)
    finally:
        store.close()


def number(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema as a number (it may also be sent as null: the default)."""
    [branch] = [b for b in schema.get("anyOf", [schema]) if b["type"] != "null"]
    return branch


BIG = "return Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] }))"


@shared
async def test_lists_the_four_tools_with_schemas_written_for_a_model(server: Server) -> None:
    listed = await server.client.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert list(tools) == ["run", "expand_result", "docs", "approval_status"]
    run = tools["run"]
    assert run.input_schema["required"] == ["code"]
    assert number(run.input_schema["properties"]["timeout_seconds"])["maximum"] == 300
    assert run.input_schema["properties"]["timeout_seconds"]["default"] == 60
    assert run.input_schema["additionalProperties"] is False
    # What a model must know to write a snippet, in the description it reads.
    for words in (
        "docs",
        "Promise.all",
        "approval_status",
        "RUN_APPROVAL_DENIED",
        "expand_result",
        "120 s",
    ):
        assert words in run.description, words
    assert "crm" in run.description and "documents" in run.description  # the host's namespaces
    assert run.output_schema["properties"]["status"]["enum"] == ["ok", "error", "interrupted"]
    assert tools["expand_result"].input_schema["required"] == ["value_ref", "offset"]
    assert tools["docs"].annotations.read_only_hint is True
    assert run.annotations.read_only_hint is False


@shared
async def test_runs_a_snippet_on_the_demo_host_and_keeps_it_in_history(server: Server) -> None:
    source = (
        'const [a, invoices] = await Promise.all([crm.getAccount("acc_0003"), '
        'billing.listInvoices("acc_0003")]);\n'
        'console.log("invoices", invoices.length);\n'
        "return { name: a.name, overdue: invoices.filter((i) => i.status === 'overdue').length }"
    )
    result = await server.call("run", {"code": source})
    envelope = result.structured_content
    assert result.is_error is False
    assert envelope["status"] == "ok"
    assert set(envelope["value"]) == {"name", "overdue"}
    assert [c["path"] for c in envelope["calls"]] == ["crm.getAccount", "billing.listInvoices"]
    assert envelope["logs"][0]["text"].startswith("invoices ")
    assert "continuation" not in envelope
    words = text_of(result)  # to_tool_output's shape: ok, result, logs
    assert words["ok"] is True
    assert words["result"] == envelope["value"]
    assert words["logs"] == [envelope["logs"][0]["text"]]
    store = server.store()
    kept = store.get_run(envelope["run_id"])
    store.close()
    assert kept is not None and kept.source == source and kept.status == "ok"


@shared
async def test_a_big_value_comes_as_a_window_and_pages_by_item(server: Server) -> None:
    first = await server.call("run", {"code": BIG})
    envelope = first.structured_content
    assert "value" not in envelope
    window = envelope["value_window"]
    shown, ref = envelope["shown"], envelope["value_ref"]
    assert envelope["total"] == 1000 and 0 < shown < 1000
    assert [item["id"] for item in window["items"]] == list(range(shown))
    words = text_of(first)
    assert "expand_result" in words["next"] and ref in words["next"]

    seen = list(window["items"])
    offset = shown
    while True:  # page with the default size: whole items that fit 200 lines
        page = await server.call("expand_result", {"value_ref": ref, "offset": offset})
        assert page.is_error is False
        body = page.structured_content
        assert body["items"] and body["offset"] == offset and body["total"] == 1000
        seen += body["items"]
        if not body["has_more"]:
            assert "next_offset" not in body
            break
        assert body["next_offset"] == offset + len(body["items"])
        assert str(body["next_offset"]) in text_of(page)["next"]
        offset = body["next_offset"]
    assert [item["id"] for item in seen] == list(range(1000))

    exact = await server.call("expand_result", {"value_ref": ref, "offset": 990, "limit": 5})
    assert [i["id"] for i in exact.structured_content["items"]] == [990, 991, 992, 993, 994]


@shared
async def test_a_syntax_error_has_its_line_and_column(server: Server) -> None:
    result = await server.call("run", {"code": "const a: number = 1;\nconst b = a +;\nb"})
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "RUN_SYNTAX_ERROR"
    assert (error["line"], error["column"]) == (2, 14)
    assert error["next_actions"][0]["type"] == "edit_request"
    assert error["next_actions"][0]["line"] == 2
    assert "(line 2, column 14)" in text_of(result)["error"]


@shared
async def test_docs_give_typescript_declarations_and_the_approvals(server: Server) -> None:
    everything = await server.call("docs", {})
    crm = await server.call("docs", {"path": "crm"})
    publish = await server.call("docs", {"path": "documents.publish"})
    wrong = await server.call("docs", {"path": "documnets"})
    body = everything.structured_content
    assert body["host"] == "demo"
    functions = {f["path"]: f for f in body["functions"]}
    assert functions["documents.publish"]["needs_approval"] is True
    assert functions["crm.getAccount"]["needs_approval"] is False
    assert (
        functions["crm.getAccount"]["signature"]
        == "crm.getAccount(accountId: string): Promise<Account>"
    )
    text = everything.content[0].text
    assert "interface Account {" in text and "declare namespace documents {" in text
    assert "@approval" in text
    assert [f["path"] for f in crm.structured_content["functions"]] == [
        "crm.listAccounts",
        "crm.getAccount",
    ]
    assert "namespace documents" not in crm.content[0].text
    assert [f["path"] for f in publish.structured_content["functions"]] == ["documents.publish"]
    assert wrong.is_error is True
    assert "did you mean documents?" in wrong.structured_content["error"]["message"]


@shared
async def test_resources_and_the_prompt_carry_the_declarations(server: Server) -> None:
    listed = await server.client.list_resources()
    uris = [str(r.uri) for r in listed.resources]
    dts = await server.client.read_resource("run-repl://host.d.ts")
    guide = await server.client.read_resource("run-repl://guide")
    prompts = await server.client.list_prompts()
    prompt = await server.client.get_prompt("run-repl-task", {"task": "find overdue invoices"})
    assert uris == ["run-repl://host.d.ts", "run-repl://guide"]
    assert "declare namespace crm" in dts.contents[0].text
    assert "Promise.all" in guide.contents[0].text and "```ts" in guide.contents[0].text
    assert [p.name for p in prompts.prompts] == ["run-repl-task"]
    text = prompt.messages[0].content.text
    assert "find overdue invoices" in text and "declare namespace billing" in text


async def test_the_handshake_era_works_too_with_progress(data: Path) -> None:
    """Clients of the 2025 protocol (the handshake) get the same tools."""
    async with mcp_server(data, mode="legacy") as server:
        assert server.client.protocol_version.startswith("2025")
        result = await server.call("run", {"code": "return 6 * 7"})
    assert result.structured_content["value"] == 42
    assert text_of(result) == {"ok": True, "result": 42}


BAD_INPUTS: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("run", {}, "TOOL_ARGUMENT_INVALID", "code"),
    ("run", {"code": 42}, "TOOL_ARGUMENT_INVALID", "code"),
    ("run", {"code": None}, "TOOL_ARGUMENT_INVALID", "code"),
    ("run", {"source": "1"}, "TOOL_ARGUMENT_INVALID", "source"),
    ("run", {"code": "1", "timeout_seconds": 0}, "TOOL_ARGUMENT_INVALID", "timeout_seconds"),
    ("run", {"code": "1", "timeout_seconds": 301}, "TOOL_ARGUMENT_INVALID", "timeout_seconds"),
    ("run", {"code": "1", "timeout_seconds": -5}, "TOOL_ARGUMENT_INVALID", "timeout_seconds"),
    ("run", {"code": "1", "timeout_seconds": "60"}, "TOOL_ARGUMENT_INVALID", "timeout_seconds"),
    ("run", {"code": "1", "timeout_seconds": True}, "TOOL_ARGUMENT_INVALID", "timeout_seconds"),
    ("run", {"code": "x" * (300 * 1024)}, "RUN_SOURCE_TOO_LARGE", None),
    (
        "expand_result",
        {"value_ref": "res_0000000000000000", "offset": 0},
        "RESULT_REF_NOT_FOUND",
        None,
    ),
    ("expand_result", {"value_ref": 7, "offset": 0}, "TOOL_ARGUMENT_INVALID", "value_ref"),
    ("expand_result", {"value_ref": "res_x"}, "TOOL_ARGUMENT_INVALID", "offset"),
    ("expand_result", {"value_ref": "res_x", "offset": -1}, "TOOL_ARGUMENT_INVALID", "offset"),
    ("expand_result", {"value_ref": "res_x", "offset": 1.5}, "TOOL_ARGUMENT_INVALID", "offset"),
    (
        "expand_result",
        {"value_ref": "res_x", "offset": 0, "limit": 0},
        "TOOL_ARGUMENT_INVALID",
        "limit",
    ),
    (
        "expand_result",
        {"value_ref": "res_x", "offset": 0, "limit": 5000},
        "TOOL_ARGUMENT_INVALID",
        "limit",
    ),
    ("approval_status", {}, "TOOL_ARGUMENT_INVALID", "run_id"),
    ("approval_status", {"run_id": 3}, "TOOL_ARGUMENT_INVALID", "run_id"),
    ("approval_status", {"approval_ids": []}, "TOOL_ARGUMENT_INVALID", "approval_ids"),
    ("approval_status", {"run_id": "run_nope"}, "RUN_NOT_FOUND", "run_id"),
    ("approval_status", {"approval_ids": ["int_nope"]}, "APPROVAL_NOT_FOUND", "approval_ids"),
    (
        "approval_status",
        {"run_id": "r", "wait_seconds": 9999},
        "TOOL_ARGUMENT_INVALID",
        "wait_seconds",
    ),
    ("docs", {"path": 1}, "TOOL_ARGUMENT_INVALID", "path"),
    ("rnu", {"code": "1"}, "TOOL_UNKNOWN", None),
]


@shared
async def test_bad_input_is_a_tool_error_with_a_code_and_a_next_action(server: Server) -> None:
    before = {r.id for r in kept(server)}  # other tests' runs on the shared server
    for tool, arguments, code, argument in BAD_INPUTS:
        case = f"{tool} {str(arguments)[:80]}"
        result = await server.call(tool, arguments)
        assert result.is_error is True, case
        error = result.structured_content["error"]
        assert error["code"] == code, (case, error)
        assert error["message"], case
        [action] = error["next_actions"]
        assert action["type"] in ("edit_request", "run_again") and action["why"], case
        if argument is not None:
            assert action["argument"] == argument, case
        words = text_of(result)
        assert words["ok"] is False and code in words["error"], case
        assert "Next:" in words["error"], case
    after = await server.call("run", {"code": "1 + 1"})  # the server is still there
    new = [r for r in kept(server) if r.id not in before]
    assert after.structured_content["value"] == 2
    # Refused calls ran nothing, kept nothing: the one new run is the last call's.
    assert [(r.id, r.status) for r in new] == [(after.structured_content["run_id"], "ok")]


@shared
async def test_an_offset_past_the_end_says_where_the_end_is(server: Server) -> None:
    run = await server.call("run", {"code": "[1, 2, 3]"})
    ref = run.structured_content["value_ref"]
    last = await server.call("expand_result", {"value_ref": ref, "offset": 2})
    past = await server.call("expand_result", {"value_ref": ref, "offset": 3})
    far = await server.call("expand_result", {"value_ref": ref, "offset": 10**15})
    empty = await server.call("run", {"code": "[]"})
    none = await server.call(
        "expand_result", {"value_ref": empty.structured_content["value_ref"], "offset": 0}
    )
    assert last.structured_content["items"] == [3]
    for result in (past, far):
        assert result.is_error is True
        error = result.structured_content["error"]
        assert error["code"] == "RESULT_OFFSET_OUT_OF_RANGE"
        assert "holds 3 items (offsets 0 to 2)" in error["message"]
    assert none.is_error is False and none.structured_content["items"] == []


@shared
async def test_a_value_at_the_nesting_limit_comes_back_whole(server: Server) -> None:
    # The most a run may return; the reply's own objects wrap it further (the SDK's
    # reader stops at 200 levels: a client used to wait for such a reply forever).
    def nested(levels: int) -> str:
        return f"(() => {{ let a = []; for (let i = 1; i < {levels}; i++) a = [a]; return a }})()"

    whole = await server.call("run", {"code": nested(MAX_DEPTH)})
    assert whole.is_error is False, whole.structured_content
    # An item of a large value: its array is the first level.
    run = await server.call("run", {"code": f"[...Array(1500).fill(0), {nested(MAX_DEPTH - 1)}]"})
    assert run.is_error is False, run.structured_content
    ref = run.structured_content["value_ref"]
    page = await server.call("expand_result", {"value_ref": ref, "offset": 1500, "limit": 1})
    assert page.is_error is False
    item, levels = page.structured_content["items"][0], 0
    while isinstance(item, list):
        item, levels = (item[0] if item else None), levels + 1
    assert levels == MAX_DEPTH - 1  # the item of the value at the limit


@shared
async def test_a_page_holding_a_value_too_deep_is_a_tool_error_with_its_path(
    server: Server,
) -> None:
    deep = "(() => { let a = []; for (let i = 0; i < 300; i++) a = [a]; return a })()"
    run = await server.call("run", {"code": f"[...Array(1500).fill(0), {deep}]"})
    ref = run.structured_content["value_ref"]
    fine = await server.call("expand_result", {"value_ref": ref, "offset": 1000, "limit": 10})
    deep_page = await server.call("expand_result", {"value_ref": ref, "offset": 1495})
    assert fine.structured_content["items"] == [0] * 10
    assert deep_page.is_error is True
    error = deep_page.structured_content["error"]
    assert error["code"] == "RUN_VALUE_NOT_SERIALIZABLE"
    assert "$[1500][0][0]" in error["message"] and f"{MAX_DEPTH} levels" in error["message"]
    assert error["next_actions"][0]["path"].startswith("$[1500]")


@shared
async def test_guest_text_in_the_words_is_escaped_for_terminals(server: Server) -> None:
    result = await server.call(
        "run", {"code": 'console.log("a\\u001b[2Jb\\u202e\\u2066"); "\\u009b31m"'}
    )
    text = result.content[0].text
    assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text
    # JSON itself writes \x1b as an escape; a bidi isolate it would leave as it is.
    assert "\u2066" not in text
    assert json.loads(text)["result"] == "\x9b31m"  # the same data, written as escapes
    assert result.structured_content["value"] == "\x9b31m"


async def test_timeout_seconds_limits_the_run_and_the_command_line_sets_its_default(
    data: Path,
) -> None:
    async with mcp_server(data, "--timeout-ms", "90000", "--memory-mb", "32") as server:
        listed = await server.client.list_tools()
        result = await server.call("run", {"code": "while (true) {}", "timeout_seconds": 0.1})
        memory = await server.call("run", {"code": "1"})
    [run] = [t for t in listed.tools if t.name == "run"]
    assert run.input_schema["properties"]["timeout_seconds"]["default"] == 90
    assert number(run.input_schema["properties"]["timeout_seconds"])["maximum"] == 300
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "RUN_TIMEOUT"
    assert "deadline of 0.1 s" in result.structured_content["error"]["next_actions"][0]["why"]
    # The per-run timeout leaves the command line's other limits as they were.
    assert memory.structured_content["stats"]["memory_limit_bytes"] == 32 << 20
