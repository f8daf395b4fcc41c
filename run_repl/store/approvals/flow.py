"""From an interrupted run to its resume: the one way every front end decides approvals.

    saved = save_interrupted(store, result, source=src, host="demo")
    ...                                   # seconds or days later, any process
    result = await decide(store, runner, host_functions, {approval_id: True})

What it promises (and how):
- An approved call runs at most once, whatever fails. The resume claims its
  batch (every approval sharing the continuation) in the store; a guard marks
  it executing, durably, before any host function runs live (if that write
  fails, nothing runs). After the run each approval is decided from its own
  call's record, never from the run's error code. A resume that passed the
  guard never puts its approvals back to pending: Ctrl-C or a crash then
  leaves them `unfinished` (or, killed, stuck until `recover`).
- A decision is never lost. Deciding an approval whose batch another resume
  holds records the decision (queued); that resume carries it out when it
  saves its new continuation, or this flow does once the batch is free.
- A claim is a lease (`LEASE_S`) that a heartbeat thread renews while the
  resume runs, a long host call on a thread too. One that lapses before its
  resume started is free again with its decisions kept: another process takes
  it over (`resume_decided`). One that lapses after is `unfinished` (outcome
  unknown) as soon as anyone looks, never run again, unless every call it
  started is idempotent: then the takeover runs it again from the same
  continuation (the host sees the same idempotency key).
- Continuations are consumed once when the runner has the store as its
  `continuation_store` (`store_runner` makes such a runner).
"""

from __future__ import annotations

import asyncio
import getpass
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...sandbox.result import CallRecord, RunResult
from ...sandbox.runner import Runner, create_runner
from ...sandbox.wire.result_store import StoredItems
from ..json_budget import json_data
from ..protocols import Store
from ..records import (
    REPLAY_GRANT,
    Applied,
    ApprovalConflict,
    ApprovalRefused,
    ApprovalStuck,
    CallFacts,
    Claim,
    PendingApproval,
    Queued,
    ResumeReport,
    RunRecord,
    approval_message,
)
from ..store_error import StoreError
from .claims import LEASE_S
from .policy import Deciders
from .watch import POLL_S as WATCH_POLL_S
from .watch import SWEEP_S

T = TypeVar("T")

POLL_S = 0.2  # how often a queued decision looks at its batch


def approver_name(explicit: str | None = None) -> str:
    """Who decides: given, else RUN_REPL_APPROVER, else the OS user."""
    if explicit:
        return explicit
    if os.environ.get("RUN_REPL_APPROVER"):
        return os.environ["RUN_REPL_APPROVER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def store_runner(store: Store, **kwargs: Any) -> Runner:
    """A runner over this store: values paged from it, continuations consumed once."""
    return create_runner(store=store, continuation_store=store, **kwargs)


def _pending_of(
    result: RunResult,
    source: str,
    host: str,
    owner: str | None = None,
    resume_by: str | None = None,
) -> list[PendingApproval]:
    assert result.continuation is not None
    return [
        PendingApproval(
            owner=owner,
            id=it.id,
            run_id=result.run_id or "",
            source=source,
            host=host,
            path=it.path,
            args=it.args,
            payload=it.payload,
            message=approval_message(it.payload, it.path),
            continuation=result.continuation,
            # Declared by the host function: called again with the same key, it does once.
            idempotent=bool(getattr(it, "idempotent", False)),
            resume_by=resume_by,
        )
        for it in result.interruptions or []
    ]


def save_interrupted(
    store: Store,
    result: RunResult,
    *,
    source: str,
    host: str,
    owner: str | None = None,
    resume_by: str | None = None,
) -> list[PendingApproval]:
    """Keep the interruptions of a fresh run as pending approvals; them, as stored.

    An id the store already knows is left as it is (its resume moves it on).
    `owner`: the MCP principal whose run it is (only it sees them over MCP);
    `resume_by`: the executor id of the process that started the run (and waits for it)."""
    if result.status != "interrupted" or not result.continuation or not result.interruptions:
        return []
    store.add_approvals(_pending_of(result, source, host, owner, resume_by))
    return [a for a in (store.get_approval(i.id) for i in result.interruptions) if a is not None]


def record_run(
    store: Store,
    result: RunResult,
    *,
    source: str,
    host: str,
    resumed_from: str | None = None,
    owner: str | None = None,
    values: Sequence[StoredItems] = (),
) -> None:
    """Keep a run in the history; `values` (what its result names), in the same transaction."""
    if result.run_id is None and result.error is not None and result.error.code == "RUN_BUSY":
        store.count_refused("RUN_BUSY")  # nothing ran: counted, not kept as a run
        return
    store.record_run(
        RunRecord(
            id=result.run_id or "run_" + secrets.token_hex(8),
            duration_ms=result.duration_ms,
            status=result.status,
            source=source,
            host=host,
            error_code=str(result.error.code) if result.error else None,
            value_ref=result.value_ref,
            logs_ref=result.logs_ref,
            envelope=json_data(result),  # a lone-surrogate key escaped, not a lost run
            resumed_from=resumed_from,
            owner=owner,
        ),
        values=values,
    )


@dataclass
class Resolution:
    """How a decision went.

    `result`: the last run this flow resumed, or, when another approver's
    resume carried the decision out, that run as the history kept it (None
    if the history does not have it). `approvals`: the decided approvals as
    they stand now. `queued_behind`: who held the batch when the decision had
    to wait. `warnings`: what could not be recorded (the run's result is
    still here; the approvals say where they stand)."""

    result: RunResult | None
    approvals: list[PendingApproval]
    queued_behind: str | None = None
    applied_by: str | None = None
    warnings: list[str] = field(default_factory=list)


class Heartbeat:
    """Renews a claim's lease every `lease_s / 3` on a thread of its own (so a busy event
    loop, or a host call holding it, never lets a live resume's lease lapse), until
    stopped. `lost` says why, once a renewal found the claim gone (taken over, settled):
    the resume still ends as it would; the guard and `finish_batch` keep at most once."""

    def __init__(self, store: Store, claim: Claim, lease_s: float = LEASE_S) -> None:
        self.store = store
        self.claim = claim
        self.lease_s = lease_s
        self.lost: str | None = None
        self.beats = 0
        self._settling = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="run-repl-lease", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _beat(self) -> None:
        every = max(self.lease_s / 3, 0.01)
        while not self._stop.wait(every):
            try:
                held = self.store.renew_batch(self.claim, lease_s=self.lease_s)
            except Exception:  # the store is away: the next beat tries again (it may lapse)
                continue
            self.beats += 1
            if not held and self._settling:
                return  # its own resume's outcome ended the claim: nothing was lost
            if not held:
                self.lost = (
                    f"the claim on approval {self.claim.first.id} was lost at "
                    f"{time.strftime('%H:%M:%S')}: its lease ran out (this process was held "
                    "up) and another process took the batch over or settled it"
                )
                return

    def settling(self) -> None:
        """The resume records its outcome now: the lease is still renewed meanwhile (a
        server store may wait to reconnect), and a claim its own settling ended is not lost."""
        self._settling = True

    def stop(self) -> None:
        self._stop.set()


async def _store_call(
    fn: Callable[..., T], *args: Any, undo: Callable[[T], Any] | None = None, **kwargs: Any
) -> T:
    """A store call off the event loop that finishes even if the caller is
    cancelled meanwhile (its transaction commits or not: we must know which);
    `undo` then gets what it did, to take it back."""
    job = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        await asyncio.wait({job})
        if undo is not None and not job.cancelled() and job.exception() is None:
            try:
                undo(job.result())
            except Exception:  # a claim not given back runs out on its own
                pass
        raise


def _facts(claim: Claim, result: RunResult) -> dict[str, CallFacts]:
    facts: dict[str, CallFacts] = {}
    for call in result.calls:
        iid = call.interruption_id
        if iid is not None and iid in claim.decisions and not call.replayed:
            code = str(call.error_code) if call.error_code is not None else None
            facts[iid] = CallFacts(
                decision=call.decision,
                ok=call.ok,
                error_code=code,
                # The guard refused it: the engine's code, and no host function ran at all
                # (a host's own error with that code would have needed its call to run).
                not_run=call.ok is False
                and code == "RUN_CONTINUATION_INVALID"
                and result.stats.host_calls_executed == 0,
            )
    return facts


def _report(claim: Claim, result: RunResult) -> ResumeReport:
    first = claim.first
    interrupted = result.status == "interrupted" and bool(result.continuation)
    return ResumeReport(
        ended=True,
        run_id=result.run_id,
        status=result.status,
        error_code=str(result.error.code) if result.error else None,
        error_message=result.error.message[:500] if result.error else None,
        calls=_facts(claim, result),
        next_continuation=result.continuation if interrupted else None,
        next_run_id=result.run_id if interrupted else None,
        # A resumed run stays its first run's owner's, whoever decided.
        next_approvals=_pending_of(result, first.source, first.host, first.owner, first.resume_by)
        if interrupted
        else [],
    )


def _release_next(store: Store, ttl: float) -> Callable[[Claim | None], None]:
    def release(after: Claim | None) -> None:
        # Cancelled as this flow took the run's next batch (decisions queued on it):
        # nothing of it ran; give it back, the queued decisions stay.
        if after is not None:
            store.finish_batch(after, ResumeReport(ended=False, why="cancelled"), ttl_s=ttl)

    return release


def _interrupted_why(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return "interrupted (Ctrl-C or cancelled)"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


_late_writes: set[asyncio.Task[None]] = set()


def _keeping_late_ends(
    store: Store, first: PendingApproval, returned: list[RunResult], run_kwargs: Mapping[str, Any]
) -> Callable[[CallRecord], Any]:
    """The caller's on_call, and: a call the run gave up on (cancelled while a sync
    function ran on its thread) that ends after the run returned is kept in the resumed
    run's history (its record in the result is the same, now settled)."""
    theirs = run_kwargs.get("on_call")

    def keep(result: RunResult) -> None:
        try:
            record_run(
                store,
                result,
                source=first.source,
                host=first.host,
                resumed_from=first.run_id,
                owner=first.owner,
            )
        except Exception:  # the result the caller holds says it; the history stays as it was
            pass

    def on_call(call: CallRecord) -> Any:
        if returned and call.settled is True:
            task = asyncio.get_running_loop().create_task(asyncio.to_thread(keep, returned[0]))
            _late_writes.add(task)  # held until done: a task nobody holds may be collected
            task.add_done_callback(_late_writes.discard)
        return theirs(call) if theirs is not None else None

    return on_call


async def _resume(
    store: Store,
    runner: Runner,
    host_functions: Any,
    claim: Claim,
    ttl: float,
    warnings: list[str],
    run_kwargs: Mapping[str, Any],
) -> tuple[RunResult, Claim | None]:
    beat = Heartbeat(store, claim, ttl).start()
    try:
        return await _resume_held(
            store, runner, host_functions, claim, ttl, warnings, run_kwargs, beat.settling
        )
    finally:
        beat.stop()
        if beat.lost:
            warnings.append(beat.lost)


async def _resume_held(
    store: Store,
    runner: Runner,
    host_functions: Any,
    claim: Claim,
    ttl: float,
    warnings: list[str],
    run_kwargs: Mapping[str, Any],
    settling: Callable[[], None],
) -> tuple[RunResult, Claim | None]:
    first = claim.first
    returned: list[RunResult] = []
    # A takeover's guard may spend the continuation the resume it took over spent.
    grant = REPLAY_GRANT.set(claim.claim_id if claim.takeover else None)
    try:
        result = await runner.run(
            first.source,
            host_functions,
            continuation=first.continuation,
            resolutions=[{"interruption_id": i, "value": v} for i, v in claim.decisions.items()],
            resume_guard=lambda: store.start_batch(claim),
            **{**run_kwargs, "on_call": _keeping_late_ends(store, first, returned, run_kwargs)},
        )
        returned.append(result)
    except BaseException as exc:
        # The end was not seen: the store decides from whether the guard passed
        # (then the approvals are final, never pending), else releases them.
        settling()
        try:
            store.finish_batch(
                claim, ResumeReport(ended=False, why=_interrupted_why(exc)), ttl_s=ttl
            )
        except Exception:  # the lease then lapses on its own, and a look settles it
            pass
        raise
    finally:
        REPLAY_GRANT.reset(grant)
    # Off the event loop (a server store may wait for its connection to come back), and
    # whole even when cancelled meanwhile: the outcome is recorded, then the cancel goes on.
    cancelled: asyncio.CancelledError | None = None
    try:
        await _store_call(
            record_run,
            store,
            result,
            source=first.source,
            host=first.host,
            resumed_from=first.run_id,
            owner=first.owner,
        )
    except StoreError as exc:
        warnings.append(f"the run was not kept in the history: {exc}")
    except asyncio.CancelledError as exc:
        cancelled = exc
    settling()
    try:
        after = await _store_call(
            store.finish_batch,
            claim,
            _report(claim, result),
            ttl_s=ttl,
            undo=_release_next(store, ttl),
        )
    except StoreError as exc:
        warnings.append(
            f"the approvals' outcome could not be recorded ({exc}): they stay marked as being "
            "resumed and will not run again; once their lease runs out (seconds) they read "
            f"unfinished, outcome unknown (`run-repl approvals show {first.id}`)."
        )
        after = None
    if cancelled is not None:
        try:
            _release_next(store, ttl)(after)
        except Exception:  # a claim not given back runs out on its own
            pass
        raise cancelled
    return result, after


def _any_final(store: Store, approval_ids: list[str]) -> bool:
    return any(_is_final(store, i) for i in approval_ids)


def _is_final(store: Store, approval_id: str) -> bool:
    found = store.get_approval(approval_id)
    return found is not None and found.final


def _stored_result(store: Store, approvals: list[PendingApproval]) -> RunResult | None:
    for a in approvals:
        if a.resumed_run_id:
            run = store.get_run(a.resumed_run_id)
            if run is not None and run.envelope:
                try:
                    return RunResult.model_validate(run.envelope)
                except ValueError:
                    return None
    return None


async def resolve(
    store: Store,
    runner: Runner,
    host_functions: Any,
    decisions: Mapping[str, Any],
    *,
    approver: str | None = None,
    via: str | None = None,
    deciders: Deciders | Mapping[str, Any] | None = None,
    on_queued: Callable[[Queued], Any] | None = None,
    poll_s: float = POLL_S,
    lease_s: float = LEASE_S,
    **run_kwargs: Any,
) -> Resolution:
    """Decide these approvals (True approves, anything else denies) and resume their run,
    in this process, holding its claim with a heartbeat (a lease of `lease_s`).

    `approver`: the name the audit keeps (default: RUN_REPL_APPROVER, else the OS
    user); `via`: the channel the decision came through (an MCP client), kept in the
    audit beside the name (`decided_via`) while the policy judges the name; `deciders`: who may
    decide which namespace's approvals (see approvals/policy.py). Raises ApprovalRefused
    (an ApprovalConflict) if the policy names other people, ApprovalConflict if one
    was already decided by someone else (ApprovalStuck if its run's resume never
    finished), KeyError for an unknown id, ValueError if they belong to different
    runs, StoreError if the store cannot record the decision (then nothing ran)."""
    ids = list(decisions)
    if not ids:
        raise ValueError("no approvals to decide")
    name = approver_name(approver)
    if deciders:
        policy = deciders if isinstance(deciders, Deciders) else Deciders(dict(deciders))
        asked = await _store_call(lambda: [store.get_approval(i) for i in ids])
        for i, found in zip(ids, asked, strict=True):
            if found is None:
                raise KeyError(i)
        policy.check(name, [a for a in asked if a is not None])
    claimed_by = f"{name}@{socket.gethostname()} pid {os.getpid()}"
    claim_id = "clm_" + secrets.token_hex(8)
    ttl = lease_s
    wanted = {i: decisions[i] is True for i in ids}

    def attempt(waiting: bool) -> Claim | Queued | Applied:
        return store.claim_batch(
            wanted,
            claim_id=claim_id,
            claimed_by=claimed_by,
            decided_by=name,
            decided_via=via,
            ttl_s=ttl,
            waiting=waiting,
        )

    def give_back(got: Claim | Queued | Applied) -> None:
        # Cancelled just as the claim was taken: nothing ran, release it.
        if isinstance(got, Claim):
            store.finish_batch(got, ResumeReport(ended=False, why="cancelled"), ttl_s=ttl)

    got = await _store_call(attempt, False, undo=give_back)
    queued_behind = None
    while isinstance(got, Queued):
        if queued_behind is None:
            queued_behind = got.held_by or "another approver"
            if on_queued is not None:
                on_queued(got)
        await asyncio.sleep(poll_s)
        got = await _store_call(attempt, True, undo=give_back)
    if isinstance(got, Applied):
        by = next((a.claimed_by for a in got.approvals if a.claimed_by), None)
        return Resolution(
            await asyncio.to_thread(_stored_result, store, got.approvals),
            got.approvals,
            queued_behind,
            applied_by=by,
        )
    warnings: list[str] = []
    result = await _resume_chain(store, runner, host_functions, got, ttl, warnings, run_kwargs)
    final = await asyncio.to_thread(
        lambda: [a for a in (store.get_approval(i) for i in ids) if a is not None]
    )
    return Resolution(result, final, queued_behind, warnings=warnings)


async def _resume_chain(
    store: Store,
    runner: Runner,
    host_functions: Any,
    claim: Claim,
    ttl: float,
    warnings: list[str],
    run_kwargs: Mapping[str, Any],
) -> RunResult:
    """Resume a claimed batch, then the run's next batches while decisions are queued on
    them; the last run that went."""
    result, after = await _resume(store, runner, host_functions, claim, ttl, warnings, run_kwargs)
    while after is not None:  # on, while decisions are queued on the run's next batch
        carried = after
        following, after = await _resume(
            store, runner, host_functions, carried, ttl, warnings, run_kwargs
        )
        if not await asyncio.to_thread(_any_final, store, list(carried.decisions)):
            # That resume of others' queued decisions did not get going (RUN_BUSY...):
            # they stay queued for their own flows; this flow's decisions are done.
            break
        result = following
    return result


async def resume_decided(
    store: Store,
    runner: Runner,
    host_functions: Any,
    approval_id: str,
    *,
    resumer: str,
    lease_s: float = LEASE_S,
    **run_kwargs: Any,
) -> Resolution:
    """Carry out the decisions recorded on the batch of `approval_id` (`record_decisions`,
    or a resume that stopped): claim it (a lease of `lease_s`), hold it with a heartbeat,
    resume the run, settle. `resumer`: who resumes (an executor's name, kept as the
    claim's holder). ApprovalConflict when someone else holds it, it is final or not
    decided; KeyError for an unknown id; StoreError if the claim cannot be recorded."""
    claim_id = "clm_" + secrets.token_hex(8)
    claimed_by = f"{resumer}@{socket.gethostname()} pid {os.getpid()}"

    def give_back(got: Claim) -> None:  # cancelled just as the claim was taken: nothing ran
        store.finish_batch(got, ResumeReport(ended=False, why="cancelled"), ttl_s=lease_s)

    claim = await _store_call(
        store.claim_decided,
        approval_id,
        claim_id=claim_id,
        claimed_by=claimed_by,
        ttl_s=lease_s,
        undo=give_back,
    )
    warnings: list[str] = []
    result = await _resume_chain(
        store, runner, host_functions, claim, lease_s, warnings, run_kwargs
    )
    decided = list(claim.decisions)
    final = await asyncio.to_thread(
        lambda: [a for a in (store.get_approval(i) for i in decided) if a is not None]
    )
    return Resolution(result, final, warnings=warnings)


async def decide(
    store: Store,
    runner: Runner,
    host_functions: Any,
    decisions: Mapping[str, Any],
    *,
    approver: str | None = None,
    via: str | None = None,
    deciders: Deciders | Mapping[str, Any] | None = None,
    warnings: list[str] | None = None,
    on_queued: Callable[[Queued], Any] | None = None,
    **run_kwargs: Any,
) -> RunResult:
    """`resolve`, for front ends that show one result: the run that carried the
    decision out. What could not be recorded is added to `warnings`."""
    done = await resolve(
        store,
        runner,
        host_functions,
        decisions,
        approver=approver,
        via=via,
        deciders=deciders,
        on_queued=on_queued,
        **run_kwargs,
    )
    if warnings is not None:
        warnings.extend(done.warnings)
    if done.result is None:
        raise settled_elsewhere(done)
    return done.result


def settled_elsewhere(done: Resolution) -> ApprovalConflict:
    """Settled by another approver's resume whose run the history does not have."""
    return ApprovalConflict(
        "; ".join(f"Approval {a.id} is {a.state()}" for a in done.approvals)
        + f": settled by {done.applied_by or 'another approver'}'s resume."
    )


def recover(
    store: Store, approval_id: str, *, approver: str | None = None
) -> list[PendingApproval]:
    """End a stuck approval's batch without running anything (see ApprovalClaims.recover_batch)."""
    return store.recover_batch(approval_id, by=approver_name(approver))


def open_approvals(store: Store) -> list[PendingApproval]:
    """Every approval not yet final: pending, queued, claimed, executing, stuck."""
    return store.list_approvals(status="open")


__all__ = [
    "LEASE_S",
    "ApprovalConflict",
    "ApprovalRefused",
    "ApprovalStuck",
    "Deciders",
    "Heartbeat",
    "Resolution",
    "approver_name",
    "decide",
    "open_approvals",
    "record_run",
    "recover",
    "resolve",
    "resume_decided",
    "save_interrupted",
    "store_runner",
]


async def wait_for_approvals_change(store: Any, since: int, timeout_s: float) -> int:
    """Wait until the approvals change (any process, any machine) or `timeout_s` passes;
    the new version (== `since` on a timeout).

    A store that tells of changes (`watch_approvals`: PostgreSQL's LISTEN, SQLite's one
    thread that reads for all its waiters) wakes the waiter when it sees one, and a
    waiting coroutine holds no thread, so any number of inboxes and MCP calls can wait
    at once; others (memory) are asked every `watch.POLL_S`. A failed read raises
    StoreError."""
    watch = getattr(store, "watch_approvals", None)
    if watch is not None:
        return await _pushed_change(watch, since, timeout_s)
    push = getattr(store, "wait_approvals_change", None)
    if push is not None:
        return int(await asyncio.to_thread(push, since, timeout_s))
    deadline = time.monotonic() + timeout_s
    swept = time.monotonic()
    while True:
        if time.monotonic() - swept >= SWEEP_S and hasattr(store, "settle_lapsed"):
            swept = time.monotonic()  # a resume that stopped after its guard: heard now
            await asyncio.to_thread(store.settle_lapsed)
        version = await asyncio.to_thread(store.approvals_version)
        if version != since:
            return int(version)
        left = deadline - time.monotonic()
        if left <= 0:
            return int(version)
        await asyncio.sleep(min(WATCH_POLL_S, left))


async def _pushed_change(
    watch: Callable[..., Callable[[], None]], since: int, timeout_s: float
) -> int:
    loop = asyncio.get_running_loop()
    changed: asyncio.Future[int] = loop.create_future()

    def settle(version: int) -> None:
        if not changed.done():
            changed.set_result(version)

    def fail(text: str) -> None:
        if not changed.done():
            changed.set_exception(StoreError(text))

    def later(fn: Callable[[Any], None], arg: Any) -> None:
        try:
            loop.call_soon_threadsafe(fn, arg)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def seen(version: int) -> None:  # on the store's watching thread
        if version > since:
            later(settle, version)

    stop = watch(seen, lambda text: later(fail, text))
    try:
        return int(await asyncio.wait_for(changed, timeout_s))
    except TimeoutError:
        return since
    finally:
        stop()
