"""Fixtures of the MCP tests (the harness itself is mcp_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    path = tmp_path / "gate"
    path.mkdir()
    return path
