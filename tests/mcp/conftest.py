"""Fixtures of the MCP tests (the harness itself is mcp_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_data import seeded


@pytest.fixture
def data(tmp_path: Path, _demo_db_template: Path) -> Path:
    return seeded(tmp_path / "data", _demo_db_template)


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    path = tmp_path / "gate"
    path.mkdir()
    return path
