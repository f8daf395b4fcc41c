"""Where run-repl keeps its files (the data and config directories), and whose
they must be: `check_private_dir`, `check_private_file` and `open_private`
refuse a data directory, secret or store another user controls (NotPrivate).

Shared by the engine (its continuation secret) and the front ends (the store,
the config), so it sits above both and imports neither, but the root of the one
exception tree (`sandbox/errors.py`, stdlib only)."""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

import platformdirs

from .sandbox.errors import RunReplError

APP = "run-repl"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """`--data-dir`, else RUN_REPL_DATA_DIR, else the platform's user data directory."""
    chosen = override or os.environ.get("RUN_REPL_DATA_DIR") or platformdirs.user_data_dir(APP)
    return Path(chosen).expanduser()


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """RUN_REPL_CONFIG_DIR, else the platform's user config directory."""
    chosen = override or os.environ.get("RUN_REPL_CONFIG_DIR") or platformdirs.user_config_dir(APP)
    return Path(chosen).expanduser()


# ---------------------------------------------------------------- whose files these are
class NotPrivate(RunReplError, PermissionError):
    """A data-directory path another user controls, or could: refused (never chmod-ed),
    the message naming the path, what is wrong and the command that fixes it.

    As OpenSSH's StrictModes treats ~/.ssh: a secret another user can write (or
    replace) signs their continuations; a store they can write takes the runs'
    sources and results."""

    code = "PATH_NOT_PRIVATE"


def _trusted_owner(uid: int) -> bool:
    # The user's own, or root's (root can change it anyway), as ssh accepts them.
    return not hasattr(os, "getuid") or uid in (os.getuid(), 0)


def _q(path: str | Path) -> str:
    return shlex.quote(str(path))  # the commands are said to be pasted into a shell


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def check_private_dir(path: Path) -> None:
    """The data directory must be the user's own and writable by no one else (a
    directory others can write lets them replace the files in it). A symbolic
    link to such a directory is judged by where it leads."""
    info = os.stat(path)
    if not _trusted_owner(info.st_uid):
        raise NotPrivate(
            f"the data directory {path} is owned by {_owner_name(info.st_uid)}, not by you: "
            "another user could replace its secret and read its runs. Pass --data-dir "
            "(or set RUN_REPL_DATA_DIR) to a directory of your own."
        )
    if info.st_mode & 0o022:
        raise NotPrivate(
            f"the data directory {path} is writable by others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): they could replace its secret and its store. "
            f"`chmod go-w {_q(path)}` (run-repl makes its own 0700), or use another one (--data-dir, "
            "RUN_REPL_DATA_DIR)."
        )


def check_private_file(info: os.stat_result, path: Path, *, secret: bool) -> None:
    """A file of the data directory, by its `lstat` (or `fstat` once opened): the user's
    own, no symbolic link, writable by no one else; a secret readable by no one else."""
    if stat.S_ISLNK(info.st_mode):
        raise NotPrivate(
            f"{path} is a symbolic link: run-repl does not follow links for its own files "
            f"(they could lead to another user's file). Replace it with the file itself, or "
            f"`rm {_q(path)}` to have a new one made."
        )
    if not stat.S_ISREG(info.st_mode):
        raise NotPrivate(
            f"{path} is not a regular file: move it away (`mv {_q(path)} {_q(str(path) + '.old')}`)."
        )
    if not _trusted_owner(info.st_uid):
        raise NotPrivate(
            f"{path} is owned by {_owner_name(info.st_uid)}, not by you: run-repl will not "
            f"use (or chmod) another user's file. Check it, then `rm {_q(path)}` to have a new "
            "one made (approvals it holds or signed are lost), or `chown` it to yourself if "
            "you trust it."
        )
    others = 0o077 if secret else 0o022
    if info.st_mode & others:
        what = "readable or writable by others" if secret else "writable by others"
        after = (
            " If others could read it, `rm` it instead to have a new one made."
            if secret and info.st_mode & 0o044
            else ""
        )
        raise NotPrivate(
            f"{path} is {what} (mode {stat.S_IMODE(info.st_mode):o}): `chmod 600 {_q(path)}`.{after}"
        )


def open_private(path: Path, flags: int, *, secret: bool, create_mode: int = 0o600) -> int:
    """`os.open` that never follows a symbolic link at `path`, then checks the open file
    (`check_private_file`); the descriptor, or NotPrivate (the file closed)."""
    try:
        fd = os.open(
            path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), create_mode
        )
    except OSError as exc:
        if os.path.islink(path):  # ELOOP: the link itself, not what it leads to
            check_private_file(os.lstat(path), path, secret=secret)
        raise exc from None
    try:
        check_private_file(os.fstat(fd), path, secret=secret)
    except BaseException:
        os.close(fd)
        raise
    return fd
