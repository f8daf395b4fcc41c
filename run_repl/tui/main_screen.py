"""The IDE's main screen: the panels and the workflow (runs, approvals, files, the
catalog), as posting's `MainScreen` holds its requests while `Posting` keeps settings,
themes and keys.

Runs are workers that never touch widgets: they post messages to this screen, and its
`@on` handlers own every change of state:

    RunSubmitted -> LogReceived... / CallUpdated... -> RunFinished
                                                    or RunInterrupted -> ApprovalDecided... -> RunFinished

A paused run decided elsewhere (another IDE, the CLI, an MCP client) is followed through
the approvals watcher's lists (ApprovalsChanged.followed), said in words, and its resumed
run, read from the store, arrives as LogReceived -> RunFinished | RunInterrupted, as a
resume here would (resumed_elsewhere.py).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.geometry import Offset
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TabbedContent, TabPane

from ..host.loader import describe
from ..present.styled import plain
from ..sandbox.result import LogLine, RunResult
from ..store import PendingApproval
from . import external_editor
from .approvals_inbox import ApprovalsInbox
from .components.approval_prompt import ApprovalPrompt
from .components.calls_table import CallsTable
from .components.completion_menu import CompletionMenu, SignatureHint
from .components.editor.buffers import Buffer
from .components.editor.editor import CodeEditor, EditorTabs, default_source
from .components.error_view import RunErrorView
from .components.host_catalog import HostCatalog
from .components.key_footer import KeyFooter
from .components.log_panel import LogPanel
from .components.status_bar import StatusBar
from .components.value.model import value_size
from .components.value.view import ValueView
from .messages import (
    ApprovalDecided,
    ApprovalsChanged,
    CallUpdated,
    InboxOutcome,
    LogReceived,
    OpenInEditor,
    ResumedRunUnreadable,
    RunDecidedElsewhere,
    RunFinished,
    RunInterrupted,
    RunQueued,
    RunSubmitted,
)
from .resumed_elsewhere import FollowedRun, run_progress
from .run_controller import RunController
from .screens.history import OpenSource, ShowStored
from .screens.jump import JumpTarget
from .screens.path_prompt import PathPrompt

if TYPE_CHECKING:
    from .app import RunReplApp


class MainScreen(Screen[None]):
    """The panels of one IDE and what happens in them: the first screen, never popped."""

    AUTO_FOCUS = "CodeEditor"
    """The editor has the keys at start (the catalog's tree comes first in the layout)."""

    running: reactive[bool] = reactive(False, bindings=True)
    """A run is going: escape and ctrl+c cancel it (bindings follow this)."""

    PANELS: ClassVar[tuple[str, ...]] = ("catalog", "editor", "value", "logs", "calls")
    CATALOG_MIN_WIDTH = 120
    """Narrower screens fold the host catalog away; ctrl+b shows it over the editor."""
    WIDTHS: ClassVar[tuple[tuple[int, str], ...]] = (
        (0, "-narrow"),
        (80, "-compact"),
        (100, "-medium"),
        (120, "-roomy"),
        (140, "-wide"),
    )
    """The layout's width classes (app.tcss sizes the panels by them): from 80 columns
    the editor keeps 50 to type in, under 140 the catalog is narrower."""
    PANEL_TITLES: ClassVar[dict[str, str]] = {
        "catalog": "Host",
        "editor": "Editor",
        "value": "Value",
        "logs": "Logs",
        "calls": "Calls",
        "approval": "Approval",
    }

    def __init__(self, ide: RunReplApp) -> None:
        super().__init__()
        self.ide = ide
        """The app: its workspace, key hints, host functions and buffers file."""
        self.ws = ide.ws
        self.key_hints = ide.key_hints
        self.runs = RunController(self, ide.ws)
        self.approvals = ApprovalsInbox(self, ide.ws, asking=self._prompt_asks)
        self._focus_before_approval: Widget | None = None
        self.followed: FollowedRun | None = None
        """The paused run on screen's approvals, heard while someone else decides them."""
        self.catalog_choice: bool | None = None
        """The person's ctrl+b where it differs from what the width does (None: follow the
        width). Shown by hand on a narrow screen, it folds again once the screen crosses
        CATALOG_MIN_WIDTH; hidden by hand on a wide one, it stays hidden."""
        self._catalog_fits: bool | None = None
        self._shown_once = False

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        initial: list[Buffer] | None = None
        if self.ide.initial_file is not None:
            stored = self.ide.buffer_store.load().buffers
            initial = [
                Buffer(
                    Path(self.ide.initial_file).name,
                    self.ide.initial_source or "",
                    self.ide.initial_file,
                ),
                *[b for b in stored if b.path != self.ide.initial_file],
            ]
        # The width classes before any panel is styled: set on mount, they restyled every
        # widget a second time at each start (a seventh of starting the IDE).
        self.update_classes(self._width_classes())
        shown, fits = self._catalog_shown()
        with Horizontal(id="main"):
            catalog = HostCatalog(self.ide.host_functions, id="catalog")
            catalog.border_title = f"Host: {self.ws.host.name}"
            # update=False: not mounted yet, it is styled once when it is (a class change
            # now would style it, and again on mount).
            catalog.add_class("panel", update=False)
            catalog.set_class(not shown, "-hidden", update=False)
            catalog.set_class(shown and not fits, "-drawer", update=False)
            yield catalog
            with Vertical(id="left"):
                editor = EditorTabs(
                    self.ide.buffer_store,
                    initial=initial,
                    first_source=default_source(
                        self.key_hints.keys("app.run"),
                        self.key_hints.keys("app.help"),
                        None if self.ws.host.is_demo else self.ide.host_functions,
                    ),
                    id="editor",
                )
                editor.border_title = "Editor"
                editor.add_class("panel", update=False)
                yield editor
                with TabbedContent(id="bottom", classes="panel") as bottom:
                    bottom.border_title = "Logs"
                    with TabPane("Logs", id="logs-pane"):
                        yield LogPanel(id="logs")
                    with TabPane("Calls", id="calls-pane"):
                        yield CallsTable(id="calls")
            with Vertical(id="right", classes="panel") as right:
                right.border_title = "Value"
                yield RunErrorView(id="error")
                yield ValueView(id="value")
        yield ApprovalPrompt(id="approval")
        yield StatusBar(id="status")
        yield KeyFooter()
        yield CompletionMenu(id="completion")
        yield SignatureHint(id="signature")

    def on_mount(self) -> None:
        # Everything made while starting lives as long as the app: keep the
        # collector from rescanning it, or a log flood pauses the screen on
        # every full collection.
        gc.freeze()
        self.ws.host.changed.append(self._host_changed_elsewhere)
        status = self.query_one(StatusBar)
        status.host_name = self.ws.host.name
        if self.ws.store.location.startswith("memory"):
            status.store_note = "in-memory store"
        problems = [self.editor_tabs.problem] if self.editor_tabs.problem else []
        problems += self.key_hints.problems()
        for warning in [*self.ws.warnings, *self.ide.theme_problems, *problems]:
            self.notify(warning, severity="warning", timeout=10)
        self.approvals.watch()
        self.approvals.resume_here()
        self.fit_layout()

    def _prompt_asks(self) -> frozenset[str]:
        try:
            return self.query_one(ApprovalPrompt).asking
        except NoMatches:  # not made yet, or the screen is coming down
            return frozenset()

    # ------------------------------------------------------------------ the layout
    def on_resize(self, event: events.Resize) -> None:
        self.fit_layout()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        if not self._shown_once:
            # Shown for the first time, right after its widgets were mounted and styled
            # (the width classes set in compose): restyling them all again, as Textual
            # does on every first show, changes nothing (a tenth of starting the IDE).
            # Handled here before Screen's own handler, which reads the flag.
            self._shown_once = True
            event.refresh_styles = False
        # A resize under a modal screen reaches this one only as a new size.
        self.fit_layout()

    def _width_classes(self) -> dict[str, bool]:
        width = self.app.size.width
        current = max((w, name) for w, name in self.WIDTHS if width >= w)[1]
        return {name: name == current for _, name in self.WIDTHS}

    def _catalog_shown(self) -> tuple[bool, bool]:
        """Whether the catalog is shown, and whether it fits beside the editor."""
        fits = self.app.size.width >= self.CATALOG_MIN_WIDTH
        return (fits if self.catalog_choice is None else self.catalog_choice), fits

    def fit_layout(self) -> None:
        """Size the panels for the terminal's width, and show or fold the catalog."""
        self.update_classes(self._width_classes())
        fits = self.app.size.width >= self.CATALOG_MIN_WIDTH
        if self._catalog_fits is not None and fits != self._catalog_fits and self.catalog_choice:
            self.catalog_choice = None
        self._catalog_fits = fits
        shown, _ = self._catalog_shown()  # after a choice that no longer holds is dropped
        catalog = self.query_one(HostCatalog)
        catalog.set_class(not shown, "-hidden")
        # Where it does not fit beside the editor, it is drawn over the editor's left side.
        catalog.set_class(shown and not fits, "-drawer")
        if not shown and self.panel_of(self.focused) == "catalog":
            self.action_focus_panel("editor")

    # ------------------------------------------------------------------ focus
    def panel_of(self, widget: Widget | None) -> str | None:
        """Which panel a widget belongs to (editor, value, logs, calls, approval), if any."""
        for node in [widget, *(widget.ancestors if widget is not None else [])]:
            ident = getattr(node, "id", None)
            if ident in ("catalog", "editor", "logs", "calls", "approval"):
                return ident
            if ident == "right":
                return "value"
        return None

    @on(events.DescendantFocus)
    def _focus_moved(self, event: events.DescendantFocus) -> None:
        panel = self.panel_of(event.widget)
        if panel is not None:
            self.status.panel = self.PANEL_TITLES[panel]

    @on(TabbedContent.TabActivated, "#bottom")
    def _bottom_tab(self, event: TabbedContent.TabActivated) -> None:
        bottom = self.query_one("#bottom", TabbedContent)
        bottom.border_title = "Calls" if event.pane.id == "calls-pane" else "Logs"

    # ------------------------------------------------------------------ widgets
    @property
    def editor_tabs(self) -> EditorTabs:
        return self.query_one(EditorTabs)

    @property
    def logs(self) -> LogPanel:
        return self.query_one(LogPanel)

    @property
    def calls(self) -> CallsTable:
        return self.query_one(CallsTable)

    @property
    def value_view(self) -> ValueView:
        return self.query_one(ValueView)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    # ------------------------------------------------------------------ actions
    def action_run(self) -> None:
        editor = self.editor_tabs.active_editor
        if editor is None:
            return
        # Keys typed just before the run key may still wait in the editor's queue
        # (the run key is a priority binding, handled first): read the text after them.
        editor.call_later(self._submit_from, editor)

    def _submit_from(self, editor: CodeEditor) -> None:
        source = editor.run_text()
        if not source.strip():
            self.notify("Nothing to run: the buffer is empty.", severity="warning")
            return
        self.post_message(RunSubmitted(source))

    def action_rerun(self) -> None:
        if self.runs.last_source is None:
            self.notify("Nothing has run yet.", severity="warning")
            return
        self.post_message(RunSubmitted(self.runs.last_source))

    def action_cancel(self) -> None:
        self.runs.cancel()

    def action_decide(self) -> None:
        """Engage the approval prompt: the one way (with the jump overlay) its keys decide."""
        prompt = self.query_one(ApprovalPrompt)
        if prompt.current is None:
            return
        if self.focused is not prompt:
            self._focus_before_approval = self.focused
        prompt.engage()

    @on(ApprovalPrompt.Left)
    def _approval_left(self) -> None:
        self._refocus_after_approval()

    def _refocus_after_approval(self) -> None:
        before, self._focus_before_approval = self._focus_before_approval, None
        if before is not None and before.is_attached and before.focusable:
            before.focus()
            return
        editor = self.editor_tabs.active_editor
        if editor is not None:
            editor.focus()

    def action_focus_panel(self, name: str) -> None:
        if name == "editor":
            editor = self.editor_tabs.active_editor
            if editor is not None:
                editor.focus()
            return
        if name == "approval":
            self.action_decide()
            return
        if name == "catalog":
            catalog = self.query_one(HostCatalog)
            if catalog.has_class("-hidden"):
                self.catalog_choice = True
                self.fit_layout()
            self.call_after_refresh(catalog.tree.focus)
            return
        if name in ("logs", "calls"):
            self.query_one("#bottom", TabbedContent).active = f"{name}-pane"
        # After the refresh: a pane just shown cannot take the focus before it is laid out.
        target = self.query_one(f"#{name}")
        self.call_after_refresh(target.focus)

    def action_focus_next_panel(self, step: int = 1) -> None:
        """F4 (shift+F4): the next (previous) panel, hidden tabs included."""
        hidden = self.query_one(HostCatalog).has_class("-hidden")
        order = tuple(p for p in self.PANELS if not (hidden and p == "catalog"))
        current = self.panel_of(self.focused)
        index = order.index(current) if current in order else -step
        self.action_focus_panel(order[(index + step) % len(order)])

    def jump_targets(self) -> list[JumpTarget]:
        """The letters of the jump overlay, each over its panel (or tab)."""

        def at(widget: Widget, dx: int = 1, dy: int = 0) -> Offset:
            region = widget.region
            return Offset(region.x + dx, region.y + dy)

        bottom = self.query_one("#bottom", TabbedContent)
        catalog = self.query_one(HostCatalog)
        # Folded away, the catalog is still one letter off: listed, with no place to show.
        shown = not catalog.has_class("-hidden")
        targets = [JumpTarget("h", "host", at(catalog, 8) if shown else None)]
        targets += [
            JumpTarget("e", "editor", at(self.editor_tabs, 12)),
            JumpTarget("v", "value", at(self.query_one("#right"), 11)),
            JumpTarget("l", "logs", at(bottom.get_tab("logs-pane"), 1, 1)),
            JumpTarget("c", "calls", at(bottom.get_tab("calls-pane"), 1, 1)),
        ]
        prompt = self.query_one(ApprovalPrompt)
        if prompt.current is not None:
            targets.append(JumpTarget("a", "approval", at(prompt, 2)))
        targets.append(JumpTarget("o", "open a file", None))
        targets.append(JumpTarget("i", "approvals inbox", None))
        return targets

    def action_jump_to_panel(self) -> None:
        from .screens.jump import JumpOverlay

        def jumped(name: str | None) -> None:
            if name == "open a file":
                self.action_open_file()
            elif name == "approvals inbox":
                self.action_approvals()
            elif name == "host":
                self.action_focus_panel("catalog")
            elif name is not None:
                self.action_focus_panel(name)

        self.app.push_screen(JumpOverlay(self.jump_targets()), jumped)

    def action_history(self) -> None:
        from .screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.ws.store), self._history_chosen)

    def action_open_file(self) -> None:
        def opened(path: str | None) -> None:
            if path:
                self.run_worker(self._open_path(Path(path).expanduser()))

        self.app.push_screen(
            PathPrompt("Open a snippet file", placeholder="path/to/snippet.ts"), opened
        )

    async def _open_path(self, path: Path) -> None:
        try:
            await self.editor_tabs.open_file(path)
        except (OSError, UnicodeDecodeError) as exc:
            self.notify(f"Cannot open {path}: {exc}", severity="error")

    def action_external_editor(self) -> None:
        external_editor.edit_active_buffer(self)

    def action_save_file(self) -> None:
        buffer = self.editor_tabs.active_buffer
        if buffer is not None and buffer.path:
            self._save_to(Path(buffer.path))
            return

        def chosen(path: str | None) -> None:
            if path:
                self._save_to(Path(path).expanduser())

        self.app.push_screen(PathPrompt("Save the buffer as", placeholder="snippet.ts"), chosen)

    def _save_to(self, path: Path) -> None:
        try:
            saved = self.editor_tabs.save_active(path)
        except OSError as exc:
            self.notify(f"Cannot save {path}: {exc}", severity="error")
            return
        if saved is not None:
            self.notify(f"Saved {saved}")

    def action_reset_demo(self) -> None:
        """Ask, then put the demo data back as first made (the demo host only)."""
        if not self.ws.host.is_demo:
            return
        from ..host.demo import DEMO_DB
        from .screens.confirm_reset import ConfirmReset

        def answered(reset: bool | None) -> None:
            if reset:
                self._reset_demo()

        self.app.push_screen(ConfirmReset(str(self.ws.data_dir / DEMO_DB)), answered)

    @work(thread=True, group="reset-demo", exit_on_error=False)
    def _reset_demo(self) -> None:
        from ..host.demo import reset_demo

        try:
            path = reset_demo(self.ws.data_dir)
        except OSError as exc:
            self.app.call_from_thread(
                self.notify,
                f"The demo data was not reset: {exc}. Nothing was changed.",
                title="Demo data",
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(
            self.notify,
            f"The demo data is as first made again ({path}): every draft is there to publish.",
            title="Demo data",
            markup=False,
        )

    # ------------------------------------------------------------------ runs
    @on(RunSubmitted)
    def start_run(self, event: RunSubmitted) -> None:
        if self.running:
            self.notify("A run is in progress: escape cancels it.", severity="warning")
            return
        self._clear_panels()
        self._unfollow()
        self.runs.start(event.source)
        self._started()

    def _clear_panels(self) -> None:
        self.calls.clear_calls()
        self.value_view.show_result(None, None)
        self.query_one(ApprovalPrompt).clear()

    def _started(self) -> None:
        self.logs.clear()
        self.query_one(RunErrorView).show_error(None)
        self.status.start()
        self.running = True

    @on(LogReceived)
    def add_logs(self, event: LogReceived) -> None:
        if self.runs.is_current(event.run_token):
            self.logs.add_lines(event.lines)

    @on(CallUpdated)
    def update_call(self, event: CallUpdated) -> None:
        if not self.runs.is_current(event.run_token):
            return
        if event.call.ok is None and event.call.seq not in self.calls.calls:
            self.status.count_call()
        self.calls.upsert(event.call)

    def _show_outcome(self, result: RunResult, *, state: str, detail: str) -> None:
        """What every ending shows: the calls, the status line."""
        for call in result.calls:
            self.calls.upsert(call)
        self.status.finish(
            state,
            duration_ms=result.duration_ms,
            calls=len(result.calls),
            memory=result.stats.heap_bytes,
            detail=detail,
        )

    @on(RunFinished)
    def finish_run(self, event: RunFinished) -> None:
        if not self.runs.is_current(event.run_token):
            return
        self.running = False
        result = event.result
        self.runs.finished(result)
        self.query_one(ApprovalPrompt).clear()
        self.logs.set_dropped(result.logs_dropped)
        cancelled = result.error is not None and result.error.code == "RUN_ABORTED"
        detail = ""
        if result.status == "ok":
            detail = value_size(result)
        elif result.error is not None:
            detail = str(result.error.code)
        if event.resumed_in:
            detail = f"{detail} · {event.resumed_in}" if detail else event.resumed_in
        self._show_outcome(result, state="cancelled" if cancelled else result.status, detail=detail)
        if result.status == "ok" and event.resumed_in:
            # Made in another process: its value is paged from the store by its value_ref.
            self.value_view.show_stored(result, self.ws.runner.expand)
        elif result.status == "ok":
            self.value_view.show_result(result, self.ws.runner.expand)
        elif result.error is not None:
            self.query_one(RunErrorView).show_error(result.error, event.source)
            self._jump_to_error(result, event.source)
        for warning in self.ws.warnings:
            self.notify(warning, severity="warning")
        self.ws.warnings.clear()
        self._announce_deferred()

    def _jump_to_error(self, result: RunResult, source: str) -> None:
        error = result.error
        editor = self.editor_tabs.active_editor
        if error is None or not error.line or editor is None:
            return
        # Only when the error's line is in the text that is in the editor.
        if editor.text == source or editor.selected_text == source:
            offset_line = editor.selection.start[0] if editor.selected_text == source else 0
            editor.jump_to(error.line + offset_line, error.column)

    @on(RunErrorView.JumpTo)
    def jump_to(self, event: RunErrorView.JumpTo) -> None:
        editor = self.editor_tabs.active_editor
        if editor is not None:
            editor.jump_to(event.line, event.column)

    @on(RunInterrupted)
    def ask_approvals(self, event: RunInterrupted) -> None:
        if not self.runs.is_current(event.run_token):
            return
        result = event.result
        # Nothing runs while a person decides: escape and ctrl+c are theirs again.
        self.running = False
        ask = self.runs.interrupted(result)
        waiting = len(result.interruptions or [])
        detail = f"{waiting} waiting for approval"
        if event.resumed_in:
            detail += f" · {event.resumed_in}"
        self._show_outcome(result, state="interrupted", detail=detail)
        if not ask:
            self._resume()
            return
        # Shown, never focused: what is being typed goes on going where it was going.
        self.query_one(ApprovalPrompt).ask(ask)
        self._follow(result)
        self._announce_deferred()
        self._refresh_inbox_screen()
        self.refresh_bindings()
        self.app.bell()

    @on(ApprovalDecided)
    def record_decision(self, event: ApprovalDecided) -> None:
        self.runs.decide(event.interruption_id, event.approved, for_session=event.approve_path)
        if self.query_one(ApprovalPrompt).current is None:
            self._resume()
            self._refocus_after_approval()

    def _resume(self) -> None:
        self._unfollow()
        self.runs.resume()
        self._started()
        self.logs.add_lines(
            [
                LogLine(
                    level="info",
                    text="— resumed after approval: the snippet replays from the start —",
                    at_ms=0,
                )
            ]
        )

    @on(RunQueued)
    def _run_queued(self, event: RunQueued) -> None:
        if self.runs.is_current(event.run_token):
            who = event.held_by or "another approver"
            self.status.detail = f"queued behind {who}"
            self.notify(
                f"{who} is resuming this run: your decision is recorded and is carried out "
                "with it (waiting)…",
                title="Approval",
                timeout=8,
            )

    @on(RunDecidedElsewhere)
    def _decided_elsewhere(self, event: RunDecidedElsewhere) -> None:
        if not self.runs.is_current(event.run_token):
            return
        self.running = False
        paused = self.runs.result
        following = event.decided and paused is not None and bool(paused.interruptions)
        detail = (
            "decided elsewhere: its resume is followed here"
            if following
            else f"not resumed here: see the history ({self.key_hints.keys('app.history')})"
        )
        self.status.finish(
            "interrupted",
            duration_ms=None,
            calls=len(self.calls.calls),
            memory=None,
            detail=detail,
        )
        self.notify(event.message, title="Approval", severity="warning", timeout=12)
        if following and paused is not None:
            self._follow(paused)
        self._announce_deferred()

    # ------------------------------------------------------------------ decided elsewhere
    def _follow(self, paused: RunResult) -> None:
        """Hear every change of this paused run's approvals (another process may decide
        them): the watcher reads them at each change of the store, from now."""
        ids = frozenset(it.id for it in paused.interruptions or [])
        if not ids or not self.ws.persistent:
            return  # in memory: only this IDE can decide them
        self.followed = FollowedRun(self.runs.token, ids)
        self.approvals.follow(ids)

    def _unfollow(self) -> None:
        self.followed = None
        self.approvals.unfollow()

    def _followed_changed(self, approvals: list[PendingApproval]) -> None:
        """The run's approvals as the store has them now: said in words; once they have
        ended, the run that resumed elsewhere is read and shown as if it resumed here.
        Only what others decided is read: nothing here decides anything."""
        followed = self.followed
        if followed is None or not self.runs.is_current(followed.token) or self.running:
            return
        mine = [a for a in approvals if a.id in followed.ids]
        prompt = self.query_one(ApprovalPrompt)
        if not mine or prompt.asking & followed.ids:
            return  # still asked here: nobody else decided them
        progress = run_progress(mine)
        if progress.state == "deciding":
            self._ask_again([a.id for a in mine if a.state() == "pending"], prompt)
            return
        changed = progress.words != followed.said
        followed.said = progress.words
        if progress.state == "resumed" and progress.resumed_run_id and progress.resumed_in:
            self._unfollow()
            self.logs.clear()
            self.query_one(RunErrorView).show_error(None)
            self.logs.add_lines(
                [
                    LogLine(
                        level="info",
                        text=f"— {progress.resumed_in}: the snippet replayed from the start —",
                        at_ms=0,
                    )
                ]
            )
            self.status.detail = f"{progress.resumed_in}: reading its run from the store…"
            self.runs.show_resumed(
                progress.resumed_run_id, progress.resumed_in, state=progress.ended_as
            )
            return
        if changed:
            self.logs.add_lines(
                [LogLine(level="info", text=f"approval: {progress.words}", at_ms=0)]
            )
        inbox_keys = self.key_hints.keys("app.approvals")
        if progress.ended:
            self._unfollow()
            self._ended_elsewhere(progress.state, progress.words)
        elif progress.state == "stuck":
            self.status.finish(
                "stuck",
                duration_ms=None,
                calls=len(self.calls.calls),
                memory=None,
                detail=f"{progress.words}: {inbox_keys} opens the inbox, R recovers it",
            )
            if changed:
                self.notify(progress.words, title="Approval", severity="error", timeout=12)
        else:
            self.status.detail = progress.words

    def _ask_again(self, pending: list[str], prompt: ApprovalPrompt) -> None:
        """A claim elsewhere ran out before its resume started: nothing ran, the
        approvals wait for a decision again, and this run's prompt asks them again."""
        paused = self.runs.result
        ask = [it for it in (paused.interruptions or []) if it.id in pending] if paused else []
        if ask:
            prompt.ask(ask)
            self.status.detail = f"{len(ask)} waiting for approval again"

    def _ended_elsewhere(self, state: str, words: str) -> None:
        """The run's approvals ended elsewhere with no run to show (outcome unknown,
        failed, or its run unreadable): said plainly, on the status line and in a toast."""
        self.status.finish(
            state, duration_ms=None, calls=len(self.calls.calls), memory=None, detail=words
        )
        self.notify(
            words,
            title="Approval",
            severity="information" if state == "approved" else "warning",
            timeout=12,
        )
        self._announce_deferred()

    @on(ResumedRunUnreadable)
    def _resumed_unreadable(self, event: ResumedRunUnreadable) -> None:
        if self.runs.is_current(event.run_token):
            self._ended_elsewhere(event.state, f"resumed elsewhere; {event.message}")

    # ------------------------------------------------------------------ the host catalog
    def action_toggle_catalog(self) -> None:
        """ctrl+b: hide or show the host catalog (the focus leaves it when it hides)."""
        catalog = self.query_one(HostCatalog)
        wanted = catalog.has_class("-hidden")
        # What the width would do anyway is no choice: closing the catalog drawn over a
        # narrow editor does not hide it on a wide screen later.
        self.catalog_choice = None if wanted == self._catalog_fits else wanted
        self.fit_layout()

    @on(HostCatalog.InsertCall)
    def insert_call(self, event: HostCatalog.InsertCall) -> None:
        """A call to the chosen function at the editor's cursor, the cursor in its parentheses."""
        editor = self.editor_tabs.active_editor
        if editor is None:
            return
        row, column = editor.selection.end
        awaited = editor.document.get_line(row)[:column].rstrip().endswith("await")
        text = event.info.path if awaited else f"await {event.info.path}"
        editor.replace(text + "()", editor.selection.start, editor.selection.end)
        editor.move_cursor((row, editor.selection.end[1] - 1))
        editor.focus()
        if self.query_one(HostCatalog).has_class("-drawer"):
            # Over the editor, it has done its work: the editor is whole again.
            self.catalog_choice = None
            self.fit_layout()
        editor.call_after_refresh(editor.assist, open_menu=False)

    @on(CodeEditor.ShowDoc)
    def show_doc(self, event: CodeEditor.ShowDoc) -> None:
        from .screens.function_doc import FunctionDocScreen

        self.app.push_screen(FunctionDocScreen(event.info))

    # ------------------------------------------------------------------ the approvals inbox
    def action_approvals(self) -> None:
        """F6: every open approval of the store, from any process, decided here."""
        from .screens.approvals import ApprovalsScreen

        if isinstance(self.app.screen, ApprovalsScreen):
            return
        self.app.push_screen(ApprovalsScreen(self.approvals, self._inbox_decide))

    def _inbox_decide(self, approval: PendingApproval, approved: bool, for_session: bool) -> None:
        """A decision taken in the inbox: the run on screen resumes here, as if its prompt
        had been answered; any other run resumes through the store's flow, in a worker."""
        prompt = self.query_one(ApprovalPrompt)
        if prompt.drop(approval.id) is not None:
            self.post_message(ApprovalDecided(approval.id, approved, approve_path=for_session))
            return
        if for_session and approved:
            self.runs.session_approvals.add(approval.path)
        self.approvals.decide(approval, approved)

    @on(ApprovalsChanged)
    def _approvals_changed(self, event: ApprovalsChanged) -> None:
        inbox = self.approvals
        try:
            prompt = self.query_one(ApprovalPrompt)
        except NoMatches:  # the screen is coming down (the app closing): nothing to show
            inbox.take(event)
            return
        # While a run decided elsewhere is being carried out, its next questions may be in
        # this list before its run reaches the screen: announced later if not its own.
        # The prompt's own questions this list shows decided count as carried out too:
        # a fast resume elsewhere brings its decision and its next question in one list.
        followed = self.followed
        asking = set(prompt.asking)
        if event.approvals is not None:
            still = {a.id for a in event.approvals if a.state() == "pending"}
            asking &= still
        carried_out = followed is not None and not asking & followed.ids
        busy = self.running or carried_out
        news = inbox.news(event, prompt.queue, decided=self.runs.decisions, running=busy)
        if news is None:
            return
        gone = [it.path for it in (prompt.drop(i) for i in news.drop) if it is not None]
        if gone:
            self._decided_elsewhere_here(gone, prompt)
        if event.followed is not None:
            self._followed_changed(event.followed)
        self.status.approvals = inbox.waiting
        if news.waiting_note:
            self.notify(
                f"{inbox.waiting} approval(s) wait in the store: {self.key_hints.keys('app.approvals')} opens the inbox.",
                timeout=8,
            )
        elif news.announce:
            self._announce_others(news.announce)
        self._refresh_inbox_screen()

    def _announce_others(self, others: list[PendingApproval]) -> None:
        paths = ", ".join(sorted({a.path for a in others}))
        self.notify(
            f"{len(others)} new approval(s) from another run ({paths}): {self.key_hints.keys('app.approvals')} opens the inbox.",
            title="Approvals",
            timeout=8,
        )

    def _announce_deferred(self) -> None:
        others = self.approvals.deferred()
        if others:
            self._announce_others(others)

    def _decided_elsewhere_here(self, gone: list[str], prompt: ApprovalPrompt) -> None:
        """The prompt stopped asking what was decided elsewhere: say so, and resume (or
        leave the run to whoever decided) once it asks nothing more."""
        self.notify(
            f"{', '.join(gone)} was decided elsewhere: this prompt no longer asks it.",
            title="Approval",
            severity="warning",
            timeout=10,
        )
        if prompt.current is None:
            if self.runs.decisions:
                self._resume()
            elif self.followed is None:
                self.status.detail = f"decided elsewhere: its run goes on there ({self.key_hints.keys('app.history')} history)"
            else:
                self.status.detail = "decided elsewhere: its resume is followed here"
            self._refocus_after_approval()

    @on(InboxOutcome)
    def _inbox_outcome(self, event: InboxOutcome) -> None:
        self.approvals.finished(event.outcome, final=event.final)
        if event.final:
            text = plain(event.outcome.lines[0]) if event.outcome.lines else ""
            more = plain(event.outcome.lines[1]).strip() if len(event.outcome.lines) > 1 else ""
            self.notify(
                f"{text}\n{more}".strip(),
                title="Approvals",
                severity="information" if event.outcome.ok else "error",
                timeout=8,
            )
        self._refresh_inbox_screen()

    def _refresh_inbox_screen(self) -> None:
        from .screens.approvals import ApprovalsScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, ApprovalsScreen):
                screen.refresh_inbox()

    # ------------------------------------------------------------------ calls, history
    @on(CallsTable.OpenCall)
    def open_call(self, event: CallsTable.OpenCall) -> None:
        from .screens.call_detail import CallDetailScreen

        self.app.push_screen(CallDetailScreen(event.call))

    @on(OpenInEditor)
    async def open_in_editor(self, event: OpenInEditor) -> None:
        await self.editor_tabs.action_new_buffer(
            event.source, title=event.title[:24] or "from history"
        )

    async def _history_chosen(self, choice: OpenSource | ShowStored | None) -> None:
        if isinstance(choice, OpenSource):
            await self.editor_tabs.action_new_buffer(choice.source, title=choice.title)
        elif isinstance(choice, ShowStored):
            self.show_stored_result(choice.envelope, choice.source)

    def show_stored_result(self, envelope: dict[str, Any], source: str | None = None) -> None:
        """Show a run's stored envelope (from history) in the panels."""
        try:
            result = RunResult.model_validate(envelope)
        except ValidationError:
            self.notify("That run's stored result could not be read.", severity="error")
            return
        self.logs.clear()
        self.calls.clear_calls()
        self.query_one(ApprovalPrompt).clear()
        self.query_one(RunErrorView).show_error(None)
        self.logs.add_lines(result.logs)
        if result.status == "ok":
            self.value_view.show_stored(result, self.ws.runner.expand)
        else:
            self.value_view.show_result(None, None)
            if result.error is not None:
                self.query_one(RunErrorView).show_error(result.error, source)
        self._show_outcome(result, state=result.status, detail="from history")

    @on(EditorTabs.SaveAsRequested)
    def _save_as_then_close(self, event: EditorTabs.SaveAsRequested) -> None:
        tabs = self.editor_tabs

        async def chosen(path: str | None) -> None:
            buffer = next((b for b in tabs.buffers if b.key == event.key), None)
            if not path or buffer is None:
                return
            try:
                tabs.save(buffer, Path(path).expanduser())
            except OSError as exc:
                self.notify(f"Cannot save {path}: {exc}", severity="error")
                return
            await tabs.close(buffer)

        self.app.push_screen(PathPrompt("Save the buffer as", placeholder="snippet.ts"), chosen)

    # ------------------------------------------------------------------ leaving
    def persist_buffers(self) -> None:
        try:
            self.editor_tabs.persist()
        except NoMatches:
            pass  # the editor is already gone: it was persisted when it could be

    def leave(self) -> None:
        """The app is closing: stop hearing the host, keep the buffers."""
        if self._host_changed_elsewhere in self.ws.host.changed:
            self.ws.host.changed.remove(self._host_changed_elsewhere)
        self.persist_buffers()

    def _host_changed_elsewhere(self) -> None:
        # Heard on the upstreams' thread: the catalog and completion change on the app's.
        self.app.call_from_thread(self._host_changed)

    def _host_changed(self) -> None:
        """An upstream's tool list changed: the catalog and completion show it."""
        self.ide.host_functions = describe(self.ws.host)
        try:
            self.query_one(HostCatalog).show_functions(self.ide.host_functions)
        except NoMatches:
            pass  # the screen is coming down
        for editor in self.query(CodeEditor):
            editor.functions = list(self.ide.host_functions)
