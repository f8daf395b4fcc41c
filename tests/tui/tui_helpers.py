"""What the IDE's tests share: an app on a fresh data directory, and waiting on its
workers (never on the clock) for runs to end. (Fixtures are in conftest.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual._context import visible_screen_stack
from textual.app import App
from textual.widgets import TextArea

from run_repl.tui.app import RunReplApp
from run_repl.tui.approvals_inbox import APP_LONG_WORKERS
from run_repl.tui.screens.approvals import ApprovalsScreen
from run_repl.workspace import open_workspace

SIZE = (160, 48)
MESSAGE_ROUNDS = 50  # a key's consequences travel a few queues; this bounds the wait for them


def make_app(data_dir: Path, **kwargs: Any) -> RunReplApp:
    ws = open_workspace(None, data_dir_override=str(data_dir))
    return RunReplApp(ws, **kwargs)


async def still(pilot: Any) -> None:
    """Stop the editors' cursors blinking, so a snapshot is the same each time.

    A snapshot's pilot starts before the main screen has made its editor and given it
    the focus: wait for both. TextArea's line cache does not tell a focused line from an
    unfocused one once the cursor stops blinking, so a line drawn before the focus came
    would be shown without its cursor: the cache is dropped (notify_style_update)."""
    app = pilot.app
    await until(pilot, lambda: app.focused is not None and app.focused.has_focus)
    for area in app.query(TextArea):
        area.cursor_blink = False
        area.notify_style_update()
        area.refresh()
    await steady(pilot)


async def steady(pilot: Any) -> None:
    """Process messages until the screen is painted the same twice running: a page just
    shown, say, sizes its table's columns a refresh after its rows came, so one pause
    can catch it half drawn."""
    before = screen_text(pilot.app)
    for _ in range(MESSAGE_ROUNDS):
        await pilot.pause()
        now = screen_text(pilot.app)
        if now == before:
            return
        before = now
    raise AssertionError("the screen kept changing")


def screen_text(app: App[Any]) -> str:
    """The screen as it is painted, as text."""
    # As the compositor's own updates do: a modal screen paints the screens beneath it
    # from this list.
    visible_screen_stack.set(app._background_screens)
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def set_source(pilot: Any, source: str) -> None:
    editor = pilot.app.main.editor_tabs.active_editor
    assert editor is not None
    editor.load_text(source)
    editor.focus()
    await pilot.pause()


async def settle(pilot: Any) -> None:
    """Let every worker (runs, exports, searches) end and every message they posted land."""
    app = pilot.app
    for _ in range(MESSAGE_ROUNDS):
        await pilot.pause()
        # The approvals watcher and executor live as long as the app: every other one ends.
        busy = [w for w in app.workers if not w.is_finished and w.name not in APP_LONG_WORKERS]
        if busy:
            await app.workers.wait_for_complete(busy)
        elif not _messages_waiting(app):
            # (A message still on its way up, a decision say, may start the next worker:
            # one round of the loop does not always carry it all the way.)
            return
    raise AssertionError("workers kept starting: the app never settled")


def _messages_waiting(app: App[Any]) -> bool:
    return any(node.message_queue_size for node in (app, *app.screen.walk_children(with_self=True)))


async def until(pilot: Any, condition: Any) -> None:
    """Process messages until `condition()` holds (bounded by rounds of messages, not time)."""
    for _ in range(MESSAGE_ROUNDS):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the app never reached the expected state")


async def run_to_end(pilot: Any, key: str = "ctrl+j") -> None:
    """Press a run key, and wait for the run (and a resume after it, if any) to end."""
    app = pilot.app
    token = app.main.runs.token
    await pilot.press(key)
    await until(pilot, lambda: app.main.runs.token > token)
    await settle(pilot)


async def decide(pilot: Any, key: str) -> None:
    """Engage the approval prompt (F3), press `key`, and wait for what it starts to end."""
    await pilot.press("f3")
    await pilot.press(key)
    await settle(pilot)


JUMP_PANELS = {"v": "Value", "l": "Logs", "c": "Calls", "e": "Editor", "h": "Host"}


async def jump(pilot: Any, letter: str) -> None:
    """ctrl+o and a panel's letter, and wait until that panel has the focus: a hidden
    tab is shown first and focused when it has been laid out, a refresh later, and a
    key pressed before then goes to the panel that had the focus."""
    await pilot.press("ctrl+o", letter)
    await until(pilot, lambda: pilot.app.main.status.panel == JUMP_PANELS[letter])


async def open_inbox(pilot: Any) -> None:
    """F6, and wait until the inbox is built (its on_mount run): it is built over
    several turns of the loop, and under load a key pressed sooner goes to the main
    screen."""
    app = pilot.app
    await pilot.press("f6")
    await until(pilot, lambda: isinstance(app.screen, ApprovalsScreen) and app.screen.is_mounted)
