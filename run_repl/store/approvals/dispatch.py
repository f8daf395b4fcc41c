"""Deciding records the decision and says where the run resumes; resuming is work.

    done = await dispatch(store, runner, host_functions, {approval_id: True}, here=my_id)
    done.executor      # the live process that will resume it (None: it resumed here)
    done.summary()     # "Approved; run_… resumes on mcp server alice@box pid 123"

Where a decided run resumes, in this order (`resumes_where`):
1. the process that started the run and waits for it (its approvals' `resume_by`),
   while it is live: the MCP server holding the agent's call, the IDE that ran it;
2. else any live server of the team with the same host and the same host functions
   (the digest the run's continuation is bound to): `run-repl serve`, `run-repl mcp`;
3. else, only when no one else can, this process, as before executors existed: one
   person on one machine needs no extra process.

In cases 1 and 2 the decision is recorded (`record_decisions`, no claim) and this
returns at once; the executor's loop (`resumer.py`), woken by the store's change
watch, claims and resumes it. `follow` waits for the outcome (the CLI's `--wait`),
and resumes here itself if the executor it was left to is gone before it began.

A decision left to an executor that died before it began, with no other live
process of its host, is never silent: `stranded` says so, with what to do (start
`run-repl serve` with the host, or `run-repl approvals resume ID` where the host is),
for everyone who looks or waits (`approvals list/show`, `--wait`, the MCP
approval_status, the inbox); any eligible process that appears later takes it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...sandbox.errors import RunReplError
from ...sandbox.result import RunResult
from ...sandbox.resume.continuation import manifest_digest_of
from ...sandbox.runner import Runner
from ..executors import BEAT_S, TAKES_ANY, Executor
from ..protocols import Store
from ..records import ApprovalConflict, PendingApproval, Queued
from . import flow
from .flow import Resolution, approver_name, resolve, wait_for_approvals_change
from .policy import Deciders


class NoExecutor(RunReplError, RuntimeError):
    """No live process can resume this run, and this one cannot (another host): nothing
    was recorded."""

    code = "APPROVAL_NO_EXECUTOR"


def resumes_where(
    store: Store, approval: PendingApproval, *, here: str | None = None
) -> Executor | None:
    """The live executor, other than `here` (this process's), that will resume
    `approval`'s run: the one that started it, else one of the team's servers with the
    same host and host functions. None: nobody else can (or it was started here)."""
    if approval.resume_by is not None and approval.resume_by == here:
        return None
    if approval.resume_by is not None:
        own = store.get_executor(approval.resume_by)
        if own is not None and own.live:
            return own
    digest = manifest_digest_of(approval.continuation)
    for e in store.list_executors(approval.host):  # live first
        if not e.live:
            break
        if e.id != here and e.kind in TAKES_ANY and e.functions == digest:
            return e
    return None


def stranded_words(store: Store, approval: PendingApproval) -> str:
    """Why nobody resumes a decided `approval`, and what to do (one sentence)."""
    gone = store.get_executor(approval.resume_by) if approval.resume_by else None
    if gone is None:  # the last server of its host that could have: where it was left
        digest = manifest_digest_of(approval.continuation)
        gone = next(
            (
                e
                for e in store.list_executors(approval.host)
                if not e.live and e.kind in TAKES_ANY and e.functions == digest
            ),
            None,
        )
    left = ""
    if gone is not None:
        seen = time.strftime("%H:%M:%S", time.localtime(gone.seen_at))
        left = f"the last process that could, {gone.label}, is gone since {seen}, and "
    return (
        f"decided, but {left}no live process with host {approval.host!r} and the run's "
        f"host functions is running to resume it: start `run-repl serve --host "
        f"{approval.host}` on this store (it takes it at once), or resume it where the host "
        f"is with `run-repl approvals resume {approval.id} --host {approval.host}`"
    )


def stranded(
    store: Store, approvals: list[PendingApproval], *, here: str | None = None
) -> dict[str, str]:
    """Of `approvals`, the decided ones nobody resumes (their batch free, the process
    that started their run gone, no live server of their host with its host functions),
    each with `stranded_words`. A blocking read: call off the event loop."""
    out: dict[str, str] = {}
    free: dict[str, set[str]] = {}  # host -> its batches free to resume
    for a in approvals:
        if a.state() != "queued":
            continue
        if a.host not in free:
            free[a.host] = {r.batch for r in store.resumable(a.host)}
        if a.batch in free[a.host] and resumes_where(store, a, here=here) is None:
            out[a.id] = stranded_words(store, a)
    return out


@dataclass
class Dispatched:
    """A decision and where it goes: `executor` resumes it (recorded, not run here), or
    it was resumed in this process (`resolution`)."""

    approvals: list[PendingApproval]
    executor: Executor | None = None
    resolution: Resolution | None = None

    @property
    def result(self) -> RunResult | None:
        return self.resolution.result if self.resolution is not None else None

    def summary(self) -> str:
        """One line: what was decided, and where its run resumes."""
        first = self.approvals[0]
        verb = "Approved" if first.decision == "approve" else "Denied"
        where = self.executor.label if self.executor is not None else "this process"
        return f"{verb}; {first.run_id} resumes on {where}"


async def dispatch(
    store: Store,
    runner: Runner,
    host_functions: Any,
    decisions: Mapping[str, Any],
    *,
    here: str | None = None,
    started_here: bool = False,
    can_resume_here: bool = True,
    approver: str | None = None,
    via: str | None = None,
    deciders: Deciders | Mapping[str, Any] | None = None,
    on_queued: Callable[[Queued], Any] | None = None,
    **run_kwargs: Any,
) -> Dispatched:
    """Decide these approvals (True approves, anything else denies): recorded for the
    executor that resumes their run, or resumed here when no one else can.

    `here`: this process's executor id, when it is one; `started_here`: this process
    started the run and waits for it (the line REPL's own run): it resumes here;
    `can_resume_here` False: this process has not the run's host, so NoExecutor when no
    one else can resume it (nothing recorded). The rest as `flow.resolve` (the same errors: KeyError, ApprovalConflict, ApprovalRefused,
    ValueError, StoreError)."""
    ids = list(decisions)
    if not ids:
        raise ValueError("no approvals to decide")
    name = approver_name(approver)
    if not started_here:
        asked = await asyncio.to_thread(lambda: [store.get_approval(i) for i in ids])
        for i, found in zip(ids, asked, strict=True):
            if found is None:
                raise KeyError(i)
        rows = [a for a in asked if a is not None]
        if deciders:
            policy = deciders if isinstance(deciders, Deciders) else Deciders(dict(deciders))
            policy.check(name, rows)
        executor = await asyncio.to_thread(resumes_where, store, rows[0], here=here)
        if executor is not None:
            recorded = await asyncio.to_thread(
                store.record_decisions,
                {i: decisions[i] is True for i in ids},
                decided_by=name,
                decided_via=via,
                decision_id="dec_" + secrets.token_hex(8),
            )
            return Dispatched(recorded, executor)
    if not can_resume_here:
        raise NoExecutor(f"no live process can resume the run of {ids[0]}")
    done = await resolve(
        store,
        runner,
        host_functions,
        decisions,
        approver=name,
        via=via,
        deciders=deciders,
        on_queued=on_queued,
        **run_kwargs,
    )
    return Dispatched(done.approvals, None, done)


def result_of(done: Dispatched) -> RunResult:
    """The run that carried a decision out here (what `flow.decide` returns);
    ApprovalConflict when another approver's resume settled it and the history does
    not have that run."""
    if done.resolution is None or done.resolution.result is None:
        raise flow.settled_elsewhere(done.resolution or Resolution(None, done.approvals))
    return done.resolution.result


async def follow(
    store: Store,
    runner: Runner,
    host_functions: Any,
    done: Dispatched,
    *,
    timeout_s: float,
    approver: str | None = None,
    here: str | None = None,
    can_resume_here: bool = True,
    on_stranded: Callable[[str], Any] | None = None,
    **run_kwargs: Any,
) -> RunResult | None:
    """Wait (on the store's change watch) until the decided approvals are final; the
    run that carried them out, as the history keeps it (None: `timeout_s` passed, or
    the history does not have it). If no live executor can resume the run any more
    (the one it was left to died before it began), it is resumed here, unless this
    process has not the run's host (`can_resume_here` False): then it waits on, and the
    decision stays for the next executor, and `on_stranded` hears why nobody resumes it
    and what to do (once each time that becomes so)."""
    if done.resolution is not None:
        return done.result
    ids = [a.id for a in done.approvals]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    version = await asyncio.to_thread(store.approvals_version)
    told = False
    while True:
        rows = await asyncio.to_thread(lambda: [store.get_approval(i) for i in ids])
        found = [a for a in rows if a is not None]
        if found and all(a.final for a in found):
            return await asyncio.to_thread(flow._stored_result, store, found)
        free = [a for a in found if a.state() == "queued"]
        nobody = bool(free) and (
            await asyncio.to_thread(resumes_where, store, free[0], here=here) is None
        )
        if nobody and not can_resume_here:
            words = await asyncio.to_thread(stranded, store, free, here=here)
            if words and not told and on_stranded is not None:
                on_stranded(next(iter(words.values())))
            told = bool(words)
        if nobody and can_resume_here:
            try:
                resumed = await flow.resume_decided(
                    store,
                    runner,
                    host_functions,
                    free[0].id,
                    resumer=approver_name(approver),
                    **run_kwargs,
                )
            except ApprovalConflict:
                pass  # someone took it meanwhile: follow theirs
            else:
                if resumed.result is not None:
                    return resumed.result
        left = deadline - loop.time()
        if left <= 0:
            return None
        version = await wait_for_approvals_change(store, version, min(left, BEAT_S))


__all__ = [
    "TAKES_ANY",
    "Dispatched",
    "NoExecutor",
    "dispatch",
    "follow",
    "result_of",
    "resumes_where",
    "stranded",
    "stranded_words",
]
