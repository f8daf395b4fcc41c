"""A data directory another user controls is refused, as ssh refuses a key file
others can write: its secret would sign the continuations, its store would get
the runs' sources and results.

The rules: the data directory, the continuation secret and the store must be the
user's own (or root's) and writable by no one else; the secret readable by no one
else either; neither file a symbolic link. A refusal names the path, what is
wrong and the command that fixes it; nothing of someone else's is chmod-ed.
These tests run as root, so "another user" is a file chown-ed to another uid.
"""

from __future__ import annotations

import io
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest

from run_repl.cli import main
from run_repl.paths import NotPrivate
from run_repl.sandbox.resume.continuation import SECRET_FILE, load_or_create_secret
from run_repl.store import StoreError
from run_repl.store.backends.sqlite import SqliteStore

OTHER = 65534  # nobody
STORE = "run-repl.sqlite3"
PLANTED = b"a" * 64

pytestmark = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0, reason="chown to another uid needs root"
)


def run(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    monkeypatch.delenv("RUN_REPL_SECRET", raising=False)
    monkeypatch.setattr(
        sys,
        "stdin",
        io.TextIOWrapper(io.BytesIO(b'return "SECRET_RESULT_MARKER"'), encoding="utf-8"),
    )
    capsys.readouterr()
    code = main(["run", "-", "--data-dir", str(data)])
    return code, capsys.readouterr().err


def refused(code: int, err: str, path: Path, *words: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err and str(path) in err, err
    for word in words:
        assert word in err, err


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(mode=0o700)
    return path


def plant_secret(data: Path, *, owner: int = OTHER, perms: int = 0o644) -> Path:
    key = data / SECRET_FILE
    key.write_bytes(PLANTED)
    os.chown(key, owner, -1)
    os.chmod(key, perms)
    return key


# ---------------------------------------------------------------- the directory
def test_a_data_directory_of_another_user_is_refused(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    os.chown(data, OTHER, -1)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, data, "owned by", "--data-dir")
    assert os.listdir(data) == []  # nothing was made in it
    assert os.stat(data).st_uid == OTHER


@pytest.mark.parametrize("perms", [0o777, 0o770, 0o1777, 0o702], ids=oct)
def test_a_data_directory_others_can_write_is_refused(
    data: Path, perms: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    os.chmod(data, perms)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, data, "writable", f"chmod go-w {data}")
    assert mode(data) == perms  # told, not silently changed
    assert os.listdir(data) == []


def test_the_redteam_shared_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """nobody's world-writable directory, nobody's key, a store linked to nobody's file."""
    shared, other = tmp_path / "shared", tmp_path / "other"
    shared.mkdir()
    other.mkdir()
    for d, perms in ((shared, 0o1777), (other, 0o777)):
        os.chown(d, OTHER, -1)
        os.chmod(d, perms)
    plant_secret(shared)
    loot = other / "loot.sqlite3"
    loot.touch()
    os.chown(loot, OTHER, -1)
    (shared / STORE).symlink_to(loot)
    code, err = run(shared, capsys, monkeypatch)
    refused(code, err, shared)
    assert loot.read_bytes() == b""  # no run landed in it


# ---------------------------------------------------------------- the secret
def test_a_secret_of_another_user_is_refused(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = plant_secret(data, perms=0o600)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, key, "owned by", "rm ")
    assert key.read_bytes() == PLANTED and os.stat(key).st_uid == OTHER
    with pytest.raises(NotPrivate, match="owned by"):
        load_or_create_secret(data)


@pytest.mark.parametrize("perms", [0o644, 0o640, 0o604, 0o660, 0o606], ids=oct)
def test_a_secret_others_can_read_or_write_is_refused(
    data: Path, perms: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = plant_secret(data, owner=os.getuid(), perms=perms)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, key, f"chmod 600 {key}")
    assert mode(key) == perms
    with pytest.raises(NotPrivate):
        load_or_create_secret(data)


def test_a_secret_that_is_a_symbolic_link_is_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "elsewhere.key"
    target.write_bytes(PLANTED)
    os.chmod(target, 0o600)
    (data / SECRET_FILE).symlink_to(target)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, data / SECRET_FILE, "symbolic link")
    with pytest.raises(NotPrivate, match="symbolic link"):
        load_or_create_secret(data)


def test_a_secret_in_a_directory_others_can_write_is_refused(data: Path) -> None:
    """The engine's own default (`run()` without a secret) checks it too."""
    plant_secret(data, owner=os.getuid(), perms=0o600)
    os.chmod(data, 0o777)
    with pytest.raises(NotPrivate, match="writable"):
        load_or_create_secret(data)


def test_a_private_secret_of_ones_own_is_used(data: Path) -> None:
    plant_secret(data, owner=os.getuid(), perms=0o600)
    assert load_or_create_secret(data) == PLANTED


def test_a_secret_owned_by_root_is_trusted_as_ssh_trusts_it(data: Path) -> None:
    # Running as root, the user is root: the rule is "the user's own, or root's".
    plant_secret(data, owner=0, perms=0o400)
    assert load_or_create_secret(data) == PLANTED


def test_a_fresh_secret_is_private(data: Path) -> None:
    secret = load_or_create_secret(data / "new")
    assert len(secret) == 64
    assert mode(data / "new") == 0o700 and mode(data / "new" / SECRET_FILE) == 0o600


# ---------------------------------------------------------------- the store
def test_a_store_that_is_a_symbolic_link_is_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loot = tmp_path / "loot.sqlite3"
    loot.touch()
    os.chmod(loot, 0o600)
    (data / STORE).symlink_to(loot)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, data / STORE, "symbolic link")
    assert loot.read_bytes() == b""
    with pytest.raises(StoreError, match="symbolic link"):
        SqliteStore(data / STORE)
    assert loot.read_bytes() == b""


def test_a_store_of_another_user_is_refused_and_not_chmod_ed(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = data / STORE
    sqlite3.connect(store).close()
    os.chown(store, OTHER, -1)
    os.chmod(store, 0o644)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, store, "owned by")
    assert mode(store) == 0o644 and os.stat(store).st_uid == OTHER
    assert b"SECRET_RESULT_MARKER" not in store.read_bytes()
    with pytest.raises(StoreError, match="owned by"):
        SqliteStore(store)
    assert mode(store) == 0o644


def test_a_store_others_can_write_is_refused(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = data / STORE
    sqlite3.connect(store).close()
    os.chmod(store, 0o666)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, store, f"chmod 600 {store}")
    assert mode(store) == 0o666


def test_a_planted_write_ahead_log_is_refused(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wal = data / (STORE + "-wal")
    wal.touch()
    os.chown(wal, OTHER, -1)
    code, err = run(data, capsys, monkeypatch)
    refused(code, err, wal, "owned by")


def test_a_private_data_directory_works_and_its_files_are_private(
    data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err = run(data, capsys, monkeypatch)
    assert code == 0, err
    assert mode(data) == 0o700
    assert mode(data / SECRET_FILE) == 0o600 and mode(data / STORE) == 0o600
    # A second run opens what the first one made.
    code, err = run(data, capsys, monkeypatch)
    assert code == 0, err
