"""`run-repl run` into a file or a pipe: the value goes out whole, or the command says
it did not and exits non-zero. On a terminal a person reads the first window."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from run_repl.cli import main
from run_repl.present import ExitCode
from run_repl.sandbox.errors import ResultRefNotFound
from run_repl.sandbox.runner import Runner

BIG = "return Array.from({ length: 5000 }, (_, i) => ({ i, name: 'n' + i }))"


@dataclass
class Done:
    code: int
    out: str
    err: str


Cli = Callable[..., Done]


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    def run(*args: str, stdin: str, tty: bool = False) -> Done:
        monkeypatch.setattr(
            sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        )
        if tty:
            monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
        capsys.readouterr()
        code = main([*args, "--data-dir", str(tmp_path / "data")])
        captured = capsys.readouterr()
        return Done(code, captured.out, captured.err)

    return run


def test_a_big_value_into_a_file_is_written_whole(cli: Cli) -> None:
    done = cli("run", "-", stdin=BIG)
    assert done.code == ExitCode.OK, done.err
    value = json.loads(done.out)
    assert value == [{"i": i, "name": f"n{i}"} for i in range(5000)]
    assert "the rest is stored" not in done.err and "run-repl expand" not in done.err


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (
            "return { count: 3000, rows: Array.from({ length: 3000 }, (_, i) => i) }",
            {"count": 3000, "rows": list(range(3000))},
        ),
        (
            "return Object.fromEntries(Array.from({ length: 3000 }, (_, i) => ['k' + i, i]))",
            {f"k{i}": i for i in range(3000)},
        ),
        (
            "return Array.from({ length: 3000 }, (_, i) => 'line ' + i).join('\\n')",
            "\n".join(f"line {i}" for i in range(3000)),
        ),
    ],
    ids=["field", "entries", "lines"],
)
def test_every_shape_of_window_goes_out_whole(cli: Cli, snippet: str, expected: object) -> None:
    done = cli("run", "-", stdin=snippet)
    assert done.code == ExitCode.OK, done.err
    assert json.loads(done.out) == expected


def test_guest_text_streamed_out_is_still_sanitized(cli: Cli) -> None:
    done = cli("run", "-", stdin="return Array.from({ length: 3000 }, (_, i) => 'x\\u202e' + i)")
    assert done.code == ExitCode.OK, done.err
    assert "\u202e" not in done.out and "\\u202e" in done.out
    assert json.loads(done.out)[2999] == "x\u202e2999"


def test_window_flag_writes_the_first_window_and_says_where_the_rest_is(cli: Cli) -> None:
    done = cli("run", "-", "--window", stdin=BIG)
    assert done.code == ExitCode.OK, done.err
    shown = json.loads(done.out)
    assert 0 < len(shown) < 5000 and shown[0] == {"i": 0, "name": "n0"}
    assert "run-repl expand res_" in done.err and f"--offset {len(shown)}" in done.err


def test_on_a_terminal_a_person_reads_the_first_window(cli: Cli) -> None:
    done = cli("run", "-", stdin=BIG, tty=True)
    assert done.code == ExitCode.OK, done.err
    assert 0 < len(json.loads(done.out)) < 5000
    assert "run-repl expand res_" in done.err


def test_a_value_the_store_lost_midway_is_said_cut_and_exits_non_zero(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Runner.expand

    def expand(self: Runner, ref: str, offset: int = 0, limit: int = 100):  # type: ignore[no-untyped-def]
        if offset >= 2000:
            raise ResultRefNotFound(ref)
        return real(self, ref, offset, limit)

    monkeypatch.setattr(Runner, "expand", expand)
    done = cli("run", "-", stdin=BIG)
    assert done.code == ExitCode.VALUE_CUT
    assert "cut" in done.err and "2,000 of 5,000" in done.err
    with pytest.raises(json.JSONDecodeError):  # never a valid document that looks whole
        json.loads(done.out)


def test_the_readmes_own_command_through_a_real_pipe(tmp_path: Path) -> None:
    """`run-repl run big.ts > out.json` with 100,000 items, in a process of its own."""
    snippet = tmp_path / "big.ts"
    snippet.write_text(
        "return Array.from({ length: 100000 }, (_, i) => ({ i, v: i * 2 }))", encoding="utf-8"
    )
    out = tmp_path / "out.json"
    with out.open("wb") as sink:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "run_repl.cli",
                "run",
                str(snippet),
                "--data-dir",
                str(tmp_path / "d"),
            ],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                "RUN_REPL_CONFIG_DIR": str(tmp_path / "c"),
                "PYTHONPATH": str(Path(__file__).parents[2]),
            },
        )
    assert done.returncode == 0, done.stderr
    value = json.loads(out.read_text(encoding="utf-8"))
    assert len(value) == 100_000 and value[-1] == {"i": 99_999, "v": 199_998}


# The line REPL reading a piped snippet ends as `run` ends: the same promise for its value.
def test_the_line_repl_reading_a_pipe_writes_a_big_value_whole(cli: Cli) -> None:
    done = cli("repl", stdin=BIG)
    assert done.code == ExitCode.OK, done.err
    assert json.loads(done.out) == [{"i": i, "name": f"n{i}"} for i in range(5000)]
    assert "the rest is stored" not in done.err and "run-repl expand" not in done.err


def test_the_line_repl_reading_a_pipe_onto_a_terminal_shows_the_first_window(cli: Cli) -> None:
    done = cli("repl", stdin=BIG, tty=True)
    assert done.code == ExitCode.OK, done.err
    assert 0 < len(json.loads(done.out)) < 5000
    assert "run-repl expand res_" in done.err


def test_the_line_repl_says_a_value_it_could_not_write_whole_is_cut(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Runner.expand

    def expand(self: Runner, ref: str, offset: int = 0, limit: int = 100):  # type: ignore[no-untyped-def]
        if offset >= 2000:
            raise ResultRefNotFound(ref)
        return real(self, ref, offset, limit)

    monkeypatch.setattr(Runner, "expand", expand)
    done = cli("repl", stdin=BIG)
    assert done.code == ExitCode.VALUE_CUT
    assert "2,000 of 5,000" in done.err
    with pytest.raises(json.JSONDecodeError):
        json.loads(done.out)
