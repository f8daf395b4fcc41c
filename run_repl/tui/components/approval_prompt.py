"""Inline approvals: the interrupted run's calls, asked one at a time, in the screen.

Not a dialog over everything: the logs, calls and value stay readable while a
person decides.
"""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from ...present.sanitize import safe as clean
from ...sandbox.result import Interruption
from ..messages import ApprovalDecided


class ApprovalPrompt(Static, can_focus=True):
    HELP: ClassVar[str] = """\
### Approval
The run paused: a host function needs a decision before it runs.

- **y**: approve, **n**: deny (the snippet's await throws RUN_APPROVAL_DENIED)
- **a**: approve, and approve this function for the rest of the session
Quitting leaves pending approvals in the store: `run-repl approvals list`.
"""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "decide(True)", "Approve", id="approval.approve"),
        Binding("n", "decide(False)", "Deny", id="approval.deny"),
        Binding("a", "always", "Approve always", id="approval.always"),
    ]

    DEFAULT_CSS = """
    ApprovalPrompt {
        display: none; height: auto; max-height: 12; padding: 0 1;
        border: tall $warning; background: $warning 15%;
    }
    ApprovalPrompt.-pending { display: block; }
    ApprovalPrompt:focus { border: tall $accent; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.queue: list[Interruption] = []
        self.total = 0

    def ask(self, interruptions: list[Interruption]) -> None:
        self.queue = list(interruptions)
        self.total = len(self.queue)
        self._show()

    def clear(self) -> None:
        self.queue = []
        self._show()

    @property
    def current(self) -> Interruption | None:
        return self.queue[0] if self.queue else None

    def _show(self) -> None:
        it = self.current
        self.set_class(it is not None, "-pending")
        if it is None:
            self.update("")
            return
        payload = it.payload if isinstance(it.payload, dict) else {}
        message = payload.get("message") or f"{it.path} is waiting for a decision"
        n = self.total - len(self.queue) + 1
        text = Text()
        text.append(f"Approval {n} of {self.total}: ", style="bold")
        text.append(clean(str(message)), style="bold")
        text.append(f"\n{it.path}", style="bold cyan")
        args = json.dumps(it.args, ensure_ascii=False, default=str)
        text.append("(" + (args[1:-1] if len(args) < 400 else args[1:397] + "…") + ")")
        kind = payload.get("kind")
        if kind and kind != "approval":
            text.append(
                f"\nkind: {kind}  payload: {json.dumps(payload, default=str)[:300]}", style="dim"
            )
        text.append(
            "\n[y] approve   [n] deny   [a] approve this function for the session", style="dim"
        )
        self.update(text)

    def action_decide(self, approved: bool) -> None:
        it = self.current
        if it is None:
            return
        self.queue.pop(0)
        self.post_message(ApprovalDecided(it.id, approved))
        self._show()

    def action_always(self) -> None:
        it = self.current
        if it is None:
            return
        self.queue.pop(0)
        self.post_message(ApprovalDecided(it.id, True, approve_path=True))
        self._show()
