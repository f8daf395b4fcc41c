"""`run-repl approvals deny ID`: the exit status says whether the denial worked."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from run_repl.cli import main

REFUND = "const [o] = await store.listOrders('acc_0002', 'paid'); return await orders.refund(o.id)"


def cli(capsys: pytest.CaptureFixture[str], data: Path, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*args, "--data-dir", str(data)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def paused(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: Path,
    source: str,
) -> tuple[str, object]:
    """A run paused on its approval: (the approval id, the call's first argument)."""
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(source))
    code, out, err = cli(capsys, data, "run", "-", "--json")
    assert code == 3, err
    interruption = json.loads(out)["interruptions"][0]
    return interruption["id"], interruption["args"][0]


def test_a_denial_that_worked_exits_0_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    approval, order = paused(capsys, monkeypatch, data, REFUND)
    code, out, err = cli(capsys, data, "approvals", "deny", approval)
    assert code == 0, err
    assert out == ""
    assert f"denied {approval}" in err and "RUN_APPROVAL_DENIED" in err
    db = sqlite3.connect(data / "demo.sqlite3")
    assert db.execute("SELECT status FROM orders WHERE id = ?", (order,)).fetchone()[0] == "paid"
    again = cli(capsys, data, "approvals", "deny", approval)
    assert again[0] == 1 and "already denied" in again[2]


def test_a_denial_whose_run_then_fails_otherwise_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    source = (
        "const [o] = await store.listOrders('acc_0002', 'paid');"
        "try { await orders.refund(o.id) } catch (e) { throw new Error('no refund, no report') }"
    )
    approval, _ = paused(capsys, monkeypatch, data, source)
    code, _, err = cli(capsys, data, "approvals", "deny", approval)
    assert code == 1 and "RUN_EXCEPTION" in err and "no refund, no report" in err
