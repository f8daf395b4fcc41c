"""Fixtures of the interop suite (the harness itself is interop_harness.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from interop_harness import Principal, node_modules_problem

from run_repl.host.demo import DEMO_DB


@pytest.fixture(scope="session")
def node_clients() -> None:
    """The TypeScript clients are installed (`npm ci` from the lockfile): else the test
    fails in CI (.ci/run installs them before the tests) and skips elsewhere, saying what
    to run."""
    problem = node_modules_problem()
    if problem is None:
        return
    why = f"the TypeScript MCP clients cannot run: {problem}"
    if os.environ.get("RUN_REPL_CI"):
        pytest.fail(why, pytrace=False)
    # A machine with Python and pip only (the README's test command) has no Node: as
    # for PostgreSQL, these skip there, saying what to install, and fail in CI.
    pytest.skip(why)


def seeded(data: Path, demo_db: Path) -> Path:
    """A data directory holding the demo database already, as after a server's first start."""
    data.mkdir(parents=True)
    shutil.copyfile(demo_db, data / DEMO_DB)
    return data


@pytest.fixture
def data(tmp_path: Path, _demo_db_template: Path) -> Path:
    return seeded(tmp_path / "data", _demo_db_template)


# The principals, in one place: how a server learns its principal and how a client
# proves who it is are Principal.server_env() and Principal.headers().
@pytest.fixture
def alice() -> Principal:
    return Principal("alice", "alice-token-7c1f0d9e3b5a4f2e8d6c")


@pytest.fixture
def bob() -> Principal:
    return Principal("bob", "bob-token-2a8e4c6f0b1d3e5f7a9c")
