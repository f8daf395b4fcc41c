"""Runs in flight: the cap (RUN_BUSY), and a client that goes away cancels its run.
Also the same tools over streamable HTTP."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_servers import TOKEN
from http_servers import client as http_client
from mcp_harness import GATE_HOST, environment, mcp_server, text_of

from run_repl.cli import main
from run_repl.store import SqliteStore

HERE = Path(__file__).parent
LIMIT_S = 240  # a bound against a hang, not a timing


async def until(predicate: Any) -> None:
    with anyio.fail_after(LIMIT_S):
        while not predicate():
            await anyio.sleep(0.02)


def kept_runs(data: Path) -> list[Any]:
    store = SqliteStore(data / "run-repl.sqlite3")
    try:
        return store.list_runs(limit=100)
    finally:
        store.close()


async def test_five_runs_at_once_four_in_flight_the_fifth_is_busy(data: Path, gate: Path) -> None:
    async with mcp_server(data, host=GATE_HOST, gate=gate) as server:
        results: dict[int, Any] = {}

        async def call(n: int) -> None:
            results[n] = await server.call("run", {"code": f'await gate.wait("r{n}")'})

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                for n in range(5):
                    tg.start_soon(call, n)
                # Four runs hold at the gate; the fifth was refused at once.
                await until(lambda: len(results) == 1)
                await until(lambda: len(list(gate.glob("entered-*"))) == 4)
                (gate / "open").touch()
    busy = [r for r in results.values() if r.is_error]
    ok = [r for r in results.values() if not r.is_error]
    assert len(busy) == 1 and len(ok) == 4
    error = busy[0].structured_content["error"]
    assert error["code"] == "RUN_BUSY"
    assert error["next_actions"][0]["type"] == "retry"
    assert "Denied (RUN_BUSY)" in text_of(busy[0])["error"]
    assert sorted(r.structured_content["value"] for r in ok) == sorted(
        p.name.removeprefix("entered-") for p in gate.glob("entered-*")
    )


async def test_a_cancelled_call_stops_its_run(data: Path, gate: Path) -> None:
    async with mcp_server(data, host=GATE_HOST, gate=gate) as server:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await server.call("run", {"code": 'await gate.wait("c")'})

                tg.start_soon(call)
                await until(lambda: (gate / "entered-c").exists())
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled
            await until(lambda: (gate / "cancelled-c").exists())  # the host was told
            await until(lambda: any(r.error_code == "RUN_ABORTED" for r in kept_runs(data)))
        after = await server.call("run", {"code": "'still here'"})
    assert after.structured_content["value"] == "still here"
    assert not (gate / "open").exists()


CLIENT = """
import anyio, sys
from pathlib import Path
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_harness import environment

async def main(data, gate, host):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "run_repl.cli", "mcp", "--data-dir", data, "--host", host],
        env=environment(Path(data), Path(gate)),
    )
    with (Path(data) / "server-stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.call_tool("run", {"code": 'await gate.wait("d")'})

anyio.run(main, *sys.argv[1:])
"""


def started(client: subprocess.Popen[bytes], entered: Path) -> bool:
    """The client's run reached the gate; a client that died first fails at once."""
    assert client.poll() is None, f"the MCP client ended first (status {client.returncode})"
    return entered.exists() and bool(entered.read_text())


def alive(pid: int) -> bool:
    """Still running. A process that has exited but not been reaped (a zombie: this
    server's parent, the client, is dead, and init reaps orphans when it gets to
    them) has ended too."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # after "pid (comm)"


@pytest.mark.slow
async def test_a_client_that_disconnects_mid_run_cancels_it(data: Path, gate: Path) -> None:
    """The client dies (SIGKILL: no cancel, no goodbye) while its run is in flight:
    the server sees its stdin close, stops the run, keeps it as aborted, and exits
    quietly (its answer to the call finds nobody there: no traceback)."""
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(data), str(gate), GATE_HOST],
        # mcp_harness, and what it imports from the tests' root (forked_cli)
        env={**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{HERE.parent}"},
        stderr=subprocess.DEVNULL,
    )
    try:
        await until(lambda: started(client, gate / "entered-d"))
        server_pid = int((gate / "entered-d").read_text())
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=30)
        await until(lambda: (gate / "cancelled-d").exists())
        await until(lambda: not alive(server_pid))
    finally:
        if client.poll() is None:
            client.kill()
    [run] = [r for r in kept_runs(data) if r.source == 'await gate.wait("d")']
    assert run.error_code == "RUN_ABORTED"
    assert not (gate / "open").exists()
    said = (data / "server-stderr.txt").read_text()
    assert "serving over stdio" in said
    assert "Traceback" not in said, said


def start_http(
    data: Path, *extra: str, gate: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "run_repl.cli",
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--data-dir",
            str(data),
            *extra,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environment(data, gate), "RUN_REPL_MCP_TOKEN": TOKEN},
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)$", line.rstrip())
        if found:
            return process, found.group(1)
    process.wait(timeout=30)
    raise AssertionError(f"no address announced (exit {process.returncode})")


def close_pipes(process: subprocess.Popen[str]) -> None:
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


@pytest.mark.slow
async def test_the_same_tools_over_streamable_http(data: Path) -> None:
    process, url = start_http(data)
    try:
        async with http_client(url, mode="auto") as client:
            tools = await client.list_tools()
            result = await client.call_tool(
                "run", {"code": "const [a] = await crm.listAccounts(1); a.id"}
            )
            bad = await client.call_tool("run", {"code": ["no"]})
        assert [t.name for t in tools.tools] == ["run", "expand_result", "docs", "approval_status"]
        assert result.structured_content["value"] == "acc_0001"
        assert bad.is_error and bad.structured_content["error"]["code"] == "TOOL_ARGUMENT_INVALID"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.stdout is not None and process.stdout.read() == ""  # stdout stays quiet
    close_pipes(process)
    assert [r.status for r in kept_runs(data)] == ["ok"]


HTTP_CLIENT = """
import anyio, httpx2, sys
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main(url, token, mode):
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + token})
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        await client.call_tool("run", {"code": 'await gate.wait("h")'})

anyio.run(main, *sys.argv[1:])
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28, and a 2025 JSON answer
async def test_an_http_client_that_disconnects_mid_run_cancels_it(
    data: Path, gate: Path, mode: str
) -> None:
    process, url = start_http(data, "--host", GATE_HOST, gate=gate)
    client = subprocess.Popen(
        [sys.executable, "-c", HTTP_CLIENT, url, TOKEN, mode], stderr=subprocess.DEVNULL
    )
    try:
        await until(lambda: (gate / "entered-h").exists())
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=30)
        await until(lambda: (gate / "cancelled-h").exists())
        await until(lambda: any(r.error_code == "RUN_ABORTED" for r in kept_runs(data)))
    finally:
        if client.poll() is None:
            client.kill()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        close_pipes(process)


def test_http_says_when_its_port_is_taken(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUN_REPL_MCP_TOKEN", TOKEN)
    with socket.socket() as taken:  # another program listens there
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code = main(["mcp", "--http", port, "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("spec", ["nope", "1.2.3.4:99999", "host:"])
def test_a_bad_http_address_is_a_usage_error(
    data: Path, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["mcp", "--http", spec, "--data-dir", str(data)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "--http" in err and "Traceback" not in err
    assert out == ""


@pytest.mark.slow
def test_stdio_ends_quietly_when_stdin_closes(tmp_path: Path) -> None:
    data = tmp_path / "first"  # a first start: nothing there yet, not even the demo data
    done = subprocess.run(
        [sys.executable, "-m", "run_repl.cli", "mcp", "--data-dir", str(data)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(data),
    )
    assert done.returncode == 0, done.stderr
    assert (data / "demo.sqlite3").is_file()  # made at start, as the other tests' copy is
    assert done.stdout == ""
    assert "run-repl mcp" in done.stderr and "over stdio" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_host_that_prints_cannot_break_the_protocol(data: Path, gate: Path) -> None:
    """stdout is the protocol's: what a host function prints goes to stderr instead."""
    async with mcp_server(data, host=GATE_HOST, gate=gate) as server:
        result = await server.call("run", {"code": 'await gate.noisy("hi")'})
        again = await server.call("run", {"code": "1 + 1"})
    assert result.structured_content["value"] == "hi"
    assert again.structured_content["value"] == 2
    errors = server.stderr.read_text()
    assert "host says hi" in errors and "host warns hi" in errors


def test_other_commands_do_not_load_the_mcp_package() -> None:
    """`run-repl run` and the rest start without paying for the MCP SDK's import."""
    probe = (
        "import sys, run_repl.cli, run_repl.workspace, run_repl.store, run_repl.present; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'run_repl.mcp'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
