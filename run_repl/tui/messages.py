"""The messages of a run's life, as the app sees it.

RunSubmitted -> LogReceived... / CallUpdated... -> RunFinished
                                              or RunInterrupted -> ApprovalDecided -> RunFinished
                                                   (RunQueued: another approver holds the run;
                                                    RunDecidedElsewhere: it did not resume here)

The approvals inbox: ApprovalsChanged (the store's open approvals, from any
process) -> a decision -> InboxOutcome.

Workers post these; `@on` handlers in the app own every state change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from ..sandbox.result import CallRecord, LogLine, RunResult
from ..store.records import PendingApproval

if TYPE_CHECKING:
    from .approvals_inbox import Outcome


@dataclass
class RunSubmitted(Message):
    source: str


@dataclass
class LogReceived(Message):
    run_token: int
    lines: list[LogLine]


@dataclass
class CallUpdated(Message):
    run_token: int
    call: CallRecord


@dataclass
class RunFinished(Message):
    run_token: int
    result: RunResult
    source: str


@dataclass
class RunInterrupted(Message):
    run_token: int
    result: RunResult


@dataclass
class RunQueued(Message):
    """The resume waits: another approver holds the run (`held_by`); the decisions are
    recorded and carried out with theirs."""

    run_token: int
    held_by: str | None


@dataclass
class RunDecidedElsewhere(Message):
    """The resume did not happen here: the approvals were decided elsewhere, or the
    store could not record the decision (`message` says which)."""

    run_token: int
    message: str


@dataclass
class ApprovalDecided(Message):
    """A person decided one pending interruption (approve_path: for the rest of the session)."""

    interruption_id: str
    approved: bool
    approve_path: bool = False


@dataclass
class OpenInEditor(Message):
    """Load this source into a new editor buffer (an example from the palette)."""

    source: str
    title: str


@dataclass
class ApprovalsChanged(Message):
    """The store's open approvals, as the watcher read them after a change (any process).

    `approvals` None: the store could not be read (`problem` says why)."""

    version: int
    approvals: list[PendingApproval] | None
    problem: str | None = None


@dataclass
class InboxOutcome(Message):
    """What a decision (or recovery) taken in the approvals inbox did; `final` False:
    a step on the way (the decision waits behind another approver's resume)."""

    outcome: Outcome
    final: bool = True
