"""Inline approvals: the interrupted run's calls, asked one at a time, in the screen.

Not a dialog over everything: the logs, calls and value stay readable while a
person decides. Deciding is deliberate, whatever else is being typed:

- the prompt appears without taking the focus (the editor keeps every key);
- it takes keys only once engaged, by a key no one types as text (F3, or
  ctrl+o then `a`) or a click, and only until the focus leaves it;
- keys are ignored for a moment (ARM_SECONDS) after each approval appears, so
  a key pressed twice never decides the next one of a batch;
- approving a function for the whole session asks once more (enter).

What is asked is shown whole, in present/'s words: the message, then every
argument in full (wrapped, each wrapped row marked `↪`; the panel scrolls), with its type and length; runs
of blanks and invisible characters in strings are marked, never hidden.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import NoScreen
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from ...present.approvals import (
    approval_message,
    argument_lines,
    json_fragments,
    message_fragments,
)
from ...present.formats import plural, pretty_json
from ...present.rich_render import RICH_STYLES, WrappedLines
from ...present.styled import Line, line, styled
from ...sandbox.result import Interruption
from ..guest_text import safe_text
from ..messages import ApprovalDecided
from ..themes import present_styles

ARM_SECONDS = 0.5
"""Keys reaching the prompt this soon after an approval appears are ignored."""


def approval_lines(interruption: Interruption) -> list[Line]:
    """Everything a person is asked to approve, in present/'s words (the CLI, the line
    REPL and the inbox say it the same way): the message, the call, each argument
    whole with its type and size, blank runs and invisible characters marked."""
    args = interruption.args
    message = approval_message(interruption.payload, interruption.path)
    out = [message_fragments(message)]  # one line: nothing in it passes for the lines below
    out.append(line(("path", interruption.path), ("dim", f"  {plural(len(args), 'argument')}")))
    out += argument_lines(args, indent="")
    payload = interruption.payload if isinstance(interruption.payload, dict) else {}
    kind = payload.get("kind")
    if kind and kind != "approval":
        out.append(styled("dim", "payload"))
        out += [[("", "  "), *json_fragments(t)] for t in pretty_json(payload).split("\n")]
    return out


def approval_text(
    interruption: Interruption, styles: Mapping[str, str] = RICH_STYLES
) -> WrappedLines:
    """`approval_lines` for the panel: wrapped at its width, never cut, each wrapped row
    marked, so no row of a snippet's text passes for a line of the question."""
    return WrappedLines(approval_lines(interruption), styles)


class ApprovalPrompt(Vertical):
    """The pending approvals of the interrupted run, one at a time; F3 engages it."""

    class Left(Message):
        """The person left the prompt without deciding: the editor takes the keys again."""

    HELP: ClassVar[str] = """\
### Approval
The run paused: a host function needs a decision before it runs. The prompt
never takes the keys you type elsewhere: the editor keeps them.

- **F3** (or **ctrl+o** then **a**, or a click): engage the prompt to decide
- then **y**: approve, **n**: deny (the snippet's await throws RUN_APPROVAL_DENIED)
- **a**: approve this function for the rest of the session; **enter** confirms
- **escape**: back to the editor without deciding; **↑↓ pgup pgdn**: scroll long arguments

Keys are ignored for half a second after each approval appears (the prompt says so).
Quitting leaves pending approvals in the store: `run-repl approvals list`.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide(True)", "Approve", id="approval.approve"),
        Binding("n", "decide(False)", "Deny", id="approval.deny"),
        Binding("a", "ask_always", "Approve for the session", id="approval.always"),
        Binding("enter", "confirm_always", "Yes, for the session", id="approval.confirm"),
        Binding("escape", "back", "Back", id="approval.back"),
        Binding("up", "scroll('up')", "Scroll up", show=False, id="approval.up"),
        Binding("down", "scroll('down')", "Scroll down", show=False, id="approval.down"),
        Binding("pageup", "scroll('pageup')", "Page up", show=False, id="approval.page_up"),
        Binding("pagedown", "scroll('pagedown')", "Page down", show=False, id="approval.page_down"),
    ]

    DEFAULT_CSS = """
    ApprovalPrompt {
        display: none; height: auto; padding: 0 1;
        border: round $warning; border-title-color: $warning; border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $warning 10%;
    }
    ApprovalPrompt.-pending { display: block; }
    ApprovalPrompt:focus {
        border: thick $accent; border-title-color: $accent; border-subtitle-color: $text;
        background: $accent 10%;
    }
    ApprovalPrompt #approval-body { height: auto; max-height: 40vh; scrollbar-size-vertical: 1; }
    ApprovalPrompt #approval-keys { height: auto; color: $text-muted; margin-top: 1; }
    ApprovalPrompt:focus #approval-keys { color: $text; text-style: bold; }
    ApprovalPrompt.-confirm #approval-keys { color: $text-warning; }
    """

    engaged: reactive[bool] = reactive(False, bindings=True)
    """True while the prompt holds the focus by a deliberate act: only then do keys decide."""

    confirming: reactive[bool] = reactive(False, bindings=True)
    """True while "approve for the session" waits for its confirmation."""

    def __init__(
        self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(id=id)
        self.clock = clock
        """Seconds, for ARM_SECONDS (tests pass their own, to step it)."""
        self.can_focus = True
        self.queue: list[Interruption] = []
        self.total = 0
        self.shown_at = 0.0
        self.ignored = ""
        """The last key dropped as too soon, said in the key line until the next change."""
        self._body = Static(id="approval-text")
        self._keys = Static(id="approval-keys")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="approval-body") as body:
            body.can_focus = False  # its keys would reach this prompt's bindings
            yield self._body
        yield self._keys

    # ------------------------------------------------------------------ state
    def ask(self, interruptions: list[Interruption]) -> None:
        """Show these approvals, first one first; the focus stays where it is."""
        self.queue = list(interruptions)
        self.total = len(self.queue)
        self._show()

    def clear(self) -> None:
        self.queue = []
        self._show()

    def drop(self, interruption_id: str) -> Interruption | None:
        """Stop asking one approval (decided in the inbox, or elsewhere); the next shows."""
        for it in self.queue:
            if it.id == interruption_id:
                was_current = it is self.current
                self.queue.remove(it)
                if was_current or not self.queue:
                    self._show()
                else:
                    self._update_keys()
                return it
        return None

    @property
    def asking(self) -> frozenset[str]:
        """The ids of the approvals this prompt still asks."""
        return frozenset(it.id for it in self.queue)

    @property
    def current(self) -> Interruption | None:
        return self.queue[0] if self.queue else None

    @property
    def armed(self) -> bool:
        """Whether keys may decide yet (not in the moment after an approval appeared)."""
        return self.clock() - self.shown_at >= ARM_SECONDS

    def allow_focus(self) -> bool:
        # Never by tab, shift+tab or a panel-cycling key: only `engage()` focuses it.
        return self.engaged and self.current is not None

    def engage(self) -> None:
        """Take the keys, to decide (F3, the jump overlay, a click)."""
        if self.current is None:
            return
        if not self.engaged:
            # Keys typed right after a stray F3, ctrl+o a or click were meant elsewhere:
            # they wait as after an approval appears.
            self.shown_at = self.clock()
        self.engaged = True
        # Now, not by `focus()` (a callback queued behind the keys already typed): the
        # `y` of a fast "F3 y" is this prompt's to ignore, never the editor's to insert.
        try:
            self.screen.set_focus(self)
        except NoScreen:
            pass

    def _show(self) -> None:
        it = self.current
        self.set_class(it is not None, "-pending")
        self.confirming = False
        if it is None:
            self._body.update("")
            self.border_title = ""
            self.engaged = False
            return
        self.shown_at = self.clock()
        self.ignored = ""
        n = self.total - len(self.queue) + 1
        self.border_title = f"Approval {n} of {self.total} · {safe_text(it.path)}"
        self._body.update(approval_text(it, present_styles(self.app.current_theme)))
        self.query_one("#approval-body", VerticalScroll).scroll_home(animate=False)
        self._update_keys()

    def _update_keys(self) -> None:
        it = self.current
        if it is None:
            return
        path = safe_text(it.path)
        if self.confirming:
            hint = (
                f"Approve every {path} call for the rest of this session, without asking?"
                "   enter: yes   any other key: no"
            )
        elif self.engaged:
            hint = f"y approve   n deny   a approve {path} for the session   esc back to the editor"
        else:
            hint = "F3 (or ctrl+o a) to decide · your keys still go to the editor"
        if self.ignored:
            hint = f"ignored: too soon ({self.ignored}), keys wait {ARM_SECONDS:g} s · {hint}"
        self.border_subtitle = "deciding" if self.engaged else "F3 to decide"
        self._keys.update(hint)

    def watch_engaged(self) -> None:
        self.ignored = ""
        self._update_keys()

    def watch_confirming(self, confirming: bool) -> None:
        self.ignored = ""
        if confirming:
            self.shown_at = self.clock()  # the question is new: its answer waits too
        self.set_class(confirming, "-confirm")
        self._update_keys()

    def on_blur(self, event: events.Blur) -> None:
        # A modal over the screen (help) takes the focus for a while: stay engaged.
        if self.app.screen is self.screen:
            self.engaged = False
            self.confirming = False

    def on_click(self) -> None:
        self.engage()

    async def on_key(self, event: events.Key) -> None:
        # While confirming, enter says yes and any other key says no: nothing else decides.
        if self.confirming and event.key != "enter":
            event.stop()
            event.prevent_default()
            self.confirming = False
        elif self.engaged and event.key != "escape" and not self.armed:
            # Typed inside the guard (a burst after F3, a key pressed twice): the prompt
            # drops it, says so, and passes it to no other widget.
            event.stop()
            event.prevent_default()
            self._too_soon(event.key)

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("decide", "ask_always"):
            return self.current is not None and not self.confirming
        if action == "confirm_always":
            return self.confirming
        return True

    def _too_soon(self, key: str = "") -> bool:
        if self.armed:
            return False
        self.app.bell()
        # Said until the prompt's state next changes (a decision, a new question, leaving).
        self.ignored = safe_text(key) or "key"
        self._update_keys()
        return True

    def action_decide(self, approved: bool) -> None:
        it = self.current
        if it is None or self._too_soon():
            return
        self.queue.pop(0)
        self.post_message(ApprovalDecided(it.id, approved))
        self._show()

    def action_ask_always(self) -> None:
        if self.current is None or self._too_soon():
            return
        self.confirming = True

    def action_confirm_always(self) -> None:
        it = self.current
        if it is None or not self.confirming or self._too_soon():
            return
        self.queue.pop(0)
        self.post_message(ApprovalDecided(it.id, True, approve_path=True))
        self._show()

    def action_back(self) -> None:
        if self.confirming:
            self.confirming = False
            return
        self.engaged = False
        self.post_message(self.Left())

    def action_scroll(self, where: str) -> None:
        body = self.query_one("#approval-body", VerticalScroll)
        {
            "up": lambda: body.scroll_up(animate=False),
            "down": lambda: body.scroll_down(animate=False),
            "pageup": lambda: body.scroll_page_up(animate=False),
            "pagedown": lambda: body.scroll_page_down(animate=False),
        }[where]()
