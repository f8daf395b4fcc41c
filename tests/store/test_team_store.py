"""A team's store as its people meet it: chosen by --store, RUN_REPL_STORE_URL or the
config; one machine pauses, another approves; a server down, or gone mid-run; a password
kept out of sight; and who may decide which approvals."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_kinds import open_spec, pg_url
from tcp_proxy import TcpProxy

from run_repl.cli import main
from run_repl.config import Settings
from run_repl.host.loader import load_host
from run_repl.store import ApprovalRefused, Deciders, PendingApproval, Store
from run_repl.store.approvals.flow import resolve, store_runner
from run_repl.store.backends import postgres as postgres_store
from run_repl.store.backends.postgres import PostgresStore
from run_repl.workspace import Workspace

SECRET = "t" * 40
TRANSFER = "const r = await bank.transfer(70, 'team')\nawait bank.done('team')\nreturn r"


@dataclass
class Done:
    code: int
    out: str
    err: str


@pytest.fixture
def team(
    postgres_spec: str,
    bank: ModuleType,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Callable[..., Done]:
    """`run-repl ARGS` as one machine of a team: its own data dir, the team's secret, the
    config naming the test's schema (and whatever else a test adds to it)."""
    monkeypatch.setenv("RUN_REPL_SECRET", SECRET)
    monkeypatch.delenv("RUN_REPL_STORE_URL", raising=False)
    monkeypatch.delenv("RUN_REPL_APPROVER", raising=False)
    write_config(f'[store]\nschema = "{postgres_spec.partition(":")[2]}"\n')

    def run(*args: str, machine: str = "a", stdin: str | None = None) -> Done:
        if stdin is not None:
            import io
            import sys

            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        argv = [
            *args,
            "--data-dir",
            str(tmp_path / f"machine-{machine}"),
            "--host",
            "bank_host:HOSTS",
        ]
        capsys.readouterr()
        code = main(argv)
        captured = capsys.readouterr()
        return Done(code, captured.out, captured.err)

    return run


def config_file() -> Path:
    return Path(os.environ["RUN_REPL_CONFIG_DIR"]) / "config.toml"


def write_config(text: str, mode: int = 0o600) -> None:
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)


def password_of(url: str) -> str:
    return url.split(":")[2].split("@")[0]


def the_store(postgres_spec: str) -> Store:
    return open_spec(postgres_spec)


# ------------------------------------------------------------------ choosing the store


@pytest.mark.parametrize("how", ["flag", "environment", "config"])
def test_a_team_store_is_chosen_by_flag_environment_or_config(
    team: Callable[..., Done],
    postgres_spec: str,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    url = pg_url() or ""
    args: list[str] = []
    if how == "flag":
        args = ["--store", url]
    elif how == "environment":
        monkeypatch.setenv("RUN_REPL_STORE_URL", url)
    else:
        write_config(config_file().read_text() + f'url = "{url}"\n')
    done = team("run", "-", *args, stdin=TRANSFER)
    assert done.code == 3, done.err  # interrupted: the approval is saved
    assert password_of(url) not in done.out + done.err
    store = the_store(postgres_spec)
    [pending] = store.list_approvals()
    assert pending.path == "bank.transfer" and pending.args == [70, "team"]
    assert len(store.list_runs()) == 1
    store.close()
    if how == "flag":  # with a password in it: others on the machine can see it in `ps`
        assert "--store postgresql://runrepl:***@" in done.err and "~/.pgpass" in done.err
        assert "--store '<the same --store URL>'" in done.err  # the approve command says so


def test_one_machine_pauses_another_lists_and_approves(
    team: Callable[..., Done], postgres_spec: str, bank: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUN_REPL_STORE_URL", pg_url() or "")
    paused = team("run", "-", "--json", machine="ci-runner", stdin=TRANSFER)
    assert paused.code == 3, paused.err
    approval_id = json.loads(paused.out)["interruptions"][0]["id"]
    listed = team("approvals", "list", "--json", machine="laptop")
    assert [a["id"] for a in json.loads(listed.out)] == [approval_id]
    monkeypatch.setenv("RUN_REPL_APPROVER", "alice")
    approved = team("approvals", "approve", approval_id, "--json", machine="laptop")
    assert approved.code == 0, approved.err
    assert json.loads(approved.out)["value"] == 70
    again = team("approvals", "approve", approval_id, machine="server")
    assert again.code == 1 and "already approved" in again.err
    assert bank.rows(tag="team") == [("team", 70)] and bank.rows("done", tag="team") == [
        ("team", 0)
    ]
    store = the_store(postgres_spec)
    final = store.get_approval(approval_id)
    assert final is not None and (final.status, final.decided_by) == ("approved", "alice")
    history = team("history", "--json", machine="server")
    assert len(json.loads(history.out)) == 2  # the paused run and its resume, seen anywhere
    store.close()


# ------------------------------------------------------------------ bad days


def test_a_server_down_at_start_is_said_and_nothing_pretends_to_be_saved(
    team: Callable[..., Done], monkeypatch: pytest.MonkeyPatch
) -> None:
    with TcpProxy.to_url(pg_url() or "") as proxy:
        proxy.cut()
        url = proxy.url(pg_url() or "")
        monkeypatch.setenv("RUN_REPL_STORE_URL", url)
        done = team("run", "-", stdin=TRANSFER)
        assert done.code == 4, done.err  # NOT_SAVED
        assert "cannot be reached" in done.err and f"127.0.0.1:{proxy.port}" in done.err
        assert "was NOT saved" in done.err and "saved pending approval" not in done.err
        assert password_of(url) not in done.out + done.err
        for command in (("approvals", "list"), ("history",)):
            refused = team(*command)
            assert refused.code == 6 and "could not be opened" in refused.err, command  # STORE
            assert "no pending approvals" not in refused.err


def test_a_password_in_a_config_file_others_can_read_is_not_used(
    team: Callable[..., Done], postgres_spec: str
) -> None:
    url = pg_url() or ""
    write_config(config_file().read_text() + f'url = "{url}"\n', mode=0o644)
    done = team("run", "-", stdin=TRANSFER)
    assert done.code == 4 and "can be read by others (mode 644)" in done.err
    assert f"chmod 600 {config_file()}" in done.err and password_of(url) not in done.err
    os.chmod(config_file(), 0o600)
    assert team("run", "-", stdin=TRANSFER).code == 3


class _Outage:
    """A host function that takes the store's server away while the run goes on (until
    the store has met the outage once, if it `comes_back`)."""

    def __init__(self, proxy: TcpProxy, comes_back: bool) -> None:
        self.proxy = proxy
        self.comes_back = comes_back

    def __call__(self) -> str:
        self.proxy.cut(back_after_refusal=self.comes_back)
        return "cut"


@pytest.fixture
def flaky_workspace(
    postgres_spec: str, bank: ModuleType, tmp_path: Path
) -> Iterator[Callable[[float, bool], tuple[Workspace, TcpProxy]]]:
    made: list[Workspace] = []
    proxies: list[TcpProxy] = []

    def build(reconnect_s: float, comes_back: bool) -> tuple[Workspace, TcpProxy]:
        proxy = TcpProxy.to_url(pg_url() or "")
        proxies.append(proxy)
        store = PostgresStore(
            proxy.url(pg_url() or ""),
            schema=postgres_spec.partition(":")[2],
            reconnect_s=reconnect_s,
        )
        host = load_host("bank_host:HOSTS")
        functions: dict[str, Any] = {**host.functions, "net": {"cut": _Outage(proxy, comes_back)}}
        host = type(host)(host.name, functions, host.manifest)
        ws = Workspace(Settings(), store, host, store_runner(store, secret=SECRET), tmp_path)
        made.append(ws)
        return ws, proxy

    yield build
    for ws in made:
        ws.store.close()
    for proxy in proxies:
        proxy.close()


OUTAGE_RUN = "await net.cut()\nconst r = await bank.transfer(5, 'outage')\nreturn r"


async def test_a_connection_lost_mid_run_is_waited_for_and_the_approval_written(
    flaky_workspace: Callable[[float, bool], tuple[Workspace, TcpProxy]], postgres_spec: str
) -> None:
    ws, proxy = flaky_workspace(30, True)
    result = await ws.run(OUTAGE_RUN)  # the server goes during the run, back once missed
    assert result.status == "interrupted", result.error
    assert proxy.refusals >= 1  # the store met the outage, and waited it out
    assert ws.not_saved_reason(result) is None and ws.warnings == []
    store = the_store(postgres_spec)
    [saved] = store.list_approvals()
    assert saved.id == result.interruptions[0].id  # type: ignore[index]
    assert [r.id for r in store.list_runs()] == [result.run_id]
    store.close()


async def test_a_connection_that_does_not_come_back_is_told_not_pretended(
    flaky_workspace: Callable[[float, bool], tuple[Workspace, TcpProxy]],
    postgres_spec: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server never comes back, so every wait runs out in full: the first call's
    # (reconnect_s, 1 s here before) and the later ones' (OUTAGE_WAIT_S, 2 s). Short ones,
    # the later the shorter as in use, say the same.
    monkeypatch.setattr(postgres_store, "OUTAGE_WAIT_S", 0.1)
    ws, _ = flaky_workspace(0.5, False)
    result = await ws.run(OUTAGE_RUN)
    assert result.status == "interrupted"  # the run itself finished
    reason = ws.not_saved_reason(result)
    assert reason is not None and "could not be read back" in reason
    assert any("could not record the run" in w and "did not come back" in w for w in ws.warnings)
    store = the_store(postgres_spec)
    assert store.list_approvals() == []  # and, indeed, it was not
    store.close()


# ------------------------------------------------------------------ who may decide


def held(approval_id: str, path: str) -> PendingApproval:
    return PendingApproval(id=approval_id, run_id="r", source="s", path=path, continuation="t")


def test_the_longest_namespace_decides_who_may_decide() -> None:
    policy = Deciders({"bank": ["alice", "Bob"], "bank.audit": ["carol"], "*": ["ops"]})
    assert policy.may_decide("bob", "bank.transfer")  # names compare without case
    assert not policy.may_decide("carol", "bank.transfer")
    assert policy.may_decide("carol", "bank.audit.read") and not policy.may_decide(
        "alice", "bank.audit"
    )
    assert policy.may_decide("ops", "documents.publish") and not policy.may_decide(
        "alice", "docs.x"
    )
    assert not policy.may_decide("alice", "bankrupt.file")  # "bank" is not a prefix of a word
    assert Deciders({}).may_decide("anyone", "bank.transfer")
    with pytest.raises(
        ApprovalRefused, match=r"carol may not decide approval int_1 \(bank.transfer\)"
    ):
        policy.check("carol", [held("int_1", "bank.transfer")])


async def test_the_flow_refuses_a_decider_the_policy_does_not_name(
    store: Store, bank: ModuleType, pause: Any
) -> None:
    runner = store_runner(store, secret="s" * 40)
    [approval] = await pause("return await bank.transfer(3, 'policy')")
    rules = {"bank": ["alice"]}
    with pytest.raises(ApprovalRefused, match="names alice"):
        await resolve(
            store, runner, bank.HOSTS, {approval.id: True}, approver="mallory", deciders=rules
        )
    untouched = store.get_approval(approval.id)
    assert untouched is not None and untouched.status == "pending" and untouched.decision is None
    done = await resolve(
        store, runner, bank.HOSTS, {approval.id: True}, approver="Alice", deciders=rules
    )
    assert done.result is not None and done.result.status == "ok"
    assert store.get_approval(approval.id).decided_by == "Alice"  # type: ignore[union-attr]
    assert bank.rows(tag="policy") == [("policy", 3)]


def test_the_cli_keeps_the_policy_and_the_configured_name(
    team: Callable[..., Done], postgres_spec: str, monkeypatch: pytest.MonkeyPatch, bank: ModuleType
) -> None:
    monkeypatch.setenv("RUN_REPL_STORE_URL", pg_url() or "")
    write_config(config_file().read_text() + '[approvals.deciders]\nbank = ["alice"]\n')
    paused = team("run", "-", "--json", stdin=TRANSFER)
    approval_id = json.loads(paused.out)["interruptions"][0]["id"]
    monkeypatch.setenv("RUN_REPL_APPROVER", "bob")
    refused = team("approvals", "approve", approval_id)
    assert (
        refused.code == 1 and "bob may not decide" in refused.err and "names alice" in refused.err
    )
    monkeypatch.delenv("RUN_REPL_APPROVER")
    named = (
        config_file()
        .read_text()
        .replace("[approvals.deciders]", '[approvals]\nname = "alice"\n[approvals.deciders]')
    )
    write_config(named)
    approved = team("approvals", "approve", approval_id)
    assert approved.code == 0, approved.err
    store = the_store(postgres_spec)
    assert store.get_approval(approval_id).decided_by == "alice"  # type: ignore[union-attr]
    store.close()
    assert bank.rows(tag="team") == [("team", 70)]


def test_settings_read_the_store_and_the_approver_from_the_environment() -> None:
    settings = Settings().with_environment(
        {"RUN_REPL_STORE_URL": "postgresql://a@db/rr", "RUN_REPL_APPROVER": "dana"}
    )
    assert settings.store.url == "postgresql://a@db/rr" and settings.approvals.name == "dana"


def test_without_postgresql_support_installed_the_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from run_repl.store import MemoryStore, open_store

    for name in [m for m in sys.modules if m.startswith("run_repl.store.backends.postgres")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    store, warning = open_store(url="postgresql://alice:hunter2@db.internal/rr")
    assert isinstance(store, MemoryStore) and warning is not None
    assert "pip install 'run-repl[postgres]'" in warning and "NOT saved" in warning
    assert "hunter2" not in warning and "postgresql://alice:***@db.internal/rr" in warning
