"""Fixtures of the MCP tests (the harness itself is mcp_harness.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from run_repl.host.demo import DEMO_DB


def seeded(data: Path, demo_db: Path) -> Path:
    """`data` holding the demo database already, as after a server's first start.

    Every server and `run-repl approvals` process of these tests would otherwise
    seed its own (the same bytes: see the root conftest's template); one that
    starts on an empty directory, as a first start does, says so in its test."""
    data.mkdir(parents=True)
    shutil.copyfile(demo_db, data / DEMO_DB)
    return data


@pytest.fixture
def data(tmp_path: Path, _demo_db_template: Path) -> Path:
    return seeded(tmp_path / "data", _demo_db_template)


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    path = tmp_path / "gate"
    path.mkdir()
    return path
