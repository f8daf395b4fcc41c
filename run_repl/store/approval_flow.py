"""Pending approvals, from an interrupted run to its resume: the front ends' one way.

    saved = save_interrupted(store, result, source=src, host="demo")
    ...                                   # seconds or days later, any process
    result = await decide(store, runner, host_functions, {approval_id: True})

Each approval is claimed in the store before its run resumes, so it is
resumed at most once, whoever else tries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..sandbox.result import RunResult
from ..sandbox.runner import Runner
from .records import ApprovalConflict, PendingApproval, RunRecord, Store


def approval_message(payload: Any, path: str) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return payload["message"]
    return f"{path} is waiting for a decision"


def save_interrupted(
    store: Store, result: RunResult, *, source: str, host: str
) -> list[PendingApproval]:
    """Keep the interruptions of `result` as pending approvals (already known ids get the new token)."""
    if result.status != "interrupted" or not result.continuation or not result.interruptions:
        return []
    fresh: list[PendingApproval] = []
    again: list[str] = []
    for it in result.interruptions:
        known = store.get_approval(it.id)  # one lookup each, not the whole table
        if known is not None:
            # Only a call still waiting takes the new token: a decided one never comes back.
            if known.status in ("pending", "claimed"):
                again.append(it.id)
            continue
        fresh.append(
            PendingApproval(
                id=it.id,
                run_id=result.run_id or "",
                source=source,
                host=host,
                path=it.path,
                args=it.args,
                payload=it.payload,
                message=approval_message(it.payload, it.path),
                continuation=result.continuation,
            )
        )
    if fresh:
        store.add_approvals(fresh)
    if again:
        store.replace_continuation(again, result.continuation, result.run_id or "")
    return [a for a in (store.get_approval(i.id) for i in result.interruptions) if a is not None]


def record_run(
    store: Store, result: RunResult, *, source: str, host: str, resumed_from: str | None = None
) -> None:
    store.record_run(
        RunRecord(
            id=result.run_id or "",
            duration_ms=result.duration_ms,
            status=result.status,
            source=source,
            host=host,
            error_code=str(result.error.code) if result.error else None,
            value_ref=result.value_ref,
            logs_ref=result.logs_ref,
            envelope=result.model_dump(mode="json"),
            resumed_from=resumed_from,
        )
    )


async def decide(
    store: Store,
    runner: Runner,
    host_functions: Any,
    decisions: Mapping[str, Any],
    **run_kwargs: Any,
) -> RunResult:
    """Resume the run these approvals belong to, with these decisions (True approves).

    Raises ApprovalConflict if one is already decided (or being resumed), KeyError
    for an unknown id, ValueError if they belong to different runs."""
    ids = list(decisions)
    if not ids:
        raise ValueError("no approvals to decide")
    claimed = store.claim_approvals(ids)
    tokens = {a.continuation for a in claimed}
    if len(tokens) != 1:
        store.release_approvals(ids)
        raise ValueError(
            "these approvals belong to different runs: decide each run's approvals on their own"
        )
    first = claimed[0]
    try:
        result = await runner.run(
            first.source,
            host_functions,
            continuation=first.continuation,
            resolutions=[{"interruption_id": i, "value": decisions[i]} for i in ids],
            **run_kwargs,
        )
    except BaseException:
        store.release_approvals(ids)
        raise
    if result.error is not None and result.error.code == "RUN_CONTINUATION_INVALID":
        store.finish_approvals(dict.fromkeys(ids, "failed"), result.run_id)
    else:
        store.finish_approvals(
            {i: ("approved" if decisions[i] is True else "denied") for i in ids}, result.run_id
        )
        save_interrupted(store, result, source=first.source, host=first.host)
        # The old token is spent: its other approvals now wait on the new run, or on nothing.
        still = {i.id for i in result.interruptions or []}
        stale = [
            a.id
            for a in store.list_approvals(status="pending")
            if a.continuation == first.continuation and a.id not in still
        ]
        if stale:
            store.finish_approvals(dict.fromkeys(stale, "superseded"), result.run_id)
    record_run(store, result, source=first.source, host=first.host, resumed_from=first.run_id)
    return result


__all__ = ["ApprovalConflict", "approval_message", "decide", "record_run", "save_interrupted"]
