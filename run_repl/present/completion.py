"""Completing host paths as a snippet is typed, and which call the cursor is in.

From the host's description (`host.loader.describe`: the manifest the sandbox
checks every call against), so completion never offers what a run would
refuse. When nothing starts with what was typed, the offers are the sandbox's
own `did_you_mean` for it: completion and the error a run would give agree.

    complete(functions, "crm.get")        # crm.getAccount
    complete(functions, "crm.getAcount")  # crm.getAccount, marked close
    call_at(functions, "await crm.getAccount(id, ")  # (crm.getAccount, 1)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..host.loader import FunctionInfo
from ..sandbox.session.host_functions import did_you_mean
from . import formats

# A dotted name being typed, not a member of something else (`x.crm.`).
WORD = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\.?$")
SCAN_LIMIT = 4000  # how far back `call_at` reads: a call's arguments fit in far less


@dataclass(frozen=True)
class Candidate:
    """One offer: what replaces the word being typed, and what to show beside it."""

    text: str  # "crm.getAccount" (a function) or "crm." (a namespace)
    path: str
    kind: Literal["namespace", "function"]
    detail: str  # the JS signature, or how many functions a namespace holds
    summary: str = ""
    needs_approval: bool = False
    close: bool = False  # a close name for a mistyped one (the sandbox's did-you-mean)


def word_before(text: str) -> str | None:
    """The dotted name that ends at the end of `text`, if one does."""
    match = WORD.search(text[-200:])
    return match.group() if match else None


def _children(paths: Sequence[str], parent: str) -> dict[str, bool]:
    """The members under `parent` ("" for the top): name -> True if it is a function."""
    prefix = f"{parent}." if parent else ""
    out: dict[str, bool] = {}
    for path in paths:
        if not path.startswith(prefix):
            continue
        head, dot, _ = path[len(prefix) :].partition(".")
        out[head] = out.get(head, False) or not dot
    return out


def _candidate(
    functions: dict[str, FunctionInfo], paths: Sequence[str], path: str, *, close: bool = False
) -> Candidate:
    info = functions.get(path)
    if info is not None:
        return Candidate(
            path,
            path,
            "function",
            info.js_signature,
            info.summary,
            info.needs_approval,
            close,
        )
    count = sum(1 for p in paths if p.startswith(path + "."))
    return Candidate(
        path + ".",
        path,
        "namespace",
        f"namespace · {formats.plural(count, 'function')}",
        close=close,
    )


def complete(functions: Sequence[FunctionInfo], word: str, *, limit: int = 50) -> list[Candidate]:
    """What `word` (a dotted name being typed) can become: the members under its
    parent that start with its last part (case-sensitive ones first), else the
    sandbox's close names for it (also for an unknown parent: `CRM.getAccount`). A
    name already complete is offered nothing."""
    by_path = {f.path: f for f in functions}
    paths = list(by_path)
    parent, _, stem = word.rpartition(".")
    members = _children(paths, parent)
    exact = [name for name in members if name.startswith(stem)]
    folded = [n for n in members if n not in exact and n.lower().startswith(stem.lower())]
    names = sorted(exact) + sorted(folded)
    if names == [stem] and members.get(stem):
        return []  # `crm.getAccount` is typed whole
    prefix = f"{parent}." if parent else ""
    if names:
        return [_candidate(by_path, paths, prefix + n) for n in names[:limit]]
    if not stem and members:
        return []
    return [_candidate(by_path, paths, p, close=True) for p in did_you_mean(paths, word)]


@dataclass(frozen=True)
class Scan:
    """Where the end of a text is: in a string, in a comment, or in code (neither), and
    the calls still open there, innermost last, each with the argument the end is in."""

    in_string: bool
    in_comment: bool
    calls: tuple[tuple[str, int], ...]

    @property
    def in_code(self) -> bool:
        return not (self.in_string or self.in_comment)


_NAME_BEFORE = re.compile(r"([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*$")


def scan(text: str) -> Scan:
    """Read `text` as JavaScript far enough to know if its end is in a string or a
    comment, and which calls (by their dotted names) are open there."""
    text = text[-SCAN_LIMIT:]
    stack: list[tuple[str, int]] = []  # (callee, commas) per open bracket ("" if not a call)
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if ch == quote or (ch == "\n" and quote != "`"):
                quote = None
            i += 1
            continue
        if ch in "'\"`":
            quote = ch
        elif text.startswith("//", i):
            end = text.find("\n", i)
            if end < 0:
                return Scan(False, True, _open(stack))
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return Scan(False, True, _open(stack))
            i = end + 2
            continue
        elif ch in "([{":
            callee = ""
            if ch == "(":
                match = _NAME_BEFORE.search(text[max(0, i - 200) : i])
                callee = re.sub(r"\s+", "", match.group(1)) if match else ""
            stack.append((callee if ch == "(" else "", 0))
        elif ch in ")]}":
            if stack:
                stack.pop()
        elif ch == "," and stack:
            callee, commas = stack[-1]
            stack[-1] = (callee, commas + 1)
        i += 1
    return Scan(quote is not None, False, _open(stack))


def _open(stack: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(c for c in stack if c[0])


def call_at(functions: Sequence[FunctionInfo], text: str) -> tuple[FunctionInfo, int] | None:
    """The host function whose call's parentheses the end of `text` is in (the
    innermost), and which of its arguments (from 0), a string argument too; None
    outside any, and in a comment."""
    found = scan(text)
    if found.in_comment:
        return None
    by_path = {f.path: f for f in functions}
    for callee, commas in reversed(found.calls):
        if callee in by_path:
            return by_path[callee], commas
    return None


def parameters(info: FunctionInfo) -> list[str]:
    """`crm.getAccount(accountId, limit?)` -> ["accountId", "limit?"]."""
    inside = info.js_signature[len(info.path) :].strip()
    if not (inside.startswith("(") and inside.endswith(")")):
        return []
    return [p.strip() for p in inside[1:-1].split(",") if p.strip()]
