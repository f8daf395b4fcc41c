"""The messages of a run's life, as the app sees it.

RunSubmitted -> LogReceived... / CallUpdated... -> RunFinished
                                              or RunInterrupted -> ApprovalDecided -> RunFinished
                                                   (RunQueued: another approver holds the run;
                                                    RunDecidedElsewhere: it did not resume here)

Decided elsewhere (another IDE, the CLI, an MCP client): ApprovalsChanged carries the
run's own approvals at each change -> words on the status line -> LogReceived /
RunFinished | RunInterrupted of the run resumed there, read from the store (or
ResumedRunUnreadable).

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
    resumed_in: str | None = None
    """Resumed in another process (`approved by alice, resumed in alice@laptop pid 123`),
    read from the store; None: it ran here."""


@dataclass
class RunInterrupted(Message):
    run_token: int
    result: RunResult
    resumed_in: str | None = None
    """As RunFinished's: the resume that paused again ran in another process."""


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
    decided: bool = True
    """Someone else decided or holds it (False: the store could not record the decision)."""


@dataclass
class ResumedRunUnreadable(Message):
    """The run's approvals ended elsewhere, and the run that resumed could not be read
    from the store (`message` says why); `state`: how the approvals ended."""

    run_token: int
    state: str
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
    followed: list[PendingApproval] | None = None
    """The approvals of the run on screen (`ApprovalsInbox.following`), read by id
    whatever their state (None: none followed, or not read)."""


@dataclass
class InboxOutcome(Message):
    """What a decision (or recovery) taken in the approvals inbox did; `final` False:
    a step on the way (the decision waits behind another approver's resume)."""

    outcome: Outcome
    final: bool = True
