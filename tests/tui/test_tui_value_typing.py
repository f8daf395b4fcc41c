"""Text typed into the Value panel by mistake: after a key that is none of the panel's
(a letter that is no command, a space, a bracket), the keys that come with it are
typing too, and do nothing; the panel says once where typing goes. A command key
pressed on its own still acts. Time is the panel's own clock, set by the test."""

from __future__ import annotations

from typing import Any

from test_tui_value_view import FakePager, Harness, run, windowed
from textual.app import App

from run_repl.tui.components.value.view import ValueView

ITEMS = [{"i": i, "name": f"n{i}"} for i in range(500)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def state(view: ValueView) -> tuple[Any, ...]:
    model = view.model
    return (model.offset, view.view, view.prompt, view.has_class("-table"), view.has_class("-tree"))


async def typed(pilot: Any, clock: Clock, text: str, step: float = 0.05) -> None:
    for key in text:
        clock.now += step
        name = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis"}.get(key, key)
        name = {"=": "equals_sign", ">": "greater_than_sign", "!": "exclamation_mark"}.get(
            key, name
        )
        name = {".": "full_stop"}.get(key, name)
        await pilot.press(name)
    await pilot.pause()


def notices(app: App[Any]) -> list[str]:
    return [n.message for n in app._notifications]


async def test_a_sentence_typed_into_the_panel_changes_nothing() -> None:
    app = Harness(windowed(ITEMS, 40), FakePager(ITEMS))
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        clock = Clock()
        view.clock = clock
        before = state(view)
        await typed(pilot, clock, "const todo = drafts.filter((d) => !d.published)")
        clock.now += 0.05
        await pilot.press("enter")
        await pilot.pause()
        assert state(view) == before
        assert app.copied == []
        said = [n for n in notices(app) if "typing" in n.lower()]
        assert len(said) == 1 and "editor" in said[0]


async def test_a_command_key_on_its_own_still_acts() -> None:
    app = Harness(windowed(ITEMS, 40), FakePager(ITEMS))
    async with run(app) as pilot:
        await pilot.pause()
        view = app.query_one(ValueView)
        clock = Clock()
        view.clock = clock
        await typed(pilot, clock, "x")  # a stray letter...
        clock.now += 1.0  # ...then a pause: the next key is a command again
        await pilot.press("n")
        await pilot.pause()
        assert view.model.offset == 40
        clock.now += 0.1
        await pilot.press("n")  # commands in quick succession are paging, not typing
        await pilot.pause()
        assert view.model.offset > 40
