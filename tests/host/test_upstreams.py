"""Upstream MCP servers as host functions, against a real MCP server over stdio
(tests/host/upstream_server.py): tools as functions, their schemas as types and as
the check before a call is sent, results as data, annotations deciding who is asked,
replay after an approval, a crash, a changed tool list, cancel and timeout."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import forked_cli
import pytest

from run_repl import run
from run_repl.host.loader import HostLoadError
from run_repl.host.upstream.hosts import close_all, with_upstreams
from run_repl.host.upstream.schema_types import check_arguments, ts_type, validator_for
from run_repl.host.upstream.spec import (
    UpstreamSpec,
    UpstreamSpecError,
    parse_upstream_flag,
    upstreams_from_config,
)
from run_repl.host.upstream.tools import identifier_for
from run_repl.mcp.declarations import declarations
from run_repl.sandbox.errors import HostError
from run_repl.sandbox.runner import create_runner

SERVER = Path(__file__).with_name("upstream_server.py")
# One worker for the module: its tests share one upstream process, as runs do.
pytestmark = pytest.mark.xdist_group("upstreams")
SECRET = "s" * 40


def spec_for(state: Path, name: str = "up", **extra: object) -> UpstreamSpec:
    return UpstreamSpec(
        name=name,
        command=sys.executable,
        args=(str(SERVER),),
        env={"UPSTREAM_STATE": str(state)},
        **extra,  # type: ignore[arg-type]
    )


def lines(state: Path, name: str) -> list[str]:
    path = state / name
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """One upstream process for the tests that leave it as they found it (it starts in
    about a second: most tests share it, as runs do)."""
    root = tmp_path_factory.mktemp("upstream")
    (root / "state").mkdir()
    yield root / "state", root / "logs"
    close_all()


@pytest.fixture
def state(shared: tuple[Path, Path]) -> Path:
    for old in shared[0].iterdir():
        old.unlink()
    return shared[0]


@pytest.fixture
def host(state: Path, shared: tuple[Path, Path]):  # type: ignore[no-untyped-def]
    return with_upstreams(None, [spec_for(state)], shared[1])


# ---------------------------------------------------------------- settings
def test_a_flag_is_a_name_and_shell_words() -> None:
    spec = parse_upstream_flag("git=mcp-server-git --repository '/tmp/my repo'")
    assert (spec.name, spec.command, spec.args) == (
        "git",
        "mcp-server-git",
        ("--repository", "/tmp/my repo"),
    )
    assert (
        parse_upstream_flag("api=https://mcp.example.com/mcp").url == "https://mcp.example.com/mcp"
    )


@pytest.mark.parametrize(
    ("flag", "says"),
    [
        ("git", "NAME=COMMAND"),
        ("=x", "NAME=COMMAND"),
        ("9git=x", "JavaScript identifier"),
        ("g=x 'open", "quote"),
    ],
)
def test_a_bad_flag_says_what_to_write(flag: str, says: str) -> None:
    with pytest.raises(UpstreamSpecError, match=says):
        parse_upstream_flag(flag)


def test_config_tables_are_checked_without_echoing_credentials() -> None:
    with pytest.raises(UpstreamSpecError, match="either command") as info:
        upstreams_from_config(
            {"api": {"command": "x", "url": "http://h", "headers": {"A": "hunter2"}}}
        )
    assert "hunter2" not in str(info.value)
    with pytest.raises(UpstreamSpecError, match="make it a table"):
        upstreams_from_config({"api": "mcp-server-x"})
    spec = upstreams_from_config({"git": {"command": "g", "env": {"TOKEN": "hunter2"}}})[0]
    assert "hunter2" not in repr(spec) and "hunter2" not in spec.where


# ---------------------------------------------------------------- schemas
def test_schemas_become_typescript() -> None:
    schema = {
        "type": "object",
        "properties": {
            "repo_path": {"type": "string"},
            "max_count": {"type": "integer"},
            "mode": {"enum": ["fast", "full"]},
            "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["repo_path"],
        "$defs": {
            "Edit": {
                "type": "object",
                "properties": {"old text": {"type": "string"}},
                "required": ["old text"],
            }
        },
    }
    assert ts_type(schema) == (
        '{ repo_path: string; max_count?: number; mode?: "fast" | "full"; '
        'edits?: { "old text": string }[]; when?: string | null }'
    )
    assert ts_type({"type": "object"}) == "Record<string, unknown>"
    assert ts_type({"$ref": "https://elsewhere/x.json"}) == "unknown"


def test_arguments_are_checked_with_the_path_of_the_bad_field() -> None:
    checker = validator_for(
        {
            "type": "object",
            "properties": {"xs": {"type": "array", "items": {"type": "integer"}}},
            "required": ["xs"],
        }
    )
    assert check_arguments(checker, {"xs": [1, 2]}) is None
    assert check_arguments(checker, {"xs": [1, "two"]}) == "$.xs[1]: 'two' is not of type 'integer'"
    assert check_arguments(checker, {}) == "$: 'xs' is a required property"
    assert validator_for({"type": 12}) is None  # a broken schema is the upstream's: unchecked


def test_tool_names_become_unique_identifiers() -> None:
    taken: set[str] = set()
    assert [
        identifier_for(n, taken) for n in ["write-note", "write_note", "2fa", "then", "class"]
    ] == [
        "write_note",
        "write_note_2",
        "_2fa",
        "then_",
        "class_",
    ]


# ---------------------------------------------------------------- calls
@pytest.mark.slow  # an upstream process
def test_tools_are_functions_with_declarations(host) -> None:  # type: ignore[no-untyped-def]
    paths = list(host.manifest.functions)
    assert "up.echo" in paths and "up.write_note" in paths and "up.crash" in paths
    assert host.name == "mcp:up"
    text, _ = declarations(
        host, lambda p: "ask" if host.manifest.functions[p].approval else "allow"
    )
    assert "function echo(arguments: { text: string; times?: number }): Promise<" in text
    assert "MCP tool 'write-note' of upstream 'up'." in text  # the original name, kept in the docs
    assert "@approval Asks a person" in text.split("function write_note")[0].rsplit("/**", 1)[1]


@pytest.mark.slow  # an upstream process
async def test_results_are_data(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    result = await run(
        """
        const e = await up.echo({text: "ab", times: 2});
        const j = await up.json_text();
        const t = await up.plain_text();
        const p = await up.picture();
        return {e, j, t, p};
        """,
        host.functions,
    )
    assert result.status == "ok", result.error
    assert result.value["e"] == {"text": "abab"}  # structuredContent
    assert result.value["j"] == {"rows": [1, 2, 3]}  # JSON text, parsed
    assert result.value["t"] == "just words"
    assert result.value["p"] == {"type": "image", "mimeType": "image/png", "bytes": 100}
    assert lines(state, "echo.log") == ["ab"]


@pytest.mark.slow  # an upstream process
async def test_a_tool_error_is_a_host_error_the_snippet_can_catch(host) -> None:  # type: ignore[no-untyped-def]
    result = await run(
        "try { await up.fail({why: 'no'}) } catch (e) { return [e.hostCode, e.message] }",
        host.functions,
    )
    assert result.status == "ok", result.error
    code, message = result.value
    assert code == "UPSTREAM_TOOL_ERROR" and "refused: no" in message


@pytest.mark.slow  # an upstream process
async def test_bad_arguments_are_refused_before_anything_is_sent(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    result = await run("await up.echo({text: 5})", host.functions)
    assert result.status == "error"
    assert result.error.code == "UPSTREAM_INVALID_ARGUMENTS"
    assert "$.text: 5 is not of type 'string'" in result.error.message
    assert lines(state, "echo.log") == []
    result = await run("await up.echo('hi')", host.functions)
    assert (
        result.error.code == "UPSTREAM_INVALID_ARGUMENTS" and "one object" in result.error.message
    )


@pytest.mark.slow  # an upstream process
async def test_annotations_decide_who_is_asked(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    asked = {p for p, fn in host.manifest.functions.items() if fn.approval is not None}
    assert "up.write_note" in asked  # destructiveHint
    assert "up.touch" in asked  # no annotations: the spec's defaults are destructive
    assert "up.echo" not in asked and "up.append" not in asked  # read-only; not destructive
    result = await run("return await up.write_note({key: 'k', value: 'v'})", host.functions)
    assert result.status == "interrupted"
    question = result.interruptions[0].payload
    assert question["path"] == "up.write_note"
    assert question["args"] == [{"key": "k", "value": "v"}]
    assert "'write-note'" in question["message"] and "'up'" in question["message"]
    assert lines(state, "writes.log") == []


@pytest.mark.slow  # an upstream process
async def test_the_policy_overrides_annotations(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    runner = create_runner(secret=SECRET, approvals={"up.write_note": "allow", "up.ec*": "deny"})
    try:
        ok = await runner.run("return await up.write_note({key: 'k', value: 'v'})", host.functions)
        assert ok.status == "ok" and ok.value == {"result": "kept k"}
        denied = await runner.run("await up.echo({text: 'x'})", host.functions)
        assert denied.error.code == "RUN_APPROVAL_DENIED"
    finally:
        await runner.aclose() if hasattr(runner, "aclose") else None
    assert lines(state, "echo.log") == []


@pytest.mark.slow  # an upstream process
async def test_a_resume_never_calls_a_finished_upstream_tool_again(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    runner = create_runner(secret=SECRET)
    source = """
        const before = await up.echo({text: 'once'});
        const kept = await up.write_note({key: 'k', value: before.text});
        return [before, kept];
    """
    first = await runner.run(source, host.functions)
    assert first.status == "interrupted"
    resumed = await runner.run(
        source,
        host.functions,
        continuation=first.continuation,
        resolutions=[{"interruption_id": first.interruptions[0].id, "value": True}],
    )
    assert resumed.status == "ok", resumed.error
    assert resumed.value == [{"text": "once"}, {"result": "kept k"}]
    assert lines(state, "echo.log") == ["once"]  # answered from the ledger on resume
    assert lines(state, "writes.log") == [json.dumps(["k", "once"])]


# ---------------------------------------------------------------- lifecycle
@pytest.mark.slow  # an upstream process
async def test_a_crash_mid_call_is_lost_not_resent_and_the_upstream_comes_back(
    host, state: Path
) -> None:  # type: ignore[no-untyped-def]
    result = await run("await up.crash()", host.functions)
    assert result.error.code == "UPSTREAM_CALL_LOST"
    assert "does not send it again" in result.error.message
    assert lines(state, "crash.log") == ["crashing"]
    soon = await run("await up.echo({text: 'a'})", host.functions)
    assert soon.error.code == "UPSTREAM_UNAVAILABLE"  # within the backoff: at once, not a hang
    assert "tries again in" in soon.error.message
    deadline = time.monotonic() + 10
    while True:
        later = await run("return await up.echo({text: 'b'})", host.functions)
        if later.status == "ok" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert later.status == "ok", later.error
    assert lines(state, "crash.log") == ["crashing"]  # never sent again


def _process_with(tag: str) -> int:
    """The pid of the upstream process started with TEST_TAG=`tag` in its environment."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"TEST_TAG={tag}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except OSError:
            continue
    raise AssertionError(f"no process with TEST_TAG={tag}")


@pytest.mark.slow  # an upstream process, killed
async def test_an_upstream_that_died_between_calls_gets_the_next_call_on_a_new_process(
    state: Path, tmp_path: Path
) -> None:
    # Nothing was sent to the dead process: the call is not "lost" (it would say it may
    # have run), it goes to a fresh process, once.
    spec = UpstreamSpec(
        name="solo",
        command=sys.executable,
        args=(str(SERVER),),
        env={"UPSTREAM_STATE": str(state), "TEST_TAG": f"solo-{os.getpid()}"},
    )
    solo = with_upstreams(None, [spec], tmp_path / "logs")
    first = await run("return await solo.echo({text: 'before'})", solo.functions)
    assert first.status == "ok", first.error
    pid = _process_with(f"solo-{os.getpid()}")
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and b"Z" not in _state_of(pid):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    after = await run("return await solo.echo({text: 'after'})", solo.functions)
    assert after.status == "ok", after.error
    assert after.value == {"text": "after"}
    assert lines(state, "echo.log") == ["before", "after"]


def _state_of(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return b"Z"


@pytest.mark.slow  # an upstream process
async def test_a_changed_tool_list_reaches_the_catalog_and_the_next_run(host) -> None:  # type: ignore[no-untyped-def]
    assert "up.extra" not in host.manifest.functions
    grown = await run("return await up.grow()", host.functions)
    assert grown.status == "ok", grown.error
    deadline = time.monotonic() + 10
    while "up.extra" not in host.manifest.functions and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "up.extra" in host.manifest.functions
    result = await run("return await up.extra({n: 41})", host.functions)
    assert result.status == "ok" and result.value == {
        "result": 42
    }  # its outputSchema wraps a number


@pytest.mark.slow  # an upstream process
async def test_cancel_cancels_the_upstream_call(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    cancel = asyncio.Event()
    task = asyncio.create_task(run("await up.slow({seconds: 30})", host.functions, cancel=cancel))
    deadline = time.monotonic() + 10
    while lines(state, "slow.log") != ["started"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    cancel.set()
    result = await task
    assert result.error.code == "RUN_ABORTED"
    deadline = time.monotonic() + 10
    while "cancelled" not in lines(state, "slow.log") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert lines(state, "slow.log") == [
        "started",
        "cancelled",
    ]  # notifications/cancelled reached it


@pytest.mark.slow  # an upstream process
async def test_a_call_past_its_timeout_is_cancelled(state: Path, tmp_path: Path) -> None:
    host = with_upstreams(None, [spec_for(state, call_timeout_s=0.5)], tmp_path / "logs")
    result = await run(
        "try { await up.slow({seconds: 30}) } catch (e) { return e.hostCode }", host.functions
    )
    assert result.value == "UPSTREAM_TIMEOUT"


@pytest.mark.slow  # an upstream process
def test_an_upstream_that_does_not_start_is_a_load_error_naming_its_log(tmp_path: Path) -> None:
    spec = UpstreamSpec(name="nope", command=str(tmp_path / "missing"), env={"TOKEN": "hunter2"})
    with pytest.raises(HostLoadError) as info:
        with_upstreams(None, [spec], tmp_path / "logs")
    text = str(info.value)
    assert "'nope'" in text and "upstream-nope.log" in text and "hunter2" not in text
    close_all()


@pytest.mark.slow  # an upstream process
def test_its_error_output_goes_to_a_log_file(state: Path, tmp_path: Path) -> None:
    with_upstreams(None, [spec_for(state, name="logged")], tmp_path / "logs")
    log = tmp_path / "logs" / "upstream-logged.log"
    assert log.exists() and "run-repl starts upstream logged" in log.read_text()


@pytest.mark.slow  # an upstream process
def test_a_name_the_host_has_is_refused(state: Path, tmp_path: Path) -> None:
    from run_repl.host.loader import load_host

    base = load_host(None, data_dir_override=str(tmp_path / "data"))
    with pytest.raises(HostLoadError, match="already has a namespace 'crm'"):
        with_upstreams(base, [spec_for(state, name="crm")], tmp_path / "logs")
    both = with_upstreams(base, [spec_for(state)], tmp_path / "logs")
    assert "crm.getAccount" in both.manifest.functions and "up.echo" in both.manifest.functions
    assert both.name == "demo+mcp:up"


@pytest.mark.slow  # an upstream process
def test_the_catalog_shows_a_tools_fields(host) -> None:  # type: ignore[no-untyped-def]
    from run_repl.host.loader import describe

    shown = {f.path: f.js_signature for f in describe(host)}
    assert shown["up.echo"] == "up.echo({text, times?})"
    assert shown["up.json_text"] == "up.json_text()"


@pytest.mark.slow  # an upstream process
async def test_an_agents_docs_follow_a_changed_tool_list(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from upstream_testing import cli_env, write_upstream_config

    state = tmp_path / "state"
    state.mkdir()
    data = tmp_path / "data"
    write_upstream_config(
        data / "config", "up", sys.executable, [str(SERVER)], {"UPSTREAM_STATE": str(state)}
    )
    executable, *args = forked_cli.command("mcp", "--data-dir", str(data))
    params = StdioServerParameters(command=executable, args=args, env=cli_env(data))

    async def docs(client: Client) -> str:
        reply = await client.call_tool("docs", {})
        return json.dumps(reply.structured_content)

    with open(tmp_path / "server.err", "w") as err:
        async with Client(stdio_client(params, errlog=err), read_timeout_seconds=120) as client:
            assert "function echo(" in await docs(client)
            assert "function extra(" not in await docs(client)
            grown = await client.call_tool("run", {"code": "return await up.grow()"})
            assert not grown.is_error, grown.content
            deadline = time.monotonic() + 20
            while "function extra(" not in (text := await docs(client)):
                assert time.monotonic() < deadline, text[:400]
                await asyncio.sleep(0.1)
            done = await client.call_tool("run", {"code": "return await up.extra({n: 1})"})
    assert not done.is_error, done.content
    assert "2" in json.dumps(done.structured_content)


@pytest.mark.slow  # an upstream process
async def test_calls_in_flight_when_it_dies_count_one_failure(host, state: Path) -> None:  # type: ignore[no-untyped-def]
    from run_repl.host.upstream.hosts import connection_for

    conn = connection_for(spec_for(state), Path("unused"))
    result = await run(
        """
        const outcomes = await Promise.allSettled([
          up.slow({seconds: 30}), up.slow({seconds: 30}), up.slow({seconds: 30}), up.crash(),
        ]);
        return outcomes.map((o) => o.status === "rejected" ? o.reason.hostCode : "ok");
        """,
        host.functions,
    )
    assert result.status == "ok", result.error
    assert result.value == ["UPSTREAM_CALL_LOST"] * 4
    assert conn.failures == 1  # one death, one step of backoff: not one per call
    deadline = time.monotonic() + 10
    while (later := await run("return await up.echo({text: 'b'})", host.functions)).status != "ok":
        assert time.monotonic() < deadline, later.error
        await asyncio.sleep(0.2)


@pytest.mark.slow  # an upstream process
async def test_a_start_given_up_on_as_too_slow_leaves_no_client_behind(tmp_path: Path) -> None:
    from run_repl.host.upstream.connection import (
        UPSTREAM_UNAVAILABLE,
        UpstreamConnection,
        UpstreamLoop,
    )

    state = tmp_path / "state"
    state.mkdir()
    # A start timeout shorter than the test server takes to start: given up on, and
    # the start that finishes later must not become the connection's client.
    conn = UpstreamConnection(spec_for(state, start_timeout_s=0.05), tmp_path / "up.log")
    loop = UpstreamLoop.shared()
    try:
        with pytest.raises(HostError) as info:
            await loop.run(conn.client())
        assert info.value.code == UPSTREAM_UNAVAILABLE
        await asyncio.sleep(4)  # long enough for the abandoned start to finish or fail
        assert conn._client is None
    finally:
        await loop.run(conn.close())
