"""The approvals inbox (F6): every open approval in the store, from any process, live.

Each with its call and every argument whole, the calls its run already made,
and the snippet. Deciding is as deliberate as the inline prompt's:

- the screen opens only by a key no one types as text (F6, the palette);
- keys are ignored for a moment (the prompt's ARM_SECONDS) after it opens and
  whenever the approval under the cursor changes, whether the person moved
  or the list did (an approval that appears or goes never slides under a key
  already on its way);
- the decision is for the approval whose detail is on screen, by its id;
- approving a function for the session asks once more (enter); recovering a
  stuck approval asks in a dialog whose focused button is Cancel.

The screen only shows and asks: the app decides (`on_decide`), through the
inline prompt for the run on screen, else through the store's flow in a worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.widgets.data_table import CellDoesNotExist
from textual.worker import get_current_worker

from ...present import formats
from ...present.approvals import approval_detail_lines, describe_state
from ...present.history import format_when
from ...present.results import calls_made_lines
from ...present.rich_render import WrappedLines, lines_to_text, to_text
from ...present.styled import Line, line, styled
from ...store import PendingApproval, RunRecord
from ..approvals_inbox import ApprovalsInbox, InboxRow
from ..components import approval_prompt
from ..components.confirm import Confirm
from ..guest_text import safe_text
from ..themes import present_styles
from ..toast_place import keep_toasts_above

STATE_STYLE = {
    "pending": "warn",
    "stuck": "error",
    "queued": "info",
    "claimed": "info",
    "executing": "info",
}
CALL_WIDTH = 90  # the list's call column: the detail below has every argument whole
COLUMNS = (
    ("state", "state"),
    ("age", "waited"),
    ("host", "host"),
    ("call", "call"),
    ("origin", "from"),
)


def _cut(text: str, width: int) -> str:
    width = max(width, 8)
    return text if len(text) <= width else text[: width - 1] + "…"


class ConfirmRecover(Confirm[bool]):
    """Recovering a stuck approval: what it does, and Cancel focused."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "safe", "Cancel", id="confirm_recover.cancel"),
    ]

    DEFAULT_CSS = """
    ConfirmRecover > Vertical { width: 72; border: thick $error; }
    """

    def __init__(self, approval: PendingApproval) -> None:
        super().__init__()
        self.approval = approval

    def question(self) -> Text:
        a = self.approval
        return Text.assemble(
            ("Recover ", "bold"),
            (safe_text(a.path), "bold"),
            (f" ({a.id})?\n\n", "bold"),
            safe_text(describe_state(a)),
            (
                "\n\nRecovering records that its calls may have run and ends it: "
                "nothing runs again, and its run does not resume.",
                "dim",
            ),
        )

    def buttons(self) -> list[tuple[str, str, str]]:
        return [("Recover", "recover", "error"), ("Cancel", "cancel", "default")]

    def answer(self, button_id: str) -> bool:
        return button_id == "recover"


Decide = Callable[[PendingApproval, bool, bool], None]
"""(approval, approved, for the rest of the session): the app carries it out."""


class ApprovalsScreen(ModalScreen[None]):
    """Every open approval of the store; y / n decide the one on screen."""

    HELP: ClassVar[str] = """\
## Approvals inbox

Every approval waiting in the store, from this IDE, other IDEs, `run-repl run`,
the line REPL and agents over MCP, kept up to date as they come and go. The
detail shows the call with every argument whole, the calls its run already
made, and the snippet.

- **y**: approve (the run resumes; the result shows below)
- **n**: deny (the snippet's await throws RUN_APPROVAL_DENIED)
- **a**: approve, and approve this function for the rest of this IDE's session
  (runs of this IDE are not asked again; other processes still ask); **enter** confirms
- **R**: recover a stuck approval (its resume started and never finished); asks first
- **↑/↓**: choose; **tab**: to the detail, to scroll it; **escape**: close

Keys wait half a second after the approval under the cursor changes, so a key
meant for one approval never decides the next.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide(True)", "Approve", id="inbox.approve"),
        Binding("n", "decide(False)", "Deny", id="inbox.deny"),
        Binding("a", "ask_always", "Approve for the session", id="inbox.always"),
        # Before the list's own enter, and only while the question is asked.
        Binding(
            "enter", "confirm_always", "Yes, for the session", id="inbox.confirm", priority=True
        ),
        Binding("R", "recover", "Recover", id="inbox.recover"),
        Binding("escape,f6", "close", "Close", id="inbox.close"),
    ]

    DEFAULT_CSS = """
    ApprovalsScreen { align: center middle; }
    ApprovalsScreen > #inbox-dialog {
        width: 94%; height: 92%;
        border: thick $warning 70%; background: $surface; padding: 0 1;
        border-title-color: $text-warning; border-title-style: bold;
    }
    ApprovalsScreen #inbox-count { height: 1; color: $text-muted; }
    ApprovalsScreen #inbox-list { height: auto; max-height: 40%; min-height: 3; }
    ApprovalsScreen #inbox-detail {
        height: 1fr; min-height: 4;
        border: round $foreground 25%; border-title-color: $text-muted;
    }
    ApprovalsScreen #inbox-detail:focus { border: round $accent; }
    ApprovalsScreen #inbox-detail-text { padding: 0 1; }
    ApprovalsScreen #inbox-outcomes {
        height: auto; max-height: 9; border-top: solid $foreground 20%;
    }
    ApprovalsScreen #inbox-outcomes.-empty { display: none; }
    ApprovalsScreen #inbox-keys { height: 1; color: $text-muted; }
    ApprovalsScreen.-confirm #inbox-keys { color: $text-warning; text-style: bold; }
    """

    @dataclass
    class RunLoaded(Message):
        """The run an approval belongs to, read from the history in a thread."""

        run_id: str
        run: RunRecord | None

    def __init__(self, inbox: ApprovalsInbox, on_decide: Decide) -> None:
        super().__init__()
        self.inbox = inbox
        self.on_decide = on_decide
        self.selected: str | None = None
        self.shown_at = time.monotonic()
        self.confirming: str | None = None
        self._runs: dict[str, RunRecord | None] = {}
        self._calls_made: dict[str, list[Line]] = {}  # a run's calls in words, made once
        self._rows: list[InboxRow] = []
        self._built = False  # until on_mount: its widgets come over several turns of the loop

    def compose(self) -> ComposeResult:
        with Vertical(id="inbox-dialog") as dialog:
            dialog.border_title = "Approvals"
            yield Static(id="inbox-count")
            table: DataTable[Any] = DataTable(
                id="inbox-list", cursor_type="row", zebra_stripes=True
            )
            yield table
            with VerticalScroll(id="inbox-detail") as detail:
                detail.border_title = "Detail"
                yield Static(id="inbox-detail-text")
            yield Static(id="inbox-outcomes", classes="-empty")
            yield Static(id="inbox-keys")

    def on_mount(self) -> None:
        table = self.query_one("#inbox-list", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self._built = True
        table.focus()
        self.shown_at = time.monotonic()
        self.refresh_inbox()
        self.watch(self.app, "theme", lambda: self.refresh_inbox(), init=False)
        self.call_after_refresh(self._place_toasts)

    def on_resize(self) -> None:
        self.call_after_refresh(self._place_toasts)

    def _place_toasts(self) -> None:
        # News from other runs comes as toasts while the inbox is open: never over its keys.
        keep_toasts_above(self, self.query_one("#inbox-keys"))

    # ------------------------------------------------------------------ showing
    @property
    def styles_map(self) -> dict[str, str]:
        return present_styles(self.app.current_theme)

    def _text(self, lines: list[Line]) -> Text:
        return lines_to_text(lines, self.styles_map)

    def refresh_inbox(self) -> None:
        """Show the inbox's list as it is now; the cursor stays on the approval it was on."""
        if not self._built:
            # Pushed and not built yet (the list may be there without its columns, the
            # detail not at all): on_mount shows the inbox as it is then.
            return
        table = self.query_one("#inbox-list", DataTable)
        inbox = self.inbox
        now = time.time()
        rows = [InboxRow.of(a, here=self.inbox.here, now=now) for a in inbox.approvals]
        keep = self.selected
        old_index = next((i for i, r in enumerate(self._rows) if r.id == keep), 0)
        if [r.id for r in rows] != [r.id for r in self._rows]:
            table.clear()
            for row in rows:
                table.add_row(*self._cells(row), key=row.id)
        else:
            for row in rows:
                for (key, _), cell in zip(COLUMNS, self._cells(row), strict=True):
                    table.update_cell(row.id, key, cell)
        self._rows = rows
        ids = [r.id for r in rows]
        if keep in ids:
            table.move_cursor(row=ids.index(keep), animate=False)
        elif rows:
            table.move_cursor(row=min(old_index, len(rows) - 1), animate=False)
        self._count()
        self._show_selected()
        self._show_outcomes()

    def _cells(self, row: InboxRow) -> tuple[RenderableType, ...]:
        styles = self.styles_map
        state = row.state
        if row.id in self.inbox.deciding:
            state = "deciding…"
        return (
            to_text([(STATE_STYLE.get(row.state, "dim"), state)], styles),
            Text(row.age, justify="right"),
            Text(safe_text(row.host), style=styles["dim"]),
            to_text(line(("path", row.path), _cut(row.args, CALL_WIDTH - len(row.path))), styles),
            Text(
                safe_text(row.origin), style="bold" if row.origin == "this IDE" else styles["dim"]
            ),
        )

    def _count(self) -> None:
        inbox = self.inbox
        count = self.query_one("#inbox-count", Static)
        if inbox.problem:
            count.update(
                self._text([styled("error", f"cannot read the approvals: {inbox.problem}")])
            )
            return
        total = len(inbox.approvals)
        if not total:
            count.update(
                self._text(
                    [
                        styled(
                            "dim",
                            "No approvals wait: new ones from any process appear here as they come.",
                        )
                    ]
                )
            )
            return
        waiting = inbox.waiting
        count.update(
            self._text(
                [
                    line(
                        ("warn bold", formats.plural(waiting, "approval") + " waiting"),
                        ("dim", f" · {total} open in {self.app.ws.store.location}"),  # type: ignore[attr-defined]  # RunReplApp's workspace
                    )
                ]
            )
        )

    def current(self) -> PendingApproval | None:
        table = self.query_one("#inbox-list", DataTable)
        if not self._rows or table.row_count == 0:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except CellDoesNotExist:
            return None
        return self.inbox.get(key) if key is not None else None

    @on(DataTable.RowHighlighted, "#inbox-list")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        approval = self.current()
        ident = approval.id if approval else None
        if ident != self.selected:
            # Another approval under the cursor: keys wait again, a question is dropped.
            self.selected = ident
            self.shown_at = time.monotonic()
            self._set_confirming(None)
        detail = self.query_one("#inbox-detail-text", Static)
        scroll = self.query_one("#inbox-detail", VerticalScroll)
        if approval is None:
            detail.update("")
            scroll.border_title = "Detail"
            self._keys()
            return
        scroll.border_title = f"{safe_text(approval.path)} · {approval.id}"
        detail.update(self._detail(approval))
        if approval.run_id and approval.run_id not in self._runs:
            self._load_run(approval.run_id)
        self._keys()

    def _detail(self, a: PendingApproval) -> RenderableType:
        parts: list[Line] = []
        reason = self.inbox.blocked_reason(a)
        state = a.state()
        parts.append(
            line(
                (STATE_STYLE.get(state, "dim") + " bold", state),
                (
                    "dim",
                    f"  asked {format_when(a.created_at)} · run {a.run_id or '?'} · host {a.host or '-'}",
                ),
            )
        )
        if a.id in self.inbox.here:
            parts.append(
                styled("info", "  the run on this IDE's screen (its prompt asks the same: F3)")
            )
        if reason and state != "pending":
            parts.append(styled("error" if state == "stuck" else "dim", f"  {reason}"))
        elif reason:
            parts.append(styled("warn", f"  {reason}"))
        parts.append([])
        body = approval_detail_lines(a)[1:]  # the first line (id, status) is said above
        snippet_at = next(
            (i for i, x in enumerate(body) if x and x[0][1].strip() == "snippet:"), len(body)
        )
        parts += body[:snippet_at]
        parts.append([])
        parts += self._calls_lines(a)
        parts.append([])
        parts += body[snippet_at:]
        # Wrapped at the panel's width, each wrapped row marked: a snippet's text never
        # starts a row that could pass for a line of the question.
        return WrappedLines(parts, self.styles_map)

    def _calls_lines(self, a: PendingApproval) -> list[Line]:
        if not a.run_id:
            return []
        if a.run_id not in self._runs:
            return [styled("dim", "  calls already made: reading the run…")]
        run = self._runs[a.run_id]
        envelope = (run.envelope or {}) if run is not None else {}
        calls = envelope.get("calls")
        if not isinstance(calls, list):
            return [styled("dim", "  calls already made: the history does not have this run")]
        # Made once a run: the detail is drawn again at each move and each change.
        made = self._calls_made.get(a.run_id)
        if made is None:
            stats = envelope.get("stats")
            total = stats.get("host_calls") if isinstance(stats, dict) else None
            made = calls_made_lines(calls, total=total if isinstance(total, int) else None)
            self._calls_made[a.run_id] = made
        return made

    @work(thread=True, group="inbox-run", exclusive=False, exit_on_error=False)
    def _load_run(self, run_id: str) -> None:
        store = self.app.ws.store  # type: ignore[attr-defined]  # RunReplApp's workspace
        try:
            run = store.get_run(run_id)
        except Exception:  # the detail says the history does not have it
            run = None
        if not get_current_worker().is_cancelled:
            self.post_message(self.RunLoaded(run_id, run))

    @on(RunLoaded)
    def _run_loaded(self, event: RunLoaded) -> None:
        self._runs[event.run_id] = event.run
        self._calls_made.pop(event.run_id, None)
        current = self.current()
        if current is not None and current.run_id == event.run_id:
            self.query_one("#inbox-detail-text", Static).update(self._detail(current))

    def _show_outcomes(self) -> None:
        outcomes = self.inbox.outcomes[-3:]
        box = self.query_one("#inbox-outcomes", Static)
        box.set_class(not outcomes, "-empty")
        lines: list[Line] = []
        for outcome in outcomes:
            lines += outcome.lines
        box.update(self._text(lines))

    def _keys(self) -> None:
        approval = self.current()
        keys = self.query_one("#inbox-keys", Static)
        self.set_class(self.confirming is not None, "-confirm")
        if approval is not None and self.confirming == approval.id:
            keys.update(
                f"Approve this call, and every {safe_text(approval.path)} call of this IDE's runs "
                "for the rest of the session?   enter: yes   any other key: no"
            )
            return
        if approval is None:
            keys.update("esc close")
            return
        state = approval.state()
        if state == "stuck":
            keys.update("R recover (asks first) · ↑↓ choose · tab detail · esc close")
        elif self.inbox.blocked_reason(approval) is None:
            keys.update(
                f"y approve · n deny · a approve {safe_text(approval.path)} for the session · "
                "↑↓ choose · tab detail · esc close"
            )
        else:
            keys.update("↑↓ choose · tab detail · esc close")

    # ------------------------------------------------------------------ deciding
    @property
    def armed(self) -> bool:
        return time.monotonic() - self.shown_at >= approval_prompt.ARM_SECONDS

    def _decidable(self) -> PendingApproval | None:
        """The approval on screen, if keys may decide it now; else a bell and why not."""
        # The cursor may have moved in this same burst of keys, before its highlight
        # message showed the new approval: show it now, and its wait starts now.
        self._show_selected()
        approval = self.current()
        if approval is None:
            self.app.bell()
            return None
        if not self.armed:
            self.app.bell()
            return None
        reason = self.inbox.blocked_reason(approval)
        if reason is not None:
            self.app.bell()
            self.notify(reason, title="Approvals", severity="warning", timeout=6)
            return None
        return approval

    def action_decide(self, approved: bool) -> None:
        approval = self._decidable()
        if approval is not None:
            self._decide(approval, approved, False)

    def action_ask_always(self) -> None:
        approval = self._decidable()
        if approval is not None:
            self.shown_at = time.monotonic()  # the question is new: its answer waits too
            self._set_confirming(approval.id)

    def action_confirm_always(self) -> None:
        self._show_selected()  # another approval under the cursor drops the question
        approval = self.current()
        if approval is None or self.confirming != approval.id or not self.armed:
            self.app.bell()
            return
        self._set_confirming(None)
        self._decide(approval, True, True)

    def _decide(self, approval: PendingApproval, approved: bool, for_session: bool) -> None:
        self.on_decide(approval, approved, for_session)
        self.refresh_inbox()

    def _set_confirming(self, ident: str | None) -> None:
        self.confirming = ident
        if self.is_mounted:
            self._keys()

    def on_key(self, event: events.Key) -> None:
        # While "for the session?" is asked, enter says yes and any other key says no.
        if self.confirming is not None and event.key != "enter":
            event.stop()
            event.prevent_default()
            self._set_confirming(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm_always":
            return self.confirming is not None
        if action in ("decide", "ask_always", "recover"):
            return self.confirming is None  # then the key answers "no" (on_key)
        return True

    def action_recover(self) -> None:
        approval = self.current()
        if approval is None or approval.state() != "stuck":
            self.app.bell()
            if approval is not None:
                self.notify(
                    f"Only a stuck approval is recovered: this one is {describe_state(approval)}.",
                    title="Approvals",
                    severity="warning",
                )
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.inbox.recover(approval)
                self.refresh_inbox()

        self.app.push_screen(ConfirmRecover(approval), answered)

    def action_close(self) -> None:
        self.dismiss(None)
