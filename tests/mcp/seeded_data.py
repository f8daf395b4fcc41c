"""A data directory holding the demo database already (a module of its own, not the
conftest: `from conftest import ...` finds whichever conftest pytest imported last)."""

from __future__ import annotations

import shutil
from pathlib import Path

from run_repl.host.demo import DEMO_DB


def seeded(data: Path, demo_db: Path) -> Path:
    """`data` holding the demo database already, as after a server's first start.

    Every server and `run-repl approvals` process of these tests would otherwise
    seed its own (the same bytes: see the root conftest's template); one that
    starts on an empty directory, as a first start does, says so in its test."""
    data.mkdir(parents=True)
    shutil.copyfile(demo_db, data / DEMO_DB)
    return data
