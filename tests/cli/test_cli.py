"""`run-repl` commands as a shell sees them: output and exit codes, in subprocesses."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def cli(
    tmp: Path, *args: str, stdin: str | None = None, host: str | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "run_repl.cli", *args, "--data-dir", str(tmp)]
    if host:
        cmd += ["--host", host]
    return subprocess.run(
        cmd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "RUN_REPL_CONFIG_DIR": str(tmp / "config"), "HOME": str(tmp)},
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path


def test_run_from_stdin_ok(data: Path) -> None:
    out = cli(
        data,
        "run",
        "-",
        stdin="const [c] = await crm.listAccounts(); return await store.listOrders(c.id)",
    )
    assert out.returncode == 0, out.stderr
    assert "crm.listAccounts" in out.stdout and '"account_id": "acc_0001"' in out.stdout
    assert "expand res_" in out.stdout  # the rest is pageable


def test_run_json_envelope(data: Path) -> None:
    out = cli(data, "run", "-", "--json", stdin="console.log('hi'); ({ a: 1 })")
    assert out.returncode == 0
    envelope = json.loads(out.stdout)
    assert envelope["status"] == "ok" and envelope["value"] == {"a": 1}
    assert envelope["logs"][0]["text"] == "hi"
    assert envelope["value_ref"].startswith("res_")


def test_run_error_exit_1_with_line_and_next_action(data: Path, tmp_path: Path) -> None:
    snippet = tmp_path / "bad.ts"
    snippet.write_text("const a = 1\nconst b = ;\n")
    out = cli(data, "run", str(snippet))
    assert out.returncode == 1
    assert "RUN_SYNTAX_ERROR at line 2, column 11" in out.stdout
    assert "const b = ;" in out.stdout and "next (edit_request)" in out.stdout


def test_interrupted_exit_3_then_approve_from_another_process(data: Path) -> None:
    source = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"
    first = cli(data, "run", "-", stdin=source)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "waiting for approval: documents.publish" in first.stdout
    pending = json.loads(cli(data, "approvals", "list", "--json").stdout)
    assert len(pending) == 1 and pending[0]["path"] == "documents.publish"
    approval_id = pending[0]["id"]
    shown = cli(data, "approvals", "show", approval_id)
    assert "Publish draft draft_01" in shown.stdout
    approved = cli(data, "approvals", "approve", approval_id, "--json")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["value"]["published"] is True
    again = cli(data, "approvals", "approve", approval_id)
    assert again.returncode == 1 and "already approved" in again.stderr
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT published FROM drafts WHERE id = 'draft_01'").fetchone()[0] == 1


def test_denied_refund_leaves_the_data_alone(data: Path) -> None:
    source = (
        "const [o] = await store.listOrders('acc_0002', 'paid'); return await orders.refund(o.id)"
    )
    first = cli(data, "run", "-", "--json", stdin=source)
    assert first.returncode == 3
    envelope = json.loads(first.stdout)
    order_id = envelope["interruptions"][0]["args"][0]
    approval_id = envelope["interruptions"][0]["id"]
    denied = cli(data, "approvals", "deny", approval_id, "--json")
    assert denied.returncode == 1
    assert json.loads(denied.stdout)["error"]["code"] == "RUN_APPROVAL_DENIED"
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0] == "paid"


def test_expand_pages_a_stored_value_from_a_later_process(data: Path) -> None:
    first = json.loads(
        cli(data, "run", "-", "--json", stdin="Array.from({ length: 500 }, (_, i) => i)").stdout
    )
    page = cli(data, "expand", first["value_ref"], "--offset", "490", "--limit", "20", "--json")
    assert page.returncode == 0
    assert json.loads(page.stdout)["items"] == list(range(490, 500))
    text = cli(data, "expand", first["value_ref"], "--offset", "10", "--limit", "2")
    assert "items 11–12 of 500" in text.stdout and "next: run-repl expand" in text.stdout
    missing = cli(data, "expand", "res_0000000000000000")
    assert missing.returncode == 1 and "RESULT_REF_NOT_FOUND" in missing.stderr
    bad = cli(data, "expand", first["value_ref"], "--limit", "5000")
    assert bad.returncode == 2


def test_history_lists_runs(data: Path) -> None:
    cli(data, "run", "-", stdin="1 + 1")
    cli(data, "run", "-", stdin="throw new Error('x')")
    runs = json.loads(cli(data, "history", "--json").stdout)
    assert [r["status"] for r in runs] == ["error", "ok"]
    assert "throw new Error" in cli(data, "history").stdout


def test_host_command_and_own_host(data: Path, tmp_path: Path) -> None:
    host_file = tmp_path / "myhost.py"
    host_file.write_text(
        textwrap.dedent(
            '''
            def greet(name: str) -> str:
                """Say hello to someone."""
                return f"hello {name}"

            HOSTS = {"app": {"greet": greet}}
            '''
        )
    )
    described = cli(data, "host", host=str(host_file))
    assert "app.greet(name)" in described.stdout and "Say hello to someone." in described.stdout
    ran = cli(data, "run", "-", stdin="await app.greet('ada')", host=str(host_file))
    assert ran.returncode == 0 and '"hello ada"' in ran.stdout
    demo = json.loads(cli(data, "host", "--json").stdout)
    paths = {f["path"] for f in demo["functions"]}
    assert {
        "crm.listAccounts",
        "documents.publish",
        "orders.refund",
        "billing.listInvoices",
    } <= paths


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_module_xyz:HOSTS", "no module named 'no_such_module_xyz'"),
        ("json:no_such_attr", "has no attribute 'no_such_attr'"),
        ("/definitely/missing.py", "no such file"),
        ("not a spec!", "expected package.module:attribute"),
    ],
)
def test_bad_host_is_one_line_and_exit_2(data: Path, spec: str, message: str) -> None:
    out = cli(data, "run", "-", stdin="1", host=spec)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_options_before_the_command(data: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "run_repl.cli",
            "--data-dir",
            str(data),
            "--timeout-ms",
            "200",
            "run",
            "-",
        ],
        input="while (true) {}",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and "RUN_TIMEOUT" in out.stdout


def test_ide_without_a_terminal_says_what_to_do(data: Path) -> None:
    out = cli(data)
    assert out.returncode == 2 and "needs a terminal" in out.stderr


def test_help_everywhere(data: Path) -> None:
    for args in (
        ["--help"],
        ["run", "--help"],
        ["expand", "--help"],
        ["approvals", "--help"],
        ["history", "--help"],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "run_repl.cli", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0 and "usage: run-repl" in out.stdout


def test_unreadable_file_is_exit_2(data: Path) -> None:
    out = cli(data, "run", str(data / "missing.ts"))
    assert out.returncode == 2 and "cannot read" in out.stderr
