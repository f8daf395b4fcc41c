"""Fixtures of the store tests: both stores, a runner over one, the counting bank."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from run_repl.sandbox.runner import Runner
from run_repl.store import MemoryStore, SqliteStore, Store
from run_repl.store.approval_flow import save_interrupted, store_runner

SECRET = "s" * 40
HOST = "bank_host:HOSTS"


@pytest.fixture
def bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("BANK_DB", str(tmp_path / "bank.sqlite3"))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import bank_host

    return bank_host


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store = (
        SqliteStore(tmp_path / "run-repl.sqlite3") if request.param == "sqlite" else MemoryStore()
    )
    yield made
    made.close()


@pytest.fixture
def runner(store: Store) -> Runner:
    return store_runner(store, secret=SECRET)


@pytest.fixture
def pause(runner: Runner, store: Store, bank: ModuleType) -> Any:
    """`await pause(source)`: run it until it asks for approval; its approvals, saved."""

    async def run_until_interrupted(source: str) -> list[Any]:
        first = await runner.run(source, bank.HOSTS)
        assert first.status == "interrupted", first.error
        return save_interrupted(store, first, source=source, host=HOST)

    return run_until_interrupted
