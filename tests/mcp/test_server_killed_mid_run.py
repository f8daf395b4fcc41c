"""A server killed mid-run: the agent retries on another server of the team with the same
idempotency_key and gets the same run, never a second one.

Two real `run-repl mcp --http` servers on one store (one machine's SQLite, or the test
PostgreSQL server with a data directory per server, as two machines): the agent's call
goes to server A, A is SIGKILLed, the agent calls `run` again on B with its key.

(a) The run was waiting for approval when A died: the retry answers with that run's
    pending state (the same run id, the same approval: nobody is asked again); once a
    person decides, B resumes it (A is gone) and the waiting retry gets the final result.
(b) The run was inside a slow host call, before any approval: B never starts a second run
    and never calls the host again; within seconds (the server is seen gone) the retry
    answers RUN_OUTCOME_UNKNOWN naming the run's server as stopped, saying the host calls
    may or may not have run and what to do; every later retry answers the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import forked_cli
import pytest
from http_servers import HttpServer, client, config, start, stop
from mcp_harness import GATE_HOST, environment

from run_repl.store import SqliteStore, Store

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
from store_kinds import CI_ENV, drop, new_schema, open_spec, pg_url

pytestmark = pytest.mark.slow  # real servers, killed for real

LIMIT_S = 240  # a bound against a hang, not a timing
PAUSES = 'const w = await gate.wait("w");\nreturn [w, await rocket.launch("x")];'
SLOW = 'return await gate.wait("slow");'


@dataclass
class Team:
    """Where the servers and the person's CLI keep their store."""

    root: Path
    schema: str | None

    def data(self, who: str) -> Path:
        """A server's (or the CLI's) data directory: one shared for SQLite, one each on
        PostgreSQL (nothing shared but the store and the secret)."""
        if self.schema is None:
            return self.root / "data"
        path = self.root / f"machine-{who}"
        if not path.exists():
            path.mkdir(parents=True)
            config(path, f'[store]\nschema = "{self.schema}"\n')
        return path

    def env(self) -> dict[str, str]:
        if self.schema is None:
            return {}
        return {"RUN_REPL_STORE_URL": pg_url() or "", "RUN_REPL_SECRET": "t" * 40}

    def server(self, who: str, gate: Path, *args: str) -> HttpServer:
        return start(self.data(who), "--host", GATE_HOST, *args, gate=gate, env=self.env())

    def cli(self, gate: Path, *args: str) -> subprocess.CompletedProcess[str]:
        data = self.data("cli")
        return subprocess.run(
            forked_cli.command(*args, "--data-dir", str(data), "--host", GATE_HOST),
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            env={**environment(data, gate), **self.env()},
        )

    def store(self) -> Store:
        if self.schema is not None:
            return open_spec(f"postgres:{self.schema}")
        return SqliteStore(self.data("cli") / "run-repl.sqlite3")

    def look(self, fn: Any) -> Any:
        store = self.store()
        try:
            return fn(store)
        finally:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Team]:
    if request.param == "sqlite":
        (tmp_path / "data").mkdir()
        yield Team(tmp_path, None)
        return
    if not pg_url():
        if os.environ.get(CI_ENV):
            pytest.fail("no PostgreSQL test server in CI (RUN_REPL_TEST_PG_URL)")
        pytest.skip("no PostgreSQL test server here")
    schema = new_schema()
    yield Team(tmp_path, schema)
    drop(f"postgres:{schema}")


def killed(server: HttpServer) -> None:
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=LIMIT_S)
    stop(server)  # closes its pipes


async def until(check: Any, what: str) -> Any:
    with anyio.fail_after(LIMIT_S):
        while True:
            got = await anyio.to_thread.run_sync(check)
            if got:
                return got
            await anyio.sleep(0.05)
    raise AssertionError(what)  # pragma: no cover


async def test_a_run_waiting_for_approval_is_the_retrys_and_resumes_on_the_other_server(
    team: Team, gate: Path
) -> None:
    (gate / "open").touch()  # gate.wait returns at once
    a = team.server("a", gate)
    b = team.server("b", gate)
    key = {"code": PAUSES, "idempotency_key": "launch-x-1"}
    cut: list[BaseException] = []
    heard = anyio.Event()
    notes: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        notes.append(message)
        heard.set()

    try:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:

                async def first_call() -> None:
                    try:
                        async with client(a.url) as c:
                            await c.call_tool("run", key)
                    except BaseException as exc:  # the server died under the call
                        cut.append(exc)

                tg.start_soon(first_call)
                [asked] = await until(
                    lambda: team.look(lambda s: s.list_approvals("pending")), "the approval"
                )
                killed(a)  # while the agent's call waits for a person on it
        assert cut, "the first call should have been cut by the kill"
        retry: Any = None
        status: Any = None
        async with client(b.url) as c:
            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as tg:

                    async def again() -> None:
                        nonlocal retry
                        retry = await c.call_tool("run", key, progress_callback=on_progress)

                    tg.start_soon(again)
                    await heard.wait()  # the retry waits for the same approval
                    assert [x.id for x in team.look(lambda s: s.list_approvals(status=None))] == [
                        asked.id
                    ]  # nobody is asked a second time
                    decided = await anyio.to_thread.run_sync(
                        lambda: team.cli(gate, "approvals", "approve", asked.id)
                    )
                    assert decided.returncode == 0, decided.stderr
            status = await c.call_tool("approval_status", {"approval_ids": [asked.id]})
        executors = team.look(lambda s: s.list_executors())
    finally:
        stop(b)
    [b_executor] = [e for e in executors if e.live]
    # Decided within seconds of the kill, A may still read live (LIVE_S): the decision is
    # left to A or B, and B resumes it either way (A's runs go to B once A is seen gone).
    assert "resumes on mcp server" in decided.stderr, decided.stderr
    assert retry is not None and retry.is_error is False, retry
    got = retry.structured_content
    assert got["status"] == "ok" and got["value"] == ["w", {"launched": "x"}]
    assert got.get("resumed_from") == asked.run_id  # the first call's run, resumed
    assert any(m and "approve" in m for m in notes)
    assert status.is_error is False and status.structured_content["status"] == "done"
    assert status.structured_content["result"]["value"] == got["value"]
    done = team.look(lambda s: s.get_approval(asked.id))
    assert done.status == "approved" and done.outcome == "ok"
    assert done.claimed_by == b_executor.label
    runs = team.look(lambda s: [r.id for r in s.list_runs(limit=100)])
    assert len(runs) == 2  # the first run and its resume: the retry started none
    assert (gate / "launched-x").exists()


async def test_a_run_cut_inside_a_host_call_is_never_run_again_and_the_retry_says_so(
    team: Team, gate: Path
) -> None:
    a = team.server("a", gate)
    b = team.server("b", gate)
    key = {"code": SLOW, "idempotency_key": "slow-1"}
    cut: list[BaseException] = []
    try:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:

                async def first_call() -> None:
                    try:
                        async with client(a.url) as c:
                            await c.call_tool("run", key)
                    except BaseException as exc:
                        cut.append(exc)

                tg.start_soon(first_call)
                await until(lambda: (gate / "entered-slow").exists(), "the host call")
                a_pid = (gate / "entered-slow").read_text()  # the server's own process
                a_executor = next(
                    e
                    for e in team.look(lambda s: s.list_executors())
                    if e.label.endswith(f"pid {a_pid}")
                )
                killed(a)  # inside the host call, before the run reported anything
        assert cut
        async with client(b.url) as c:
            with anyio.fail_after(LIMIT_S):
                first = await c.call_tool("run", key)
                second = await c.call_tool("run", key)
    finally:
        stop(b)
    for retry in (first, second):
        assert retry.is_error is True, retry
        error = retry.structured_content["error"]
        assert error["code"] == "RUN_OUTCOME_UNKNOWN", error
        assert a_executor.label in error["message"]  # names the server that died
        assert "may or may not have run" in error["message"]
        actions = error["next_actions"]
        assert any("new idempotency_key" in (x.get("why") or "") for x in actions), actions
    assert second.structured_content["error"] == first.structured_content["error"]
    # Never run again: the host call was entered once, by A, and B started no run.
    assert (gate / "entered-slow").read_text() == a_pid
    assert team.look(lambda s: s.list_runs(limit=100)) == []
