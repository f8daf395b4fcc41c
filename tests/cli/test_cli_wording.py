"""What people read after an error: next steps in words, never the engine's action type,
and a suggestion said once."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from run_repl.cli import main
from run_repl.present import error_lines, plain_lines
from run_repl.sandbox.result import NextAction, RunErrorInfo, RunResult
from run_repl.sandbox.tool_output import to_tool_output


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp: Path, src: str):
    monkeypatch.setattr(sys, "stdin", io.StringIO(src))
    capsys.readouterr()
    code = main(["run", "-", "--data-dir", str(tmp / "data")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "source", ["await crm.listAcounts(3)", "null.x", "const x = ;", "throw new Error('no')"]
)
def test_the_cli_words_next_steps_for_people(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str
) -> None:
    code, err = run(capsys, monkeypatch, tmp_path, source)
    assert code == 1
    for kind in ("edit_request", "run_again", "retry", "run_cli_command", "approve"):
        assert kind not in err, err
    assert "next: " in err


def test_a_suggestion_is_said_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, err = run(capsys, monkeypatch, tmp_path, "await crm.listAcounts(3)")
    assert err.lower().count("did you mean") == 1, err
    assert "crm.listAccounts" in err


def test_the_model_reads_a_suggestion_once() -> None:
    error = RunErrorInfo(
        code="RUN_UNKNOWN_MEMBER",
        message="The host has no crm.listAcounts. Did you mean crm.listAccounts?",
        did_you_mean=["crm.listAccounts"],
        next_actions=[NextAction(type="edit_request", why="Use crm.listAccounts.")],
    )
    text = str(to_tool_output(RunResult(status="error", error=error)))
    assert text.lower().count("did you mean") == 1, text
    # A message that does not say it already still gets it.
    bare = error.model_copy(update={"message": "The host has no crm.listAcounts."})
    lines = plain_lines(error_lines(bare))
    assert lines.lower().count("did you mean") == 1 and "crm.listAccounts" in lines
