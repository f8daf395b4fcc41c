"""The processes that can resume a host's runs, as the store keeps them.

A process that holds a host (an MCP server, `run-repl serve`, an IDE) registers as
an *executor*: its host's name, the digest of its host functions (what a run's
continuation is bound to: `man` in the token), a label a person reads ("mcp server
alice@box pid 123") and its kind. It beats every `BEAT_S` and leaves when it ends;
one not seen for `LIVE_S` is taken as gone (killed, its machine off the network).
Every time here is the store's clock (a team store's server), never a machine's:
two machines whose clocks disagree still agree on who is live.

Deciding reads the registry to say where a run will resume (`approvals/dispatch.py`);
an executor's loop (`approvals/resumer.py`) resumes the decided runs it may.

    store.register_executor(eid, host="demo", functions=digest, label=..., kind="serve")
    store.beat_executor(eid)        # False: its row was gone (register again)
    store.list_executors("demo")    # with `live` read by the store's clock
    store.leave_executor(eid)
"""

from __future__ import annotations

import getpass
import os
import secrets
import socket
import threading
import time
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel

BEAT_S = 2.0  # how often a live executor says so
LIVE_S = 6.0  # an executor not seen for this long is taken as gone (three beats missed)
KEPT_S = 24 * 3600.0  # a gone executor's row is forgotten after this (a new one prunes it)

ExecutorKind = Literal["mcp", "serve", "ide", "cli"]
TAKES_ANY = frozenset({"mcp", "serve"})
"""Kinds that resume any run of their host; the others (an IDE) resume only their own."""


class Executor(BaseModel):
    """A process that can resume runs of `host` made with host functions `functions`.

    `live` and `age_s` (since its last beat) are read with the row, by the store's clock."""

    id: str
    host: str
    functions: str
    label: str
    kind: str
    started_at: float
    seen_at: float
    live: bool = False
    age_s: float = 0.0


@runtime_checkable
class ExecutorRegistry(Protocol):
    """The `executors` table: who can resume which host's runs, and who is live."""

    def register_executor(
        self, executor_id: str, *, host: str, functions: str, label: str, kind: str
    ) -> Executor:
        """Add (or renew) this executor, seen now; gone ones older than KEPT_S are dropped."""

    def beat_executor(self, executor_id: str, *, functions: str | None = None) -> bool:
        """Seen now (and, given, its host functions' new digest); False when its row is
        gone, so the caller registers again."""

    def leave_executor(self, executor_id: str) -> None:
        """It ends: nothing is resumed there any more."""

    def list_executors(self, host: str | None = None) -> list[Executor]:
        """Every registered executor (of `host`), live first, then by last beat."""

    def get_executor(self, executor_id: str) -> Executor | None: ...


def new_executor_id() -> str:
    return "exe_" + secrets.token_hex(8)


def executor_name(kind: str) -> str:
    """Who resumes, without where: `run-repl serve alice` (a claim adds the machine and pid)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}" if hasattr(os, "getuid") else "someone"
    what = {"mcp": "mcp server", "serve": "run-repl serve", "ide": "the IDE", "cli": "run-repl"}
    return f"{what.get(kind, kind)} {user}"


def executor_label(kind: str) -> str:
    """How a person reads where a run resumes: `run-repl serve alice@box pid 123` (what
    its claims' `claimed_by` says too)."""
    return f"{executor_name(kind)}@{socket.gethostname()} pid {os.getpid()}"


def ordered(executors: list[Executor]) -> list[Executor]:
    """Live first, then the most recently seen."""
    return sorted(executors, key=lambda e: (not e.live, e.age_s, e.id))


class MemoryExecutors:
    """The registry of a store in memory (one process: its own monotonic clock)."""

    def __init__(self) -> None:
        self._executors: dict[str, tuple[Executor, float]] = {}
        self._executors_lock = threading.Lock()

    def _executor_row(self, entry: tuple[Executor, float], now: float) -> Executor:
        row, seen = entry
        age = max(0.0, now - seen)
        return row.model_copy(update={"live": age < LIVE_S, "age_s": age})

    def register_executor(
        self, executor_id: str, *, host: str, functions: str, label: str, kind: str
    ) -> Executor:
        now, wall = time.monotonic(), time.time()
        with self._executors_lock:
            for gone in [k for k, (_, s) in self._executors.items() if now - s > KEPT_S]:
                del self._executors[gone]
            before = self._executors.get(executor_id)
            row = Executor(
                id=executor_id,
                host=host,
                functions=functions,
                label=label,
                kind=kind,
                started_at=before[0].started_at if before else wall,
                seen_at=wall,
            )
            self._executors[executor_id] = (row, now)
            return self._executor_row((row, now), now)

    def beat_executor(self, executor_id: str, *, functions: str | None = None) -> bool:
        now = time.monotonic()
        with self._executors_lock:
            found = self._executors.get(executor_id)
            if found is None:
                return False
            update: dict[str, object] = {"seen_at": time.time()}
            if functions is not None:
                update["functions"] = functions
            self._executors[executor_id] = (found[0].model_copy(update=update), now)
            return True

    def leave_executor(self, executor_id: str) -> None:
        with self._executors_lock:
            self._executors.pop(executor_id, None)

    def list_executors(self, host: str | None = None) -> list[Executor]:
        now = time.monotonic()
        with self._executors_lock:
            rows = [self._executor_row(e, now) for e in self._executors.values()]
        return ordered([r for r in rows if host is None or r.host == host])

    def get_executor(self, executor_id: str) -> Executor | None:
        now = time.monotonic()
        with self._executors_lock:
            found = self._executors.get(executor_id)
            return self._executor_row(found, now) if found else None


__all__ = [
    "BEAT_S",
    "KEPT_S",
    "LIVE_S",
    "TAKES_ANY",
    "Executor",
    "ExecutorKind",
    "ExecutorRegistry",
    "MemoryExecutors",
    "executor_label",
    "executor_name",
    "new_executor_id",
    "ordered",
]
