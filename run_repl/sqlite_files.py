"""SQLite files the person trusts: one transaction helper, busy versus damaged, private files.

Shared by the store (`run_repl.store`) and the demo host (`run_repl.host.demo`),
so it sits below both and imports neither.

    with transaction(conn):              # BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any exception
        conn.execute(...)

    if is_busy(exc): retry               # "database is locked": another writer, not damage
    if is_damaged(exc): move_aside(path) # keep the bad file, timestamped, then make a fresh one
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .paths import check_private_dir, check_private_file, open_private

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700

# SQLite's primary result codes (sqlite3.Error.sqlite_errorcode & 0xFF).
_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


@contextmanager
def transaction(conn: sqlite3.Connection, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
    """One write transaction on a connection opened with `isolation_level=None`.

    BEGIN IMMEDIATE takes the write lock first, so a check and the write that
    depends on it are one step for every process. Any exception (Ctrl-C too)
    rolls back. `durable` syncs the commit to disk (synchronous=FULL) even in
    WAL mode: for the writes an approval's safety depends on."""
    if durable:
        conn.execute("PRAGMA synchronous = FULL")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
    finally:
        if durable:
            with suppress(sqlite3.Error):
                conn.execute("PRAGMA synchronous = NORMAL")


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock: wait and retry, never treat it as damage."""
    code = _code(exc)
    if code is not None:
        return code in _BUSY
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def is_damaged(exc: BaseException) -> bool:
    """The file is not a database, or its pages are malformed."""
    code = _code(exc)
    if code is not None:
        return code in _DAMAGED
    text = str(exc)
    return isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in text or "not a database" in text
    )


def make_private_dir(path: Path) -> None:
    """Create `path` (and missing parents); the directories made here are 0700."""
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    for made in missing:  # mkdir's parents get the default mode: tighten what we made
        with suppress(OSError):
            os.chmod(made, PRIVATE_DIR)


SIDE_FILES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database: they hold its latest writes."""


def ensure_private_file(path: Path) -> None:
    """Make `path` exist as a 0600 file of the user's own before SQLite opens it
    (its -wal and -shm files take the same mode), in a directory no one else can
    write. A file that is a symbolic link, another user's, or writable by others
    (or such a side file) is refused with NotPrivate saying what to fix; one of
    ours that others can only read is tightened."""
    check_private_dir(path.parent)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        try:
            check_private_file(os.lstat(side), side, secret=False)
        except FileNotFoundError:
            pass
    fd = open_private(path, os.O_RDWR | os.O_CREAT, secret=False, create_mode=PRIVATE_FILE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)  # ours (just checked): tightened, not refused
    finally:
        os.close(fd)


def move_aside(path: Path, why: str = "corrupt") -> Path:
    """Rename a database (and its -wal/-shm) to `<name>.<why>-<timestamp>`; the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    os.replace(path, target)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            with suppress(OSError):
                os.replace(side, target.with_name(target.name + suffix))
    return target


__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "SIDE_FILES",
    "ensure_private_file",
    "is_busy",
    "is_damaged",
    "make_private_dir",
    "move_aside",
    "transaction",
]
