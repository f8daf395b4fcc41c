"""The approvals inbox's state, apart from the screen: every open approval in the store,
live, and the decisions this IDE is carrying out.

Approvals come from this IDE, other IDEs, `run-repl run`, the line REPL and
agents over MCP, all through one store. A worker watches it
(`wait_for_approvals_change`: PostgreSQL pushes; for SQLite one thread of the store
reads every 50 ms while someone waits, so the event loop sleeps until a change)
and posts `ApprovalsChanged` with the open approvals; the main screen's handlers own
every widget. Deciding and recovering are workers too: they call the store's
flow (`ws.dispatch`, `recover`) and post what became of it (`InboxOutcome`),
so the screen never waits on a run or on the store. A decision for a run that a
live process started (an MCP server holding its agent's call) or a server of the
host can resume is recorded for it and said so; else this IDE resumes it.

The IDE is also an executor of the runs it starts (`resume_here`): decided anywhere
(a shell, another IDE, an MCP client), they resume in this process, which has their
host, and the follow path shows how they ended.

The watcher also reads, by id, the approvals of the run on this IDE's screen
(`follow`): at every change, whatever their state, so the screen hears who decided
them, where they are being resumed and how that ended (`resumed_elsewhere.py`).

The pure part (`InboxRow`, `blocked_reason`, `outcome_lines`) is tested without an app.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from textual.dom import DOMNode

from ..present import formats
from ..present.approvals import approve_command, describe_state
from ..present.styled import Line, line, styled
from ..sandbox.result import RunResult
from ..store import ApprovalConflict, PendingApproval, StoreError
from ..store.approvals.dispatch import Dispatched, result_of, stranded
from ..store.approvals.flow import (
    open_approvals,
    recover,
    wait_for_approvals_change,
)
from ..workspace import Workspace
from .messages import ApprovalsChanged, InboxOutcome

WATCH_WORKER = "approvals-watch"
"""The watcher's worker name: it lives as long as the app (tests wait on the others)."""
RESUMER_WORKER = "approvals-resumer"
"""The executor's worker: it lives as long as the app too."""
APP_LONG_WORKERS = frozenset({WATCH_WORKER, RESUMER_WORKER})
"""The workers that end only with the app (every other one ends on its own)."""
WATCH_TIMEOUT_S = 2.0
"""How long one wait for a change lasts; a claim running out changes a state without one."""
RELIST_S = 10.0
"""Read the list again this often anyway, so a claim that ran out shows as stuck."""
RETRY_S = 1.0
"""After a store error, wait this long before watching again."""

# The states a person can still decide: the others are decided, or being carried out.
DECIDABLE = frozenset({"pending"})


def age_text(created_at: float, now: float | None = None) -> str:
    """`12 s`, `4 min`, `3 h`, `2 d`: how long an approval has waited."""
    seconds = max(0.0, (time.time() if now is None else now) - created_at)
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    if seconds < 86_400:
        return f"{seconds // 3600:.0f} h"
    return f"{seconds // 86_400:.0f} d"


@dataclass(frozen=True)
class InboxRow:
    """One open approval as the inbox lists it."""

    id: str
    state: str
    age: str
    host: str
    path: str
    args: str
    """The arguments as the snippet wrote them, whole (a list cuts them to fit)."""
    origin: str
    """Whose run it is: "this IDE" (the run on screen), else the run's id."""

    @classmethod
    def of(
        cls,
        approval: PendingApproval,
        *,
        here: frozenset[str] = frozenset(),
        now: float | None = None,
    ) -> InboxRow:
        return cls(
            id=approval.id,
            state=approval.state(now),
            age=age_text(approval.created_at, now),
            host=approval.host or "-",
            path=approval.path,
            args=formats.args_text(approval.args),
            origin="this IDE" if approval.id in here else approval.run_id,
        )


def blocked_reason(
    approval: PendingApproval, host: str, *, deciding: bool = False, stranded: str | None = None
) -> str | None:
    """Why this IDE cannot decide `approval` now (None: it can), in one sentence with the
    way out. `stranded`: it is decided and no live process can resume it (why, what to do)."""
    if deciding:
        return "Your decision on it is being carried out."
    state = approval.state()
    if state == "stuck":
        return f"{describe_state(approval)} R recovers it here."
    if state not in DECIDABLE:
        nobody = f" Nobody resumes it: {stranded}." if stranded else ""
        return f"It is {describe_state(approval)}.{nobody}"
    if approval.host and approval.host != host:
        return (
            f"It belongs to a run on host {approval.host!r} and this IDE runs {host!r}: "
            f"`{approve_command(approval.id, host=approval.host)}` decides it."
        )
    return None


@dataclass
class Outcome:
    """What became of one decision (or recovery) taken in the inbox."""

    approval_id: str
    path: str
    action: str  # "approved", "denied", "recovered"
    lines: list[Line]
    ok: bool


def outcome_lines(
    action: str,
    approval: PendingApproval,
    result: RunResult | None = None,
    *,
    error: str | None = None,
    queued_behind: str | None = None,
    warnings: list[str] | None = None,
    resumes_on: str | None = None,
) -> list[Line]:
    """The inbox's words for what a decision did: the run it resumed, how that ended,
    or (`resumes_on`) the process it was recorded for, which resumes it."""
    head = line(
        ("ok" if action == "approved" else "error" if action == "denied" else "warn", action),
        " ",
        ("path", approval.path),
        formats.args_text(approval.args),
        ("dim", f"  ({approval.id})"),
    )
    out = [head]
    if queued_behind:
        out.append(
            styled(
                "warn",
                f"  {queued_behind} was resuming this run: your decision was recorded and "
                "carried out with it",
            )
        )
    if error is not None:
        out.append(line(("error", "  not decided: "), error))
    elif resumes_on is not None:
        out.append(
            line(
                ("dim", f"  recorded; run {approval.run_id} resumes on "),
                ("path", resumes_on),
                ("dim", " (it has the host: the outcome shows here when it ends)"),
            )
        )
    elif result is not None:
        status = line("  the run resumed: ", (_status_style(result.status), result.status))
        if result.duration_ms is not None:
            status.append(("dim", f" in {formats.format_ms(result.duration_ms)}"))
        out.append(status)
        if result.status == "interrupted":
            waiting = len(result.interruptions or [])
            out.append(
                styled(
                    "warn",
                    f"  it waits for {formats.plural(waiting, 'more approval')} (listed here)",
                )
            )
        elif result.error is not None:
            first = result.error.message.split("\n")[0]
            out.append(line(("error", f"  {result.error.code}: "), first))
        elif result.ok:
            out.append(line(("dim", "  value: "), _value_summary(result)))
        if result.run_id:
            out.append(styled("dim", f"  run {result.run_id} is in the history (F2)"))
    for warning in warnings or []:
        out.append(line(("warn", "  warning: "), warning))
    return out


def _status_style(status: str) -> str:
    return {"ok": "ok", "error": "error", "interrupted": "warn"}.get(status, "")


def _value_summary(result: RunResult, limit: int = 160) -> str:
    if result.value_kind == "undefined":
        return "undefined"
    if result.value_window is not None:
        return f"{result.total or 0:,} items at {result.value_window.path}"
    text = formats.json_text(result.value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Asked(Protocol):
    """One approval the inline prompt asks (an `Interruption`)."""

    @property
    def id(self) -> str: ...

    @property
    def path(self) -> str: ...


@dataclass
class ListNews:
    """What a new list from the store means for the screen: which approvals the prompt
    stops asking (decided elsewhere), whether to say that approvals wait (the first list),
    and which approvals of other runs to announce now."""

    drop: list[str]
    waiting_note: bool
    announce: list[PendingApproval]


def _no_prompt() -> frozenset[str]:
    return frozenset()


@dataclass
class ApprovalsInbox:
    """The open approvals of the store, as last read, and the decisions under way."""

    owner: DOMNode
    """The screen its workers run on and its messages go to."""
    ws: Workspace
    asking: Callable[[], frozenset[str]] = _no_prompt
    """The ids the inline prompt asks now (the run on this IDE's screen)."""
    approvals: list[PendingApproval] = field(default_factory=list)
    deciding: set[str] = field(default_factory=set)
    """Approvals this IDE decided whose flow is still going (their run resumes)."""
    stranded: dict[str, str] = field(default_factory=dict)
    """Decided ones no live process can resume, as last listed: why, and what to do."""
    outcomes: list[Outcome] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set each time a new list is in (tests wait on it, never on the clock)."""
    problem: str | None = None
    listed: bool = False
    """A list has come in since the app started."""
    seen_open: set[str] = field(default_factory=set)
    """Approvals of the run on screen that the store listed open at least once."""
    unannounced: set[str] = field(default_factory=set)
    """New approvals listed while a run of ours ran: announced once it has ended."""
    following: frozenset[str] = frozenset()
    """The approvals of the run on screen the watcher reads at every change (`follow`)."""
    _poke: asyncio.Event = field(default_factory=asyncio.Event)
    _followed_due: float | None = None
    """When a followed approval's claim runs out (it is stuck then, with no change)."""

    @property
    def here(self) -> frozenset[str]:
        """The approvals the inline prompt asks, read from it (never a copy)."""
        return self.asking()

    # ------------------------------------------------------------------ reading
    def watch(self) -> None:
        """Start the watcher: one worker for the main screen's (the app's) life."""
        self.owner.run_worker(
            self._watch(),
            name=WATCH_WORKER,
            group=WATCH_WORKER,
            exclusive=True,
            exit_on_error=False,
        )

    def resume_here(self) -> None:
        """Be an executor of this host for the runs this IDE starts: one worker for the
        app's life (a store in memory is this process's alone: nothing to do)."""
        if not self.ws.persistent:
            return
        self.owner.run_worker(
            self._resume_here(),
            name=RESUMER_WORKER,
            group=RESUMER_WORKER,
            exclusive=True,
            exit_on_error=False,
        )

    async def _resume_here(self) -> None:
        ws = self.ws
        resumer = ws.resumer("ide")  # resumes only the runs it started (servers take the rest)
        try:
            await asyncio.to_thread(resumer.register)
        except Exception:  # the store failed: decisions made elsewhere resume there, as before
            return
        ws.executor_id = resumer.id  # the runs this IDE starts name it: it resumes them
        try:
            await resumer.run(asyncio.Event())  # until the app ends (the worker is cancelled)
        finally:
            ws.executor_id = None

    def follow(self, ids: Collection[str]) -> None:
        """Read these approvals (the run on screen's) at every change, and now."""
        self.following = frozenset(ids)
        self._followed_due = None
        self._poke.set()

    def unfollow(self) -> None:
        self.following = frozenset()
        self._followed_due = None

    async def _watch(self) -> None:
        store = self.ws.store
        since: int | None = None
        listed_at = 0.0
        while True:
            try:
                if since is None:
                    version = int(await asyncio.to_thread(store.approvals_version))
                else:
                    version = await self._next_version(since)
                poked = self._poke.is_set()
                self._poke.clear()  # a follow() during the reads below asks again
                due = self._followed_due is not None and time.time() >= self._followed_due
                if poked or due or version != since or time.monotonic() - listed_at >= RELIST_S:
                    approvals = await asyncio.to_thread(open_approvals, store)
                    # Decided ones no live process can resume: said, never silent.
                    self.stranded = await asyncio.to_thread(stranded, store, approvals)
                    followed = await self._read_followed()
                    listed_at = time.monotonic()
                    since = version
                    self.owner.post_message(ApprovalsChanged(version, approvals, followed=followed))
            except (StoreError, OSError, ValueError) as exc:
                self.owner.post_message(ApprovalsChanged(since or 0, None, problem=str(exc)))
                await asyncio.sleep(RETRY_S)
            except Exception as exc:  # a bug must not end the watching for the app's life
                problem = f"{type(exc).__name__}: {exc}"
                self.owner.post_message(ApprovalsChanged(since or 0, None, problem=problem))
                await asyncio.sleep(RETRY_S)

    async def _next_version(self, since: int) -> int:
        """The store's change watch, cut short by `follow` (a run to follow from now),
        and by a followed claim running out (it is stuck then, and nothing changes)."""
        timeout = WATCH_TIMEOUT_S
        if self._followed_due is not None:
            timeout = max(0.0, min(timeout, self._followed_due - time.time()))
        change = asyncio.ensure_future(wait_for_approvals_change(self.ws.store, since, timeout))
        poke = asyncio.ensure_future(self._poke.wait())
        try:
            await asyncio.wait({change, poke}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            poke.cancel()
            if not change.done():
                change.cancel()  # its watch stops (the waiter holds no thread)
            # Both end before this returns: a cancelled wait is over once awaited.
            await asyncio.gather(change, poke, return_exceptions=True)
        if change.cancelled():
            return since
        return change.result()

    async def _read_followed(self) -> list[PendingApproval] | None:
        ids = self.following
        if not ids:
            return None
        store = self.ws.store
        found = await asyncio.to_thread(lambda: [store.get_approval(i) for i in sorted(ids)])
        followed = [a for a in found if a is not None]
        if ids != self.following:  # followed something else meanwhile: read that next time
            return None
        # A claim that runs out changes a state with no write: stuck, or pending again.
        expiring = [
            a.claim_expires_at
            for a in followed
            if a.claim_expires_at is not None and a.claim_live()
        ]
        self._followed_due = min(expiring) if expiring else None
        return followed

    def take(self, event: ApprovalsChanged) -> None:
        """Keep what the watcher read (the main screen calls this from its handler)."""
        if event.approvals is None:
            self.problem = event.problem
        else:
            self.problem = None
            self.approvals = event.approvals
        self.changed.set()

    def news(
        self,
        event: ApprovalsChanged,
        queue: Sequence[Asked],
        *,
        decided: Collection[str],
        running: bool,
    ) -> ListNews | None:
        """Take a new list (None: the store could not be read) and say what it changes:
        the prompt's approvals decided elsewhere (another IDE's inbox, the CLI), and the
        approvals of other runs to announce. While a run of ours runs, new ones wait in
        `unannounced`: the store shows a paused run's approvals a moment before its end
        reaches the screen, so they may be its own (`deferred` says them once it has)."""
        before = {a.id for a in self.approvals}
        first = not self.listed
        self.take(event)
        if event.approvals is None:
            return None
        self.listed = True
        by_id = {a.id: a for a in event.approvals}
        drop: list[str] = []
        for it in queue:
            found = by_id.get(it.id)
            if found is not None and found.state() == "pending":
                self.seen_open.add(it.id)
                continue
            # Listed open before and now decided (or gone): someone else decided it. One
            # never listed was not saved: only this prompt can decide it.
            if (found is not None or it.id in self.seen_open) and it.id not in decided:
                drop.append(it.id)
        here = self.here - set(drop)
        others = [
            a
            for a in event.approvals
            if a.id not in before and a.id not in here and a.state() == "pending"
        ]
        announce: list[PendingApproval] = []
        if others and not first:
            if running:
                self.unannounced.update(a.id for a in others)
            else:
                announce = others
        return ListNews(drop, first and self.waiting > 0, announce)

    def deferred(self) -> list[PendingApproval]:
        """The run has ended (or paused): the approvals that came while it ran and are
        not its own, to announce now (once)."""
        ids, self.unannounced = self.unannounced, set()
        here = self.here
        return [
            a for a in self.approvals if a.id in ids and a.id not in here and a.state() == "pending"
        ]

    async def next_change(self) -> None:
        """Wait for the next list the watcher posts (and the main screen takes)."""
        self.changed.clear()
        await self.changed.wait()

    def get(self, approval_id: str) -> PendingApproval | None:
        return next((a for a in self.approvals if a.id == approval_id), None)

    @property
    def waiting(self) -> int:
        """How many wait for a person: pending ones, and stuck ones to recover."""
        return sum(1 for a in self.approvals if a.state() in ("pending", "stuck"))

    def blocked_reason(self, approval: PendingApproval) -> str | None:
        return blocked_reason(
            approval,
            self.ws.host.name,
            deciding=approval.id in self.deciding,
            stranded=self.stranded.get(approval.id),
        )

    # ------------------------------------------------------------------ deciding
    def decide(self, approval: PendingApproval, approved: bool) -> None:
        """Decide one approval of another run through the store's flow, in a worker."""
        self.deciding.add(approval.id)
        self.owner.run_worker(
            self._decide(approval, approved), group="inbox-decide", exit_on_error=False
        )

    async def _decide(self, approval: PendingApproval, approved: bool) -> None:
        action = "approved" if approved else "denied"
        warnings: list[str] = []
        queued: list[str] = []

        def on_queued(q: Any) -> None:
            who = getattr(q, "held_by", None) or "another approver"
            queued.append(who)
            self.owner.post_message(
                InboxOutcome(
                    Outcome(
                        approval.id,
                        approval.path,
                        "queued",
                        [
                            styled(
                                "warn",
                                f"{approval.path} ({approval.id}): {who} is resuming this run: "
                                "your decision is recorded and is carried out with it (waiting)…",
                            )
                        ],
                        True,
                    ),
                    final=False,
                )
            )

        error: str | None = None
        result: RunResult | None = None
        done: Dispatched | None = None
        try:
            done = await self.ws.dispatch({approval.id: approved}, on_queued=on_queued)
            if done.resolution is not None:  # resumed here (or by whoever held it)
                warnings += done.resolution.warnings
                result = result_of(done)
        except (ApprovalConflict, StoreError, KeyError, ValueError) as exc:
            error = str(exc).strip("'\"") or type(exc).__name__
        except Exception as exc:  # the flow answers with results: this is a bug or the host
            error = f"{type(exc).__name__}: {exc}"
        lines = outcome_lines(
            action,
            approval,
            result,
            error=error,
            queued_behind=queued[0] if queued else None,
            warnings=warnings,
            resumes_on=done.executor.label if done is not None and done.executor else None,
        )
        self.owner.post_message(
            InboxOutcome(Outcome(approval.id, approval.path, action, lines, error is None))
        )

    def recover(self, approval: PendingApproval) -> None:
        """End a stuck approval's batch without running anything, in a worker."""
        self.deciding.add(approval.id)
        self.owner.run_worker(self._recover(approval), group="inbox-decide", exit_on_error=False)

    async def _recover(self, approval: PendingApproval) -> None:
        try:
            ended = await asyncio.to_thread(recover, self.ws.store, approval.id)
        except (ApprovalConflict, StoreError, KeyError) as exc:
            lines = [line(("error", "not recovered: "), approval.id, ": ", str(exc))]
            ok = False
        else:
            lines = [line(("warn", "recovered "), a.id, "  ", describe_state(a)) for a in ended]
            ok = True
        self.owner.post_message(
            InboxOutcome(Outcome(approval.id, approval.path, "recovered", lines, ok))
        )

    def finished(self, outcome: Outcome, *, final: bool = True) -> None:
        """Record an outcome (the main screen calls this from its handler)."""
        if final:
            self.deciding.discard(outcome.approval_id)
        self.outcomes.append(outcome)
        del self.outcomes[:-50]
