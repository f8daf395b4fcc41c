"""`run-repl` commands as a shell sees them: stdout, stderr and exit codes.

Most tests call `main(argv)` in this process (quick, and a failure shows the
traceback); the stories that need two processes, or a real pipe, run the
command in subprocesses.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from run_repl.cli import main
from run_repl.present.exit_codes import ExitCode
from run_repl.present.sanitize import UNSAFE

PUBLISH = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"


@dataclass
class Done:
    code: int
    out: str
    err: str


Cli = Callable[..., Done]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def cli(data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`run-repl ARGS --data-dir DATA` in this process, stdin from `stdin`."""

    def run(*args: str, stdin: str | bytes | None = None, host: str | None = None) -> Done:
        if stdin is not None:
            raw = stdin.encode("utf-8", "surrogatepass") if isinstance(stdin, str) else stdin
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
        argv = [*args, "--data-dir", str(data)] + (["--host", host] if host else [])
        capsys.readouterr()
        code = main(argv)
        captured = capsys.readouterr()
        return Done(code, captured.out, captured.err)

    return run


def subprocess_cli(
    data: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "run_repl.cli", *args, "--data-dir", str(data)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "RUN_REPL_CONFIG_DIR": str(data / "config"),
            "HOME": str(data),
        },
    )


def write_host(tmp_path: Path, body: str) -> str:
    path = tmp_path / "myhost.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------- run
def test_run_writes_the_value_to_stdout_and_the_rest_to_stderr(cli: Cli) -> None:
    done = cli(
        "run", "-", stdin="console.log('hi'); const [c] = await crm.listAccounts(); return c.id"
    )
    assert done.code == 0, done.err
    assert json.loads(done.out) == "acc_0001"  # stdout is the value, nothing else
    assert "hi" in done.err and "crm.listAccounts" in done.err
    assert re.search(r"ok in [\d.]+ ms", done.err)


def test_a_big_value_on_stdout_is_json_in_its_own_shape(cli: Cli) -> None:
    done = cli(
        "run",
        "-",
        "--window",
        stdin="const [c] = await crm.listAccounts(); return { count: 2, rows: await store.listOrders(c.id) }",
    )
    assert done.code == 0, done.err
    value = json.loads(done.out)
    assert set(value) == {"count", "rows"} and value["rows"][0]["account_id"] == "acc_0001"
    hint = re.search(
        r"… [\d,]+ more from item (\d+): run-repl expand (res_\w+) --offset (\d+)", done.err
    )
    assert hint is not None and int(hint[1]) == int(hint[3]) + 1 == len(value["rows"]) + 1


def test_undefined_writes_nothing_to_stdout(cli: Cli) -> None:
    done = cli("run", "-", stdin="let x = 1")
    assert done.code == 0 and done.out == "" and "undefined" in done.err


def test_run_json_envelope(cli: Cli) -> None:
    done = cli("run", "-", "--json", stdin="console.log('hi'); ({ a: 1 })")
    assert done.code == 0
    envelope = json.loads(done.out)
    assert envelope["status"] == "ok" and envelope["value"] == {"a": 1}
    assert envelope["logs"][0]["text"] == "hi"
    assert envelope["value_ref"].startswith("res_")
    assert done.err == ""


def test_run_error_exit_1_with_line_caret_and_next_action(cli: Cli, tmp_path: Path) -> None:
    snippet = tmp_path / "bad.ts"
    snippet.write_text("const a = 1\nconst b = ;\n")
    done = cli("run", str(snippet))
    assert done.code == 1 and done.out == ""
    assert "RUN_SYNTAX_ERROR at line 2, column 11" in done.err
    lines = done.err.splitlines()
    code_line = next(x for x in lines if "const b = ;" in x)
    caret = lines[lines.index(code_line) + 1]
    assert caret.index("^") == code_line.index(";")
    assert "next: " in done.err and "edit_request" not in done.err


def test_options_before_the_command(cli: Cli, data: Path) -> None:
    done = cli("--timeout-ms", "200", "run", "-", stdin="while (true) {}")
    assert done.code == 1 and "RUN_TIMEOUT" in done.err


def test_unreadable_file_is_exit_2(cli: Cli, data: Path) -> None:
    done = cli("run", str(data / "missing.ts"))
    assert done.code == 2 and "cannot read" in done.err and done.out == ""


def test_run_dev_zero_ends_at_once_with_source_too_large(cli: Cli) -> None:
    done = cli("run", "/dev/zero")
    assert done.code == 1 and "RUN_SOURCE_TOO_LARGE" in done.err


def test_endless_stdin_is_read_no_further_than_the_limit(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Endless(io.RawIOBase):
        def __init__(self) -> None:
            self.asked: list[int] = []

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            assert size >= 0, "read to the end of an endless stream"
            self.asked.append(size)
            return b"y\n" * (size // 2) + b"y" * (size % 2)

    stream = Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))  # type: ignore[arg-type]
    done = cli("run", "-", "--json")
    assert done.code == 1
    assert json.loads(done.out)["error"]["code"] == "RUN_SOURCE_TOO_LARGE"
    assert sum(stream.asked) <= 256 * 1024 + 1 + 8192  # the limit and one buffer at most


def test_a_lone_surrogate_in_the_value_prints(cli: Cli) -> None:
    text = cli("run", "-", stdin="return '\\ud800 ok'")
    assert text.code == 0 and json.loads(text.out) == "\ud800 ok"
    assert "\\ud800" in text.out
    as_json = cli("run", "-", "--json", stdin="return '\\ud800'")
    assert as_json.code == 0 and json.loads(as_json.out)["value"] == "\ud800"


# ---------------------------------------------------------------- approvals
def test_interrupted_exit_3_then_approved_in_process(cli: Cli, data: Path) -> None:
    first = cli("run", "-", stdin=PUBLISH)
    assert first.code == 3, first.err
    assert "waiting for approval: documents.publish" in first.err and first.out == ""
    pending = json.loads(cli("approvals", "list", "--json").out)
    assert len(pending) == 1 and pending[0]["path"] == "documents.publish"
    approval_id = pending[0]["id"]
    assert (
        f"saved pending approval {approval_id}: run-repl approvals approve {approval_id}"
        in first.err
    )
    listed = cli("approvals").out
    assert approval_id in listed and 'documents.publish("draft_01")' in listed
    shown = cli("approvals", "show", approval_id)
    assert "Publish draft draft_01" in shown.out and "arg 1 of 1" in shown.out
    approved = cli("approvals", "approve", approval_id, "--json")
    assert approved.code == 0, approved.err
    assert json.loads(approved.out)["value"]["published"] is True
    again = cli("approvals", "approve", approval_id)
    assert again.code == 1 and "already approved" in again.err
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT published FROM drafts WHERE id = 'draft_01'").fetchone()[0] == 1


@pytest.mark.slow
def test_approve_from_another_process(data: Path) -> None:
    """The cross-process story: interrupted in one process, approved from another."""
    first = subprocess_cli(data, "run", "-", "--json", stdin=PUBLISH)
    assert first.returncode == 3, first.stderr
    approval_id = json.loads(first.stdout)["interruptions"][0]["id"]
    approved = subprocess_cli(data, "approvals", "approve", approval_id)
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["published"] is True
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT published FROM drafts WHERE id = 'draft_01'").fetchone()[0] == 1


def test_denied_refund_leaves_the_data_alone(cli: Cli, data: Path) -> None:
    source = (
        "const [o] = await store.listOrders('acc_0002', 'paid'); return await orders.refund(o.id)"
    )
    first = cli("run", "-", "--json", stdin=source)
    assert first.code == 3
    envelope = json.loads(first.out)
    order_id = envelope["interruptions"][0]["args"][0]
    denied = cli("approvals", "deny", envelope["interruptions"][0]["id"], "--json")
    assert denied.code == 0, denied.err  # the denial worked
    assert json.loads(denied.out)["error"]["code"] == "RUN_APPROVAL_DENIED"
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()[0] == "paid"


def test_an_approval_in_a_memory_store_is_not_saved_and_says_so(cli: Cli, data: Path) -> None:
    data.mkdir()
    (data / "run-repl.sqlite3").write_bytes(
        b"this is not a database" * 100
    )  # the store falls back to memory
    done = cli("run", "-", stdin=PUBLISH)
    assert done.code == 4, done.err
    assert "was NOT saved: the store is in memory only" in done.err
    assert "saved pending approval" not in done.err
    as_json = cli("run", "-", "--json", stdin=PUBLISH)
    assert as_json.code == 4 and "NOT saved" in as_json.err
    assert json.loads(as_json.out)["status"] == "interrupted"


def test_an_approval_with_a_lone_surrogate_is_still_saved(cli: Cli, tmp_path: Path) -> None:
    host = write_host(
        tmp_path,
        """
        from run_repl.sandbox.approval import requires_approval

        @requires_approval(message=lambda to: f"Send to {to}?")
        def send(to: str) -> str:
            return "sent"

        HOSTS = {"mail": {"send": send}}
        """,
    )
    done = cli("run", "-", stdin="return await mail.send('\\ud800')", host=host)
    # The store keeps such text (arguments exactly; the message with U+FFFD), so the
    # approval is saved, and what is printed shows the character escaped.
    assert done.code == 3, done.err
    assert "saved pending approval" in done.err and "NOT saved" not in done.err
    assert "\\ud800" in done.err


def test_approval_of_another_hosts_run_names_the_host(cli: Cli, tmp_path: Path) -> None:
    host = write_host(
        tmp_path,
        """
        from run_repl.sandbox.approval import requires_approval

        @requires_approval
        def go() -> int:
            return 1

        HOSTS = {"app": {"go": go}}
        """,
    )
    first = cli("run", "-", "--json", stdin="await app.go()", host=host)
    approval_id = json.loads(first.out)["interruptions"][0]["id"]
    done = cli("approvals", "approve", approval_id)
    assert done.code == 2 and f"pass --host {host}" in done.err
    hint = cli("run", "-", stdin="await app.go()", host=host).err
    assert f"--host {host}" in hint and "--data-dir" in hint  # the command works as printed


# ---------------------------------------------------------------- expand, history, host
def test_expand_pages_a_stored_value(cli: Cli) -> None:
    first = json.loads(
        cli("run", "-", "--json", stdin="Array.from({ length: 500 }, (_, i) => i)").out
    )
    page = cli("expand", first["value_ref"], "--offset", "490", "--limit", "20", "--json")
    assert page.code == 0 and json.loads(page.out)["items"] == list(range(490, 500))
    text = cli("expand", first["value_ref"], "--offset", "10", "--limit", "2")
    assert text.out.splitlines() == [
        "$: items 11–12 of 500",
        "10",
        "11",
        f"… 488 more from item 13: run-repl expand {first['value_ref']} --offset 12",
    ]
    missing = cli("expand", "res_0000000000000000")
    assert missing.code == 1 and "RESULT_REF_NOT_FOUND" in missing.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["expand", "res_x", "--offset", "1e23"], "argument --offset: expected a whole number"),
        (
            ["expand", "res_x", "--offset", "99999999999999999999999"],
            "argument --offset: 99999999999999999999999 is out of range",
        ),
        (["expand", "res_x", "--offset", "-5"], "argument --offset: -5 is out of range"),
        (
            ["expand", "res_x", "--limit", "5000"],
            "argument --limit: 5000 is out of range: 1 to 1,000",
        ),
        (["history", "--limit", "1e23"], "argument --limit: expected a whole number"),
        (["history", "--limit", "-1"], "argument --limit: -1 is out of range"),
        (["run", "-", "--timeout-ms", "abc"], "argument --timeout-ms: expected a whole number"),
        (["approvals", "frobnicate"], "invalid choice: 'frobnicate'"),
        (["approvals", "approve"], "needs an approval id"),
        (["run"], "the following arguments are required: file"),
    ],
)
def test_usage_errors_are_one_line_exit_2(cli: Cli, args: list[str], message: str) -> None:
    done = cli(*args)
    assert done.code == 2 and message in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1 and "Traceback" not in done.err


def test_history_lists_runs_with_columns_that_line_up(cli: Cli) -> None:
    cli("run", "-", stdin="1 + 1")
    cli("run", "-", stdin="throw new Error('x')")
    cli("run", "-", stdin=PUBLISH)
    runs = json.loads(cli("history", "--json").out)
    assert [r["status"] for r in runs] == ["interrupted", "error", "ok"]
    rows = cli("history").out.splitlines()
    assert len(rows) == 3 and "throw new Error" in rows[1]
    ends = {row.index(" ms  ") for row in rows}  # the duration column ends at one place
    assert len(ends) == 1
    assert rows[1].index("RUN_EXCEPTION") > rows[1].index("error")


def test_history_says_what_became_of_a_paused_run(cli: Cli) -> None:
    assert cli("run", "-", stdin=PUBLISH).code == 3
    (pending,) = json.loads(cli("approvals", "list", "--json").out)
    assert cli("approvals", "approve", pending["id"]).code == 0
    resumed, paused = json.loads(cli("history", "--json").out)
    assert (paused["status"], paused["resumed_as"], paused["resumed_status"]) == (
        "interrupted",
        resumed["id"],
        "ok",
    )
    assert resumed["resumed_from"] == paused["id"]
    rows = cli("history").out.splitlines()
    assert f"resumes {paused['id']}" in rows[0]
    assert f"resumed as {resumed['id']}: ok" in rows[1]


def test_host_command_and_own_host(cli: Cli, tmp_path: Path) -> None:
    host = write_host(
        tmp_path,
        '''
        def greet(name: str) -> str:
            """Say hello to someone."""
            return f"hello {name}"

        HOSTS = {"app": {"greet": greet}}
        ''',
    )
    described = cli("host", host=host)
    assert "app.greet(name)" in described.out and "Say hello to someone." in described.out
    ran = cli("run", "-", stdin="await app.greet('ada')", host=host)
    assert ran.code == 0 and json.loads(ran.out) == "hello ada"
    demo = json.loads(cli("host", "--json").out)
    paths = {f["path"] for f in demo["functions"]}
    assert {
        "crm.listAccounts",
        "documents.publish",
        "orders.refund",
        "billing.listInvoices",
    } <= paths
    assert {"path", "signature", "python_signature", "doc", "async", "needs_approval"} == set(
        demo["functions"][0]
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:HOSTS", "no module named 'no_such_module_xyz'"),
        ("json:no_such_attr", "has no attribute 'no_such_attr'"),
        ("/definitely/missing.py", "no such file"),
        ("not a spec!", "expected package.module:attribute"),
    ],
)
def test_bad_host_is_one_line_and_exit_2(cli: Cli, spec: str, message: str) -> None:
    done = cli("run", "-", stdin="1", host=spec)
    assert done.code == 2 and message in done.err
    assert len(done.err.strip().splitlines()) == 1


def test_data_dir_that_cannot_work_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for where, message in (
        (a_file, "is a file, not a directory"),
        (a_file / "below", "cannot create the data directory"),
        (Path("/proc/self"), "cannot write in the data directory"),
    ):
        capsys.readouterr()
        assert main(["history", "--data-dir", str(where)]) == 2, where
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    out = subprocess_cli(a_file, "history")
    assert (
        out.returncode == 2
        and out.stderr.count("\n") == 1
        and "is a file, not a directory" in out.stderr
    )


def test_the_data_dir_is_private(cli: Cli, data: Path) -> None:
    cli("history")
    assert data.stat().st_mode & 0o777 == 0o700


# ---------------------------------------------------------------- the command word
def test_a_mistyped_command_suggests_the_right_one(cli: Cli) -> None:
    done = cli("histroy")
    assert done.code == 2 and "did you mean history?" in done.err
    unknown = cli("frob")
    assert unknown.code == 2 and "not a command or a file" in unknown.err


def test_a_file_name_opens_the_ide_even_before_it_exists(cli: Cli) -> None:
    # No terminal here, so the IDE says what to do instead: it was the IDE that was asked for.
    for word in ("new-snippet.ts", "./history"):
        done = cli(word)
        assert done.code == 2 and "needs a terminal" in done.err


def test_help_everywhere(cli: Cli) -> None:
    top = cli("--help")
    assert top.code == 0 and "usage: run-repl" in top.out
    for name in ("run", "expand", "approvals", "history", "host", "repl"):
        assert re.search(rf"^  {name} ", top.out, re.M), name
        sub = cli(name, "--help")
        assert sub.code == 0 and f"usage: run-repl {name}" in sub.out
    assert "NOT saved" in top.out and "counted from 0" in cli("expand", "--help").out


# ---------------------------------------------------------------- guest text on a terminal
def test_guest_escapes_never_reach_the_terminal(cli: Cli, tmp_path: Path) -> None:
    host = write_host(
        tmp_path,
        r"""
        from run_repl.sandbox.approval import requires_approval

        @requires_approval(message=lambda to: "\x1b]0;owned\x07Pay \u202eto " + to + "\x9b2J")
        def pay(to: str) -> str:
            return "paid"

        HOSTS = {"bank": {"pay": pay}}
        """,
    )
    source = (
        "// list \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]0;owned\x07\n"
        "console.log('\\x1b[2Jlog\\u202e');\n"
        "return await bank.pay('mal\\x1b[1Alory\\u202e\\x9b')\n"
    )
    outputs = [cli("run", "-", stdin=source, host=host)]
    approval_id = json.loads(cli("approvals", "list", "--json", host=host).out)[0]["id"]
    outputs += [
        cli("run", "-", "--json", stdin=source, host=host),
        cli("approvals", "list", host=host),
        cli("approvals", "show", approval_id, host=host),
        cli("approvals", "show", approval_id, "--json", host=host),
        cli("history", host=host),
        cli("history", "--json", host=host),
        cli("run", "-", stdin="throw new Error('\\x1b]0;t\\x07 \\u202e')\n// \x1b[31m", host=host),
        cli("run", "-", stdin="syntax error here \x1b[31m \u202e (", host=host),
    ]
    big = json.loads(
        cli("run", "-", "--json", stdin="Array.from({length: 300}, () => '\\x9b\\u202e')").out
    )
    outputs += [cli("expand", big["value_ref"]), cli("expand", big["value_ref"], "--json")]
    for done in outputs:
        for stream in (done.out, done.err):
            assert UNSAFE.search(stream) is None, stream
    text = outputs[0].err + outputs[3].out
    assert "\\u001b]0;owned\\u0007Pay \\u202eto mal\\u001b[1Alory" in text  # shown, not obeyed
    assert "\\u001b]52;c;ZWNobyBwd25lZA==" in outputs[3].out  # the snippet in `show`
    assert "\\u001b]52;c;" in outputs[5].out  # the history's title


# ---------------------------------------------------------------- pipes
def test_a_closed_pipe_ends_quietly_in_process(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            raise io.UnsupportedOperation("not a real file")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["host", "--data-dir", str(data)]) == 141
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_output_into_head_ends_quietly(data: Path) -> None:
    first = subprocess_cli(
        data,
        "run",
        "-",
        "--json",
        stdin="Array.from({length: 3000}, (_, i) => 'x'.repeat(200) + i)",
    )
    ref = json.loads(first.stdout)["value_ref"]
    for command, code in (
        (f"expand {ref} --limit 1000", 141),  # 200 KB: more than a pipe holds, so the write fails
        (f"expand {ref} --limit 1000 --json", 141),
        ("history", None),
        ("host", None),
    ):
        done = subprocess.run(
            [
                "bash",
                "-o",
                "pipefail",
                "-c",
                f'"$0" -m run_repl.cli {command} --data-dir "$1" | head -1',
                sys.executable,
                str(data),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={
                "PATH": "/usr/bin:/bin",
                "RUN_REPL_CONFIG_DIR": str(data / "config"),
                "HOME": str(data),
            },
        )
        assert done.stderr == "", (command, done.stderr)
        assert done.stdout.count("\n") == 1
        assert done.returncode == code if code is not None else done.returncode in (0, 141), command


def _one_line(done: Done) -> str:
    assert "Traceback" not in done.err
    [said] = [x for x in done.err.strip().splitlines() if x.startswith("run-repl:")]
    return said


STORED_ONLY = (("approvals", "list"), ("history",))


def test_a_file_that_is_not_a_store_is_one_line_and_left_as_it_was(cli: Cli, data: Path) -> None:
    data.mkdir()
    store = data / "run-repl.sqlite3"
    store.write_bytes(b"these are a person's notes, not a database " * 50)
    before = store.read_bytes()
    for command in STORED_ONLY:
        done = cli(*command)
        assert done.code == ExitCode.STORE, (command, done.err)
        assert done.err.strip().splitlines() == [_one_line(done)], command
        assert "is damaged (file is not a database)" in done.err
        assert "Move the file aside" in done.err and ".." not in done.err
    ran = cli("run", "-", stdin="1 + 1")
    assert ran.code == ExitCode.OK and ran.out.strip() == "2"
    warning = _one_line(ran)
    assert "is damaged" in warning and "in-memory store" in warning and ".." not in warning
    assert store.read_bytes() == before


def _damage_tables(path: Path, *tables: str) -> None:
    """Overwrite each table's root page: the file opens, reading the table fails."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.execute("PRAGMA page_size").fetchone()[0]
    roots = [
        db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        for t in tables
    ]
    db.close()
    with path.open("r+b") as f:
        for root in roots:
            f.seek((root - 1) * size)
            f.write(b"\xff" * size)


def test_a_store_damaged_inside_is_one_line_with_what_to_do(cli: Cli, data: Path) -> None:
    assert cli("run", "-", stdin=PUBLISH).code == ExitCode.INTERRUPTED  # a run, an approval
    store = data / "run-repl.sqlite3"
    _damage_tables(store, "runs", "approvals")
    before = store.read_bytes()
    for command in STORED_ONLY:
        done = cli(*command)
        assert done.code == ExitCode.STORE, (command, done.err)
        said = _one_line(done)
        assert done.err.strip().splitlines() == [said], command
        assert f"The store at {store} is damaged" in said and "Move the file aside" in said
    assert store.read_bytes() == before  # read, never "repaired" or replaced
    # A run still runs: its value is kept where the file can hold it, the history says no.
    ran = cli("run", "-", stdin="1 + 1")
    assert ran.code == ExitCode.OK and ran.out.strip() == "2"
    assert "could not record the run" in _one_line(ran) and "is damaged" in ran.err


def test_a_locked_store_is_one_line_saying_to_try_again(
    cli: Cli, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from run_repl.store.backends import sqlite as sqlite_backend

    assert cli("run", "-", stdin="1").code == ExitCode.OK
    store = data / "run-repl.sqlite3"
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("UPDATE store_counters SET value = value WHERE name = 'runs_bytes'")
        for command in STORED_ONLY:
            done = cli(*command)
            assert done.code == ExitCode.STORE, (command, done.err)
            said = _one_line(done)
            assert done.err.strip().splitlines() == [said], command
            assert "is busy" in said and "Try again in a moment" in said
            assert "Move the file aside" not in said  # busy is not damaged
        ran = cli("run", "-", stdin="1 + 1")
        assert ran.code == ExitCode.OK and ran.out.strip() == "2"
        assert "is busy" in _one_line(ran) and "Move the file aside" not in ran.err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert cli("history").code == ExitCode.OK  # nothing was changed while it waited
