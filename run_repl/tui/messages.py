"""The messages of a run's life, as the app sees it.

RunSubmitted -> LogReceived... / CallUpdated... -> RunFinished
                                              or RunInterrupted -> ApprovalDecided -> RunFinished

Workers post these; `@on` handlers in the app own every state change.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from ..sandbox.result import CallRecord, LogLine, RunResult


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
