"""Tool results: the data as structured content, and one text block worded for a model.

The structured content is the run envelope (or a page, the docs, an
approval's standing), built by the tool's reply model (tool_models.py), so
it fits the output schema the tool advertises; a tool error is
`{status: "error", error}`, which every tool's schema admits. The text block
is `to_tool_output`'s wording (ok, paused or failed) as JSON, with every
character a terminal could act on escaped, since clients show it to people
too; a paused run is worded as waiting, not as a failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import mcp_types as types

from ..present.approvals import describe_state
from ..present.sanitize import safe_json
from ..sandbox.errors import ErrorCode
from ..sandbox.result import NextAction, RunErrorInfo, RunResult
from ..sandbox.wire.result_store import Page
from ..store import PendingApproval
from . import tool_models as models
from .approval_wait import Standing, call_text
from .tool_errors import ToolError
from .tool_models import escaped

WAITING = "waiting_for_approval"  # a paused run's status in the words: not a failure to retry


def _text(data: Any) -> types.TextContent:
    return types.TextContent(text=safe_json(data, indent=None, default=str))


def wire_safe(result: types.CallToolResult) -> types.CallToolResult:
    """`result` with every lone surrogate (which UTF-8 cannot encode) written as the
    visible `\\uXXXX` escape the other front ends show, in its data and its text."""
    content = [
        block.model_copy(update={"text": escaped(block.text)})
        if isinstance(block, types.TextContent)
        else block
        for block in result.content
    ]
    return result.model_copy(
        update={"content": content, "structured_content": escaped(result.structured_content)}
    )


def reply(structured: dict[str, Any], text: Any, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[_text(text)], structured_content=structured, is_error=error
    )


def error_reply(error: ToolError, run_id: str | None = None) -> types.CallToolResult:
    """A tool error: `{status: "error", error}` (the shape every tool's schema admits),
    and the words; with the run the call made, when it made one."""
    failure = models.ToolFailure(
        status="error", error=RunErrorInfo.model_validate(error.to_json()), run_id=run_id
    )
    why = error.next_actions[0].get("why", "") if error.next_actions else ""
    words: dict[str, Any] = {
        "ok": False,
        "error": f"{error.code}: {error.message}" + (f" Next: {why}" if why else ""),
    }
    if run_id is not None:
        words["run_id"] = run_id
    return reply(models.dump(failure), words, error=True)


def approval_json(approval: PendingApproval) -> dict[str, Any]:
    """What an agent may know of an approval: the call, the question, where it stands."""
    info = models.ApprovalInfo(
        id=approval.id,
        run_id=approval.run_id,
        path=approval.path,
        args=approval.args if isinstance(approval.args, list) else [approval.args],
        message=approval.message,
        state=approval.state(),
        described=describe_state(approval),
        decision=approval.decision,
        decided_by=approval.decided_by if approval.decision else None,
    )
    return models.dump(info)


# ---------------------------------------------------------------- a run's result
_DEADLINE = re.compile(r"deadline of ([\d,]+) ms")


def for_tools(result: RunResult, max_timeout_s: float) -> RunResult:
    """`result` with its next step in the tools' terms: the engine's timeout says
    `timeout_ms` (the library's and the command line's knob); `run` takes
    `timeout_seconds`."""
    error = result.error
    if error is None or error.code != ErrorCode.RUN_TIMEOUT:
        return result
    found = _DEADLINE.search(error.message)
    limit = f" of {int(found.group(1).replace(',', '')) / 1000:g} s" if found else ""
    step = NextAction(
        type="edit_request",
        argument="timeout_seconds",
        why=f"The run passed its deadline{limit}: do less per run (narrow the query, fewer "
        f"calls), or pass a larger timeout_seconds (at most {max_timeout_s:g}). Calls listed "
        "as ok did happen.",
    )
    return result.model_copy(update={"error": error.model_copy(update={"next_actions": [step]})})


def envelope(
    result: RunResult,
    paused_action: dict[str, Any] | None = None,
    *,
    resumed_from: str | None = None,
) -> dict[str, Any]:
    """The run's envelope for an agent: the continuation stays in the store (it resumes
    the run, which only a person's decision may do); a paused run says what to do next;
    a resumed run names the paused one it resumed."""
    data = models.json_data(result)
    data.pop("continuation", None)
    if result.status == "interrupted":
        data["approval_ids"] = [i.id for i in result.interruptions or []]
        data["next_actions"] = [paused_action] if paused_action else []
    if resumed_from is not None and resumed_from != result.run_id:
        data["resumed_from"] = resumed_from
    return data


def _resumed_note(first: str, result: RunResult) -> str:
    return (
        f"A person decided on the paused run {first}; it resumed as run {result.run_id}, "
        "whose result this is (both are in run-repl's history)."
    )


def _call(path: str, args: list[Any]) -> str:
    text = ", ".join(json.dumps(a, ensure_ascii=False, default=str) for a in args)
    return f"{path}({text if len(text) <= 200 else text[:199] + '…'})"


def _waiting_words(result: RunResult, next_step: str) -> dict[str, Any]:
    """A paused run for a model: it waits (not a failure), what for, and what to call."""
    waiting = result.interruptions or []
    n = len(waiting)
    calls = "; ".join(_call(i.path, i.args) for i in waiting)
    return {
        "status": WAITING,
        "waiting": f"{n} call{'s' if n != 1 else ''} in this code "
        f"{'needs' if n == 1 else 'need'} a person's approval and {'was' if n == 1 else 'were'} "
        f"NOT run yet: {calls}.",
        "next": next_step,
        "run_id": result.run_id,
        "approval_ids": [i.id for i in waiting],
    }


def run_reply(
    result: RunResult,
    *,
    max_timeout_s: float,
    paused_next: str | None = None,
    paused_action: dict[str, Any] | None = None,
    waiting: bool = True,
    resumed_from: str | None = None,
) -> types.CallToolResult:
    """A run's result: its envelope, and words for a model. A paused run that a person
    will decide (`waiting`) is worded as waiting; one that cannot be (`waiting=False`:
    its approvals were not saved) as the failure it is."""
    result = for_tools(result, max_timeout_s)
    if result.status == "interrupted" and waiting and paused_next:
        words = _waiting_words(result, paused_next)
    else:
        words = (
            result.to_tool_output(paused_next=paused_next)
            if paused_next
            else result.to_tool_output()
        )
        if result.status == "interrupted":
            words["run_id"] = result.run_id
            words["approval_ids"] = [i.id for i in result.interruptions or []]
    if resumed_from is not None and resumed_from != result.run_id:
        words["run_id"] = result.run_id
        words["note"] = _resumed_note(resumed_from, result)
    data = envelope(result, paused_action, resumed_from=resumed_from)
    return reply(data, words, error=result.status == "error")


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
        f"resumes where it paused. Call approval_status with run_id {run_id!r} to get the "
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


# ---------------------------------------------------------------- the other tools
def page_reply(page: Page, items: list[Any]) -> types.CallToolResult:
    """A page of a stored value or log (`items`: the ones this reply holds)."""
    end = page.offset + len(items)
    has_more = end < page.total
    data = models.Page(
        ref=page.ref,
        path=page.path,
        offset=page.offset,
        items=items,
        total=page.total,
        has_more=has_more,
        next_offset=end if has_more else None,
        rest=page.rest,
    )
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
    return reply(models.dump(data), words)


def docs_reply(host: str, functions: list[dict[str, Any]], text: str) -> types.CallToolResult:
    """The host's declarations: as text, and by function."""
    data = models.Docs(
        host=host,
        functions=[models.FunctionDoc.model_validate(f) for f in functions],
        declarations=text,
    )
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=models.dump(data)
    )


def status_reply(
    state: Standing,
    *,
    wait_s: float,
    approve_command: Callable[[str], str],
    max_timeout_s: float,
    asked: str | None = None,
) -> types.CallToolResult:
    """Where a paused run stands: the final result once decided, else what it waits on.
    `asked`: the paused run the agent asked about (a resumed run has a run_id of its own)."""

    def standing(result: dict[str, Any] | None) -> dict[str, Any]:
        return models.dump(
            models.Standing(
                status=state.status,
                run_id=state.run_id,
                approvals=[approval_json(a) for a in state.approvals],
                result=result,
                note=state.note,
            )
        )

    if state.status == "done" and state.result is not None:
        result = for_tools(state.result, max_timeout_s)
        words = result.to_tool_output()
        words["run_id"] = result.run_id
        if asked is not None and asked != result.run_id:
            words["note"] = _resumed_note(asked, result)
        data = standing(envelope(result, resumed_from=asked))
        return reply(data, words, error=result.status == "error")
    if state.status == "ended":
        return reply(
            standing(envelope(state.result) if state.result is not None else None),
            {
                "ok": False,
                "error": f"The run will not finish: {state.note}. Nothing more will happen to it; "
                "run the snippet again if it still needs doing.",
            },
            error=True,
        )
    sentence, action = paused_words(state.run_id, state.approvals, wait_s, approve_command)
    data = standing(envelope(state.result, action) if state.result is not None else None)
    waiting = "; ".join(f"{call_text(a)}: {describe_state(a)}" for a in state.approvals)
    fresh = all(a.state() == "pending" for a in state.approvals)
    words = {
        "status": WAITING,
        "waiting": f"Still waiting: {waiting}."
        + (" These calls have NOT run yet." if fresh else ""),
        "next": sentence,
        "run_id": state.run_id,
        "approval_ids": [a.id for a in state.approvals],
    }
    return reply(data, words)


__all__ = [
    "WAITING",
    "approval_json",
    "docs_reply",
    "envelope",
    "error_reply",
    "for_tools",
    "not_saved_words",
    "page_reply",
    "paused_words",
    "reply",
    "run_reply",
    "status_reply",
    "wire_safe",
]
