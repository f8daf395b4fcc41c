"""Fixtures of the IDE's tests; the helpers they use are in tui_helpers.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import SIZE, make_app

from run_repl.present import formats
from run_repl.tui import approvals_inbox
from run_repl.tui.app import RunReplApp
from run_repl.tui.components import approval_prompt


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RUN_REPL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RUN_REPL_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


@pytest.fixture
def stable(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory for snapshots: durations, sizes and approvals' ages are the only
    things that differ from one take to the next, so each has one stand-in."""
    monkeypatch.setattr(formats, "format_ms", lambda ms: "#.# ms")
    monkeypatch.setattr(formats, "format_bytes", lambda n: "#.# MiB")
    monkeypatch.setattr(approvals_inbox, "age_text", lambda created, now=None: "# s")
    return data_dir


@pytest.fixture
def no_arm_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Approvals take keys at once (the delay has tests of its own)."""
    monkeypatch.setattr(approval_prompt, "ARM_SECONDS", 0.0)


@pytest.fixture
async def app_and_pilot(data_dir: Path) -> AsyncIterator[tuple[RunReplApp, Any]]:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot
