"""`run-repl reset-demo`: the demo data as first made, so the publish example runs again."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from run_repl.cli import main

PUBLISH = "const d = await documents.listDrafts(); return await documents.publish(d[0].id)"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def published(data: Path) -> int:
    db = sqlite3.connect(data / "demo.sqlite3")
    try:
        return db.execute("SELECT count(*) FROM drafts WHERE published").fetchone()[0]
    finally:
        db.close()


def test_reset_demo_undoes_an_approved_publish(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    monkeypatch.setattr(sys, "stdin", io.StringIO(PUBLISH))
    code, out, err = cli(capsys, "run", "-", "--json", "--data-dir", str(data))
    assert code == 3, err
    approval = json.loads(out)["interruptions"][0]["id"]
    as_made = published(data)
    assert cli(capsys, "approvals", "approve", approval, "--data-dir", str(data))[0] == 0
    assert published(data) == as_made + 1
    code, out, err = cli(capsys, "reset-demo", "--data-dir", str(data))
    assert code == 0, err
    assert "demo data" in out and str(data / "demo.sqlite3") in out
    assert published(data) == as_made
    history = cli(capsys, "history", "--json", "--data-dir", str(data))
    assert len(json.loads(history[1])) >= 2  # the history and the store are the person's: kept


def test_reset_demo_with_another_host_says_it_only_resets_the_demo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    host = tmp_path / "myhost.py"
    host.write_text("def ping() -> str:\n    return 'pong'\n\nHOSTS = {'app': {'ping': ping}}\n")
    code, out, err = cli(
        capsys, "reset-demo", "--host", f"{host}:HOSTS", "--data-dir", str(tmp_path / "d")
    )
    assert code == 2 and out == ""
    assert "demo" in err and "--host" in err
    assert not (tmp_path / "d" / "demo.sqlite3").exists()


def test_the_command_list_names_reset_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--help")
    assert code == 0 and "reset-demo" in out
