"""Where a paused run stands, and waiting for a person to decide it.

An agent's run that reaches a call needing approval is saved in the store
like any other. A person decides it wherever they are (the IDE, the line
REPL, `run-repl approvals approve ID`), and *that* process resumes the run,
through the store's flow (claims: at most once). So this server never
resumes a run itself: it follows the run through the store.

    decided approval ──resumed_run_id──▶ the resumed run, in the history
        ├── ok / error: the final result
        └── interrupted again (another call, or the rest of a batch):
            the approvals it now waits on, and on from there

`standing(store, start)` reads that chain once; `ApprovalWatch` wakes
waiters when the approvals change in any process (one watcher per server,
however many calls wait).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..present.approvals import describe_state
from ..present.sanitize import safe
from ..sandbox.result import RunResult
from ..store import PendingApproval, Store
from ..store.approvals.dispatch import stranded
from ..store.approvals.flow import wait_for_approvals_change
from .tool_errors import APPROVAL_NOT_FOUND, RUN_NOT_FOUND, ToolError, edit

MAX_STEPS = 256  # resumes followed in one reading (each step is a newer run)
WATCH_SLICE_S = 1.0  # the watcher's longest single wait (it stops soon after the last waiter)

Status = Literal["waiting", "done", "ended"]


@dataclass
class Standing:
    """Where a paused run stands.

    `waiting`: `approvals` are the open ones it waits on and `result` the
    latest interrupted run (None when only approval ids were given and the
    history does not have it), and `note`, when one is decided and no live process
    can resume it, why and what to do. `done`: `result` is the final result.
    `ended`: it ended without a result a model can read (recovered, failed,
    or its resumed run is no longer in the history): `note` says why."""

    status: Status
    run_id: str | None
    approvals: list[PendingApproval]
    result: RunResult | None = None
    note: str | None = None

    def key(self) -> tuple[Any, ...]:
        """What changes when something a waiting agent should hear about changes."""
        return (
            self.status,
            self.run_id,
            tuple((a.id, a.state()) for a in self.approvals),
            self.note,
        )


def _result_of(envelope: dict[str, Any]) -> RunResult | None:
    try:
        return RunResult.model_validate(envelope)
    except ValueError:
        return None


def _ids(result: RunResult) -> list[str]:
    return [i.id for i in result.interruptions or []]


def standing(store: Store, result: RunResult) -> Standing:
    """Where the run paused in `result` stands now (a blocking read: call off the loop)."""
    return _follow(store, result, _ids(result), result.run_id)


def standing_of_run(store: Store, run_id: str, principal: str | None = None) -> Standing:
    """Where run `run_id` stands: its final result, or the approvals it waits on.
    ToolError RUN_NOT_FOUND when neither the history nor the approvals know it, or
    (`principal` given) when it is not that principal's: the same answer."""
    record = store.get_run(run_id)
    if record is not None and principal is not None and record.owner != principal:
        record = None
        mine = False
    else:
        mine = True
    if record is not None:
        result = _result_of(record.envelope)
        if result is not None and result.status != "interrupted":
            return Standing("done", run_id, [], result)
        if result is not None and result.interruptions:
            return _follow(store, result, _ids(result), run_id)
    ids = [
        a.id
        for a in store.list_approvals(status=None)
        if mine and a.run_id == run_id and (principal is None or a.owner == principal)
    ]
    if not ids:
        raise ToolError(
            RUN_NOT_FOUND,
            f"No run {run_id!r} in run-repl's history or approvals (unknown, or no longer kept).",
            edit("Pass the run_id a run returned, or its approval_ids.", argument="run_id"),
        )
    return _follow(store, None, ids, run_id)


def standing_of_approvals(store: Store, ids: list[str], principal: str | None = None) -> Standing:
    """ToolError APPROVAL_NOT_FOUND for an id the store does not know, or (`principal`
    given) that is not that principal's: the same answer."""

    def unknown(approval_id: str) -> bool:
        found = store.get_approval(approval_id)
        return found is None or (principal is not None and found.owner != principal)

    missing = [i for i in ids if unknown(i)]
    if missing:
        raise ToolError(
            APPROVAL_NOT_FOUND,
            f"No approval {', '.join(repr(i) for i in missing)} in run-repl's store.",
            edit(
                "Pass the approval_ids (int_...) a run returned, or its run_id.",
                argument="approval_ids",
            ),
        )
    return _follow(store, None, ids, None)


def _waiting(
    store: Store, run_id: str | None, still_open: list[PendingApproval], result: RunResult | None
) -> Standing:
    nobody = stranded(store, still_open)  # decided, but no live process resumes it
    note = "; ".join(f"{i}: {why}" for i, why in nobody.items()) or None
    return Standing("waiting", run_id, still_open, result, note)


def _follow(store: Store, result: RunResult | None, ids: list[str], run_id: str | None) -> Standing:
    for _ in range(MAX_STEPS):
        rows = [a for a in (store.get_approval(i) for i in ids) if a is not None]
        if not rows:
            return Standing("ended", run_id, [], result, "its approvals are no longer in the store")
        resumed = [a for a in rows if a.final and a.resumed_run_id]
        still_open = [a for a in rows if not a.final]
        if resumed:
            latest = max(resumed, key=lambda a: a.finished_at or 0.0)
            record = store.get_run(latest.resumed_run_id or "")
            following = _result_of(record.envelope) if record is not None else None
            if following is None:
                if still_open:
                    return _waiting(store, run_id, still_open, result)
                return Standing(
                    "ended",
                    latest.resumed_run_id,
                    rows,
                    None,
                    f"its run was resumed as {latest.resumed_run_id}, which the history no longer "
                    "holds",
                )
            if following.status != "interrupted" or not following.interruptions:
                return Standing("done", following.run_id, [], following, None)
            next_ids = _ids(following)
            if following.run_id == run_id and set(next_ids) == set(ids):
                break  # nothing moved on: do not go round
            result, ids, run_id = following, next_ids, following.run_id
            continue
        if still_open:
            return _waiting(store, run_id, still_open, result)
        notes = "; ".join(f"{a.id} {describe_state(a)}" for a in rows)
        return Standing("ended", run_id, rows, result, f"it ended without a result: {notes}")
    open_rows = [a for a in (store.get_approval(i) for i in ids) if a is not None and not a.final]
    return _waiting(store, run_id, open_rows, result)


def resuming(state: Standing) -> bool:
    """A person has decided: the run is being (or about to be) resumed."""
    return any(a.state() in ("queued", "claimed", "executing") for a in state.approvals)


# ---------------------------------------------------------------- words for the waiting agent
def call_text(approval: PendingApproval) -> str:
    args = approval.args if isinstance(approval.args, list) else [approval.args]
    text = ", ".join(json.dumps(a, ensure_ascii=False, default=str) for a in args)
    if len(text) > 200:
        text = text[:199] + "…"
    return safe(f"{approval.path}({text})")  # the arguments' invisible characters as escapes


def waiting_message(state: Standing, approve_command: Callable[[str], str]) -> str:
    """One line for a progress notification: what the run waits for, and where."""
    if state.status == "done" and state.result is not None:
        error = state.result.error
        return "the run resumed and finished: " + (
            f"{error.code}" if error else state.result.status
        )
    if state.status == "ended":
        return f"the run ended: {state.note}"
    if not state.approvals:
        return "the run is resuming"
    parts = []
    for a in state.approvals:
        where = a.state()
        if where == "pending":
            parts.append(
                f"waiting for a person to approve {call_text(a)} in run-repl "
                f"(`{approve_command(a.id)}`, or the IDE's approvals inbox)"
            )
        elif where in ("claimed", "executing"):
            parts.append(f"{call_text(a)} was decided: the run is resuming ({describe_state(a)})")
        else:
            parts.append(f"{call_text(a)}: {describe_state(a)}")
    if state.note:  # nobody can resume a decided one: the person must act
        parts.append(f"nobody resumes it: {state.note}")
    return "; ".join(parts)


# ---------------------------------------------------------------- waiting
class ApprovalWatch:
    """Wakes every waiter when the approvals change, from one watcher per store.

    The watcher runs while someone waits: it asks the store (or lets a store
    that pushes changes tell it) and wakes all waiters on a new version. Most
    changes are other runs' (every approval anyone writes bumps the version), so
    a woken waiter first asks `rows` whether its own approvals moved: one read of
    every waiter's approvals per version, however many wait."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version: int | None = None
        self._changed = asyncio.Condition()
        self._waiters = 0
        self._task: asyncio.Task[None] | None = None
        self._wanted: dict[int, frozenset[str]] = {}  # waiter -> the approvals it follows
        self._next_waiter = 0
        # The latest shared read: the version it was asked for, the ids it covers.
        self._read: tuple[int, frozenset[str], asyncio.Future[dict[str, PendingApproval]]] | None
        self._read = None

    def follow(self, ids: frozenset[str]) -> int:
        """Say which approvals a waiter follows (so a shared read covers them)."""
        token = self._next_waiter
        self._next_waiter += 1
        self._wanted[token] = ids
        return token

    def refollow(self, token: int, ids: frozenset[str]) -> None:
        self._wanted[token] = ids

    def unfollow(self, token: int) -> None:
        self._wanted.pop(token, None)

    async def rows(self, version: int, ids: frozenset[str]) -> dict[str, PendingApproval]:
        """`ids`' rows as of `version` or later, read once for every waiter at a version."""
        held = self._read
        if held is None or held[0] < version or not ids <= held[1]:
            wanted = frozenset(ids.union(*self._wanted.values()))
            future = asyncio.ensure_future(asyncio.to_thread(self.store.get_approvals, wanted))
            held = self._read = (version, wanted, future)
        return await asyncio.shield(held[2])

    async def version(self) -> int:
        return int(await asyncio.to_thread(self.store.approvals_version))

    async def changed(self, since: int, timeout_s: float) -> int:
        """The approvals' version once it differs from `since`, or after `timeout_s`."""
        if timeout_s <= 0:
            return await self.version()
        self._waiters += 1
        try:
            if self._task is None:
                # Versions only grow: a newer one already seen wakes this waiter at once.
                self._version = since if self._version is None else max(self._version, since)
                self._task = asyncio.create_task(self._watch(), name="run-repl approvals watch")
            async with self._changed:
                try:
                    await asyncio.wait_for(
                        self._changed.wait_for(lambda: self._version != since), timeout_s
                    )
                except TimeoutError:
                    pass
            return since if self._version is None else self._version
        finally:
            self._waiters -= 1

    async def _watch(self) -> None:
        while True:
            if self._waiters == 0:
                self._task = None  # no await since the check: a new waiter starts a new watcher
                return
            since = self._version if self._version is not None else await self.version()
            try:
                now = await wait_for_approvals_change(self.store, since, WATCH_SLICE_S)
            except Exception:  # the store is busy or failing: waiters time out on their own
                await asyncio.sleep(WATCH_SLICE_S)
                continue
            if now != self._version:
                async with self._changed:
                    self._version = now
                    self._changed.notify_all()

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass


Report = Callable[[Standing], Awaitable[None]]


def _read_on(store: Store, state: Standing, start: Callable[[], Standing]) -> Standing:
    """Read on from where `state` was (its latest interrupted run), else from the start."""
    if state.result is not None and state.result.status == "interrupted":
        return standing(store, state.result)
    return start()


async def wait_for_decision(
    watch: ApprovalWatch,
    start: Callable[[], Standing],
    wait_s: float,
    report: Report | None = None,
    *,
    heartbeat_s: float = 5.0,
    resuming_grace_s: float = 0.0,
) -> Standing:
    """Follow a paused run until it is decided and resumed (done or ended), or
    `wait_s` passes (waiting). A run a person has decided in time and that is
    resuming when `wait_s` passes is followed up to `resuming_grace_s` more, so
    a decision made in time gives the final result. `report` hears the standing
    at first, on every change, and every `heartbeat_s` while nothing changes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    version = await watch.version()  # before reading: a change after it wakes us
    state = await asyncio.to_thread(start)
    if report is not None:
        await report(state)
    token = watch.follow(_followed(state))
    try:
        while state.status == "waiting":
            left = deadline - loop.time()
            if left <= 0 and resuming(state):
                left = deadline + resuming_grace_s - loop.time()
            if left <= 0:
                break
            now = await watch.changed(version, min(left, heartbeat_s))
            moved = now != version
            new = state
            if moved:
                version = now
                if not await _unmoved(watch, version, state):
                    new = await asyncio.to_thread(_read_on, watch.store, state, start)
                    watch.refollow(token, _followed(new))
            if report is not None and (new.key() != state.key() or not moved):
                await report(new)  # a change, or the heartbeat while nothing changes
            state = new
    finally:
        watch.unfollow(token)
    return state


def _followed(state: Standing) -> frozenset[str]:
    return frozenset(a.id for a in state.approvals)


async def _unmoved(watch: ApprovalWatch, version: int, state: Standing) -> bool:
    """True when the change was someone else's: each approval `state` waits on reads as it
    did (a decided one nobody resumes is always read again: who can is not in its row)."""
    if not state.approvals or state.note is not None:
        return False
    if any(a.state() == "queued" for a in state.approvals):
        return False  # (known before reading: no read for it)
    try:
        rows = await watch.rows(version, _followed(state))
    except Exception:  # the store failed: read the whole standing, as before
        return False
    return all(rows.get(a.id) == a for a in state.approvals)


__all__ = [
    "ApprovalWatch",
    "Standing",
    "call_text",
    "resuming",
    "standing",
    "standing_of_approvals",
    "standing_of_run",
    "wait_for_decision",
    "waiting_message",
]
