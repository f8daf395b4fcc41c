"""Writing a file so that a crash or a full disk never leaves half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None
) -> None:
    """Write `data` to `path` whole or not at all: a temporary file beside it,
    flushed to disk, then renamed over it. An error leaves the old file as it was
    (and no temporary file behind) and is raised as the OSError it is.

    `mode`: the new file's permissions; by default those of the file it
    replaces, else 0o644 (pass 0o600 for anything private)."""
    target = Path(path)
    if mode is None:
        try:
            mode = target.stat().st_mode & 0o7777
        except OSError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(
    path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8", mode: int | None = None
) -> None:
    """`atomic_write_bytes` for text."""
    atomic_write_bytes(path, text.encode(encoding), mode=mode)
