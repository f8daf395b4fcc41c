"""What the store keeps besides values: runs (history) and approvals, as pydantic models.

An approval's life (its `status` column):

    pending ──claim──▶ claimed ──guard──▶ executing ──▶ approved | denied | failed
       ▲                  │                   │
       └── released ──────┘                   └── interrupted ──▶ unfinished
          (nothing ran)                           (outcome unknown; never runs again)

`superseded`: its run was resumed through another approval and ended without
reaching this call again. A claim is a short lease its resume renews on a
heartbeat. One that lapses before its resume started is free again, its
decisions kept (nothing ran): another process takes the resume over. One that
lapses after is `unfinished` (outcome unknown) as soon as anyone looks, unless
every call it started is idempotent: then it is free again too, and the
takeover calls them again with the same idempotency key. Until someone looks, such a
batch reads *stuck*.
"""

from __future__ import annotations

import hashlib
import time
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ..sandbox.errors import RunReplError

ApprovalStatus = Literal[
    "pending",
    "claimed",
    "executing",
    "approved",
    "denied",
    "failed",
    "unfinished",
    "superseded",
]
FINAL_STATUSES: frozenset[str] = frozenset(
    {"approved", "denied", "failed", "unfinished", "superseded"}
)
# What a person sees: the status, with claims read against the clock.
ApprovalState = Literal[
    "pending",  # waiting for a decision
    "queued",  # decided, waiting for its run's resume
    "claimed",  # a resume is about to start
    "executing",  # a resume started: its calls may have run
    "stuck",  # a resume started and its lease ran out: unfinished when next listed
    "approved",
    "denied",
    "failed",
    "unfinished",
    "superseded",
]
Decision = Literal["approve", "deny"]
CallOutcome = Literal["ok", "error", "unknown"]


def contains_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, its `\\`, `%` and `_` taken literally
    (with `ESCAPE '\\'`, PostgreSQL's default and SQLite's when asked)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def continuation_batch(continuation: str) -> str:
    """The batch key of a continuation: every approval resumed by one token shares it."""
    return "bat_" + hashlib.sha256(continuation.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def as_decision(value: Any) -> Decision:
    """Only a literal True approves (the engine's rule); anything else denies."""
    return "approve" if value is True else "deny"


class RunRecord(BaseModel):
    """One run in the history.

    `partial`: `envelope` is a short preview (history lists rows without loading
    whole envelopes); `get_run` gives the stored one. `envelope_cut`: the stored
    envelope was cut to fit the history's byte budget."""

    id: str
    started_at: float = Field(default_factory=time.time)
    duration_ms: float = 0.0
    status: str
    source: str
    host: str = ""
    error_code: str | None = None
    value_ref: str | None = None
    logs_ref: str | None = None
    envelope: dict[str, Any] = Field(default_factory=dict)
    resumed_from: str | None = None
    """The paused run this one resumed (after a person's decision)."""
    resumed_as: str | None = None
    """A paused run: the run that resumed it (the latest, when a resume was tried again),
    set by the store as that run is recorded."""
    resumed_status: str | None = None
    """How the `resumed_as` run ended, read with this row (None: no such run kept)."""
    partial: bool = False
    envelope_cut: bool = False
    owner: str | None = None
    """The MCP principal whose call made it (a resumed run: its first run's); None
    for a person's own runs (the CLI, the IDE, stdio)."""

    @property
    def title(self) -> str:
        for line in self.source.splitlines():
            if line.strip():
                return line.strip()[:120]
        return "(empty)"


class PendingApproval(BaseModel):
    """One interrupted call and what became of it: a person approves or denies, the run resumes.

    Several approvals from one interrupted run share a continuation (`batch`):
    they are resumed together, by one claim at a time."""

    id: str  # the interruption id
    run_id: str
    source: str
    host: str = ""
    path: str
    args: Any = None
    payload: Any = None
    message: str = ""
    continuation: str
    batch: str = ""
    status: ApprovalStatus = "pending"
    created_at: float = Field(default_factory=time.time)
    # The decision, once a person made it (it may wait for the batch: queued).
    decision: Decision | None = None
    decided_by: str | None = None  # who: the person, or the authenticated principal
    decided_via: str | None = None  # the channel their answer came through (an MCP client)
    decided_at: float | None = None
    decision_id: str | None = None  # the flow that recorded it (a claim id)
    # The claim of the resume that carries it out.
    claim_id: str | None = None
    claimed_by: str | None = None
    claimed_at: float | None = None
    claim_expires_at: float | None = None
    executing_at: float | None = None  # when that resume passed its guard
    # How it ended.
    finished_at: float | None = None
    resumed_run_id: str | None = None
    outcome: CallOutcome | None = None  # of the approved call, when it ran
    outcome_code: str | None = None
    note: str | None = None  # why it is where it is, in a sentence
    owner: str | None = None  # the MCP principal whose run asked (RunRecord.owner)
    # Where it resumes: its call may run again with the same idempotency key (declared by
    # the host function), and the executor that started the run and waits for it.
    idempotent: bool = False
    resume_by: str | None = None

    @model_validator(mode="after")
    def _batch_of_continuation(self) -> PendingApproval:
        if not self.batch:
            self.batch = continuation_batch(self.continuation)
        return self

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def started(self) -> bool:
        """Its batch's resume passed the guard: something may have run."""
        return self.status == "executing" or (
            self.status == "claimed" and self.executing_at is not None
        )

    def claim_live(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        return (
            self.status in ("claimed", "executing")
            and self.claim_expires_at is not None
            and self.claim_expires_at > now
        )

    def state(self, now: float | None = None) -> ApprovalState:
        """The status as a person should read it now."""
        if self.status in FINAL_STATUSES:
            return self.status
        if self.started:
            return "executing" if self.claim_live(now) else "stuck"
        if self.status == "claimed" and self.claim_live(now):
            return "claimed"
        return "queued" if self.decision else "pending"


def as_read(approval: PendingApproval, now: float | None = None) -> PendingApproval:
    """How a stored approval reads now: a claim that ran out before its resume
    started is pending again (nothing ran; its claim fields stay as history)."""
    if (
        approval.status == "claimed"
        and approval.executing_at is None
        and not approval.claim_live(now)
    ):
        approval.status = "pending"
    return approval


def approval_message(payload: Any, path: str) -> str:
    """What a person is asked (`PendingApproval.message`): the host's message, else a
    plain one naming the call. The one wording of it: the store keeps it, every front
    end shows it (re-exported by `present.approvals`)."""
    if isinstance(payload, dict) and isinstance(payload.get("message"), str) and payload["message"]:
        message: str = payload["message"]
        return message
    return f"{path} is waiting for a decision"


class RunKey(BaseModel):
    """An idempotency key of the `run` tool: the first call with it reserves it
    (`holder`), and names its run once the run is kept (`run_id`); a retry with
    the same key (same owner) reads it instead of running again. `age_s`: how
    long ago it was reserved, by the store's clock."""

    owner: str
    key: str
    digest: str  # of the snippet's source: the same key for another snippet is refused
    holder: str
    run_id: str | None = None
    created_at: float = 0.0
    age_s: float = 0.0


class Claim(BaseModel):
    """A batch taken for one resume: every open approval of one continuation."""

    claim_id: str
    claimed_by: str
    batch: str
    expires_at: float
    approvals: list[PendingApproval]
    decisions: dict[str, bool]  # what this resume answers: interruption id -> approved
    # Taken over from a resume that passed its guard and whose every started call is
    # idempotent: its continuation was spent, and this claim alone may spend it again.
    takeover: bool = False

    @property
    def first(self) -> PendingApproval:
        return self.approvals[0]


class Queued(BaseModel):
    """The decisions are recorded; the batch is being resumed by someone else."""

    batch: str
    held_by: str | None
    approvals: list[PendingApproval]


class Applied(BaseModel):
    """The decisions were carried out by another approver's resume."""

    approvals: list[PendingApproval]


class CallFacts(BaseModel):
    """What a resumed run's record says about one interrupted call.

    `not_run`: the resume guard stopped it (then nothing of the host ran at all);
    `ok` None: it was still running when the run ended, its effect unknown."""

    decision: str | None = None  # approved | denied | refused | pending
    ok: bool | None = None
    error_code: str | None = None
    not_run: bool = False


class ResumeReport(BaseModel):
    """What happened to a claimed batch's resume, for the store to settle it.

    `ended` False: the resume's end was not seen (Ctrl-C, a crash of the flow,
    an exception); `why` says so. Else the run's facts: its status and error,
    the record of each interrupted call it reached, and for an interrupted run
    the new continuation and every approval it now waits on."""

    ended: bool
    why: str = ""
    run_id: str | None = None
    status: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    calls: dict[str, CallFacts] = Field(default_factory=dict)
    next_continuation: str | None = None
    next_run_id: str | None = None
    next_approvals: list[PendingApproval] = Field(default_factory=list)


REPLAY_GRANT: ContextVar[str | None] = ContextVar("run_repl_replay_grant", default=None)
"""The claim id of the takeover resuming in this context: a store's `consume_continuation`
lets a token spent before through once more for it, when that claim's guard granted it
(`ApprovalRows.grant_replay`). Anyone else presenting the token is still refused."""


def grant_key(claim_id: str, digest: str) -> str:
    """The consumed-continuations row that lets claim `claim_id` spend token `digest` again."""
    return f"grant:{claim_id}:{digest}"


class ApprovalConflict(RunReplError, RuntimeError):
    """The approval was already decided (or is being resumed) by someone else."""

    code = "APPROVAL_CONFLICT"


class ApprovalStuck(ApprovalConflict):
    """A resume of this approval's run started and never finished: `recover` it."""

    code = "APPROVAL_STUCK"


class ApprovalRefused(ApprovalConflict):
    """The approvals policy names other people for this approval: this person may not
    decide it (nothing was recorded). An ApprovalConflict, so every front end that
    reports a conflict reports this too."""

    code = "APPROVAL_REFUSED"


class ClaimLost(RunReplError, RuntimeError):
    """The claim this resume holds expired and was taken, or the approvals were recovered."""

    code = "APPROVAL_CLAIM_LOST"


__all__ = [
    "FINAL_STATUSES",
    "REPLAY_GRANT",
    "Applied",
    "ApprovalConflict",
    "ApprovalRefused",
    "ApprovalState",
    "ApprovalStatus",
    "ApprovalStuck",
    "CallFacts",
    "CallOutcome",
    "Claim",
    "ClaimLost",
    "Decision",
    "PendingApproval",
    "Queued",
    "ResumeReport",
    "RunKey",
    "RunRecord",
    "approval_message",
    "as_decision",
    "as_read",
    "continuation_batch",
    "grant_key",
]
