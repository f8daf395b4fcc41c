"""Deciding where the host lives: `run-repl approvals approve` with and without a
`run-repl serve` on the same store.

    python bench/decide_elsewhere.py [--rounds N]

Real processes on one SQLite data directory (tests/cli/test_serve.py's `Team`, with
its host that records each approved call): N decisions with no executor (the CLI
resumes the run itself, as before executors), then N with one `run-repl serve` live
(the CLI records the decision and returns; the server resumes). Prints the medians of
the CLI's wall time and of the time from the command's start to the approval's end,
and checks each approved call ran once (exit 1 if not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Not bench/ itself (its mcp.py would stand for the mcp package in the processes started).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "cli")]

from test_serve import Team  # noqa: E402  (the tests' processes and host)


def figure(name: str, seconds: list[float]) -> None:
    ms = [s * 1000 for s in seconds]
    print(
        f"{name:<52} median {statistics.median(ms):6.0f} ms  (min {min(ms):.0f}, max {max(ms):.0f})"
    )


def main(rounds: int) -> int:
    team = Team(Path(tempfile.mkdtemp(prefix="decide-elsewhere-")))
    here = []
    for _ in range(rounds):
        approval_id = team.pause()
        start = time.monotonic()
        done = team.cli("approvals", "approve", approval_id)
        here.append(time.monotonic() - start)
        assert done.returncode == 0 and "resumes on" not in done.stderr, done.stderr
    team.serve()
    recorded, ended = [], []
    for _ in range(rounds):
        approval_id = team.pause()
        start = time.monotonic()
        done = team.cli("approvals", "approve", approval_id)
        recorded.append(time.monotonic() - start)
        assert done.returncode == 0 and "resumes on" in done.stderr, done.stderr
        team.final(approval_id)
        ended.append(time.monotonic() - start)
    for proc in team.serves:
        team.stop(proc)
    figure("approve, no executor (the CLI resumes the run)", here)
    figure("approve, a serve live (recorded, the CLI returns)", recorded)
    figure("  command start -> the approval ended (serve resumed)", ended)
    ran = len(team.launches())
    print(f"approved calls run: {ran} of {2 * rounds}")
    return 0 if ran == 2 * rounds else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    raise SystemExit(main(parser.parse_args().rounds))
