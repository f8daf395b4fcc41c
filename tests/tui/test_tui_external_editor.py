"""ctrl+g (or the palette's "Edit in $EDITOR"): the active buffer goes to the person's
editor and comes back when it exits, as git and many REPLs do.

A headless app cannot suspend (Textual raises SuspendNotSupported), so most tests
replace `run_suspended`, the one place the terminal changes hands, with a plain run
of the editor; one test keeps it and sees the app say it could not hand over."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import SIZE, make_app, set_source

from run_repl.tui import external_editor
from run_repl.tui.external_editor import EditorChoice, choose_editor, edit_text, suffix_of

EDITOR_SCRIPT = """
import json, pathlib, sys
path = pathlib.Path(sys.argv[-1])
log = pathlib.Path({log!r})
text = path.read_text(encoding="utf-8")
log.write_text(json.dumps({{"path": str(path), "text": text, "argv": sys.argv[1:-1]}}))
if {rewrite}:
    path.write_text(text.replace("foo", "bar") + "\\n", encoding="utf-8")
sys.exit({status})
"""


def editor_command(tmp_path: Path, *, rewrite: bool = True, status: int = 0) -> tuple[str, Path]:
    """An $EDITOR that records what it was given, rewrites foo to bar (ending the file with
    a newline, as editors do) and exits with `status`; and the file it records to."""
    log = tmp_path / f"editor-{rewrite}-{status}.json"
    script = tmp_path / f"editor-{rewrite}-{status}.py"
    script.write_text(EDITOR_SCRIPT.format(log=str(log), rewrite=rewrite, status=status))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} --wait", log


@pytest.fixture(autouse=True)
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the buffers' temporary files go: each test sees its own."""
    made = tmp_path / "tmp"
    made.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(made))
    return made


@pytest.fixture
def unsuspended(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The editor runs as a plain child process (what App.suspend wraps on a terminal)."""
    ran: list[list[str]] = []

    def run(app: Any, argv: list[str]) -> int:
        ran.append(argv)
        return subprocess.run(argv, check=False).returncode

    monkeypatch.setattr(external_editor, "run_suspended", run)
    return ran


def notes_of(app: Any) -> list[tuple[str, str]]:
    notes: list[tuple[str, str]] = []
    notify = app.notify

    def record(message: str, **kw: Any) -> None:
        notes.append((message, kw.get("severity", "information")))
        notify(message, **kw)

    app.notify = record
    return notes


async def test_ctrl_g_takes_the_edited_text_back_and_ctrl_z_undoes_it(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    unsuspended: list[list[str]],
    temp_dir: Path,
) -> None:
    command, log = editor_command(tmp_path)
    monkeypatch.setenv("EDITOR", command)
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        notes = notes_of(app)
        await set_source(pilot, "const foo = 1\nreturn foo")
        await pilot.press("ctrl+g")
        await pilot.pause()
        editor = app.main.editor_tabs.active_editor
        assert editor.text == "const bar = 1\nreturn bar"  # no newline gained
        seen = json.loads(log.read_text())
        assert seen["text"] == "const foo = 1\nreturn foo" and seen["argv"] == ["--wait"]
        assert seen["path"].endswith(".ts") and not Path(seen["path"]).exists()
        assert Path(seen["path"]).parent == temp_dir and list(temp_dir.iterdir()) == []
        assert notes[-1][0].startswith("took the buffer back from ")
        assert app.focused is editor
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert editor.text == "const foo = 1\nreturn foo"


@pytest.mark.parametrize(
    ("rewrite", "status", "said"),
    [
        (True, 1, "exited with status 1: the buffer is as it was"),
        (False, 0, "left it unchanged: the buffer is as it was"),
    ],
    ids=["exit-1", "unchanged"],
)
async def test_a_failed_or_idle_editor_keeps_the_buffer_and_says_so(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    unsuspended: list[list[str]],
    rewrite: bool,
    status: int,
    said: str,
) -> None:
    command, log = editor_command(tmp_path, rewrite=rewrite, status=status)
    monkeypatch.setenv("VISUAL", command)  # $VISUAL first
    monkeypatch.setenv("EDITOR", "false")
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        notes = notes_of(app)
        await set_source(pilot, "const foo = 1")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.main.editor_tabs.active_editor.text == "const foo = 1"
        assert said in notes[-1][0]
        assert not Path(json.loads(log.read_text())["path"]).exists()


async def test_a_headless_app_cannot_suspend_and_says_so(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temp_dir: Path
) -> None:
    # The real seam: Textual's headless driver cannot suspend, so the editor never runs.
    command, log = editor_command(tmp_path)
    monkeypatch.setenv("EDITOR", command)
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        notes = notes_of(app)
        await set_source(pilot, "const foo = 1")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.main.editor_tabs.active_editor.text == "const foo = 1"
        assert "cannot hand the screen to another program" in notes[-1][0]
        assert not log.exists()
    assert list(temp_dir.iterdir()) == []  # the buffer's file is gone too


async def test_no_editor_at_all_is_said(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, unsuspended: list[list[str]]
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setattr(external_editor.shutil, "which", lambda name: None)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        notes = notes_of(app)
        await set_source(pilot, "const foo = 1")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert unsuspended == []
        assert "neither $VISUAL nor $EDITOR is set" in notes[-1][0]
        assert "set EDITOR" in notes[-1][0]


def test_choosing_the_editor() -> None:
    which = {"nano": "/usr/bin/nano", "vi": "/usr/bin/vi"}.get
    assert choose_editor({"VISUAL": "code --wait", "EDITOR": "vi"}, which).argv == [
        "code",
        "--wait",
    ]
    assert choose_editor({"VISUAL": " ", "EDITOR": "sed -i s/a/b/"}, which).argv == [
        "sed",
        "-i",
        "s/a/b/",
    ]
    fallback = choose_editor({}, which)
    assert isinstance(fallback, EditorChoice) and fallback.argv == ["/usr/bin/nano"]
    assert "neither $VISUAL nor $EDITOR is set, so nano edits it" == fallback.note
    assert "cannot be split" in str(choose_editor({"EDITOR": "vim 'unclosed"}, which))
    assert suffix_of("snippets/report.js") == ".js" and suffix_of(None) == ".ts"
    assert suffix_of("untitled") == ".ts"


def test_an_editor_that_cannot_start_keeps_the_text(tmp_path: Path) -> None:
    def missing(argv: list[str]) -> int:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    edited = edit_text("x", suffix=".ts", choice=EditorChoice(["nope-editor"]), run=missing)
    assert edited.text is None and edited.severity == "error"
    assert "could not start nope-editor: No such file or directory" in edited.message
