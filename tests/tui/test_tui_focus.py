"""Focus you can see and keys that do what they say: every panel is titled and
lights up when it has the focus, the status bar names it, the focus keys work in
every terminal, a word typed into the wrong panel writes and destroys nothing,
and the run key runs what is on the screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from tui_helpers import jump, make_app, run_to_end, screen_text, set_source, settle, until

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.log_panel import LogPanel
from run_repl.tui.components.value.view import ValueView
from run_repl.tui.screens.path_prompt import PathPrompt

FIVE_THOUSAND = "return Array.from({length: 5000}, (_, i) => ({i, label: 'row ' + i}))"


def lit(app: RunReplApp) -> list[str]:
    """The panels drawn as focused."""
    return [
        str(panel.border_title)
        for panel in app.query(".panel")
        if panel.has_pseudo_class("focus-within")
    ]


async def moved(pilot: Any, key: str) -> str:
    """Press `key`; the panel the status bar names once the focus has moved. A panel
    is lit a refresh after it has the focus, and a hidden tab is shown first and
    focused when it has been laid out."""
    app = pilot.app
    before = app.main.status.panel
    await pilot.press(key)
    await until(pilot, lambda: app.main.status.panel != before and lit(app) != [before])
    return str(app.main.status.panel)


async def test_every_panel_has_a_title_and_only_the_focused_one_lights_up(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    titles = {str(panel.border_title) for panel in app.query(".panel")}
    assert titles == {"Host: demo", "Editor", "Value", "Logs"}
    assert lit(app) == ["Editor"] and app.main.status.panel == "Editor"
    assert await moved(pilot, "f4") == "Value" and lit(app) == ["Value"]


@pytest.mark.slow
async def test_f4_visits_every_panel_and_shift_f4_goes_back(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    seen = [await moved(pilot, "f4") for _ in range(5)]
    assert seen == ["Value", "Logs", "Calls", "Host", "Editor"]  # the hidden tab included
    assert app.focused is app.main.editor_tabs.active_editor
    assert [await moved(pilot, "shift+f4") for _ in range(2)] == ["Host", "Calls"]
    assert str(app.query_one("#bottom").border_title) == "Calls"


async def test_a_panel_chosen_before_the_tab_strip_catches_up_keeps_the_focus(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    """Showing a buffer focuses its editor at once and scrolls the tab strip to it a
    refresh later. A key that moves the focus in between (F4 from a fast typist, a
    macro) is where it stays: the refresh once took the focus back to the editor."""
    app, pilot = app_and_pilot
    tabs = app.main.editor_tabs
    await tabs.action_new_buffer()
    await settle(pilot)
    await tabs.show(next(iter(tabs._buffers)))
    assert app.focused is tabs.active_editor
    value = app.query_one(ValueView)
    value.focus()  # before the refresh
    await settle(pilot)
    assert app.focused is value and lit(app) == ["Value"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("letter", "panel"), [("v", "Value"), ("l", "Logs"), ("c", "Calls"), ("e", "Editor")]
)
async def test_the_jump_overlay_puts_the_focus_on_the_panel(
    app_and_pilot: tuple[RunReplApp, Any], letter: str, panel: str
) -> None:
    app, pilot = app_and_pilot
    if letter == "e":
        # From the Value panel; once the start has given the editor its focus.
        await until(pilot, lambda: app.focused is app.main.editor_tabs.active_editor)
        app.query_one(ValueView).focus()
        await until(pilot, lambda: lit(app) == ["Value"])
    await pilot.press("ctrl+o")
    # The overlay says where the keys go (it is painted a refresh after it is pushed).
    await until(pilot, lambda: f"{letter} {panel.lower()}" in screen_text(app))
    assert await moved(pilot, letter) == panel and lit(app) == [panel]


async def test_open_a_file_moved_to_the_jump_overlay(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await pilot.press("ctrl+o", "o")
    await until(pilot, lambda: isinstance(app.screen, PathPrompt))
    await pilot.press("escape")


def test_no_focus_key_is_an_alt_digit(data_dir: Path) -> None:
    # tmux, xterm and GNOME Terminal send ESC+digit: Textual reads some as £ or ¢.
    app = make_app(data_dir)
    keys = [key for binding in app.BINDINGS for key in binding.key.split(",")]  # type: ignore[union-attr]
    assert not [key for key in keys if key.startswith("alt+") and key[-1].isdigit()]


def footer_shows_run_keys(app: RunReplApp) -> bool:
    return "^⏎/^j/f5 Run" in screen_text(app).splitlines()[-1]


async def test_the_footer_shows_every_run_key(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    # The footer fills in once the bindings reach it: a loaded machine paints before that.
    await until(pilot, lambda: footer_shows_run_keys(app))


async def test_the_editor_hint_fits_at_80_columns(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = app.main.editor_tabs.active_editor.document.get_line(0)
        assert "F5" in first and "ctrl+j" in first
        assert first in screen_text(app)
        await until(pilot, lambda: footer_shows_run_keys(app))


async def test_f5_right_after_typing_runs_the_text_on_the_screen(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "")
    # Posted at once, as a fast typist, a paste burst or a macro sends them.
    for key in ["6", "asterisk", "7"]:
        app.post_message(events.Key(key, {"asterisk": "*"}.get(key, key)))
    app.post_message(events.Key("f5", None))
    await until(pilot, lambda: app.main.runs.token > 0)
    await settle(pilot)
    assert app.main.editor_tabs.active_editor.text == "6*7"
    assert app.main.runs.result.value == 42


@pytest.mark.slow
async def test_a_sentence_typed_into_the_value_panel_writes_nothing(
    app_and_pilot: tuple[RunReplApp, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's accident: typing code with the value panel focused opened Export
    at the `e` of `await`, and enter wrote a file named after the rest of the line."""
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    _, pilot = app_and_pilot
    await set_source(pilot, FIVE_THOUSAND)
    await run_to_end(pilot)
    await jump(pilot, "v")
    await pilot.press(*"const todo = await drafts.filter((d) => !d.published)", "enter")
    await settle(pilot)
    assert list(workdir.iterdir()) == []


@pytest.mark.slow
async def test_export_is_ctrl_e_and_asks_before_replacing_a_file(
    app_and_pilot: tuple[RunReplApp, Any], tmp_path: Path
) -> None:
    app, pilot = app_and_pilot
    target = tmp_path / "out.json"
    target.write_text("keep me")
    await set_source(pilot, FIVE_THOUSAND)
    await run_to_end(pilot)
    view = app.query_one(ValueView)
    view.focus()
    await pilot.press("ctrl+e")
    prompt = view.query_one("#value-prompt-input")
    prompt.value = str(target)
    await pilot.press("enter")
    await settle(pilot)
    assert target.read_text() == "keep me"  # asked, not written
    assert "exists" in str(view.query_one("#value-prompt-label").render())
    await pilot.press("enter")
    await settle(pilot)
    assert target.read_text().startswith("[") and '"row 4999"' in target.read_text()


async def test_a_letter_in_the_logs_does_not_clear_them(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await set_source(pilot, "console.log('one'); console.log('two')")
    await run_to_end(pilot)
    await jump(pilot, "l")
    logs = app.query_one(LogPanel)
    await pilot.press(*"accept")
    assert len(logs.lines) == 2
    await pilot.press("ctrl+l")
    assert logs.lines == []


async def test_guest_text_reaches_no_panel_raw(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    evil = "\\u001b]52;c;aGk=\\u0007\\u001b[2J\\u202eevil\\u009b31m"
    await set_source(
        pilot,
        f'console.log("{evil}"); await crm.listAccounts(1);\n'
        f'try {{ await crm.getAccount("{evil}") }} catch (e) {{ console.error(e.message) }}\n'
        f'throw new Error("{evil}")',
    )
    await run_to_end(pilot)
    assert app.main.runs.result.status == "error"
    panels = [screen_text(app)]
    await jump(pilot, "c")
    panels.append(screen_text(app))
    for text in panels:
        for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert raw not in text
    assert "\\u202eevil" in panels[0]  # shown, as a visible escape
