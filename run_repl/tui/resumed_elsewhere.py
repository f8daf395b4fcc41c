"""Following a paused run of this IDE that someone else decides.

Another IDE's inbox, `run-repl approvals approve` in a shell or an MCP client may
decide the run on this IDE's screen. The inbox's watcher then reads the run's own
approvals at every change of the store (the same change watch the inbox waits on)
and the main screen turns them into words (`Progress`) and, once they have ended,
into the resumed run itself, shown as if it had resumed here.

Nothing here decides: it only reads what others decided. The pure part is tested
without an app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..present.approvals import decided_words, progress_words
from ..store.records import PendingApproval

ENDED_ORDER = ("unfinished", "failed", "superseded", "denied", "approved")
"""How a batch that ended without a run to show reads: its plainest end first."""


@dataclass
class FollowedRun:
    """The approvals of the run on screen, followed while someone else decides them."""

    token: int
    """The run's token (RunController.token): a new run or resume stops the following."""
    ids: frozenset[str]
    said: str = ""
    """The words last shown, so each change is said once."""


@dataclass(frozen=True)
class Progress:
    """Where a run's approvals stand, in one state and one line of words."""

    state: str
    """"deciding" (some still to decide), "waiting" (decided, being carried out),
    "stuck", or how the batch ended: "resumed" (its run is in the history), else the
    plainest final state (unfinished, failed, superseded, denied, approved)."""
    words: str
    resumed_run_id: str | None = None
    resumed_in: str | None = None
    """`approved by alice, resumed in alice@laptop pid 123`: the resumed run's line."""
    ended_as: str = ""
    """The plainest final state of the batch (ENDED_ORDER), once it has ended."""

    @property
    def ended(self) -> bool:
        return self.state not in ("deciding", "waiting", "stuck")


def run_progress(approvals: Sequence[PendingApproval], now: float | None = None) -> Progress:
    """The progress of one run's approvals (one batch: they resume together)."""
    if not approvals:
        return Progress("deciding", "")
    states = [a.state(now) for a in approvals]
    if len(approvals) == 1:
        words = progress_words(approvals[0], now)
    else:
        words = "; ".join(f"{a.path}: {progress_words(a, now)}" for a in approvals)
    if "pending" in states:
        return Progress("deciding", words)
    if "stuck" in states:
        return Progress("stuck", words)
    if not all(a.final for a in approvals):
        return Progress("waiting", words)
    ended = next(s for s in ENDED_ORDER if s in states)
    resumed = next((a for a in approvals if a.resumed_run_id), None)
    if resumed is not None and all(s in ("approved", "denied") for s in states):
        where = resumed.claimed_by or "another process"
        decided = ", ".join(dict.fromkeys(decided_words(a) for a in approvals))
        line = f"{decided}, resumed in {where}"
        return Progress("resumed", words, resumed.resumed_run_id, line, ended)
    return Progress(ended, words, ended_as=ended)
