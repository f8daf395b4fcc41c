"""An executor's loop: register, beat, and resume the decided runs this process may.

    resumer = Resumer(store, runner, host_functions, host="demo", digest=manifest.digest,
                      kind="serve", on_resumed=print_one_line)
    await resumer.run(stop)          # until `stop` is set; then it leaves the registry

Each round (woken by the store's change watch: PostgreSQL's LISTEN, SQLite's one
watching thread; at the latest every BEAT_S, so a dead executor's runs are seen
once it stops being live) it settles the batches whose resume died after its guard
(`settle_lapsed`: `unfinished` at once) and takes the decided batches it is
eligible for (`resumable`): first the runs it started itself (`resume_by` is its
id), then those whose starter is gone (or was none) and whose host and host
functions are its own. One resume per batch at a time, up to `max_resumes` at
once; another executor that claims a batch first wins it (ApprovalConflict here),
so two servers on one store resume each batch once.

Stopping takes nothing new; resumes in progress end, or are cancelled as any
resume is (their approvals then `unfinished`, never re-run).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ...sandbox.resume.continuation import manifest_digest_of
from ...sandbox.runner import Runner
from ..executors import BEAT_S, LIVE_S, TAKES_ANY, executor_label, executor_name, new_executor_id
from ..protocols import Store
from ..records import ApprovalConflict, ClaimLost, PendingApproval
from ..store_error import StoreError
from . import flow
from .flow import wait_for_approvals_change
from .watch import SWEEP_S

MAX_RESUMES = 4  # batches resumed at once by one executor (the runner's runs in flight)
RETRY_S = 1.0  # a batch whose resume here just ended is not taken again sooner (RUN_BUSY...)
# A resume on a full runner waits this long for its next free slot, ahead of new runs
# (a person waits for its result; an agent's new run can be retried), before it is
# given back (RUN_BUSY) for another executor or the next round.
QUEUE_S = 30.0
# A starter read live is taken as live for this long without reading it again (every
# change anyone makes starts a round on every executor); never past the moment the
# store would call it gone, so a dead starter's runs are taken at most this much later.
LIVENESS_KEPT_S = 1.0

log = logging.getLogger("run_repl.resumer")


@dataclass
class Resumed:
    """One resume this executor carried out (what `on_resumed` hears)."""

    approval: PendingApproval
    resolution: flow.Resolution | None = None
    error: str | None = None  # it could not be carried out (the store failed, ...)

    def line(self) -> str:
        """One line for a log: which approval, which run, how it ended."""
        a = self.approval
        if self.error is not None:
            return f"{a.id} {a.path} (run {a.run_id}): not resumed: {self.error}"
        result = self.resolution.result if self.resolution is not None else None
        if result is None:
            return f"{a.id} {a.path} (run {a.run_id}): settled by another resume"
        code = f" {result.error.code}" if result.error is not None else ""
        return (
            f"{a.id} {a.path} {a.decision or 'decided'} by {a.decided_by or 'someone'}: "
            f"run {a.run_id} resumed as {result.run_id}, {result.status}{code} "
            f"in {result.duration_ms:.0f} ms"
        )


class Resumer:
    """The resumes of one executor (an MCP server, `run-repl serve`) over one store."""

    def __init__(
        self,
        store: Store,
        runner: Runner,
        host_functions: Any,
        *,
        host: str,
        digest: str | Callable[[], str],
        kind: str = "serve",
        label: str | None = None,
        executor_id: str | None = None,
        max_resumes: int = MAX_RESUMES,
        on_resumed: Callable[[Resumed], Any] | None = None,
        run_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.runner = runner
        self.host_functions = host_functions
        self.host = host
        self._digest = digest
        self.kind = kind
        self.name = executor_name(kind)
        self.label = label or executor_label(kind)
        self.id = executor_id or new_executor_id()
        self.max_resumes = max(1, max_resumes)
        self.on_resumed = on_resumed
        self.run_kwargs = run_kwargs or {}
        self.running: dict[str, asyncio.Task[None]] = {}  # batch -> its resume
        self.registered = False
        self._digests: dict[str, str | None] = {}  # batch -> its token's host functions
        self._ended_at: dict[str, float] = {}  # batch -> when its last resume here ended
        self._swept = float("-inf")  # when this executor last settled lapsed resumes
        self._live_until: dict[str, float] = {}  # starter -> until when it is known live

    @property
    def digest(self) -> str:
        return self._digest() if callable(self._digest) else self._digest

    # ------------------------------------------------------------------ the registry
    def register(self) -> None:
        self.store.register_executor(
            self.id, host=self.host, functions=self.digest, label=self.label, kind=self.kind
        )
        self.registered = True

    def beat(self) -> None:
        if not self.store.beat_executor(self.id, functions=self.digest):
            self.register()  # its row was gone (pruned, or the store was reset)

    def leave(self) -> None:
        if self.registered:
            self.registered = False
            self.store.leave_executor(self.id)

    # ------------------------------------------------------------------ choosing
    def _functions_of(self, approval: PendingApproval) -> str | None:
        if approval.batch not in self._digests:
            if len(self._digests) > 4096:
                self._digests.clear()
            self._digests[approval.batch] = manifest_digest_of(approval.continuation)
        return self._digests[approval.batch]

    def eligible(self, decided: list[PendingApproval]) -> list[PendingApproval]:
        """Of decided, free batches: those this executor should resume, its own first.
        A blocking read (the starters' liveness): call off the event loop."""
        mine = [a for a in decided if a.resume_by == self.id]
        if self.kind not in TAKES_ANY:
            return mine  # an IDE resumes only the runs it started
        others = []
        for a in decided:
            if a.resume_by == self.id or a.host != self.host:
                continue
            if self._functions_of(a) != self.digest:
                continue
            if a.resume_by is not None and self._live(a.resume_by):
                continue  # its starter is live and resumes it
            others.append(a)
        return mine + others

    def _live(self, starter: str) -> bool:
        """Whether the executor that started a run is live (a blocking read, at most
        once every LIVENESS_KEPT_S while it is)."""
        now = time.monotonic()
        if self._live_until.get(starter, float("-inf")) > now:
            return True
        found = self.store.get_executor(starter)
        if found is None or not found.live:
            self._live_until.pop(starter, None)
            return False
        if len(self._live_until) > 4096:
            self._live_until.clear()
        self._live_until[starter] = now + min(LIVENESS_KEPT_S, LIVE_S - found.age_s)
        return True

    def _round(self) -> list[PendingApproval]:
        """One look at the store (blocking): settle the lapsed (every SWEEP_S: a round
        comes with every change anyone makes, and a lease lasts LEASE_S), pick what to
        resume."""
        now = time.monotonic()
        if now - self._swept >= SWEEP_S:
            self._swept = now
            self.store.settle_lapsed()
        return self.eligible(self.store.resumable(self.host))

    # ------------------------------------------------------------------ resuming
    async def _resume(self, approval: PendingApproval) -> None:
        try:
            resolution = await flow.resume_decided(
                self.store,
                self.runner,
                self.host_functions,
                approval.id,
                resumer=self.name,  # the claim adds the machine and pid: the label
                **{"queue_s": QUEUE_S, **self.run_kwargs},
            )
        except (ApprovalConflict, ClaimLost, KeyError):
            return  # another executor took it first: it resumes once, there
        except StoreError as exc:
            self._heard(Resumed(approval, error=str(exc)))
            return
        except Exception as exc:  # a bug must not end the executor; the claim runs out
            log.exception("resuming %s failed", approval.id)
            self._heard(Resumed(approval, error=f"{type(exc).__name__}: {exc}"))
            return
        self._heard(Resumed(approval, resolution))

    def _heard(self, done: Resumed) -> None:
        if self.on_resumed is not None:
            try:
                self.on_resumed(done)
            except Exception:
                log.exception("on_resumed failed")

    def _start(self, picked: list[PendingApproval]) -> None:
        for a in picked:
            if len(self.running) >= self.max_resumes:
                return
            if a.batch in self.running:
                continue
            ended = self._ended_at.get(a.batch)
            if ended is not None and time.monotonic() - ended < RETRY_S:
                continue  # not again at once: the next round (a change, or BEAT_S) retries
            task = asyncio.create_task(self._resume(a), name=f"resume {a.id}")
            self.running[a.batch] = task
            task.add_done_callback(partial(self._ended, a.batch))

    def _ended(self, batch: str, task: asyncio.Task[None]) -> None:
        self.running.pop(batch, None)
        now = time.monotonic()
        for old in [b for b, t in self._ended_at.items() if now - t > RETRY_S]:
            del self._ended_at[old]
        self._ended_at[batch] = now

    # ------------------------------------------------------------------ the loop
    async def run(self, stop: asyncio.Event) -> None:
        """Register, then resume what is decided until `stop` is set. Then it leaves the
        registry at once (decisions go to others from then on) and waits for the resumes
        still running (cancel this to cut them: their approvals end as a cancelled
        resume's do)."""
        if not self.registered:
            await asyncio.to_thread(self.register)
        beating = asyncio.create_task(self._beat_until(stop), name="executor heartbeat")
        try:
            version = await asyncio.to_thread(self.store.approvals_version)
            while not stop.is_set():
                try:
                    picked = await asyncio.to_thread(self._round)
                except StoreError as exc:
                    log.warning("the store could not be read: %s", exc)
                    picked = []
                except Exception:  # a bug must not end the executor: the next round retries
                    log.exception("choosing what to resume failed")
                    picked = []
                self._start(picked)
                version = await self._changed(version, stop)
        finally:
            beating.cancel()
            with contextlib.suppress(BaseException):
                await beating
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.leave)
        try:
            while self.running:
                await asyncio.gather(*self.running.values(), return_exceptions=True)
        except asyncio.CancelledError:
            for task in list(self.running.values()):
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*self.running.values(), return_exceptions=True)
            raise

    async def _changed(self, version: int, stop: asyncio.Event) -> int:
        """The next change to the approvals, a resume ending, `stop`, or BEAT_S."""
        watch = asyncio.ensure_future(wait_for_approvals_change(self.store, version, BEAT_S))
        stopping = asyncio.ensure_future(stop.wait())
        waits: set[asyncio.Future[Any]] = {watch, stopping, *self.running.values()}
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not watch.done():
            watch.cancel()
            with contextlib.suppress(BaseException):
                await watch
            return version
        try:
            return int(watch.result())
        except StoreError:
            return version

    async def _beat_until(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), BEAT_S)
            if stop.is_set():
                return
            try:
                await asyncio.to_thread(self.beat)
            except StoreError as exc:  # the store is away: the next beat tries again
                log.warning("executor heartbeat failed: %s", exc)


__all__ = ["MAX_RESUMES", "QUEUE_S", "RETRY_S", "Resumed", "Resumer"]
