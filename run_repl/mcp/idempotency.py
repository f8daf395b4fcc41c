"""The `run` tool's `idempotency_key`: a retry gets the first call's run, never a second.

    first call  ── reserve (owner, key) ──▶ runs ──▶ in the history ──▶ the key
                   names its run ──▶ its approvals saved (a person can be asked)
    a retry     ── finds the key ──▶ waits for it to name its run ──▶ that run's
                   result, or where its approvals stand (followed as the first call
                   followed them; the person is not asked again)

Keys live in the store (the team's PostgreSQL for servers of a team), per
principal, for a day. A run that never started (RUN_BUSY, a failure before
it) gives its key back, so a retry runs it.

A key's holder names the server running its run (its executor id, `key_…@exe_…`):
a retry that finds that server gone (killed mid-run, its beat stopped for LIVE_S)
answers RUN_OUTCOME_UNKNOWN within seconds, naming it, and never runs the snippet
again: its host calls may have happened. Every later retry answers the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..sandbox.result import RunResult
from ..store import RunKey, Store
from ..store.executors import Executor
from .tool_errors import ToolError, edit

KEY_KEPT_S = 24 * 3600
POLL_S = 0.25
HOLDER_LOOK_S = 1.0  # how often a waiting retry asks whether the run's server still lives
IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
RUN_OUTCOME_UNKNOWN = "RUN_OUTCOME_UNKNOWN"
LOCAL_OWNER = ""  # stdio and --no-auth: one owner, the person's own setup


def source_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Reservation:
    """This call holds the key: its run is the key's run."""

    store: Store
    owner: str
    key: str
    holder: str

    def settle(self, result: RunResult | None) -> None:
        """Name the run (blocking: off the loop); a run that never started gives the key back."""
        never_ran = result is None or (result.error is not None and result.error.code == "RUN_BUSY")
        run_id = None if never_ran or result is None else result.run_id
        self.store.settle_run_key(self.owner, self.key, holder=self.holder, run_id=run_id)


def reserve(
    store: Store, owner: str | None, key: str, code: str, executor: str | None = None
) -> Reservation | RunKey:
    """This call's reservation, or the key as an earlier call left it (blocking).
    `executor`: this server's executor id, kept in the holder so a retry elsewhere can
    tell its server died. ToolError when the key was used for another snippet."""
    who = owner or LOCAL_OWNER
    holder = "key_" + secrets.token_hex(8) + (f"@{executor}" if executor else "")
    digest = source_digest(code)
    row = store.reserve_run_key(who, key, digest, holder=holder, max_age_s=KEY_KEPT_S)
    if row.digest != digest:
        raise ToolError(
            IDEMPOTENCY_KEY_REUSED,
            f"idempotency_key {key!r} was used within the last day for a different snippet: a "
            "key names one call and its retries, with the same code.",
            edit(
                "Retry with the code of the first call, or pass a new idempotency_key for "
                "this snippet.",
                argument="idempotency_key",
            ),
        )
    if row.holder == holder:
        return Reservation(store, who, key, holder)
    return row


def holder_gone(store: Store, row: RunKey) -> Executor | str | None:
    """The server running the key's run, when it is gone (its registry row, not live;
    or its label-less id when its row is gone too); None while it lives, or when the
    holder names no server (a store in memory: nobody else can retry there)."""
    _, _, executor_id = row.holder.partition("@")
    if not executor_id:
        return None
    found = store.get_executor(executor_id)
    if found is None:
        return executor_id
    return None if found.live else found


def _server_gone(row: RunKey, gone: Executor | str) -> ToolError:
    if isinstance(gone, Executor):
        seen = time.strftime("%H:%M:%S UTC", time.gmtime(gone.seen_at))
        who = f"{gone.label} ({gone.id}), last seen at {seen}"  # the same on every retry
    else:
        who = f"server {gone}, no longer registered"
    return ToolError(
        RUN_OUTCOME_UNKNOWN,
        f"The first call with idempotency_key {row.key!r} started its run on {who}: that "
        "server stopped before the run reported back, so the run's host calls may or may "
        "not have run. run-repl did not run the snippet again and will not under this key "
        "(every retry with it answers this).",
        {
            "type": "run_again",
            "why": "Tell the person the run's outcome is unknown and ask them to check what "
            "its host calls would have done; only if it still needs doing, call run again "
            "with a new idempotency_key.",
        },
    )


def _never_started(row: RunKey) -> ToolError:
    return ToolError(
        RUN_OUTCOME_UNKNOWN,
        f"The first call with idempotency_key {row.key!r} did not start its run "
        "(RUN_BUSY or a failure before it ran): nothing ran.",
        {"type": "retry", "why": "Call run again with the same idempotency_key."},
    )


async def run_of(
    store: Store,
    row: RunKey,
    wait_s: float,
    heartbeat: Callable[[str], Awaitable[None]],
    heartbeat_s: float = 5.0,
) -> RunResult:
    """The run an earlier call with this key made, once it is kept: while that call
    still runs, wait for it (up to `wait_s` from when the key was reserved)."""
    loop = asyncio.get_running_loop()
    beat = loop.time() - heartbeat_s  # the first note at once: the caller hears it waits
    looked = loop.time() - HOLDER_LOOK_S
    while row.run_id is None:
        if loop.time() - looked >= HOLDER_LOOK_S:
            looked = loop.time()
            gone = await asyncio.to_thread(holder_gone, store, row)
            if gone is not None:
                # A server stopping on purpose names its runs as it ends: read once more.
                await asyncio.sleep(HOLDER_LOOK_S)
                found = await asyncio.to_thread(store.get_run_key, row.owner, row.key)
                if found is None:
                    raise _never_started(row)
                if found.run_id is not None:
                    row = found
                    break
                raise _server_gone(row, gone)
        if row.age_s > wait_s:
            raise ToolError(
                RUN_OUTCOME_UNKNOWN,
                f"The first call with idempotency_key {row.key!r} started a run "
                f"{row.age_s:.0f} s ago that never reported back (its server may have "
                "stopped): its host calls may or may not have run.",
                {
                    "type": "run_cli_command",
                    "command": "run-repl history",
                    "why": "Ask the person to check what it did before running it again; to run "
                    "it again anyway, pass a new idempotency_key.",
                },
            )
        if loop.time() - beat >= heartbeat_s:
            beat = loop.time()
            await heartbeat("the first call with this idempotency_key is still running")
        await asyncio.sleep(POLL_S)
        found = await asyncio.to_thread(store.get_run_key, row.owner, row.key)
        if found is None:  # given back (it never ran) and not taken again: nothing to read
            raise _never_started(row)
        row = found
    run_id = row.run_id
    assert run_id is not None  # the loop ends only once the key names its run
    record = await asyncio.to_thread(store.get_run, run_id)
    result = None
    if record is not None:
        try:
            result = RunResult.model_validate(record.envelope)
        except ValueError:
            result = None
    if result is None:
        raise ToolError(
            RUN_OUTCOME_UNKNOWN,
            f"The run of idempotency_key {row.key!r} ({row.run_id}) is no longer in the history.",
            {
                "type": "run_cli_command",
                "command": "run-repl history",
                "why": "To run it again, pass a new idempotency_key.",
            },
        )
    return result


__all__ = [
    "IDEMPOTENCY_KEY_REUSED",
    "KEY_KEPT_S",
    "RUN_OUTCOME_UNKNOWN",
    "Reservation",
    "holder_gone",
    "reserve",
    "run_of",
    "source_digest",
]
