"""`--approve-via client`: the MCP client's user decides, through elicitation.

The default is the terminal: a person decides in run-repl. With this option,
and a client that supports form elicitation on a connection that lets the
server ask (the 2025 handshake protocol), the waiting `run` call also asks
the client's user about each pending call, showing it whole. Their answer is
recorded through the store's flow like any other (`ws.decide`: claims, at
most once), so this process resumes the run; a person in the terminal can
still decide first, and then the question is withdrawn.

Only an explicit choice decides: "approve" approves; "deny", or declining
the form, denies (a denial runs nothing); dismissing it leaves the call to
the terminal.

Whose answer counts (no agent approves its own call): over stdio the client
is the app the person launched run-repl from, so their answer is theirs (the
settings' name). Over HTTP anyone who reaches the port is "the client", so an
answer counts only from an authenticated principal that `[approvals.deciders]`
names for that call; the server refuses `--approve-via client` at start when
no principal could be (`http_rules`). The audit keeps who decided
(`decided_by`) and, beside it, the channel (`decided_via`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from ..present.approvals import argument_lines, message_fragments
from ..present.sanitize import safe
from ..present.styled import plain
from ..store import ApprovalConflict, ApprovalRefused, Deciders, PendingApproval, StoreError
from ..workspace import Workspace
from .approval_wait import Standing

MAX_SOURCE_LINES = 40  # of the snippet, for context; the call itself is always shown whole

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "description": "approve: the call runs now. deny: it does not run, and the snippet "
            "gets RUN_APPROVAL_DENIED.",
            "enum": ["approve", "deny"],
            "enumNames": ["Approve: run this call", "Deny: do not run it"],
        }
    },
    "required": ["decision"],
}


def can_ask(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this call's client can be asked: form elicitation, and a channel for it."""
    session = ctx.session
    capabilities = session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None or not session.can_send_request:
        return False
    # A client that declares elicitation without modes supports forms (the 2025-06 shape).
    return elicitation.form is not None or elicitation.url is None


def question(approval: PendingApproval) -> str:
    """What the client's user is asked: the call and every argument whole, then the snippet."""
    args = approval.args if isinstance(approval.args, list) else [approval.args]
    lines = [
        "run-repl: an AI agent's snippet wants to make a call that needs your approval.",
        "",
        safe(plain(message_fragments(approval.message))),  # one line, whatever it embeds
        "",
        f"Call: {approval.path}, {len(args)} argument{'s' if len(args) != 1 else ''}:",
    ]
    # The present layer's words for arguments: blank runs and invisible characters shown.
    lines += [safe(plain(part)) for part in argument_lines(approval.args)]
    source = approval.source.split("\n")
    lines += ["", "The snippet:"]
    # Numbered, as `approvals show` numbers them: a comment in the snippet can hold any
    # text, and no line of it may pass for the call's lines above.
    width = len(str(min(len(source), MAX_SOURCE_LINES)))
    lines += [f"  {n:>{width}} | {safe(t)}" for n, t in enumerate(source[:MAX_SOURCE_LINES], 1)]
    if len(source) > MAX_SOURCE_LINES:
        lines.append(
            f"  ... {len(source) - MAX_SOURCE_LINES} more lines (`run-repl approvals show {approval.id}`)"
        )
    lines += ["", f"Approval {approval.id}. Dismiss this to decide in run-repl instead."]
    return "\n".join(lines)


def answer_of(result: types.ElicitResult) -> bool | None:
    """True approves, False denies, None leaves it undecided."""
    if result.action == "accept":
        decision = (result.content or {}).get("decision")
        if decision == "approve":
            return True
        if decision == "deny":
            return False
        return None  # a form without a choice decides nothing
    if result.action == "decline":
        return False
    return None


def http_refusal(principals: list[str], deciders: dict[str, list[str]]) -> str | None:
    """Why `--approve-via client` cannot be offered over HTTP with these principals
    (None: it can): some principal must be one `[approvals.deciders]` names."""
    named = {n.casefold() for names in deciders.values() for n in names}
    if any(p.casefold() in named for p in principals):
        return None
    if not principals:
        return (
            "--approve-via client over --http needs credentials: over HTTP any process that "
            'reaches the port is "the client", and would approve its own calls. An answer '
            "counts only from an authenticated principal that [approvals.deciders] names."
        )
    return (
        "--approve-via client over --http: no principal of the tokens "
        f"({', '.join(principals)}) is named in [approvals.deciders], so no client's answer "
        "could count (an agent must not approve its own call). Name the person's principal "
        'there (e.g. "documents" = ["alice"]), or leave --approve-via client out.'
    )


class ClientApprovals:
    """Asks the client's user about a waiting run's calls, one at a time."""

    def __init__(
        self,
        ws: Workspace,
        ctx: ServerRequestContext[Any],
        *,
        transport: str = "stdio",
        principal: str | None = None,
    ) -> None:
        self.ws = ws
        self.ctx = ctx
        self.asked: set[str] = set()
        self.states: asyncio.Queue[Standing] = asyncio.Queue()
        self.deciding: asyncio.Future[Any] | None = None  # a decision being carried out here
        client = ctx.session.client_params.client_info.name if ctx.session.client_params else None
        # The policy judges who answered; the audit keeps, beside it, the channel.
        self.via = f"MCP client {client or '(unnamed)'} over {transport}"
        # Over HTTP the answer is the principal's, and counts only where the policy names
        # it; over stdio it is the person's who launched it (the settings' name).
        self.http = transport == "http"
        self.approver = principal if self.http else None
        self.deciders = Deciders(dict(ws.settings.approvals.deciders))
        self.refused: list[str] = []  # decisions the approvals policy refused, as said

    def may_answer(self, approval: PendingApproval) -> bool:
        if not self.http:
            return True
        rule = self.deciders.rule_for(approval.path)
        return (
            self.approver is not None
            and rule is not None
            and self.approver.casefold() in {n.casefold() for n in rule[1]}
        )

    def heard(self, state: Standing) -> None:
        """The waiting call's latest reading of the run (what to ask about next)."""
        self.states.put_nowait(state)

    async def ask_while_waiting(self) -> None:
        """Ask about each pending call of each new reading, until cancelled."""
        while True:
            state = await self.states.get()
            if state.status == "waiting":
                await self.ask(state)

    async def ask(self, state: Standing) -> None:
        """Ask about each pending approval of `state` not asked yet; record the answers."""
        for approval in state.approvals:
            if approval.id in self.asked or approval.state() != "pending":
                continue
            self.asked.add(approval.id)
            if not self.may_answer(approval):
                continue  # not this principal's to decide: a person decides in run-repl
            result = await self.ctx.session.elicit_form(
                question(approval), DECISION_SCHEMA, related_request_id=self.ctx.request_id
            )
            answer = answer_of(result)
            if answer is not None:
                await self._decide(approval.id, answer)

    async def _decide(self, approval_id: str, answer: bool) -> None:
        # The resume runs to its end even if this call ends meanwhile (a resume cut
        # short leaves its approvals unfinished): its own task, awaited through a shield.
        kwargs: dict[str, Any] = {"via": self.via}
        if self.approver is not None:
            kwargs["approver"] = self.approver
        # This server started the run and holds the agent's call: it resumes here.
        self.deciding = asyncio.ensure_future(
            self.ws.dispatch({approval_id: answer}, started_here=True, **kwargs)
        )
        try:
            await asyncio.shield(self.deciding)
        except ApprovalRefused as exc:
            # Nothing was recorded: the call's answer says why (the approval still waits
            # for someone the policy names), and so does the client's log now.
            self.refused.append(str(exc))
            with contextlib.suppress(Exception):
                await self.ctx.session.send_log_message(
                    "warning", str(exc), related_request_id=self.ctx.request_id
                )
        except (ApprovalConflict, StoreError, KeyError):
            pass  # decided elsewhere first: the waiting call reads where it stands

    async def settled(self) -> None:
        """Wait until a decision being carried out here has finished (its resume included)."""
        if self.deciding is not None and not self.deciding.done():
            await asyncio.wait({self.deciding})


__all__ = [
    "DECISION_SCHEMA",
    "ClientApprovals",
    "answer_of",
    "can_ask",
    "http_refusal",
    "question",
]
