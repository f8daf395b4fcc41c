"""Tool results: the data as structured content, and one text block worded for a model.

The structured content is the seed 000 envelope (or a page, the docs, an
approval's standing); the text block is `to_tool_output`'s wording (seed
002's shapes) as JSON, with every character a terminal could act on
escaped, since clients show it to people too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types

from ..present.sanitize import safe_json
from ..sandbox.result import RunResult
from ..sandbox.result_store import Page
from ..store import PendingApproval
from ..store.approval_flow import describe_state
from .approval_wait import Standing, call_text
from .tool_errors import ToolError


def _text(data: Any) -> types.TextContent:
    return types.TextContent(text=safe_json(data, indent=None, default=str))


def reply(structured: dict[str, Any], text: Any, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[_text(text)], structured_content=structured, is_error=error
    )


def error_reply(error: ToolError) -> types.CallToolResult:
    why = error.next_actions[0].get("why", "") if error.next_actions else ""
    return reply(
        {"status": "error", "error": error.to_json()},
        {"ok": False, "error": f"{error.code}: {error.message}" + (f" Next: {why}" if why else "")},
        error=True,
    )


def approval_json(approval: PendingApproval) -> dict[str, Any]:
    """What an agent may know of an approval: the call, the question, where it stands."""
    out: dict[str, Any] = {
        "id": approval.id,
        "run_id": approval.run_id,
        "path": approval.path,
        "args": approval.args if isinstance(approval.args, list) else [approval.args],
        "message": approval.message,
        "state": approval.state(),
        "described": describe_state(approval),
    }
    if approval.decision:
        out["decision"] = approval.decision
        out["decided_by"] = approval.decided_by
    return out


def envelope(result: RunResult, paused_action: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's envelope for an agent: the continuation stays in the store (it resumes
    the run, which only a person's decision may do); a paused run says what to do next."""
    data = result.model_dump(mode="json")
    data.pop("continuation", None)
    if result.status == "interrupted":
        data["approval_ids"] = [i.id for i in result.interruptions or []]
        data["next_actions"] = [paused_action] if paused_action else []
    return data


def run_reply(
    result: RunResult,
    *,
    paused_next: str | None = None,
    paused_action: dict[str, Any] | None = None,
) -> types.CallToolResult:
    """A run's result: its envelope, and `to_tool_output`'s words."""
    words = (
        result.to_tool_output(paused_next=paused_next) if paused_next else result.to_tool_output()
    )
    if result.status == "interrupted":
        words["run_id"] = result.run_id
        words["approval_ids"] = [i.id for i in result.interruptions or []]
    return reply(envelope(result, paused_action), words, error=result.status == "error")


def paused_words(
    run_id: str | None,
    approvals: list[PendingApproval],
    wait_s: float,
    approve_command: Callable[[str], str],
) -> tuple[str, dict[str, Any]]:
    """What a model should do about a run still waiting: the sentence, and the next action."""
    ids = [a.id for a in approvals]
    how = ", ".join(f"`{approve_command(i)}`" for i in ids[:3])
    waited = f"Nobody decided within {wait_s:g} s. " if wait_s > 0 else ""
    sentence = (
        f"{waited}A person decides in run-repl (the IDE's approvals inbox, or {how}); the run then "
        f"resumes where it paused. Call approval_status with run_id {run_id!r} later to get the "
        "final result (wait_seconds waits for the decision). Do not retry these operations another "
        "way: the person's decision still applies to this run."
    )
    action = {
        "type": "approve",
        "by": "a person, in run-repl",
        "approval_ids": ids,
        "then": {"tool": "approval_status", "arguments": {"run_id": run_id}},
        "why": "A person must approve these calls; call approval_status later for the result, "
        "and do not retry the operations another way.",
    }
    return sentence, action


def not_saved_words(reason: str) -> tuple[str, dict[str, Any]]:
    sentence = (
        f"These approvals could NOT be saved ({reason}), so nobody can approve them and the run "
        "cannot resume. Tell the person run-repl's store is not working; do not retry the "
        "operations another way."
    )
    action = {
        "type": "run_again",
        "why": "The approvals were not saved: once the person has fixed run-repl's store, run the "
        "snippet again.",
    }
    return sentence, action


def page_reply(page: Page, items: list[Any]) -> types.CallToolResult:
    """A page of a stored value or log (`items`: the ones this reply holds)."""
    end = page.offset + len(items)
    has_more = end < page.total
    data: dict[str, Any] = {
        "ref": page.ref,
        "path": page.path,
        "offset": page.offset,
        "items": items,
        "total": page.total,
        "has_more": has_more,
    }
    if has_more:
        data["next_offset"] = end
    if page.rest is not None:
        data["rest"] = page.rest
    words: dict[str, Any] = {
        "ok": True,
        "items": items,
        "shown": f"items {page.offset + 1}-{end} of {page.total} (at {page.path})"
        if items
        else f"no items (of {page.total})",
    }
    if page.rest is not None:
        words["rest"] = page.rest
    if has_more:
        words["next"] = (
            f"Call expand_result with value_ref {page.ref!r} and offset {end} for the next items."
        )
    return reply(data, words)


def status_reply(
    state: Standing,
    *,
    wait_s: float,
    approve_command: Callable[[str], str],
) -> types.CallToolResult:
    """Where a paused run stands: the final result once decided, else what it waits on."""
    data: dict[str, Any] = {
        "status": state.status,
        "run_id": state.run_id,
        "approvals": [approval_json(a) for a in state.approvals],
    }
    if state.note:
        data["note"] = state.note
    if state.status == "done" and state.result is not None:
        data["result"] = envelope(state.result)
        words = state.result.to_tool_output()
        words["run_id"] = state.result.run_id
        return reply(data, words, error=state.result.status == "error")
    if state.status == "ended":
        return reply(
            data,
            {
                "ok": False,
                "error": f"The run will not finish: {state.note}. Nothing more will happen to it; "
                "run the snippet again if it still needs doing.",
            },
            error=True,
        )
    sentence, action = paused_words(state.run_id, state.approvals, wait_s, approve_command)
    if state.result is not None:
        data["result"] = envelope(state.result, action)
    waiting = "; ".join(f"{call_text(a)}: {describe_state(a)}" for a in state.approvals)
    return reply(
        data,
        {"ok": False, "error": f"Still waiting: {waiting}. {sentence}", "run_id": state.run_id},
    )


__all__ = [
    "approval_json",
    "envelope",
    "error_reply",
    "not_saved_words",
    "page_reply",
    "paused_words",
    "reply",
    "run_reply",
    "status_reply",
]
