"""The approval prompt's rules, in a small App of its own with a clock the test
steps (as Textual tests TextArea): no workspace, no demo database, no run.

Deciding is deliberate: the prompt never takes keys typed for something else
(tab and shift+tab pass it by; it takes keys only once engaged), ignores keys for
ARM_SECONDS after each approval appears and after each engaging, and asks once
more (enter) before approving a function for the session. What a decision does
to the run is tested in the whole IDE (test_tui_approvals.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, TextArea

from run_repl.sandbox.result import Interruption
from run_repl.tui.components.approval_prompt import ARM_SECONDS, ApprovalPrompt
from run_repl.tui.messages import ApprovalDecided


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = ARM_SECONDS) -> None:
        self.now += seconds


def publish(n: int) -> Interruption:
    return Interruption(
        id=f"int_{n}",
        path="documents.publish",
        args=[f"draft_0{n}"],
        payload={"kind": "approval", "message": f"Publish draft_0{n}?"},
    )


class PromptApp(App[None]):
    """An editor, another field, and the prompt; F3 engages it as the IDE's F3 does."""

    # A priority binding, as the IDE's F3: handled before the focused widget's keys.
    BINDINGS: ClassVar[list[BindingType]] = [Binding("f3", "engage", "Decide", priority=True)]

    def __init__(self) -> None:
        super().__init__()
        self.clock = Clock()
        self.decided: list[tuple[str, bool, bool]] = []
        self.left = 0

    def compose(self) -> ComposeResult:
        yield TextArea(id="editor")
        yield Input(id="other")
        yield ApprovalPrompt(clock=self.clock)

    @property
    def prompt(self) -> ApprovalPrompt:
        return self.query_one(ApprovalPrompt)

    @property
    def editor(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    def action_engage(self) -> None:
        self.prompt.engage()

    @on(ApprovalDecided)
    def _decided(self, event: ApprovalDecided) -> None:
        self.decided.append((event.interruption_id, event.approved, event.approve_path))

    @on(ApprovalPrompt.Left)
    def _left(self) -> None:
        self.left += 1
        self.editor.focus()


async def asking(pilot: Any, *interruptions: Interruption) -> ApprovalPrompt:
    """The prompt asking these, the editor focused, the arming moment passed."""
    app: PromptApp = pilot.app
    app.editor.focus()
    app.prompt.ask(list(interruptions))
    await pilot.pause()
    app.clock.advance()
    return app.prompt


async def test_an_approval_appears_without_taking_the_focus_and_typing_decides_nothing() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        app.editor.focus()
        await pilot.press(*"// now")
        app.prompt.ask([publish(1)])
        await pilot.pause()
        assert app.prompt.has_class("-pending") and app.focused is app.editor
        app.clock.advance(3600)  # long on screen: only engaging would let keys decide
        await pilot.press(*" y n a", "enter", *"yes")
        assert app.editor.text == "// now y n a\nyes"
        assert app.focused is app.editor and app.prompt.current is not None
        assert app.decided == []


async def test_tab_and_shift_tab_pass_the_prompt_by() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        app.query_one("#other", Input).focus()
        for key in ["tab"] * 4 + ["shift+tab"] * 4:
            await pilot.press(key)
            assert app.focused is not prompt, key
        assert prompt.current is not None and not prompt.engaged and app.decided == []


async def test_f3_engages_and_y_approves() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        assert "F3" in str(prompt.border_subtitle)
        await pilot.press("f3")
        assert app.focused is prompt and prompt.engaged
        assert str(prompt.border_subtitle) == "deciding"
        app.clock.advance()
        await pilot.press("y")
        assert app.decided == [("int_1", True, False)]
        assert prompt.current is None and not prompt.has_class("-pending")


async def test_n_denies() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        await asking(pilot, publish(1))
        await pilot.press("f3")
        app.clock.advance()
        await pilot.press("n")
        assert app.decided == [("int_1", False, False)]


async def test_escape_leaves_the_prompt_without_deciding() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        await pilot.press("f3")
        app.clock.advance()
        await pilot.press("escape")
        assert not prompt.engaged and app.left == 1 and app.focused is app.editor
        await pilot.press("y")  # the editor's again
        assert prompt.current is not None and app.decided == [] and app.editor.text == "y"


async def test_a_click_engages_the_prompt() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        await pilot.click(ApprovalPrompt)
        assert prompt.engaged and app.focused is prompt


async def test_keys_right_after_an_approval_appears_are_ignored() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        app.editor.focus()
        app.prompt.ask([publish(1), publish(2)])
        await pilot.pause()
        prompt = app.prompt
        assert prompt.total == 2
        await pilot.press("f3", "y", "n", "a")
        assert prompt.current is not None and len(prompt.queue) == 2 and not prompt.confirming
        assert app.decided == []
        app.clock.advance()  # the moment has passed
        await pilot.press("y")
        assert app.decided == [("int_1", True, False)]
        assert "Approval 2 of 2" in str(prompt.border_title)
        # The second approval has just appeared: the same key pressed again does not decide it.
        await pilot.press("y")
        assert len(prompt.queue) == 1 and prompt.engaged and len(app.decided) == 1
        app.clock.advance(ARM_SECONDS / 2)
        await pilot.press("n")  # still too soon
        assert len(app.decided) == 1
        app.clock.advance(ARM_SECONDS / 2)
        await pilot.press("n")
        assert app.decided == [("int_1", True, False), ("int_2", False, False)]


async def test_engaging_a_prompt_shown_long_ago_waits_again_before_keys_decide() -> None:
    """A stray F3 (or ctrl+o a, or a click) and then typing "and..." meant for the editor:
    the keys after engaging wait as they do after an approval appears."""
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        app.clock.advance(7200)  # on screen long enough to be decided
        await pilot.press("f3", "a", "n")
        assert prompt.engaged and prompt.current is not None and not prompt.confirming
        await pilot.press("escape", "f3", "y")
        assert prompt.current is not None and app.decided == []
        app.clock.advance()
        await pilot.press("y")
        assert app.decided == [("int_1", True, False)]


async def test_approving_for_the_session_asks_once_more() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        await pilot.press("f3")
        app.clock.advance()
        await pilot.press("a")
        assert prompt.confirming and prompt.current is not None
        assert "enter: yes" in str(prompt.query_one("#approval-keys").render())
        await pilot.press("y")  # any key but enter says no
        assert not prompt.confirming and prompt.current is not None and app.decided == []
        app.clock.advance()
        await pilot.press("a", "enter")  # the question is new: its answer waits too
        assert prompt.confirming and app.decided == []
        app.clock.advance()
        await pilot.press("enter")
        assert app.decided == [("int_1", True, True)]
        assert prompt.current is None and not prompt.confirming


async def test_escape_while_confirming_goes_back_to_the_question_not_the_editor() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        await pilot.press("f3")
        app.clock.advance()
        await pilot.press("a")
        assert prompt.confirming
        await pilot.press("escape")
        # Any key but enter says no (escape included); the prompt keeps the keys.
        assert not prompt.confirming and prompt.engaged and app.left == 0
        assert app.decided == []


def burst(app: PromptApp, *keys: str) -> None:
    """Keys as a terminal delivers a fast burst: all queued before the first is handled."""
    from textual import events

    assert app._driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)


async def test_keys_in_a_burst_after_f3_are_the_prompts_and_are_ignored_visibly() -> None:
    """F3 then `y` in one burst: the `y` reaches the prompt (never the editor), inside the
    guard it decides nothing, and the prompt says it ignored it."""
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        burst(app, "f3", "y", "x", "n")
        await pilot.pause()
        await pilot.pause()
        assert app.editor.text == "" and app.decided == []
        assert app.focused is prompt and prompt.engaged
        assert "ignored: too soon" in str(prompt.query_one("#approval-keys").render())
        app.clock.advance()
        await pilot.press("y")
        assert app.decided == [("int_1", True, False)]


async def test_pilot_f3_y_puts_nothing_in_the_editor() -> None:
    app = PromptApp()
    async with app.run_test() as pilot:
        prompt = await asking(pilot, publish(1))
        await pilot.press("f3", "y")
        assert app.editor.text == "" and app.decided == [] and app.focused is prompt
        assert "ignored: too soon" in str(prompt.query_one("#approval-keys").render())
