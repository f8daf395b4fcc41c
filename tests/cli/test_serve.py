"""`run-repl serve` resumes decided runs; `run-repl approvals approve` elsewhere records
the decision and returns at once, naming the server.

Every actor is a process of its own on one data directory (one store): the run that
pauses, the serve processes, the person's CLI. The host (serve_host.py) writes one
line per approved call with the pid that ran it, so a test counts executions and sees
where they happened. Waits below are bounds against a hang, never timings.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import forked_cli
import pytest

from run_repl.store import PendingApproval, SqliteStore, Store
from run_repl.store.executors import Executor

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
from store_kinds import CI_ENV, drop, new_schema, open_spec, pg_url

pytestmark = pytest.mark.slow  # real processes talking: seconds each

HOST = str(Path(__file__).with_name("serve_host.py"))
LAUNCH = "return await rocket.launch('apollo')"
BOUND_S = 120.0


class Team:
    """A data directory, the processes on it, and looks at its store."""

    def __init__(self, root: Path, schema: str | None = None) -> None:
        """`schema`: the team store is that schema on the test's PostgreSQL server, and
        each process has a data directory of its own (a machine of its own); else all
        share one data directory, its SQLite store."""
        self.root = root
        self.schema = schema
        self.data = root / "data"
        self.serves: list[subprocess.Popen[str]] = []
        if schema is not None:
            config = root / "config" / "config.toml"
            config.parent.mkdir(parents=True)
            config.write_text(f'[store]\nschema = "{schema}"\n')
            config.chmod(0o600)

    def env(self) -> dict[str, str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.root),
            "RUN_REPL_CONFIG_DIR": str(self.root / "config"),
            "RUN_REPL_APPROVER": "tester",
            "SERVE_TEST_DIR": str(self.root),
        }
        if self.schema is not None:  # one secret for the team: tokens verify everywhere
            env.update(RUN_REPL_STORE_URL=pg_url() or "", RUN_REPL_SECRET="t" * 40)
        return env

    def data_of(self, who: str) -> Path:
        return self.data if self.schema is None else self.root / f"machine-{who}"

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            forked_cli.command(*args, "--data-dir", str(self.data_of("cli")), "--host", HOST),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=BOUND_S,
            env=self.env(),
        )

    def pause(self) -> str:
        """Run the launch snippet: it waits for approval; its approval id."""
        done = self.cli("run", "-", "--json", stdin=LAUNCH)
        assert done.returncode == 3, done.stderr
        return str(json.loads(done.stdout)["interruptions"][0]["id"])

    def serve(self) -> Executor:
        """Start `run-repl serve`; its executor, once it is live in the store."""
        n = len(self.serves)
        known = {e.id for e in self.executors()}  # before it starts: it may register at once
        proc = subprocess.Popen(
            forked_cli.command(
                "serve", "--data-dir", str(self.data_of(f"serve-{n}")), "--host", HOST
            ),
            stdout=subprocess.PIPE,
            stderr=(self.root / f"serve-{n}.err").open("w"),
            text=True,
            env=self.env(),
        )
        self.serves.append(proc)
        found = self.until(
            lambda: [e for e in self.executors() if e.live and e.id not in known],
            f"serve {n} to register",
            proc,
        )
        return found[0]

    def stop(self, proc: subprocess.Popen[str]) -> tuple[int, list[str]]:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=BOUND_S)
        return proc.returncode, out.splitlines()

    def store(self) -> Store:
        if self.schema is not None:
            return open_spec(f"postgres:{self.schema}")
        return SqliteStore(self.data / "run-repl.sqlite3")

    def executors(self) -> list[Executor]:
        if self.schema is None and not (self.data / "run-repl.sqlite3").exists():
            return []
        store = self.store()
        try:
            return store.list_executors()
        finally:
            store.close()

    def approval(self, approval_id: str) -> PendingApproval:
        store = self.store()
        try:
            found = store.get_approval(approval_id)
        finally:
            store.close()
        assert found is not None
        return found

    def final(self, approval_id: str) -> PendingApproval:
        return self.until(
            lambda: (a := self.approval(approval_id)).final and a, f"{approval_id} to end"
        )

    def until(
        self, check: Callable[[], Any], what: str, proc: subprocess.Popen[str] | None = None
    ) -> Any:
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            got = check()
            if got:
                return got
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"the process ended before {what}: {proc.returncode}")
            time.sleep(0.05)
        raise AssertionError(f"waited {BOUND_S:.0f} s for {what}")

    def launches(self) -> list[tuple[str, int]]:
        path = self.root / "launches"
        if not path.exists():
            return []
        return [(n, int(p)) for n, p in (line.split() for line in path.read_text().splitlines())]


def pid_of(executor: Executor) -> int:
    found = re.search(r"pid (\d+)$", executor.label)
    assert found, executor.label
    return int(found.group(1))


def ended(made: Team) -> None:
    for proc in made.serves:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=BOUND_S)


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    made = Team(tmp_path)
    yield made
    ended(made)


@pytest.fixture(params=["sqlite", "postgres"])
def any_team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Team]:
    """A team on one machine's SQLite, or on the test server's PostgreSQL (each process
    a machine of its own: nothing shared but the store and the secret)."""
    if request.param == "sqlite":
        made = Team(tmp_path)
        yield made
        ended(made)
        return
    if not pg_url():
        if os.environ.get(CI_ENV):
            pytest.fail("no PostgreSQL test server in CI (RUN_REPL_TEST_PG_URL)")
        pytest.skip("no PostgreSQL test server here")
    schema = new_schema()
    made = Team(tmp_path, schema)
    yield made
    ended(made)
    drop(f"postgres:{schema}")


def test_approve_returns_at_once_naming_the_server_and_the_call_runs_once_there(
    any_team: Team,
) -> None:
    team = any_team
    approval_id = team.pause()
    server = team.serve()
    assert server.kind == "serve" and server.label.startswith("run-repl serve ")
    approved = team.cli("approvals", "approve", approval_id)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == ""  # no run here: nothing to print but where it goes
    assert f"resumes on {server.label}" in approved.stderr, approved.stderr
    assert re.search(r"Approved; run_\w+ resumes on ", approved.stderr)
    done = team.final(approval_id)
    assert done.status == "approved" and done.outcome == "ok"
    assert team.launches() == [("apollo", pid_of(server))]  # once, in the serve process
    code, lines = team.stop(team.serves[0])
    assert code == 0
    assert [line for line in lines if approval_id in line] == [
        next(line for line in lines if approval_id in line)
    ]
    [said] = [line for line in lines if approval_id in line]
    assert "rocket.launch" in said and "ok" in said and "tester" in said
    assert team.executors() == []  # it left the registry as it stopped


def test_json_names_the_server_and_wait_prints_the_result(team: Team) -> None:
    server = team.serve()
    first = team.pause()
    recorded = team.cli("approvals", "approve", first, "--json")
    assert recorded.returncode == 0, recorded.stderr
    said = json.loads(recorded.stdout)
    assert said["approval_id"] == first and said["decision"] == "approve"
    assert said["resumes_on"]["label"] == server.label and said["resumes_on"]["id"] == server.id
    second = team.pause()
    waited = team.cli("approvals", "approve", second, "--wait")
    assert waited.returncode == 0, waited.stderr
    assert f"resumes on {server.label}" in waited.stderr
    assert json.loads(waited.stdout) == {"launched": "apollo", "pid": pid_of(server)}
    assert team.approval(second).status == "approved"
    assert [p for _, p in team.launches()] == [pid_of(server)] * 2


def test_two_servers_on_one_store_resume_each_run_once(any_team: Team) -> None:
    team = any_team
    servers = [team.serve(), team.serve()]
    ids = [team.pause() for _ in range(3)]
    for approval_id in ids:
        approved = team.cli("approvals", "approve", approval_id)
        assert approved.returncode == 0, approved.stderr
        assert "resumes on run-repl serve" in approved.stderr
    for approval_id in ids:
        assert team.final(approval_id).status == "approved"
    launches = team.launches()
    assert len(launches) == 3, launches  # one per approval, never two
    assert {p for _, p in launches} <= {pid_of(s) for s in servers}
    said = [line for proc in list(team.serves) for line in team.stop(proc)[1]]
    for approval_id in ids:
        assert len([line for line in said if approval_id in line]) == 1, said


def test_with_no_executor_the_cli_resumes_the_run_itself_as_before(team: Team) -> None:
    team.serve()
    code, _ = team.stop(team.serves[0])
    assert code == 0 and team.executors() == []
    approval_id = team.pause()
    approved = team.cli("approvals", "approve", approval_id)
    assert approved.returncode == 0, approved.stderr
    assert "resumes on" not in approved.stderr
    value = json.loads(approved.stdout)
    assert value["launched"] == "apollo" and value["pid"] != os.getpid()
    assert team.launches() == [("apollo", value["pid"])]
    assert team.approval(approval_id).status == "approved"


def test_a_server_killed_before_the_first_live_call_is_taken_over_and_the_call_runs_once(
    any_team: Team,
) -> None:
    team = any_team
    servers = {pid_of(s): s for s in (team.serve(), team.serve())}
    (team.root / "hold-guard").touch()  # the first resume to reach its guard waits there
    approval_id = team.pause()
    approved = team.cli("approvals", "approve", approval_id)
    assert approved.returncode == 0, approved.stderr
    held = team.until(
        lambda: (team.root / "held-guard").exists() and (team.root / "held-guard").read_text(),
        "a resume to reach its guard",
    )
    victim = int(held)
    assert victim in servers
    claimed = team.approval(approval_id)
    assert claimed.state() == "claimed" and claimed.claimed_by == servers[victim].label
    os.kill(victim, signal.SIGKILL)  # before anything of the resume ran live
    killed_at = time.monotonic()
    done = team.final(approval_id)
    took = time.monotonic() - killed_at
    [survivor] = [s for pid, s in servers.items() if pid != victim]
    assert done.status == "approved" and done.outcome == "ok"
    assert done.claimed_by == survivor.label  # taken over by the other server
    assert team.launches() == [("apollo", pid_of(survivor))]  # once, there
    print(f"taken over {took:.1f} s after the kill")  # a figure for the report, not a bound


def test_wait_resumes_here_when_the_server_it_was_left_to_is_gone_before_it_began(
    team: Team,
) -> None:
    server = team.serve()
    [proc] = team.serves
    approval_id = team.pause()
    os.kill(pid_of(server), signal.SIGSTOP)  # frozen: live a few seconds more, takes nothing
    try:
        waited = team.cli("approvals", "approve", approval_id, "--wait")
    finally:
        os.kill(pid_of(server), signal.SIGKILL)
        proc.wait(timeout=BOUND_S)
    assert waited.returncode == 0, waited.stderr
    assert f"resumes on {server.label}" in waited.stderr  # it was left to the server...
    value = json.loads(waited.stdout)  # ...which never began: the waiting CLI resumed it
    assert value["launched"] == "apollo" and value["pid"] != pid_of(server)
    assert team.launches() == [("apollo", value["pid"])]
    assert team.approval(approval_id).status == "approved"


def _left_to_a_dead_server(team: Team) -> tuple[str, Executor]:
    """A decision recorded for a serve that then dies before it began: no other process
    of the host is running. The approval id and the dead server."""
    server = team.serve()
    [proc] = team.serves
    approval_id = team.pause()
    os.kill(pid_of(server), signal.SIGSTOP)  # live a few seconds more, takes nothing
    try:
        approved = team.cli("approvals", "approve", approval_id)
    finally:
        os.kill(pid_of(server), signal.SIGKILL)
        proc.wait(timeout=BOUND_S)
    assert approved.returncode == 0, approved.stderr
    assert f"resumes on {server.label}" in approved.stderr
    team.until(lambda: not any(e.live for e in team.executors()), "the server to read gone")
    return approval_id, server


STRANDED = "no live process with host"


def test_a_decision_left_to_a_dead_server_says_so_everywhere_and_resume_runs_it_here(
    any_team: Team,
) -> None:
    team = any_team
    approval_id, server = _left_to_a_dead_server(team)
    shown = team.cli("approvals", "show", approval_id)
    listed = team.cli("approvals", "list")
    as_json = team.cli("approvals", "list", "--json")
    for said in (shown, listed):
        assert said.returncode == 0, said.stderr
        assert STRANDED in said.stdout, said.stdout
        assert server.label in said.stdout  # who it was left to
        assert "run-repl serve" in said.stdout  # what to do: a server with the host...
        assert f"run-repl approvals resume {approval_id}" in said.stdout  # ...or resume here
    [row] = json.loads(as_json.stdout)
    assert STRANDED in row["stranded"]
    # The MCP server's approval_status and progress words say it too (its host is another).
    from run_repl.mcp.approval_wait import standing_of_approvals, waiting_message

    store = team.store()
    try:
        state = standing_of_approvals(store, [approval_id])
    finally:
        store.close()
    assert state.status == "waiting" and state.note and STRANDED in state.note
    assert STRANDED in waiting_message(state, lambda i: f"run-repl approvals approve {i}")
    resumed = team.cli("approvals", "resume", approval_id)
    assert resumed.returncode == 0, resumed.stderr
    value = json.loads(resumed.stdout)
    assert value["launched"] == "apollo" and value["pid"] != pid_of(server)
    assert team.launches() == [("apollo", value["pid"])]  # once, here
    assert team.approval(approval_id).status == "approved"
    again = team.cli("approvals", "resume", approval_id)
    assert again.returncode != 0 and "approved" in again.stderr  # final: nothing runs twice
    assert len(team.launches()) == 1


def test_wait_without_the_host_says_nobody_can_resume_and_a_serve_started_later_takes_it(
    team: Team,
) -> None:
    server = team.serve()
    [proc] = team.serves
    approval_id = team.pause()
    os.kill(pid_of(server), signal.SIGSTOP)
    # A person's laptop without the host: its `--wait` can only follow.
    waiting = subprocess.Popen(
        forked_cli.command(
            "approvals", "approve", approval_id, "--wait", "--data-dir", str(team.data)
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=team.env(),
    )
    said: queue.Queue[str] = queue.Queue()
    assert waiting.stderr is not None
    reader = threading.Thread(target=lambda: [said.put(x) for x in waiting.stderr], daemon=True)
    reader.start()
    try:
        first = said.get(timeout=BOUND_S)
        assert f"resumes on {server.label}" in first, first
        os.kill(pid_of(server), signal.SIGKILL)
        proc.wait(timeout=BOUND_S)
        heard = said.get(timeout=BOUND_S)  # it does not wait silently
        assert STRANDED in heard and "run-repl serve" in heard, heard
        assert f"run-repl approvals resume {approval_id}" in heard
        later = team.serve()  # any eligible process that appears takes it
        assert waiting.stdout is not None
        waiting.wait(timeout=BOUND_S)
        out = waiting.stdout.read()
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait(timeout=BOUND_S)
    reader.join(timeout=BOUND_S)
    rest = "".join(said.queue)
    assert waiting.returncode == 0, rest
    assert json.loads(out) == {"launched": "apollo", "pid": pid_of(later)}
    assert team.launches() == [("apollo", pid_of(later))]
