from __future__ import annotations

import gc
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# A test process allocates far more than any one front end (hundreds of IDEs, thousands
# of items): with the default thresholds (700, 10, 10) its collector ran 10,000-13,500
# times for 2.7-6.6 s of CPU in each xdist worker (by the machine's state); ten times
# fewer young collections leave about half. Nothing here depends on when garbage goes (tests that do, collect).
gc.set_threshold(7000, 10, 10)


# Under PYTHONDONTWRITEBYTECODE (set in many containers) each xdist worker compiled
# run-repl and rewrote the asserts of every test module again while collecting, on every
# run: 5 s of the 9.5 s of CPU a worker spent collecting. So collection writes the
# bytecode of what it imports (run-repl and the tests: `__pycache__`, ignored by git)
# and every later run reads it, as do the processes the tests start. Once collected,
# the setting is back: a test's own files (hosts in temporary directories, rewritten
# in place) are compiled afresh each time, as before.
_NO_BYTECODE = sys.dont_write_bytecode
sys.dont_write_bytecode = False


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = _NO_BYTECODE


TESTS = Path(__file__).parent
STORE_TESTS = TESTS / "store"
DEMO_HOST_TESTS = TESTS / "host" / "test_demo_host.py"


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent with -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. A good part of the suite waits on other
    processes (MCP servers, sandbox workers, PostgreSQL, approvers, heartbeats that must
    stop), so one worker per core left the cores idle: on 2 cores, 115 s with 2 workers
    and 98 s with 3, when the suite was smaller; now that waits are a larger part of it
    (takeover, serve and killed-server tests: minutes of waiting for seconds of CPU),
    4011 tests took 271 s with 3 workers and 250 s with 4."""
    return max(2, (os.cpu_count() or 1) * 2)


@pytest.fixture(scope="session")
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isolated")


@pytest.fixture(autouse=True)
def _isolated_data_dir(_isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No test touches the user's real data or config directories. mkdtemp, not
    # tmp_path_factory.mktemp: that one lists every directory made so far to number
    # the next, which made this fixture quadratic (seconds per worker over the suite).
    for name in ("DATA", "CONFIG"):
        path = tempfile.mkdtemp(prefix=f"{name.lower()}-", dir=_isolated_dirs)
        monkeypatch.setenv(f"RUN_REPL_{name}_DIR", path)


@pytest.fixture(scope="session")
def _demo_db_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo database, built once per test process by the real builder."""
    from run_repl.host import demo

    path = tmp_path_factory.mktemp("demo-template") / demo.DEMO_DB
    demo._build(path)
    return path


@pytest.fixture(autouse=True)
def _demo_db_from_template(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every in-process IDE, line-REPL and CLI test opens the demo host, whose first open
    # seeds 6,000 rows (~80 ms of CPU, a few hundred times a run). The build is deterministic
    # (a fixed seed and date: the same bytes each time), so a copy of one built file is the
    # same file; the copy still goes through open_demo_db's install (temporary file, link
    # into place). The demo host's own tests keep building it for real.
    if request.node.path == DEMO_HOST_TESTS:
        return
    from run_repl.host import demo

    template: Path = request.getfixturevalue("_demo_db_template")
    monkeypatch.setattr(demo, "_build", lambda path: shutil.copyfile(template, path))


def _runs_store_tests(config: pytest.Config) -> bool:
    for arg in config.args or ["."]:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == STORE_TESTS or STORE_TESTS in path.parents or path in STORE_TESTS.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """One throwaway PostgreSQL server for the whole run (made here, in the process that
    starts the xdist workers, which inherit its URL), unless one is given (.ci/run)."""
    if hasattr(config, "workerinput") or os.environ.get("RUN_REPL_TEST_PG_URL"):
        return
    if not _runs_store_tests(config):
        return
    sys.path.insert(0, str(STORE_TESTS))
    from pg_server import PgServer, find_bindir

    if find_bindir() is None or importlib.util.find_spec("psycopg") is None:
        return  # the PostgreSQL cases skip (fail in CI, which always has a server)
    server = PgServer(Path(tempfile.mkdtemp(prefix="run-repl-pg-")), fast=True)
    try:
        # Its watchdog stops it when this process ends, however: a run stopped at a
        # time limit (SIGKILL) leaves no server behind. die_with as well as the pipe:
        # a child forked without exec (a sandbox template) holds the pipe a moment longer.
        os.environ["RUN_REPL_TEST_PG_URL"] = server.start(die_with=os.getpid())
    except Exception as exc:
        server.stop()
        raise pytest.UsageError(f"the PostgreSQL test server did not start: {exc}") from None
    config._run_repl_pg_server = server  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    server: Any = getattr(config, "_run_repl_pg_server", None)
    if server is not None:
        server.stop()
        os.environ.pop("RUN_REPL_TEST_PG_URL", None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `slow` tests first (the order is otherwise kept): most of them wait on other
    processes for seconds, which overlaps the CPU-bound IDE tests when they start early.
    In collection order they sat behind thousands of quick tests and made the suite's
    tail, with cores idle (4011 tests: 250-255 s, then 224 s)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
