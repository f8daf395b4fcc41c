"""The test PostgreSQL server dies with the suite that started it, whatever ends it.

A suite stopped at a time limit is killed (SIGKILL): nothing of it runs again, so
only a process of the server's own (its watchdog) can stop the server then.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from pg_server import _alive, find_bindir

TESTS = Path(__file__).resolve().parent.parent
STORE_TESTS = TESTS / "store"
GONE_WITHIN_S = 60  # a bound on a wait, not a speed: the watchdog looks twice a second

pytestmark = pytest.mark.slow  # each test makes a server of its own (initdb, start)


def _need_server_programs() -> None:
    if find_bindir() is None:
        if os.environ.get("RUN_REPL_CI"):
            pytest.fail("no PostgreSQL server programs in CI: .ci/run installs them")
        pytest.skip("no PostgreSQL server programs here: install Debian's postgresql")


def _postmaster(directory: Path) -> int:
    return int((directory / "data" / "postmaster.pid").read_text().split()[0])


def _wait_gone(pid: int, directory: Path) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while (_alive(pid) or directory.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), f"the server (pid {pid}) outlived the process that started it"
    assert not directory.exists(), "the server's directory was left behind"


# What tests/conftest.py does in the process that runs pytest, then a test that
# never ends: the state a suite is in when a time limit kills it.
SUITE = textwrap.dedent(
    """
    import json, os, sys, time, types
    sys.path.insert(0, {tests!r})
    import conftest
    os.environ.pop("RUN_REPL_TEST_PG_URL", None)
    config = types.SimpleNamespace(args=[{store!r}])
    conftest.pytest_configure(config)
    server = config._run_repl_pg_server
    print(json.dumps({{"dir": str(server.directory), "url": server.url}}), flush=True)
    time.sleep(3600)
    """
)


def test_a_suite_killed_by_sigkill_leaves_no_server_running() -> None:
    _need_server_programs()
    env = {k: v for k, v in os.environ.items() if k != "RUN_REPL_TEST_PG_URL"}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent), env.get("PYTHONPATH", "")])
    suite = subprocess.Popen(
        [sys.executable, "-c", SUITE.format(tests=str(TESTS), store=str(STORE_TESTS))],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert suite.stdout is not None
        started = json.loads(suite.stdout.readline())
        directory = Path(started["dir"])
        pid = _postmaster(directory)
        assert _alive(pid)
        import psycopg

        with psycopg.connect(started["url"]) as conn:  # the server serves while its suite runs
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        suite.send_signal(signal.SIGKILL)
        suite.wait()
    _wait_gone(pid, directory)


def test_the_command_lines_server_dies_with_the_process_it_was_told_to() -> None:
    _need_server_programs()
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    directory = Path(tempfile.mkdtemp(prefix="run-repl-pg-watch-"))
    try:
        started = subprocess.run(
            [
                *(sys.executable, str(STORE_TESTS / "pg_server.py"), "start", str(directory)),
                *("--fast", "--die-with", str(owner.pid)),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith("export RUN_REPL_TEST_PG_URL=")
        pid = _postmaster(directory)
        time.sleep(1.5)  # three of the watchdog's looks: the command's own exit stops nothing
        assert _alive(pid), "the server stopped when the start command ended"
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    _wait_gone(pid, directory)
