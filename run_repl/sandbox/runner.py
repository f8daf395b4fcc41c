"""The public entry points: `run`, `create_runner`, `Runner`.

A runner shares limits, a signing secret, an approval policy and a result
store across runs, and caps how many runs are in flight (the next one gets
RUN_BUSY at once). Each run's own settings override the runner's field by
field.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from .approval import ApprovalPolicy, check_policy
from .errors import ErrorCode, HostFunctionsError, ResolutionInvalid
from .limits import Limits
from .result import RunErrorInfo, RunResult, plain_error
from .resume.continuation import (
    GUEST_RUNTIME,
    Checkpoint,
    ContinuationInvalid,
    ContinuationSigner,
    ContinuationState,
    as_secret,
    load_or_create_secret,
)
from .resume.replay import ReplayPlan
from .run_slots import RunSlots
from .session.envelope import Envelope, build_envelope, log_chunks
from .session.guest_errors import rewrite_positions
from .session.host_functions import HostManifest, manifest_of
from .session.pool import WorkerPool, default_pool
from .session.scope_values import encode_values, values_digest
from .session.session import CallCallback, LogCallback, ResumeGuard, RunSession
from .session.source_check import check_source
from .session.spec import RunHooks, RunSpec
from .wire.codec import a_or_an
from .wire.result_store import MemoryResultStore, Page, ResultStore, StoredItems, page_of

RECENT_BYTES = 256 << 20  # values kept in memory too: recent ones page without a read


class HeldValues:
    """The values (and logs) of runs made under `Runner.holding_values()`, held for the
    caller to write with the run's history row: one transaction, where a run's value
    and its row were two. Whoever holds them writes them before the result is named
    to anyone; `close()` hands over what is held, and a run that stores after it (one
    that outlived its caller) writes its own values, as it does unheld."""

    def __init__(self) -> None:
        self._items: list[StoredItems] = []
        self._closed = False
        self._lock = threading.Lock()

    def hold(self, items: list[StoredItems]) -> bool:
        """Keep `items` for the caller; False once closed (the runner writes them)."""
        with self._lock:
            if self._closed:
                return False
            self._items.extend(items)
            return True

    def close(self) -> list[StoredItems]:
        """What is held (the caller writes it now), and nothing held from here on."""
        with self._lock:
            self._closed = True
            items, self._items = self._items, []
            return items


_HELD: ContextVar[HeldValues | None] = ContextVar("run_repl_held_values", default=None)


@runtime_checkable
class ContinuationStore(Protocol):
    """Remembers which continuations have been used (consume-once mode)."""

    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        """True the first time `digest` is presented; False ever after (until
        `expires_at`, when the token itself stops being valid)."""
        ...


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """One run's arguments, as `Runner.run` takes them (the callbacks as its hooks)."""

    source: str
    host_functions: Any = None
    limits: Limits | None = None
    continuation: str | None = None
    resolutions: list[Mapping[str, Any]] | None = None
    hooks: RunHooks = field(default_factory=RunHooks)
    context: Mapping[str, Any] | None = None
    resume_guard: Callable[[], Any] | None = None
    approvals: Mapping[str, str] | None = None
    values: Mapping[str, Any] | None = None


class Runner:
    """Runs snippets with shared limits, secret and store. Make one with `create_runner`."""

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        max_runs_in_flight: int = 4,
        secret: bytes | str | None = None,
        verify_secrets: Iterable[bytes | str] = (),
        audience: str = "run-repl",
        max_age_s: int = 3_600,
        approvals: Mapping[str, str] | None = None,
        store: Any = None,
        pool: WorkerPool | None = None,
        continuation_store: ContinuationStore | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a run_repl.Limits")
        if max_runs_in_flight < 1:
            raise ValueError("max_runs_in_flight must be at least 1")
        if store is not None and not isinstance(store, ResultStore):
            raise TypeError(
                "store must implement put_items, get_items and get_chunks (see ResultStore)"
            )
        if continuation_store is not None and not isinstance(continuation_store, ContinuationStore):
            raise TypeError("continuation_store must have consume_continuation(digest, expires_at)")
        self.limits = limits or Limits()
        self.max_runs_in_flight = max_runs_in_flight
        self.audience = audience
        self.max_age_s = max_age_s
        self.approvals = check_policy(approvals or {})
        self.store: ResultStore = store if store is not None else MemoryResultStore()
        self.continuation_store = continuation_store
        self.pool = pool or default_pool()
        self._secret = as_secret(secret) if secret is not None else None
        self._verify_secrets = tuple(as_secret(s) for s in verify_secrets)
        self._signer_cache: ContinuationSigner | None = None
        self._recent = MemoryResultStore(max_bytes=RECENT_BYTES)
        self._writes: list[concurrent.futures.Future[None]] = []
        self._write_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._slots = RunSlots(max_runs_in_flight)
        self._lock = threading.Lock()  # the writes behind (store_behind, flush)

    # ------------------------------------------------------------------ run
    async def run(
        self,
        source: str,
        host_functions: Any = None,
        *,
        limits: Limits | None = None,
        continuation: str | None = None,
        resolutions: list[Mapping[str, Any]] | None = None,
        on_log: LogCallback | None = None,
        on_call: CallCallback | None = None,
        cancel: asyncio.Event | None = None,
        context: Mapping[str, Any] | None = None,
        resume_guard: Callable[[], Any] | None = None,
        approvals: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
        queue_s: float = 0.0,
    ) -> RunResult:
        """Run `source` (JavaScript or TypeScript, the body of an async function).

        `limits` override the runner's field by field, and `approvals` its policy
        entry by entry. `values` are plain data the snippet sees as frozen globals
        (copied in; a bad name or value raises ValuesError here). `resume_guard` (with a continuation) is called once, just
        before the resumed run's first live host call (a sync one on a thread); if
        it raises, nothing live runs and the run ends RUN_CONTINUATION_INVALID with
        its message. With all `max_runs_in_flight` taken, a run gets RUN_BUSY at once;
        with `queue_s` > 0 it waits up to that long for the next free slot instead, ahead
        of the runs that may not wait (an executor's resume of a person's decision)."""
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a run_repl.Limits")
        request = RunRequest(
            source=source,
            host_functions=host_functions,
            limits=limits,
            continuation=continuation,
            resolutions=resolutions,
            hooks=RunHooks(on_log, on_call, cancel),
            context=context,
            resume_guard=resume_guard,
            approvals=check_policy(approvals) if approvals else None,
            values=values,
        )
        if not (queue_s >= 0 and math.isfinite(queue_s)):
            raise ValueError("queue_s must be a finite number of seconds, 0 or more")
        if not await self._slots.take(queue_s):
            return RunResult(
                status="error",
                error=plain_error(
                    ErrorCode.RUN_BUSY,
                    f"{self.max_runs_in_flight} runs are already in flight on this runner; "
                    "retry shortly.",
                ),
            )
        started = time.perf_counter()  # the run's own time: a wait for its slot is not in it
        try:
            return _timed(await self._run(request), started)
        finally:
            self._slots.give()

    def limits_for(self, limits: Limits | None) -> Limits:
        """The runner's limits with a run's own fields laid over them (only those it set)."""
        if limits is None:
            return self.limits
        return self.limits.model_copy(
            update={name: getattr(limits, name) for name in limits.model_fields_set}
        )

    async def _run(self, request: RunRequest) -> RunResult:
        run_id = "run_" + secrets.token_hex(8)
        limits = self.limits_for(request.limits)
        problem = check_source(request.source, limits.max_source_bytes)
        if problem is not None:
            return _failed(run_id, problem)
        manifest = manifest_of(request.host_functions)
        values_wire = encode_values(request.values, manifest.tree, limits.max_values_bytes)
        # Types are stripped in the worker (inside the run's deadline), not here.
        replay: ReplayPlan | None = None
        guard = None
        logical_run_id = run_id
        seed = [int.from_bytes(os.urandom(4), "little") for _ in range(4)]
        clock_ms = int(time.time() * 1000)
        if request.continuation is not None:
            try:
                state, replay = self._resume_plan(request, manifest, values_wire)
            except ContinuationInvalid as exc:
                error = plain_error(ErrorCode.RUN_CONTINUATION_INVALID, f"Cannot resume: {exc}.")
                return _failed(run_id, error)
            except ResolutionInvalid as exc:
                error = plain_error(ErrorCode.RUN_RESOLUTION_INVALID, f"Cannot resume: {exc}")
                return _failed(run_id, error)
            logical_run_id, seed, clock_ms = state.logical_run_id, state.seed, state.clock_ms
            guard = self._guard(state, request.resume_guard)
        elif request.resolutions:
            raise ValueError("resolutions are given with the continuation they answer")
        spec = RunSpec(
            request.source, manifest, limits, logical_run_id, seed, clock_ms, values_wire
        )
        # Log lines name positions as the user wrote them, not as the worker ran them.
        hooks = replace(request.hooks, rewrite_log=rewrite_positions)
        session = RunSession(
            spec,
            hooks,
            pool=self.pool,
            replay=replay,
            policy=self._policy(manifest, request.approvals),
            resume_guard=guard,
        )
        outcome = await session.execute()
        envelope = build_envelope(outcome, outcome.prepared, limits, run_id, manifest.tree)
        result = envelope.result
        if result.status == "interrupted":
            checkpoint = Checkpoint(
                source=spec.source,
                manifest_digest=manifest.digest,
                context=request.context,
                values_digest=values_digest(spec.values_wire),
                logical_run_id=spec.logical_run_id,
                seed=spec.seed,
                clock_ms=spec.clock_ms,
                elapsed_ms=outcome.elapsed_ms,
                ledger=outcome.ledger,
                settle_order=outcome.settle_order,
                interrupts=outcome.interrupts,
                # A resumed run awaited as the run it replays did: its token says so too.
                guest_runtime=replay.guest_runtime if replay is not None else GUEST_RUNTIME,
            )
            result.continuation = self._signer().sign(checkpoint)
            result.next_actions = [
                {
                    "type": "approve",
                    "interruption_id": i.id,
                    "path": i.path,
                    "why": "Decide, then run again with continuation and resolutions.",
                }
                for i in outcome.interrupts
            ]
        await self._store(envelope)
        return result

    # ------------------------------------------------------------------ resuming
    def _resume_plan(
        self, request: RunRequest, manifest: HostManifest, values_wire: str | None
    ) -> tuple[ContinuationState, ReplayPlan]:
        state = self._signer().verify(
            request.continuation,
            source=request.source,
            manifest_digest=manifest.digest,
            context=request.context,
            values_digest=values_digest(values_wire),
        )
        answers = check_resolutions(request.resolutions, state.pending)
        plan = ReplayPlan(
            entries=state.entries,
            settle_order=state.settle_order,
            resolutions=answers,
            elapsed_ms=state.elapsed_ms,
            issued_at=state.issued_at,
            guest_runtime=state.guest_runtime,
        )
        return state, plan

    def _guard(
        self, state: ContinuationState, resume_guard: Callable[[], Any] | None
    ) -> ResumeGuard | None:
        """What must pass before a resumed run does anything live: the caller's
        guard, then (consume-once mode) the store's first-use check."""
        store = self.continuation_store
        if resume_guard is None and store is None:
            return None

        async def guard() -> None:
            if resume_guard is not None:
                if inspect.iscoroutinefunction(resume_guard):
                    await resume_guard()
                else:
                    answer = await asyncio.to_thread(resume_guard)
                    if inspect.isawaitable(answer):
                        await answer
            if store is not None:
                first = await asyncio.to_thread(
                    store.consume_continuation, state.digest, state.expires_at
                )
                if not first:
                    raise ContinuationInvalid(
                        "this continuation was already used (each one resumes a run once)"
                    )

        return guard

    def _signer(self) -> ContinuationSigner:
        if self._signer_cache is None:
            secret = self._secret
            if secret is None and os.environ.get("RUN_REPL_SECRET"):
                secret = as_secret(os.environ["RUN_REPL_SECRET"])
            if secret is None:
                from ..paths import data_dir  # the one place the engine looks for app files

                secret = load_or_create_secret(data_dir())
            self._signer_cache = ContinuationSigner(
                secret, self._verify_secrets, self.audience, self.max_age_s
            )
        return self._signer_cache

    def _policy(
        self, manifest: HostManifest, approvals: Mapping[str, str] | None
    ) -> ApprovalPolicy | None:
        decorated = [p for p, f in manifest.functions.items() if f.approval is not None]
        # A run's own entries come first, so its globs win over the runner's.
        merged = {
            **(approvals or {}),
            **{k: v for k, v in self.approvals.items() if k not in (approvals or {})},
        }
        return ApprovalPolicy.build(merged, decorated)  # type: ignore[arg-type]  # modes checked by build

    # ------------------------------------------------------------------ storing
    async def _store(self, envelope: Envelope) -> None:
        stored = envelope.stored
        if not stored:
            return
        if envelope.log_lines is not None:
            # Many thousand log lines take a while to encode: not on the event loop.
            chunks = await asyncio.to_thread(log_chunks, envelope.log_lines)
            for item in stored:
                if item.kind == "logs":
                    item.chunks = chunks
        if isinstance(self.store, MemoryResultStore):
            for item in stored:
                self.store.put_items(item)
            return
        for item in stored:
            self._recent.put_items(item)
        held = _HELD.get()
        if held is not None and held.hold(stored):
            return  # the caller writes them with the run's history row
        # Durable before named: the result names these refs, and whoever reads it may
        # page them from another process or server (or this one may die right after
        # replying), so the run returns once the store has them. Off the event loop;
        # the copy kept here pages them without a read of the store.
        await asyncio.to_thread(self.store_now, stored)

    def store_now(self, items: Iterable[StoredItems]) -> None:
        """Write values to the store before returning (a caller that held them and could
        not write them with the run's row). One whose write fails is not lost over it:
        this runner still pages it, and the writer tries again behind (flush() waits
        for it, and says how it went)."""
        for item in items:
            try:
                self.store.put_items(item)
            except Exception:  # a full disk, a server gone longer than it waits
                self.store_behind([item])

    def store_behind(self, items: Iterable[StoredItems]) -> None:
        """Write values on the writer's thread (flush() waits for them)."""
        with self._lock:
            self._writes = [w for w in self._writes if not w.done()]
            for item in items:
                self._writes.append(self._writer().submit(self.store.put_items, item))

    @contextmanager
    def holding_values(self) -> Iterator[HeldValues]:
        """Runs started inside (and tasks they start) hold their values for the caller,
        who writes them with the run's history row (`HeldValues`) and must `close()` it
        and write what it returns, whatever happens; the runner's own copy pages them
        meanwhile. The memory store (no history) is written as ever."""
        held = HeldValues()
        token = _HELD.set(held)
        try:
            yield held
        finally:
            _HELD.reset(token)

    def _writer(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._write_pool is None:  # under self._lock (store_behind)
            self._write_pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="run-repl-store"
            )
        return self._write_pool

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every stored value is in the store: a run returns once its values
        are, except those whose write failed then, which are tried again behind."""
        with self._lock:
            pending, self._writes = self._writes, []
        for write in pending:
            write.result(timeout)

    def recent_run_of(self, ref: str) -> str | None:
        """The run that made `ref`, when it is a value or log this runner stored recently
        (the store may not have it, if writing it failed and is being tried again); else None."""
        stored = self._recent.get_items(ref)
        return stored.run_id if stored is not None else None

    # ------------------------------------------------------------------ paging
    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page:
        """Items [offset, offset + limit) of a stored value or log, by item (limit <= 1000).

        Raises ResultRefNotFound (code RESULT_REF_NOT_FOUND) for an unknown,
        evicted or expired ref, and ValueError for a bad offset or limit."""
        if self._recent.get_items(ref) is not None:
            return page_of(self._recent, ref, offset, limit)
        return page_of(self.store, ref, offset, limit)


RESOLUTION_SHAPE = "{'interruption_id': ..., 'value': ...}"
RESOLUTION_FIELDS = frozenset({"interruption_id", "value"})


def check_resolutions(resolutions: Any, pending: Iterable[str]) -> dict[str, Any]:
    """The answers a set of resolutions gives, by interruption id; ResolutionInvalid
    (naming the entry) unless the whole set is good. Checked before anything runs,
    so a bad set is refused as a whole and never half used: an ambiguous yes-and-no,
    a misspelt field that would resume with no value, an id the run is not waiting on."""
    waiting = list(pending)
    if resolutions is None:
        return {}
    if isinstance(resolutions, Mapping | str | bytes) or not isinstance(resolutions, Iterable):
        raise ResolutionInvalid(
            f"resolutions is {a_or_an(type(resolutions).__name__)}: send a list of "
            f"{RESOLUTION_SHAPE}, one per interruption you decide."
        )
    answers: dict[str, Any] = {}
    where: dict[str, int] = {}
    for n, item in enumerate(resolutions):
        entry = f"resolutions[{n}]"
        if not isinstance(item, Mapping):
            raise ResolutionInvalid(
                f"{entry} is {a_or_an(type(item).__name__)}; send {RESOLUTION_SHAPE}."
            )
        unknown = [k for k in item if k not in RESOLUTION_FIELDS]
        if unknown:
            raise ResolutionInvalid(
                f"{entry} has the unknown field {unknown[0]!r}; each resolution is exactly "
                f"{RESOLUTION_SHAPE}."
            )
        missing = [k for k in ("interruption_id", "value") if k not in item]
        if missing:
            raise ResolutionInvalid(
                f"{entry} has no {missing[0]!r}; each resolution is exactly {RESOLUTION_SHAPE} "
                "(a value of None is an answer too)."
            )
        iid = item["interruption_id"]
        if not isinstance(iid, str):
            raise ResolutionInvalid(
                f"{entry} has an interruption_id that is {a_or_an(type(iid).__name__)}, not "
                f"text; send {RESOLUTION_SHAPE} with the id from result.interruptions."
            )
        if iid in where:
            raise ResolutionInvalid(
                f"{entry} answers interruption {iid!r} again (resolutions[{where[iid]}] "
                f"already does); send one {RESOLUTION_SHAPE} per interruption."
            )
        if iid not in waiting:
            them = ", ".join(repr(i) for i in waiting) or "none"
            raise ResolutionInvalid(
                f"{entry}: this continuation has no pending interruption {iid!r} (it waits "
                f"on {them}); send {RESOLUTION_SHAPE} for those only."
            )
        where[iid] = n
        answers[iid] = item["value"]
    return answers


def _failed(run_id: str, error: RunErrorInfo) -> RunResult:
    """A run that ends before any worker starts."""
    return RunResult(status="error", error=error, run_id=run_id)


def _timed(result: RunResult, started: float) -> RunResult:
    if not result.duration_ms:
        result.duration_ms = round((time.perf_counter() - started) * 1000, 3)
    return result


def create_runner(
    limits: Limits | None = None,
    max_runs_in_flight: int = 4,
    secret: bytes | str | None = None,
    verify_secrets: Iterable[bytes | str] = (),
    audience: str = "run-repl",
    max_age_s: int = 3_600,
    approvals: Mapping[str, str] | None = None,
    store: Any = None,
    continuation_store: ContinuationStore | None = None,
) -> Runner:
    """A runner sharing these limits, secret, approval policy and store across runs.

    With `continuation_store`, each continuation drives live host calls at most
    once (consume-once); without it, a continuation is a signed bearer token
    that resumes its run as often as it is presented, until it expires."""
    return Runner(
        limits=limits,
        max_runs_in_flight=max_runs_in_flight,
        secret=secret,
        verify_secrets=verify_secrets,
        audience=audience,
        max_age_s=max_age_s,
        approvals=approvals,
        store=store,
        continuation_store=continuation_store,
    )


_default_runner: Runner | None = None


def _runner() -> Runner:
    global _default_runner
    if _default_runner is None:
        _default_runner = Runner(max_runs_in_flight=64)
    return _default_runner


async def run(
    source: str,
    host_functions: Any = None,
    *,
    limits: Limits | None = None,
    continuation: str | None = None,
    resolutions: list[Mapping[str, Any]] | None = None,
    on_log: LogCallback | None = None,
    on_call: CallCallback | None = None,
    cancel: asyncio.Event | None = None,
    context: Mapping[str, Any] | None = None,
    resume_guard: Callable[[], Any] | None = None,
    approvals: Mapping[str, str] | None = None,
    values: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run a snippet once, in a fresh sandbox, with these host functions."""
    return await _runner().run(
        source,
        host_functions,
        limits=limits,
        continuation=continuation,
        resolutions=resolutions,
        on_log=on_log,
        on_call=on_call,
        cancel=cancel,
        context=context,
        resume_guard=resume_guard,
        approvals=approvals,
        values=values,
    )


def run_sync(source: str, host_functions: Any = None, **kwargs: Any) -> RunResult:
    """`run` for code without an event loop (or from inside one, on a thread)."""
    coroutine = run(source, host_functions, **kwargs)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


__all__ = ["HostFunctionsError", "RunRequest", "Runner", "create_runner", "run", "run_sync"]
