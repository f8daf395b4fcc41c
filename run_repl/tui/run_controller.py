"""The run in progress, apart from the screen: what runs, how to stop it, what it gave.

The main screen's `@on` handlers own every widget; this object owns the run's state:
the run token (a message from an older run is recognised and dropped), the
cancel event, the source that runs (and replays on resume), the last result,
log lines waiting for the next batch, the decisions taken on an interrupted
run, and the functions approved for the rest of the session. Runs are workers
on the main screen that never touch widgets: they post the messages of `messages.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.dom import DOMNode

from ..present.approvals import SessionApprovals
from ..sandbox.errors import ErrorCode
from ..sandbox.result import CallRecord, Interruption, LogLine, RunResult
from ..sandbox.session.guest_errors import plain_error
from ..store import ApprovalConflict, StoreError
from ..workspace import Workspace
from .messages import (
    CallUpdated,
    LogReceived,
    ResumedRunUnreadable,
    RunDecidedElsewhere,
    RunFinished,
    RunInterrupted,
    RunQueued,
)

LOG_PAGE = 1000
"""Log lines read from the store per page (the most `Runner.expand` gives)."""

FLUSH_SECONDS = 0.05
"""Logs reach the screen in batches, so a chatty snippet cannot flood it; the first
line of a batch sets its timer, so nothing ticks while no run logs."""


class RunController:
    """One run at a time (with its resumes), for the screen that shows it."""

    def __init__(self, owner: DOMNode, workspace: Workspace) -> None:
        self.owner = owner
        """The screen that shows the run: its workers run on it, its messages go to it."""
        self.ws = workspace
        self.token = 0
        """Increases with every run and resume; messages carry the token they belong to."""
        self.cancel_event: asyncio.Event | None = None
        self.last_source: str | None = None
        """What ctrl+r runs again."""
        self.source: str | None = None
        """What the current run runs (and replays when it resumes)."""
        self.result: RunResult | None = None
        self.pending_logs: list[LogLine] = []
        self.decisions: dict[str, bool] = {}
        self.session_approvals: SessionApprovals = workspace.session_approvals
        """Paths approved for the rest of the session: their calls are not asked again."""

    # ------------------------------------------------------------------ runs
    def is_current(self, token: int) -> bool:
        return token == self.token

    def start(self, source: str) -> None:
        """Run `source` from the start (a new run: its decisions start empty)."""
        self.last_source = source
        self.decisions = {}
        self._launch(source, None)

    def resume(self) -> None:
        """Resume the interrupted run with the decisions taken on it."""
        if self.source is None:
            return
        self._launch(self.source, dict(self.decisions))

    def cancel(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()

    def _launch(self, source: str, decisions: dict[str, bool] | None) -> None:
        self.token += 1
        self.source = source
        self.cancel_event = asyncio.Event()
        self.pending_logs = []
        self.owner.run_worker(
            self._execute(self.token, source, decisions, self.cancel_event),
            name="run",
            group="run",
            exclusive=False,
        )

    async def _execute(
        self,
        token: int,
        source: str,
        decisions: dict[str, bool] | None,
        cancel: asyncio.Event,
    ) -> None:
        owner = self.owner

        def on_log(line: LogLine) -> None:  # on the event loop, from the run's frames
            if self.is_current(token):
                if not self.pending_logs:
                    owner.set_timer(FLUSH_SECONDS, self.flush_logs)
                self.pending_logs.append(line)

        def on_call(call: CallRecord) -> None:
            owner.post_message(CallUpdated(token, call))

        def on_queued(queued: Any) -> None:
            owner.post_message(RunQueued(token, getattr(queued, "held_by", None)))

        try:
            if decisions is None:
                result = await self.ws.run(source, on_log=on_log, on_call=on_call, cancel=cancel)
            else:
                result = await self.ws.decide(
                    decisions,
                    on_log=on_log,
                    on_call=on_call,
                    cancel=cancel,
                    warnings=self.ws.warnings,
                    on_queued=on_queued,
                )
        except (ApprovalConflict, StoreError) as exc:
            # Decided or carried out by someone else (the inbox of another IDE, the CLI),
            # or the store could not record the decision: nothing of this resume ran.
            self.flush_logs()
            decided = isinstance(exc, ApprovalConflict)
            owner.post_message(RunDecidedElsewhere(token, str(exc), decided=decided))
            return
        except Exception as exc:  # the engine answers with results: this is a bug or the store
            owner.post_message(
                LogReceived(token, [LogLine(level="error", text=f"run-repl: {exc!r}", at_ms=0)])
            )
            result = RunResult(
                status="error", error=plain_error(ErrorCode.RUN_WORKER_CRASHED, str(exc))
            )
        self.flush_logs()
        if result.status == "interrupted":
            owner.post_message(RunInterrupted(token, result))
        else:
            owner.post_message(RunFinished(token, result, source))

    # ------------------------------------------------------------------ resumed elsewhere
    def show_resumed(self, run_id: str, resumed_in: str, *, state: str) -> None:
        """The run resumed in another process: read it from the store and post it as
        this IDE's own resume posts its run (its logs, then RunFinished or RunInterrupted).
        `state`: how its approvals ended, said if the run cannot be read."""
        self.token += 1
        self.cancel_event = None
        self.pending_logs = []
        self.owner.run_worker(
            self._read_resumed(self.token, run_id, resumed_in, state),
            name="resumed-elsewhere",
            group="run",
            exclusive=False,
        )

    async def _read_resumed(self, token: int, run_id: str, resumed_in: str, state: str) -> None:
        owner = self.owner
        try:
            record = await asyncio.to_thread(self.ws.store.get_run, run_id)
            if record is None or not record.envelope:
                raise LookupError(f"run {run_id} is not in the history")
            result = RunResult.model_validate(record.envelope)
            logs = await self._stored_logs(result)
        except (StoreError, OSError, ValueError, LookupError) as exc:
            owner.post_message(ResumedRunUnreadable(token, state, str(exc).strip("'\"")))
            return
        owner.post_message(LogReceived(token, logs))
        if result.status == "interrupted":
            owner.post_message(RunInterrupted(token, result, resumed_in=resumed_in))
        else:
            source = self.source or record.source
            owner.post_message(RunFinished(token, result, source, resumed_in=resumed_in))

    async def _stored_logs(self, result: RunResult) -> list[LogLine]:
        """The run's log lines: those inline in its result, then the rest from the store
        (a run that logged more keeps them under `logs_ref`), as far as they can be read."""
        logs = list(result.logs)
        ref = result.logs_ref
        total = result.logs_total - result.logs_dropped
        while ref is not None and len(logs) < total:
            try:
                page = await asyncio.to_thread(self.ws.runner.expand, ref, len(logs), LOG_PAGE)
                lines = [LogLine.model_validate(item) for item in page.items]
            except Exception as exc:  # gone, or damaged: the lines read so far are shown
                left = total - len(logs)
                text = f"run-repl: {left:,} more log lines could not be read ({exc})"
                logs.append(LogLine(level="warn", text=text, at_ms=0))
                break
            if not lines:
                break
            logs.extend(lines)
        return logs

    def flush_logs(self) -> None:
        """Post the log lines gathered since the last batch (on the batch's timer, and
        when the run ends)."""
        if self.pending_logs:
            lines, self.pending_logs = self.pending_logs, []
            self.owner.post_message(LogReceived(self.token, lines))

    # ------------------------------------------------------------------ approvals
    def interrupted(self, result: RunResult) -> list[Interruption]:
        """Record an interrupted result; returns what a person must decide (calls to
        functions approved for the session are decided already)."""
        self.result = result
        self.decisions = {}
        ask = []
        for it in result.interruptions or []:
            if it.path in self.session_approvals:
                self.decisions[it.id] = True
            else:
                ask.append(it)
        return ask

    def decide(self, interruption_id: str, approved: bool, *, for_session: bool) -> None:
        result = self.result
        if result is None or result.status != "interrupted":
            return
        self.decisions[interruption_id] = approved
        if for_session:
            for it in result.interruptions or []:
                if it.id == interruption_id:
                    self.session_approvals.add(it.path)

    def finished(self, result: RunResult) -> None:
        self.result = result
