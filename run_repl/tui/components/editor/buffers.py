"""The editor's buffers, apart from the widgets (as harlequin's editor cache is): one
tab's text and where it is saved, and the JSON file the tabs live in between sessions.

Pure: no widget, tested without an app. A file that cannot be read as buffers is moved
aside, never overwritten.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from ....present.files import atomic_write_text


@dataclass
class Buffer:
    """One tab's text, where it is saved (if anywhere), and the text it was last saved as."""

    title: str
    text: str
    path: str | None = None
    cursor: tuple[int, int] = (0, 0)
    saved: str | None = None
    """The text as last opened or saved (an untitled buffer: as it was made); None: `text`."""
    key: str = field(default="")

    def __post_init__(self) -> None:
        if self.saved is None:
            self.saved = self.text

    @property
    def modified(self) -> bool:
        return self.text != self.saved

    @property
    def worth_keeping(self) -> bool:
        """An untitled buffer with nothing in it is not restored next time."""
        return self.path is not None or bool(self.text.strip())


@dataclass
class Restored:
    """What the buffers file held: the buffers, the active one, and a problem to report."""

    buffers: list[Buffer]
    active: int = 0
    problem: str | None = None


class BufferStore:
    """Where the tabs live between sessions: one JSON file in the data directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Restored:
        """The saved buffers. A file that cannot be read as buffers is moved aside, never
        overwritten: the problem says where it went."""
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Restored([])
        except (OSError, UnicodeDecodeError) as exc:
            return Restored([], problem=f"could not read the saved buffers {self.path}: {exc}")
        try:
            data = json.loads(raw)
            buffers = [
                Buffer(
                    str(b["title"]),
                    str(b["text"]),
                    None if b.get("path") is None else str(b["path"]),
                    (int(b.get("cursor", (0, 0))[0]), int(b.get("cursor", (0, 0))[1])),
                    None if b.get("saved") is None else str(b["saved"]),
                )
                for b in data["buffers"]
            ]
            active = int(data.get("active", 0))
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            aside = self.path.with_name(
                f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
            )
            try:
                self.path.replace(aside)
            except OSError as move:
                return Restored(
                    [],
                    problem=f"the saved buffers {self.path} are unreadable ({exc}) and could not be moved aside: {move}",
                )
            return Restored(
                [],
                problem=f"the saved buffers were unreadable ({type(exc).__name__}: {exc}); the file is kept as {aside}",
            )
        return Restored(buffers, active)

    def save(self, buffers: list[Buffer], active: int) -> None:
        kept = [b for b in buffers if b.worth_keeping]
        active_buffer = buffers[active] if 0 <= active < len(buffers) else None
        data = {
            "active": kept.index(active_buffer) if active_buffer in kept else 0,
            "buffers": [
                {
                    "title": b.title,
                    "text": b.text,
                    "path": b.path,
                    "cursor": list(b.cursor),
                    "saved": b.saved,
                }
                for b in kept
            ],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # The sources typed in the IDE: whole or not at all, and for this user only.
            atomic_write_text(self.path, json.dumps(data), mode=0o600)
        except OSError:
            pass  # buffers are a convenience: never fail the app over them
