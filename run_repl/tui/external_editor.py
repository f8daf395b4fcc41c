"""The active buffer in the person's own editor, and its text back when that exits.

As git and many REPLs do: `$VISUAL`, else `$EDITOR` (split as a shell splits
words, so `code --wait` works), else the first of FALLBACKS on the PATH (the
toast says which, and how to choose). The buffer goes to a private temporary
file named with its extension (`.ts`, so the editor highlights it), the app
suspends while the editor has the terminal, and the file is removed after.
The text comes back only when the editor exits 0 with the file changed; else
the buffer stays as it was, and the toast says why. Taking it back is one edit:
ctrl+z undoes it.

`run_suspended` is the one place the terminal changes hands (App.suspend): the
tests replace it, since a headless app cannot suspend.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from textual.app import App, SuspendNotSupported

FALLBACKS = ("editor", "nano", "vim", "vi")
"""Tried in order when neither variable is set (`editor`: Debian's chosen one)."""
DEFAULT_SUFFIX = ".ts"
Severity = Literal["information", "warning", "error"]


@dataclass(frozen=True)
class EditorChoice:
    argv: list[str]
    """The editor's command; the file's path goes after it."""
    note: str | None = None
    """Why this one, when no variable named it."""


@dataclass(frozen=True)
class Edited:
    """How a round trip went: `text` to put in the buffer (None: keep it as it is)."""

    text: str | None
    message: str
    severity: Severity = "information"


def choose_editor(
    env: Mapping[str, str], which: Callable[[str], str | None] | None = None
) -> EditorChoice | str:
    """The editor to run, or (a str) why there is none."""
    which = which or shutil.which
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if not value:
            continue
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            return f"${name} ({value!r}) cannot be split into a command: {exc}"
        if argv:
            return EditorChoice(argv)
    for fallback in FALLBACKS:
        found = which(fallback)
        if found:
            return EditorChoice(
                [found], f"neither $VISUAL nor $EDITOR is set, so {fallback} edits it"
            )
    return (
        "neither $VISUAL nor $EDITOR is set, and none of "
        f"{', '.join(FALLBACKS)} is on the PATH: set EDITOR to your editor's command"
    )


def suffix_of(name: str | None) -> str:
    """The temporary file's extension: the buffer's own (a saved file's), else `.ts`."""
    suffix = Path(name).suffix if name else ""
    return suffix if suffix and len(suffix) <= 16 else DEFAULT_SUFFIX


def edit_text(
    text: str, *, suffix: str, choice: EditorChoice, run: Callable[[list[str]], int]
) -> Edited:
    """Write `text` to a private temporary file, `run` the editor on it (its exit
    status back), and read what it left; the file is removed whatever happens."""
    fd, name = tempfile.mkstemp(prefix="run-repl-", suffix=suffix)  # 0600
    path = Path(name)
    editor = Path(choice.argv[0]).name
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        try:
            status = run([*choice.argv, str(path)])
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return Edited(
                None, f"could not start {editor}: {why}; the buffer is as it was", "error"
            )
        if status != 0:
            return Edited(
                None, f"{editor} exited with status {status}: the buffer is as it was", "warning"
            )
        try:
            new = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return Edited(
                None,
                f"could not read what {editor} wrote ({exc}): the buffer is as it was",
                "error",
            )
    finally:
        path.unlink(missing_ok=True)
    if not text.endswith("\n") and new.endswith("\n"):
        new = new[:-1]  # editors end a file with a newline: the buffer does not gain one
    if new == text:
        return Edited(None, f"{editor} left it unchanged: the buffer is as it was")
    return Edited(new, f"took the buffer back from {editor} (ctrl+z undoes it)")


def run_suspended(app: App[Any], argv: list[str]) -> int:
    """Run `argv` on the app's terminal, the app suspended until it exits; its status."""
    with app.suspend():
        return subprocess.run(argv, check=False).returncode


def edit_active_buffer(screen: Any, env: Mapping[str, str] | None = None) -> None:
    """The main screen's action: the active buffer through the person's editor and back."""
    app = screen.app
    if screen.running:
        # The run's host calls are answered on the loop the editor would hold up.
        app.notify(
            "A run is in progress: the editor opens once it ends (escape cancels it).",
            severity="warning",
        )
        return
    tabs = screen.editor_tabs
    editor, buffer = tabs.active_editor, tabs.active_buffer
    if editor is None or buffer is None:
        return
    choice = choose_editor(os.environ if env is None else env)
    if isinstance(choice, str):
        app.notify(f"No editor to open: {choice}.", title="Editor", severity="warning")
        return
    before = editor.text
    suspended: list[str] = []

    def run(argv: list[str]) -> int:
        try:
            return run_suspended(app, argv)
        except SuspendNotSupported:
            suspended.append("no")
            return -1

    edited = edit_text(before, suffix=suffix_of(buffer.path), choice=choice, run=run)
    if suspended:
        app.notify(
            "This terminal cannot hand the screen to another program (the app cannot "
            "suspend here): the buffer is as it was.",
            title="Editor",
            severity="warning",
        )
        return
    if edited.text is not None:
        row, column = editor.cursor_location
        # One edit over the whole text: ctrl+z brings the buffer back as it was.
        editor.replace(edited.text, (0, 0), editor.document.end)
        last = editor.document.line_count - 1
        editor.move_cursor((min(row, last), column))
    message = edited.message if choice.note is None else f"{edited.message} ({choice.note})"
    app.notify(message, title="Editor", severity=edited.severity)
    editor.focus()
