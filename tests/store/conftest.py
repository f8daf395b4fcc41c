"""Fixtures of the store tests: every store (SQLite, memory, PostgreSQL), a runner over
one, the counting bank.

`store` runs a test on all three; `durable_spec` on the two that outlive a process
(what child processes open by spec). PostgreSQL is the server tests/conftest.py
starts for the session (or `.ci/run`'s), one fresh schema per test. Without a
server the PostgreSQL cases skip, except in CI, where they fail."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from store_kinds import ALL, CI_ENV, DURABLE, drop, new_schema, open_spec, pg_url

from run_repl.sandbox.runner import Runner
from run_repl.store import Store
from run_repl.store.approvals.flow import save_interrupted, store_runner

SECRET = "s" * 40
HOST = "bank_host:HOSTS"
HERE = Path(__file__).parent


def need_postgres() -> str:
    """The test server's URL; skip (fail in CI) without one."""
    url = pg_url()
    if url:
        return url
    if os.environ.get(CI_ENV):
        pytest.fail("no PostgreSQL test server in CI: .ci/run starts one (RUN_REPL_TEST_PG_URL)")
    pytest.skip("no PostgreSQL server programs here: install Debian's postgresql to run these")


def make_spec(kind: str, tmp_path: Path) -> str:
    if kind == "postgres":
        need_postgres()
        return f"postgres:{new_schema()}"
    if kind == "sqlite":
        return f"sqlite:{tmp_path / 'run-repl.sqlite3'}"
    return "memory:"


@pytest.fixture
def bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("BANK_DB", str(tmp_path / "bank.sqlite3"))
    monkeypatch.syspath_prepend(str(HERE))
    import bank_host

    bank_host.create()
    return bank_host


@pytest.fixture(params=ALL)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    made = make_spec(request.param, tmp_path)
    yield made
    drop(made)


@pytest.fixture(params=DURABLE)
def durable_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store that child processes (other machines, as far as the store can tell) open too."""
    made = make_spec(request.param, tmp_path)
    yield made
    drop(made)


@pytest.fixture
def postgres_spec(tmp_path: Path) -> Iterator[str]:
    made = make_spec("postgres", tmp_path)
    yield made
    drop(made)


@pytest.fixture
def store(spec: str) -> Iterator[Store]:
    made = open_spec(spec)
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
