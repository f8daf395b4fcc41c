"""Approvals in words: what is asked, every argument whole, how to decide later.

The approval promise says what a person is asked to approve is shown whole:
`argument_lines` never cuts an argument, gives each one's length, and points
out long runs of blanks (which can push the part that matters off screen).
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store.approvals.claims import stuck_message
from ..store.records import PendingApproval
from ..store.records import approval_message as approval_message  # one wording, the store's
from . import formats
from .sanitize import INVISIBLE
from .styled import Line, line, styled

WHITESPACE_RUN = 4
"""A run of at least this many blanks inside a string is shown as its length, inline."""
SESSION_CONFIRM = "yes"  # what "approve for the session" asks to be typed once more

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# Blanks a reader cannot count (JSON escapes tabs and newlines, so these are the ones
# left raw), characters that break a line somewhere (a message must stay on its one
# line), and characters a reader cannot see at all.
_BLANKS = "[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"
_BREAKS = "[\n\t\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]"
# The bidirectional controls are left to `sanitize.safe`: `\\u202e`, as in every other text.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = re.compile(
    rf"(?P<blank>{_BLANKS}{{{WHITESPACE_RUN},}})|(?P<invisible>{_BREAKS}|(?![{_BIDI}])[{INVISIBLE}])"
)
_BLANK_RUN = re.compile(rf"{_BLANKS}{{{WHITESPACE_RUN},}}")
_NAMED = {"\n": "newline", "\t": "tab"}


def _when(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment)) if moment else "?"


def describe_state(approval: PendingApproval, now: float | None = None) -> str:
    """One line on where an approval stands, for a person (plain text)."""
    state = approval.state(now)
    decided = (
        f"{approval.decision} by {approval.decided_by or 'someone'}"
        + (f" via {approval.decided_via}" if approval.decided_via else "")
        if approval.decision
        else ""
    )
    if state == "pending":
        return "pending" + (f" ({approval.note})" if approval.note else "")
    if state == "queued":
        return f"queued: {decided}, waiting for its run to resume"
    if state == "claimed":
        return f"claimed by {approval.claimed_by} ({decided or 'resumed with its batch'})"
    if state == "executing":
        return f"being resumed by {approval.claimed_by} since {_when(approval.executing_at)}"
    if state == "stuck":
        return "STUCK: " + stuck_message(approval)
    text: str = state
    if state == "approved" and approval.outcome:
        text += f" (ran: {approval.outcome}{' ' + approval.outcome_code if approval.outcome_code else ''})"
    if approval.note:
        text += f": {approval.note}"
    return text


def decided_words(approval: PendingApproval) -> str:
    """`approved by alice` (`via claude-code`), or "decided" when nobody is named."""
    if not approval.decision:
        return "decided"
    verb = "approved" if approval.decision == "approve" else "denied"
    by = f"{verb} by {approval.decided_by or 'someone'}"
    return by + (f" via {approval.decided_via}" if approval.decided_via else "")


def progress_words(approval: PendingApproval, now: float | None = None) -> str:
    """Where a run's approval stands, for the person whose run it is and who did not
    decide it (one line, plain text): who decided, where it is being resumed, how it
    ended. `approved by alice — resuming in alice@laptop pid 123`."""
    state = approval.state(now)
    decided = decided_words(approval)
    where = approval.claimed_by or "another process"
    if state == "pending":
        return "waiting for a decision" + (f" ({approval.note})" if approval.note else "")
    if state == "queued":
        return f"{decided} — waiting for its run to resume"
    if state == "claimed":
        return f"{decided} — about to resume in {where}"
    if state == "executing":
        return f"{decided} — resuming in {where} since {_when(approval.executing_at)}"
    if state == "stuck":
        return (
            f"{decided} — STUCK: its resume in {where} started {_when(approval.executing_at)} "
            "and never finished, so its calls may have run"
        )
    if state == "unfinished":
        note = f" ({approval.note})" if approval.note else ""
        return f"{decided} — unfinished in {where}, outcome unknown{note}"
    if state in ("approved", "denied"):
        return f"{decided} — resumed in {where}"
    return f"{decided} — {state}" + (f": {approval.note}" if approval.note else "")


def marked_fragments(text: str, style: str = "") -> Line:
    """`text` on one line, with each run of WHITESPACE_RUN+ blanks shown as `⟨30 spaces⟩`,
    each line break as `⟨newline⟩` (`⟨tab⟩`, `⟨U+2028⟩`, ...) and each invisible character
    as `⟨U+200B⟩`, in the `mark` style: nothing hides in plain sight, and nothing in it
    starts a line of its own."""
    out: Line = []
    position = 0
    for match in _HIDDEN.finditer(text):
        if match.start() > position:
            out.append((style, text[position : match.start()]))
        found = match.group()
        if match.lastgroup == "blank":
            what = "spaces" if set(found) == {" "} else "blanks"
            out.append(("mark", f"⟨{len(found):,} {what}⟩"))
        else:
            out.append(("mark", f"⟨{_NAMED.get(found) or f'U+{ord(found):04X}'}⟩"))
        position = match.end()
    if position < len(text):
        out.append((style, text[position:]))
    return out


def message_fragments(message: str, style: str = "bold") -> Line:
    """An approval's message as every front end shows it: ONE line, its line breaks and
    invisible characters marked (`marked_fragments`).

    The host words the message, but it may embed a snippet's argument
    (`f"Refund {order_id}?"`): on one line, that text can never print a line that
    passes for the question's own `call:` or `arg 1 of 1 (...)` lines."""
    return marked_fragments(message, style)


def json_fragments(text: str) -> Line:
    """A line of pretty JSON, its strings marked (`marked_fragments`); the indentation
    outside strings is JSON's own, not the guest's, and is left as it is."""
    out: Line = []
    position = 0
    for match in _JSON_STRING.finditer(text):
        if match.start() > position:
            out.append(("", text[position : match.start()]))
        out += marked_fragments(match.group(), "string")
        position = match.end()
    if position < len(text):
        out.append(("", text[position:]))
    return out


def _describe(value: Any) -> str:
    """An argument's type and size, as a person checks it."""
    if isinstance(value, str):
        return f"string, {formats.plural(len(value), 'character')}"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"number: {value:,}"  # digits a person can count
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return f"array, {formats.plural(len(value), 'item')}"
    if isinstance(value, dict):
        return f"object, {formats.plural(len(value), 'key')}"
    return f"JSON, {formats.plural(len(formats.json_text(value)), 'character')}"


def argument_lines(args: Any, *, indent: str = "  ") -> list[Line]:
    """Each argument whole, as pretty JSON under a heading with its type and size:
    `  arg 1 of 3 (string, 427 characters; 420 blanks in a row):`. Inside strings,
    runs of blanks are shown as their length and invisible characters by code
    point (`marked_fragments`), so what is approved is what is read."""
    values = list(args) if isinstance(args, list | tuple) else [args]
    if not values:
        return [styled("dim", f"{indent}no arguments")]
    out: list[Line] = []
    for n, value in enumerate(values, 1):
        text = formats.pretty_json(value)
        head = line(("dim", f"{indent}arg {n} of {len(values)} ({_describe(value)}"))
        runs = [
            len(run.group())
            for string in _JSON_STRING.finditer(text)
            for run in _BLANK_RUN.finditer(string.group())
        ]
        if runs:
            head.append(("warn bold", f"; {max(runs):,} blanks in a row"))
        head.append(("dim", "):"))
        out.append(head)
        out += [[("", indent + "  "), *json_fragments(t)] for t in text.split("\n")]
    return out


def approve_command(
    approval_id: str,
    *,
    host: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    action: str = "approve",
) -> str:
    """The shell command that decides later: `run-repl approvals approve ID`, with
    `--host` and `--data-dir` when they are not the defaults (pass None for those)."""
    command = f"run-repl approvals {action} {approval_id}"
    if host:
        command += f" --host {shlex.quote(host)}"
    if data_dir is not None:
        command += f" --data-dir {shlex.quote(str(data_dir))}"
    return command


def saved_hint(approval_id: str, command: str) -> Line:
    """`saved pending approval ID: <command>  (or deny)`."""
    return line(
        ("warn", f"saved pending approval {approval_id}: "),
        ("hint", command),
        ("dim", "  (or deny)"),
    )


def not_saved_hint(approval_id: str, why: str) -> list[Line]:
    """The approval exists only in this process: say so plainly."""
    return [
        line(("error bold", f"approval {approval_id} was NOT saved"), f": {why}"),
        styled(
            "hint",
            "  nobody can approve it after this process ends: fix the data directory "
            "(or pass --data-dir) and run the snippet again",
        ),
    ]


def left_pending_lines(commands: Iterable[str]) -> list[Line]:
    return [styled("warn", "left pending (saved in the store); to decide later:")] + [
        line("  ", ("hint", c), ("dim", "   (or deny)")) for c in commands
    ]


@dataclass
class SessionApprovals:
    """Host paths a person approved "for the rest of this session".

    Only approvals, never denials, and only for as long as the front end runs;
    adding one is a second, deliberate answer (see SESSION_CONFIRM)."""

    paths: set[str] = field(default_factory=set)

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def __len__(self) -> int:
        return len(self.paths)

    def add(self, path: str) -> None:
        self.paths.add(path)

    def clear(self) -> None:
        self.paths.clear()


def session_question(path: str) -> str:
    return (
        f"  approve every call to {path} for the rest of this session, without asking? "
        f"type {SESSION_CONFIRM} to confirm: "
    )


def session_note(path: str) -> Line:
    return styled("ok", f"  approved: you approved {path} for the rest of this session")


# ---------------------------------------------------------------- the store's approvals
def approval_list_lines(
    approvals: list[PendingApproval], *, describe: Callable[[PendingApproval], str] | None = None
) -> list[Line]:
    """`approvals list`: one aligned row each (id, state, host, call, message),
    the call with its arguments whole; with `describe`, a second line for a state
    that needs explaining (queued, being resumed, stuck and how to recover it)."""
    if not approvals:
        return []
    id_w = max(len(a.id) for a in approvals)
    status_w = max(len(a.state()) for a in approvals)
    host_w = max(len(a.host or "-") for a in approvals)
    out = []
    for a in approvals:
        state = a.state()
        out.append(
            line(
                a.id.ljust(id_w),
                "  ",
                (_status_style(state), state.ljust(status_w)),
                "  ",
                ("dim", (a.host or "-").ljust(host_w)),
                "  ",
                ("path", a.path),
                formats.args_text(a.args),
                ("dim", "  — "),
                *message_fragments(a.message, ""),
            )
        )
        if describe is not None and state not in ("pending", "approved", "denied"):
            out.append(styled("dim", f"    {describe(a)}"))
    return out


def _status_style(status: str) -> str:
    return {
        "pending": "warn",
        "approved": "ok",
        "denied": "error",
        "failed": "error",
        "stuck": "error",
        "unfinished": "error",
    }.get(status, "dim")


def approval_detail_lines(a: PendingApproval, *, when: str | None = None) -> list[Line]:
    """`approvals show`: the message, the call and each argument whole, the payload,
    and the snippet that made the call, numbered."""
    out = [
        line(
            ("bold", a.id),
            "  ",
            (_status_style(a.status), a.status),
            ("dim", f"  host {a.host or '-'}"),
        ),
        line("  ", *message_fragments(a.message)),
        line(("dim", "  call: "), ("path", a.path), formats.args_text(a.args)),
    ]
    if when:
        out.append(styled("dim", f"  asked: {when}"))
    out += argument_lines(a.args, indent="  ")
    out.append(line(("dim", "  payload: "), formats.json_text(a.payload)))
    out.append(styled("dim", "  snippet:"))
    source = a.source.split("\n")
    width = len(str(len(source)))
    out += [line(("dim", f"  {n:>{width}} | "), text) for n, text in enumerate(source, 1)]
    return out


def default_data_dir_flag(data_dir: Path, default: Path) -> Path | None:
    """`data_dir` when it is not the default one (so a command must name it), else None."""
    try:
        return None if data_dir.resolve() == default.resolve() else data_dir
    except OSError:
        return data_dir
