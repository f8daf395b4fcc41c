"""Buffers like an editor's: an unsaved marker, a question before closing
unsaved work, reopening a closed tab, keys to switch tabs, the active tab in
view, lazy restore, untitled buffers kept only with text, a corrupt buffers
file kept aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Tab
from tui_helpers import SIZE, make_app, set_source, settle, until

from run_repl.tui.app import RunReplApp
from run_repl.tui.components.editor.confirm_close import ConfirmClose
from run_repl.tui.components.editor.editor import CodeEditor


def labels(app: RunReplApp) -> list[str]:
    return [str(tab.label) for tab in app.main.editor_tabs.tabs.query(Tab)]


def saved_buffers(data_dir: Path, count: int) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    buffers = [{"title": f"b{n}.ts", "text": f"'buffer {n}'", "path": None} for n in range(count)]
    (data_dir / "buffers.json").write_text(json.dumps({"active": 2, "buffers": buffers}))


async def test_a_modified_buffer_is_marked_until_saved(
    app_and_pilot: tuple[RunReplApp, Any], tmp_path: Path
) -> None:
    app, pilot = app_and_pilot
    file = tmp_path / "snip.ts"
    file.write_text("1 + 1\n")
    await app.main.editor_tabs.open_file(file)
    await pilot.pause()
    assert labels(app)[-1] == "snip.ts"
    await pilot.press("end", "x")
    assert labels(app)[-1] == "snip.ts ●"
    await pilot.press("backspace")
    assert labels(app)[-1] == "snip.ts"  # back to what is on disk
    await pilot.press("x", "ctrl+s")
    assert labels(app)[-1] == "snip.ts" and file.read_text() == "1 + 1x\n"


@pytest.mark.slow
async def test_closing_unsaved_work_asks_and_typing_does_not_answer(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await app.main.editor_tabs.action_new_buffer()
    await pilot.pause()
    await pilot.press(*"draft", "ctrl+w")
    await until(pilot, lambda: isinstance(app.screen, ConfirmClose))
    await pilot.press(*"word sdy")  # a bash hand deleting a word, then typing on
    assert isinstance(app.screen, ConfirmClose) and len(labels(app)) == 2
    await pilot.press("enter")  # Cancel has the focus
    await until(pilot, lambda: not isinstance(app.screen, ConfirmClose))
    assert labels(app) == ["untitled", "untitled-2 ●"]
    await pilot.press("ctrl+w")
    await until(pilot, lambda: isinstance(app.screen, ConfirmClose))
    await pilot.press("left", "enter")  # Discard is one step before Cancel
    await settle(pilot)
    assert labels(app) == ["untitled"]
    await pilot.press("ctrl+t")  # reopens it, text and all
    await settle(pilot)
    assert labels(app) == ["untitled", "untitled-2 ●"]
    assert app.main.editor_tabs.active_editor.text == "draft"


@pytest.mark.slow
async def test_save_from_the_question_writes_the_file_and_closes(
    app_and_pilot: tuple[RunReplApp, Any], tmp_path: Path
) -> None:
    app, pilot = app_and_pilot
    file = tmp_path / "keep.ts"
    file.write_text("")
    await app.main.editor_tabs.open_file(file)
    await pilot.pause()
    await pilot.press(*"42", "ctrl+w")
    await until(pilot, lambda: isinstance(app.screen, ConfirmClose))
    await pilot.click("#save")
    await settle(pilot)
    assert file.read_text() == "42" and labels(app) == ["untitled"]


async def test_an_unmodified_buffer_closes_at_once_and_comes_back(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    await app.main.editor_tabs.action_new_buffer("'example'", title="example")
    await pilot.pause()
    await pilot.press("ctrl+w")
    await settle(pilot)
    assert labels(app) == ["untitled"]
    await pilot.press("ctrl+t")
    await settle(pilot)
    assert labels(app) == ["untitled", "example"]
    assert app.main.editor_tabs.active_editor.text == "'example'"


@pytest.mark.slow
async def test_keys_switch_tabs_and_the_active_tab_is_always_in_view(data_dir: Path) -> None:
    app = make_app(data_dir)
    app.animation_level = "full"  # as in most terminals: the strip scrolls, then the tab is in view
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        tabs = app.main.editor_tabs
        for _ in range(12):
            await pilot.press("ctrl+n")
            await settle(pilot)
            await pilot.wait_for_scheduled_animations()  # the strip's scroll, to its end
            active = tabs.tabs.active_tab
            strip = tabs.tabs.query_one("#tabs-scroll").region
            assert strip.contains_region(active.region), active.label
        assert str(tabs.tabs.active_tab.label) == "untitled-13"
        await pilot.press("ctrl+pagedown")  # past the last: the first
        await settle(pilot)
        assert str(tabs.tabs.active_tab.label) == "untitled"
        await pilot.press("ctrl+pageup")
        await settle(pilot)
        assert str(tabs.tabs.active_tab.label) == "untitled-13"
        await pilot.press("alt+left")
        await settle(pilot)
        assert str(tabs.tabs.active_tab.label) == "untitled-12"
        await pilot.press("alt+right")
        await settle(pilot)
        assert str(tabs.tabs.active_tab.label) == "untitled-13"
        assert app.focused is tabs.active_editor


async def test_restoring_makes_one_editor_and_the_rest_when_shown(data_dir: Path) -> None:
    saved_buffers(data_dir, 30)
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        # EditorTabs adds the other tabs two refreshes after it mounts: wait for them.
        await until(pilot, lambda: len(labels(app)) == 30)
        assert [e.text for e in app.query(CodeEditor)] == ["'buffer 2'"]  # the active one only
        await pilot.press("ctrl+pagedown")
        await settle(pilot)
        assert app.main.editor_tabs.active_editor.text == "'buffer 3'"
        assert len(app.query(CodeEditor)) == 2
        await pilot.press("ctrl+q")
    again = json.loads((data_dir / "buffers.json").read_text())
    assert [b["text"] for b in again["buffers"]] == [f"'buffer {n}'" for n in range(30)]
    assert again["active"] == 3


async def test_empty_untitled_buffers_are_not_kept(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await set_source(pilot, "'kept'")
        for _ in range(3):
            await pilot.press("ctrl+n")
            await settle(pilot)
        await pilot.press(*"'typed'")
        await pilot.press("ctrl+q")
    again = json.loads((data_dir / "buffers.json").read_text())
    assert [b["text"] for b in again["buffers"]] == ["'kept'", "'typed'"]
    assert again["active"] == 1


async def test_a_corrupt_buffers_file_is_kept_aside_with_a_warning(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "buffers.json").write_text('{"buffers": [{"title": "half')
    app = make_app(data_dir)
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert labels(app) == ["untitled"]
    aside = list(data_dir.glob("buffers.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == '{"buffers": [{"title": "half'
    assert any("unreadable" in note and str(aside[0]) in note for note in notes)


async def test_keys_typed_right_after_a_new_tab_go_into_it(
    app_and_pilot: tuple[RunReplApp, Any],
) -> None:
    app, pilot = app_and_pilot
    first = app.main.editor_tabs.active_editor.text
    for key in ["ctrl+n", "4", "2"]:  # posted at once, as a fast hand sends them
        app.post_message(events.Key(key, None if key.startswith("ctrl") else key))
    await settle(pilot)
    assert labels(app) == ["untitled", "untitled-2 ●"]
    assert app.main.editor_tabs.active_editor.text == "42"
    assert app.main.editor_tabs.buffers[0].text == first


async def test_ctrl_w_right_after_typing_asks(app_and_pilot: tuple[RunReplApp, Any]) -> None:
    app, pilot = app_and_pilot
    await app.main.editor_tabs.action_new_buffer()
    await pilot.pause()
    for key in [*"draft", "ctrl+w"]:  # at once: the close must see the text typed before it
        app.post_message(events.Key(key, None if key.startswith("ctrl") else key))
    await until(pilot, lambda: isinstance(app.screen, ConfirmClose))
    assert labels(app) == ["untitled", "untitled-2 ●"]


async def test_a_restored_active_tab_far_along_the_strip_is_in_view(data_dir: Path) -> None:
    """The tabs restored after the first paint push the strip: the active one stays in view."""
    data_dir.mkdir(parents=True, exist_ok=True)
    buffers = [{"title": f"buffer-{n}.ts", "text": f"'b {n}'", "path": None} for n in range(12)]
    (data_dir / "buffers.json").write_text(json.dumps({"active": 10, "buffers": buffers}))
    app = make_app(data_dir)
    app.animation_level = "full"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        tabs = app.main.editor_tabs
        assert len(labels(app)) == 12
        active = tabs.tabs.active_tab
        assert active is not None and str(active.label) == "buffer-10.ts"
        strip = tabs.tabs.query_one("#tabs-scroll").region
        assert strip.contains_region(active.region), (strip, active.region)


async def test_empty_untitled_buffers_are_not_restored(data_dir: Path) -> None:
    app = make_app(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(3):
            await app.main.editor_tabs.action_new_buffer()
        await app.main.editor_tabs.action_new_buffer("kept")
        await settle(pilot)
        assert len(labels(app)) == 5
        await pilot.press("ctrl+q")
    again = make_app(data_dir)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert labels(again) == ["untitled", "untitled-5"]
