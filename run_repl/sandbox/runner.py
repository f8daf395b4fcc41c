"""The public entry points: `run`, `create_runner`, `Runner`.

A runner shares limits, a signing secret and a result store across runs, and
caps how many runs are in flight (the next one gets RUN_BUSY at once).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import json
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from . import codec
from .approval import check_policy
from .continuation import (
    ContinuationInvalid,
    ContinuationSigner,
    ContinuationState,
    as_secret,
    load_or_create_secret,
)
from .errors import ErrorCode
from .frames import PRELUDE_LINE_BASE
from .guest_errors import map_error, plain_error, rewrite_positions
from .host_functions import HostFunctionsError, HostManifest, build_manifest
from .limits import Limits
from .result import (
    Interruption,
    LogLine,
    RunErrorInfo,
    RunResult,
    RunStats,
    ValueKind,
    ValueWindow,
)
from .result_store import MemoryResultStore, Page, ResultStore, StoredItems, new_ref, page_of
from .session import CallCallback, LogCallback, RunSession, SessionOutcome
from .source import PreparedSource, prepare_source
from .typescript import TypeScriptSyntaxError
from .value_window import Window, chunk_texts, window_of_chunks, window_of_value
from .worker_pool import WorkerPool, default_pool

INLINE_LOGS = 50
MAX_VALUE_DEPTH = 256


@runtime_checkable
class ContinuationStore(Protocol):
    """Remembers which continuations have been used (consume-once mode)."""

    def consume_continuation(self, digest: str, expires_at: float) -> bool:
        """True the first time `digest` is presented; False ever after (until
        `expires_at`, when the token itself stops being valid)."""
        ...


def _kind_of_path(path: str) -> ValueKind:
    if path == "$":
        return "array"
    if path == "$lines":
        return "string"
    return "object"


def _value_kind(value: Any) -> ValueKind:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _check_source(source: Any, limits: Limits) -> RunErrorInfo | None:
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError as exc:
        line = source.count("\n", 0, exc.start) + 1
        column = exc.start - (source.rfind("\n", 0, exc.start) + 1) + 1
        return plain_error(
            ErrorCode.RUN_SYNTAX_ERROR,
            f"SyntaxError: the source holds a lone surrogate character (line {line}, column {column}).",
            line=line,
            column=column,
        )
    if size > limits.max_source_bytes:
        return plain_error(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            f"The snippet is {size:,} bytes, over max_source_bytes ({limits.max_source_bytes:,}).",
        )
    lines = source.count("\n") + 1
    if lines >= PRELUDE_LINE_BASE:
        return plain_error(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            f"The snippet has {lines:,} lines; at most {PRELUDE_LINE_BASE - 1:,} can run.",
        )
    nul = source.find("\x00")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        column = nul - (source.rfind("\n", 0, nul) + 1) + 1
        return plain_error(
            ErrorCode.RUN_SYNTAX_ERROR,
            f"SyntaxError: the source holds a NUL character (line {line}, column {column}); "
            "write it as \\u0000 inside a string.",
            line=line,
            column=column,
        )
    return None


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
        self.limits = limits or Limits()
        self.max_runs_in_flight = max_runs_in_flight
        self.audience = audience
        self.max_age_s = max_age_s
        self._secret = as_secret(secret) if secret is not None else None
        self._verify_secrets = tuple(as_secret(s) for s in verify_secrets)
        self._signer_cache: ContinuationSigner | None = None
        self.approvals = check_policy(dict(approvals or {}))
        if store is not None and not isinstance(store, ResultStore):
            raise TypeError(
                "store must implement put_items, get_items and get_chunks (see ResultStore)"
            )
        self.store: ResultStore = store if store is not None else MemoryResultStore()
        self._recent = MemoryResultStore(max_bytes=256 << 20)
        self._pending_logs: dict[str, list[LogLine]] = {}
        self._writes: list[concurrent.futures.Future[None]] = []
        self._write_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.pool = pool or default_pool()
        if continuation_store is not None and not isinstance(continuation_store, ContinuationStore):
            raise TypeError("continuation_store must have consume_continuation(digest, expires_at)")
        self.continuation_store = continuation_store
        self._in_flight = 0
        self._lock = threading.Lock()

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
    ) -> RunResult:
        """Run `source` (JavaScript or TypeScript, the body of an async function).

        `resume_guard` (with a continuation): called once, just before the resumed
        run's first live host call (sync ones on a thread). If it raises, nothing
        live runs and the run ends RUN_CONTINUATION_INVALID with its message."""
        limits = limits or self.limits
        if not isinstance(limits, Limits):
            raise TypeError("limits must be a run_repl.Limits")
        started = time.perf_counter()
        with self._lock:
            if self._in_flight >= self.max_runs_in_flight:
                busy = True
            else:
                busy = False
                self._in_flight += 1
        if busy:
            return RunResult(
                status="error",
                error=plain_error(
                    ErrorCode.RUN_BUSY,
                    f"{self.max_runs_in_flight} runs are already in flight on this runner; retry shortly.",
                ),
            )
        try:
            return await self._run(
                source,
                host_functions,
                limits,
                continuation,
                resolutions,
                on_log,
                on_call,
                cancel,
                context,
                resume_guard,
                started,
            )
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _run(
        self,
        source: str,
        host_functions: Any,
        limits: Limits,
        continuation: str | None,
        resolutions: list[Mapping[str, Any]] | None,
        on_log: LogCallback | None,
        on_call: CallCallback | None,
        cancel: asyncio.Event | None,
        context: Mapping[str, Any] | None,
        resume_guard: Callable[[], Any] | None,
        started: float,
    ) -> RunResult:
        run_id = "run_" + secrets.token_hex(8)
        problem = _check_source(source, limits)
        if problem is not None:
            return self._failed(run_id, problem, started)
        manifest = build_manifest(host_functions)
        try:
            prepared = prepare_source(source)
        except TypeScriptSyntaxError as exc:
            message = f"SyntaxError: {exc.message} (line {exc.line}, column {exc.column})"
            error = plain_error(
                ErrorCode.RUN_SYNTAX_ERROR, message, line=exc.line, column=exc.column
            )
            return self._failed(run_id, error, started)
        replay = None
        guard = None
        logical_run_id = run_id
        seed = [int.from_bytes(os.urandom(4), "little") for _ in range(4)]
        clock_ms = int(time.time() * 1000)
        if continuation is not None:
            try:
                state = self._resume_state(source, manifest, context, continuation, resolutions)
            except ContinuationInvalid as exc:
                error = plain_error(ErrorCode.RUN_CONTINUATION_INVALID, f"Cannot resume: {exc}.")
                return self._failed(run_id, error, started)
            replay = state.plan
            logical_run_id, seed, clock_ms = state.logical_run_id, state.seed, state.clock_ms
            guard = self._guard(state, resume_guard)
        elif resolutions:
            raise ValueError("resolutions are given with the continuation they answer")
        session = RunSession(
            code=prepared.code,
            manifest=manifest,
            limits=limits,
            pool=self.pool,
            logical_run_id=logical_run_id,
            seed=seed,
            clock_ms=clock_ms,
            on_log=on_log,
            on_call=on_call,
            cancel=cancel,
            replay=replay,
            policy=self._policy(manifest),
            rewrite_log=functools.partial(rewrite_positions, prepared=prepared),
            resume_guard=guard,
        )
        outcome = await session.execute()
        try:
            result, stored = self._result(outcome, prepared, limits, manifest, run_id)
        except Exception as exc:  # whatever the guest sent, run() answers with an envelope
            result, stored = self._unreadable(outcome, run_id, exc), []
        if result.status == "interrupted":
            result.continuation = self._signer().sign(
                source=source,
                manifest_digest=manifest.digest,
                context=context,
                logical_run_id=logical_run_id,
                seed=seed,
                clock_ms=clock_ms,
                elapsed_ms=outcome.elapsed_ms,
                ledger=outcome.ledger,
                settle_order=outcome.settle_order,
                interrupts=outcome.interrupts,
                payload_wire={i.id: codec.encode(i.payload) for i in outcome.interrupts},
            )
            result.next_actions = [
                {
                    "type": "approve",
                    "interruption_id": i.id,
                    "path": i.path,
                    "why": "Decide, then run again with continuation and resolutions.",
                }
                for i in outcome.interrupts
            ]
        if stored:
            await self._store(stored)
        return self._finish(result, started)

    def _guard(
        self, state: ContinuationState, resume_guard: Callable[[], Any] | None
    ) -> Callable[[], Awaitable[None]] | None:
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
                    outcome = await asyncio.to_thread(resume_guard)
                    if inspect.isawaitable(outcome):
                        await outcome
            if store is not None:
                first = await asyncio.to_thread(
                    store.consume_continuation, state.digest, state.expires_at
                )
                if not first:
                    raise ContinuationInvalid(
                        "this continuation was already used (each one resumes a run once)"
                    )

        return guard

    def _unreadable(self, outcome: SessionOutcome, run_id: str, exc: Exception) -> RunResult:
        """The run ended, but its report could not be read (a value nested too
        deep, fields of the wrong type...): say so, and keep the audit trail."""
        if isinstance(exc, RecursionError):
            error = plain_error(
                ErrorCode.RUN_VALUE_NOT_SERIALIZABLE,
                "The run's value is nested too deeply to read: flatten it (at most "
                f"{MAX_VALUE_DEPTH} levels).",
            )
        else:
            error = plain_error(
                ErrorCode.RUN_INTERNAL_ERROR,
                f"run-repl could not read the run's result ({type(exc).__name__}: "
                f"{str(exc)[:300]}). The calls listed did happen.",
            )
        return RunResult(
            status="error",
            error=error,
            run_id=run_id,
            calls=outcome.calls,
            logs=outcome.logs[:INLINE_LOGS],
            duration_ms=round(outcome.duration_ms, 3),
            stats=RunStats(
                host_calls=len(outcome.calls),
                host_calls_replayed=sum(1 for c in outcome.calls if c.replayed),
                host_calls_executed=outcome.executed,
            ),
        )

    def _signer(self) -> ContinuationSigner:
        if self._signer_cache is None:
            secret = self._secret
            if secret is None and os.environ.get("RUN_REPL_SECRET"):
                secret = as_secret(os.environ["RUN_REPL_SECRET"])
            if secret is None:
                from ..paths import data_dir

                secret = load_or_create_secret(data_dir())
            self._signer_cache = ContinuationSigner(
                secret, self._verify_secrets, self.audience, self.max_age_s
            )
        return self._signer_cache

    def _resume_state(
        self,
        source: str,
        manifest: HostManifest,
        context: Mapping[str, Any] | None,
        continuation: str,
        resolutions: list[Mapping[str, Any]] | None,
    ) -> Any:
        state, payloads = self._signer().verify(
            continuation, source=source, manifest_digest=manifest.digest, context=context
        )
        answers: dict[str, Any] = {}
        for item in resolutions or []:
            if not isinstance(item, Mapping) or "interruption_id" not in item:
                raise ContinuationInvalid(
                    "each resolution is {'interruption_id': ..., 'value': ...}"
                )
            iid = str(item["interruption_id"])
            if iid not in state.pending:
                raise ContinuationInvalid(f"this continuation has no pending interruption {iid!r}")
            answers[iid] = item.get("value")
        for entry in state.plan.entries:
            if (
                entry.interruption_id
                and entry.interruption_id in payloads
                and payloads[entry.interruption_id]
            ):
                entry.payload = codec.decode(payloads[entry.interruption_id])
        state.plan.resolutions.update(answers)
        state.plan.issued_at = state.issued_at
        return state

    async def _store(self, stored: list[StoredItems]) -> None:
        for item in stored:
            lines = self._pending_logs.pop(item.ref, None)
            if lines is not None:
                # Many thousand log lines take a while to encode: not on the event loop.
                item.chunks = await asyncio.to_thread(_log_chunks, lines)
        if isinstance(self.store, MemoryResultStore):
            for item in stored:
                self.store.put_items(item)
            return
        # A store on disk takes a while for a big value: the first page must not
        # wait. Keep the items here until the writer thread has them on disk.
        for item in stored:
            self._recent.put_items(item)
            self._writes.append(self._writer().submit(self.store.put_items, item))
        self._writes = [w for w in self._writes if not w.done()]

    def _writer(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._write_pool is None:
            self._write_pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="run-repl-store"
            )
        return self._write_pool

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every stored value is in the store (a disk store writes behind)."""
        pending, self._writes = self._writes, []
        for write in pending:
            write.result(timeout)

    def _policy(self, manifest: HostManifest) -> Callable[[str], str] | None:
        from fnmatch import fnmatchcase

        decorated = {p for p, f in manifest.functions.items() if f.approval is not None}
        if not decorated and not self.approvals:
            return None
        patterns = list(self.approvals.items())

        def policy(path: str) -> str:
            for pattern, mode in patterns:
                if pattern == path:
                    return mode
            for pattern, mode in patterns:
                if fnmatchcase(path, pattern):
                    return mode
            return "ask" if path in decorated else "allow"

        return policy

    def _failed(self, run_id: str, error: RunErrorInfo, started: float) -> RunResult:
        """A run that ends before any worker starts."""
        return self._finish(RunResult(status="error", error=error, run_id=run_id), started)

    def _finish(self, result: RunResult, started: float) -> RunResult:
        if not result.duration_ms:
            result.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        return result

    def _result(
        self,
        outcome: SessionOutcome,
        prepared: PreparedSource,
        limits: Limits,
        manifest: HostManifest,
        run_id: str,
    ) -> tuple[RunResult, list[StoredItems]]:
        payload = outcome.payload
        worker_stats = payload.get("stats") or {}
        stats = RunStats(
            host_calls=len(outcome.calls),
            host_calls_replayed=sum(1 for c in outcome.calls if c.replayed),
            host_calls_executed=outcome.executed,
            heap_bytes=worker_stats.get("heap_bytes"),
            memory_peak_bytes=worker_stats.get("memory_peak_bytes"),
            memory_limit_bytes=limits.memory_bytes,
            value_bytes=payload.get("value_bytes"),
            worker_start_ms=outcome.worker_start_ms,
        )
        stored: list[StoredItems] = []
        logs, logs_ref = outcome.logs, None
        if len(logs) > INLINE_LOGS:
            logs_ref = new_ref()
            # The chunks are written later, off the event loop (see _store).
            stored.append(StoredItems(logs_ref, "$logs", len(logs), [], kind="logs", run_id=run_id))
            self._pending_logs[logs_ref] = logs
            logs = logs[:INLINE_LOGS]
        common: dict[str, Any] = {
            "run_id": run_id,
            "logs": logs,
            "logs_ref": logs_ref,
            "logs_total": len(outcome.logs) + int(payload.get("logs_dropped") or 0),
            "logs_dropped": int(payload.get("logs_dropped") or 0),
            "calls": outcome.calls,
            "duration_ms": round(outcome.duration_ms, 3),
            "stats": stats,
        }
        if outcome.kind == "done":
            if payload.get("kind") == "undefined":
                return RunResult(status="ok", value=None, value_kind="undefined", **common), stored
            window = self._window(outcome)
            ref = new_ref()
            stored.append(
                StoredItems(
                    ref, window.path, window.total, window.chunks, window.rest, run_id=run_id
                )
            )
            fields: dict[str, Any] = {
                "value_ref": ref,
                "shown": window.shown,
                "total": window.total,
            }
            if window.inline:
                fields.update(value=window.value, value_kind=_value_kind(window.value))
            else:
                fields.update(
                    value_kind=_kind_of_path(window.path),
                    value_window=ValueWindow(
                        path=window.path, items=window.items, rest=window.rest
                    ),
                )
            return RunResult(status="ok", **fields, **common), stored
        if outcome.kind == "interrupted":
            return RunResult(
                status="interrupted",
                interruptions=[
                    Interruption(
                        id=i.id, path=i.path, args=_jsonable(i.args), payload=_jsonable(i.payload)
                    )
                    for i in outcome.interrupts
                ],
                **common,
            ), stored
        error = map_error(
            payload.get("error") or {},
            prepared,
            stats=worker_stats,
            memory_bytes=limits.memory_bytes,
        )
        return RunResult(status="error", error=error, **common), stored

    @staticmethod
    def _window(outcome: SessionOutcome) -> Window:
        payload = outcome.payload
        if payload.get("mode") == "chunked":
            return window_of_chunks(
                payload["path"],
                int(payload["total"]),
                outcome.value_chunks,
                outcome.value_text or None,
            )
        return window_of_value(json.loads(outcome.value_text or "null"))

    # ------------------------------------------------------------------ paging
    def expand(self, ref: str, offset: int = 0, limit: int = 100) -> Page:
        """Items [offset, offset + limit) of a stored value or log, by item (limit <= 1000).

        Raises ResultRefNotFound (code RESULT_REF_NOT_FOUND) for an unknown,
        evicted or expired ref, and ValueError for a bad offset or limit."""
        if self._recent.get_items(ref) is not None:
            return page_of(self._recent, ref, offset, limit)
        return page_of(self.store, ref, offset, limit)


def _log_chunks(lines: list[LogLine]) -> list[str]:
    return chunk_texts(
        [{"level": line.level, "text": line.text, "at_ms": line.at_ms} for line in lines]
    )


def _jsonable(value: Any) -> Any:
    """Host-side values as JSON data for the envelope (dates as ISO text, ...)."""
    from . import codec

    try:
        return json.loads(json.dumps(value, default=_default))
    except (TypeError, ValueError):
        return codec.preview(value)


def _default(value: Any) -> Any:
    import datetime as dt

    from .values import UNDEFINED, JSBigInt

    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if value is UNDEFINED:
        return None
    if isinstance(value, JSBigInt):
        return str(int(value))
    if isinstance(value, set | frozenset):
        return list(value)
    if isinstance(value, bytes):
        return list(value)
    raise TypeError


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
    )


def run_sync(source: str, host_functions: Any = None, **kwargs: Any) -> RunResult:
    """`run` for code without an event loop (or from inside one, on a thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run(source, host_functions, **kwargs))
    out: list[RunResult] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            out.append(asyncio.run(run(source, host_functions, **kwargs)))
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return out[0]


__all__ = ["HostFunctionsError", "Runner", "create_runner", "run", "run_sync"]
