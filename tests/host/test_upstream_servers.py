"""Upstreams nobody on run-repl wrote, driven for real: mcp-server-git, mcp-server-time
(PyPI), the reference `everything` and `filesystem` servers (npm). Installed by
`.ci/run` (tests/host/upstream_servers/install.py); without them these fail in CI and
skip elsewhere, saying how to install them."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import forked_cli
import pytest
from upstream_testing import cli_env, program, require_servers, write_upstream_config

from run_repl import run
from run_repl.host.upstream.hosts import close_all, with_upstreams
from run_repl.host.upstream.spec import UpstreamSpec
from run_repl.mcp.declarations import declarations

# Real processes talking for real: seconds each, out of the fast lane.
pytestmark = [pytest.mark.xdist_group("upstream_servers"), pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def servers() -> Iterator[None]:
    require_servers()
    yield
    close_all()


def prog(name: str) -> str:
    path = program(name)
    assert path is not None
    return str(path)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for i in range(60):
        (path / "f.txt").write_text(f"{i}\n")
        subprocess.run(["git", "-C", str(path), "add", "f.txt"], check=True, env=env)
        subprocess.run(
            ["git", "-C", str(path), "commit", "-qm", f"change {i}"], check=True, env=env
        )
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("files")


@pytest.fixture(scope="module")
def host(files: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    specs = [
        UpstreamSpec(name="git", command=prog("mcp-server-git")),
        UpstreamSpec(name="time", command=prog("mcp-server-time")),
        UpstreamSpec(name="fs", command=prog("mcp-server-filesystem"), args=(str(files),)),
        UpstreamSpec(name="everything", command=prog("mcp-server-everything")),
    ]
    return with_upstreams(None, specs, tmp_path_factory.mktemp("logs"))


def test_their_tools_are_declared_from_their_schemas(host) -> None:  # type: ignore[no-untyped-def]
    text, _ = declarations(
        host, lambda p: "ask" if host.manifest.functions[p].approval else "allow"
    )
    assert "declare namespace git {" in text and "declare namespace fs {" in text
    assert "function git_log(arguments: { repo_path: string; max_count?: number" in text
    assert "function get_sum(arguments: { a: number; b: number }): Promise<" in text
    # everything's get-structured-content declares an output schema: its type is read
    assert "function get_structured_content(" in text
    assert "MCP tool 'get-structured-content' of upstream 'everything'." in text


async def test_a_git_log_is_paged_in_the_value_window(host, repo: Path) -> None:  # type: ignore[no-untyped-def]
    result = await run(
        f"return await git.git_log({{repo_path: {json.dumps(str(repo))}, max_count: 60}})",
        host.functions,
    )
    assert result.status == "ok", result.error
    window = result.value_window
    assert window is not None and window.path == "$lines"  # too long to show whole
    assert result.total is not None and result.total > result.shown == len(window.items)
    assert "Message: change 59" in window.items  # the newest first, line by line


async def test_two_upstreams_join_in_one_snippet(host, files: Path) -> None:  # type: ignore[no-untyped-def]
    result = await run(
        """
        const [now, sum, dirs] = await Promise.all([
          time.get_current_time({timezone: "Etc/UTC"}),
          everything.get_sum({a: 2, b: 3}),
          fs.list_allowed_directories(),
        ]);
        return {tz: now.timezone, sum, dirs};
        """,
        host.functions,
    )
    assert result.status == "ok", result.error
    assert result.value["tz"] == "Etc/UTC"
    assert "5" in json.dumps(result.value["sum"])
    assert str(files) in json.dumps(result.value["dirs"])


async def test_write_file_asks_a_person_first(host, files: Path) -> None:  # type: ignore[no-untyped-def]
    target = files / "asked.txt"
    result = await run(
        f"return await fs.write_file({{path: {json.dumps(str(target))}, content: 'hello'}})",
        host.functions,
    )
    assert result.status == "interrupted"
    assert result.interruptions[0].path == "fs.write_file"
    assert not target.exists()
    listed = await run(
        f"return await fs.list_directory({{path: {json.dumps(str(files))}}})", host.functions
    )
    assert listed.status == "ok"  # read-only: no question


async def test_bad_arguments_never_reach_the_server(host) -> None:  # type: ignore[no-untyped-def]
    result = await run("await everything.get_sum({a: 2, b: 'three'})", host.functions)
    assert result.error.code == "UPSTREAM_INVALID_ARGUMENTS"
    assert "$.b" in result.error.message


def _cli(data: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        forked_cli.command(*args, "--data-dir", str(data)),  # a process of its own
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(data),
    )


def test_approved_in_another_process_the_file_is_written_once(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    data = tmp_path / "data"
    write_upstream_config(data / "config", "fs", prog("mcp-server-filesystem"), [str(files)])
    target = files / "out.txt"
    source = (
        f"const before = await fs.list_directory({{path: {json.dumps(str(files))}}});\n"
        f"await fs.write_file({{path: {json.dumps(str(target))}, content: 'once'}});\n"
        f"return await fs.read_text_file({{path: {json.dumps(str(target))}}});\n"
    )
    first = _cli(data, "run", "-", "--json", stdin=source)
    assert first.returncode == 3, first.stderr
    envelope = json.loads(first.stdout)
    assert envelope["interruptions"][0]["path"] == "fs.write_file"
    assert not target.exists()
    approved = _cli(data, "approvals", "approve", envelope["interruptions"][0]["id"], "--json")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["value"] == {"content": "once"}
    assert target.read_text() == "once"
    again = _cli(data, "approvals", "approve", envelope["interruptions"][0]["id"])
    assert again.returncode != 0  # decided already: nothing runs twice
    assert target.read_text() == "once"


async def test_an_agent_gets_one_run_tool_over_two_upstreams(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    data = tmp_path / "data"
    (data / "config").mkdir(parents=True)
    executable, *args = forked_cli.command(
        *("mcp", "--data-dir", str(data)),
        *("--upstream", f"time={prog('mcp-server-time')}"),
        *("--upstream", f"everything={prog('mcp-server-everything')}"),
    )
    params = StdioServerParameters(command=executable, args=args, env=cli_env(data))
    with open(tmp_path / "server.err", "w") as err:
        async with Client(stdio_client(params, errlog=err), read_timeout_seconds=120) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "run" in tools and "docs" in tools
            docs = await client.call_tool("docs", {})
            text = json.dumps(docs.structured_content or [c.model_dump() for c in docs.content])
            assert "namespace time" in text and "namespace everything" in text
            assert "get_current_time" in text and "get_sum" in text
            done = await client.call_tool(
                "run",
                {
                    "code": """
                    const [now, sum] = await Promise.all([
                      time.get_current_time({timezone: "Europe/Paris"}),
                      everything.get_sum({a: 20, b: 22}),
                    ]);
                    return {tz: now.timezone, sum};
                    """
                },
            )
    assert not done.is_error, done.content
    body = json.dumps(done.structured_content)
    assert "Europe/Paris" in body and "42" in body


async def test_an_upstream_over_streamable_http(tmp_path: Path) -> None:
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [prog("mcp-server-everything"), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the everything server did not listen"
                time.sleep(0.1)
        spec = UpstreamSpec(
            name="remote", url=f"http://127.0.0.1:{port}/mcp", headers={"X-Api-Key": "hunter2"}
        )
        host = with_upstreams(None, [spec], tmp_path / "logs")
        result = await run("return await remote.get_sum({a: 19, b: 23})", host.functions)
        assert result.status == "ok", result.error
        assert "42" in json.dumps(result.value)
        envelope = json.dumps(result.model_dump(mode="json"))
        text, _ = declarations(host, lambda p: "allow")
        assert "hunter2" not in envelope + text + host.name + repr(spec)
    finally:
        close_all()
        server.terminate()
        server.wait(10)
