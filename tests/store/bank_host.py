"""A bank whose transfers need approval and leave one row each: what the approval tests count.

The rows go to the SQLite file named by BANK_DB, so a test counts the side
effects of every process it started (approvers, killed ones, racing ones)."""

from __future__ import annotations

import os
import sqlite3
import time

from run_repl import get_host_function_context, requires_approval


def create() -> None:
    """Make the ledger, in WAL mode (kept by the file), before any process writes to it.
    Switching a file to WAL takes a lock that does not wait for busy ones: done on
    each connection, eight racing processes could see "database is locked" at once,
    and a transfer that failed so would look like an approved call that never ran."""
    conn = sqlite3.connect(os.environ["BANK_DB"], isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS ledger (tag TEXT, what TEXT, amount INTEGER)")
    finally:
        conn.close()


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(os.environ["BANK_DB"], timeout=60, isolation_level=None)
    # A row is in the file once its write returns, which is all a killed process needs
    # (an OS crash is not a story here); WAL (see create) lets many processes write at once.
    conn.execute("PRAGMA synchronous = OFF")
    return conn


def _write(tag: str, what: str, amount: int) -> None:
    conn = _db()
    try:
        conn.execute("INSERT INTO ledger VALUES (?, ?, ?)", (tag, what, amount))
    finally:
        conn.close()


@requires_approval
def transfer(amount: int, tag: str = "", delay: float = 0) -> int:
    """Move money (asks a person first); `delay` seconds after it starts (a "start" row),
    or less once a test releases it (a test that must act mid-call holds it that long,
    however slow a loaded machine makes the test)."""
    _write(tag, "start", amount)
    if delay < 0:  # the call runs and fails: what a test of a failing approved call uses
        raise ValueError("delay must be non-negative")
    end = time.monotonic() + delay
    while time.monotonic() < end and not rows("release", tag):
        time.sleep(0.01)
    _write(tag, "transfer", amount)
    return amount


@requires_approval(idempotent=True)
def credit(amount: int, tag: str = "", delay: float = 0) -> int:
    """A transfer that may run again: it keeps its idempotency key beside its rows
    ("start KEY", then "credit KEY") and moves the money only under a key not yet kept,
    so a takeover that runs it a second time moves it once."""
    key = get_host_function_context().idempotency_key
    _write(tag, f"start {key}", amount)
    end = time.monotonic() + delay
    while time.monotonic() < end and not rows("release", tag):
        time.sleep(0.01)
    if not rows(f"credit {key}", tag):
        _write(tag, f"credit {key}", amount)
    return amount


def keyed(tag: str) -> list[str]:
    """What `credit` wrote under `tag`, in order: "start KEY" and "credit KEY" rows."""
    conn = _db()
    try:
        return [
            w
            for (w,) in conn.execute(
                "SELECT what FROM ledger WHERE tag = ? AND (what LIKE 'start %' OR "
                "what LIKE 'credit %') ORDER BY rowid",
                (tag,),
            )
        ]
    finally:
        conn.close()


def done(tag: str = "") -> str:
    """The snippet reached its end: a row says so."""
    _write(tag, "done", 0)
    return "done"


def release(tag: str) -> None:
    """Let a held transfer with this tag go on (not a host function: the test's own lever)."""
    _write(tag, "release", 0)


def rows(what: str = "transfer", tag: str | None = None) -> list[tuple[str, int]]:
    conn = _db()
    try:
        sql = "SELECT tag, amount FROM ledger WHERE what = ?"
        args: list[object] = [what]
        if tag is not None:
            sql += " AND tag = ?"
            args.append(tag)
        return [(t, a) for t, a in conn.execute(sql + " ORDER BY rowid", args)]
    finally:
        conn.close()


HOSTS = {"bank": {"transfer": transfer, "credit": credit, "done": done}}
