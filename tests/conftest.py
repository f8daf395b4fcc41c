from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

STORE_TESTS = Path(__file__).parent / "store"


@pytest.fixture(autouse=True)
def _isolated_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No test touches the user's real data or config directories.
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


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
        os.environ["RUN_REPL_TEST_PG_URL"] = server.start()
    except Exception as exc:
        server.stop()
        raise pytest.UsageError(f"the PostgreSQL test server did not start: {exc}") from None
    config._run_repl_pg_server = server  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    server: Any = getattr(config, "_run_repl_pg_server", None)
    if server is not None:
        server.stop()
        os.environ.pop("RUN_REPL_TEST_PG_URL", None)
