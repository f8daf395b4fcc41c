"""Is a snippet typed at the line REPL finished, and how deep is the cursor?

Enter runs the snippet only when it is complete: every bracket closed outside
strings, template literals and comments, and the last token not an operator
or a backslash that asks for more. This is a small scanner, not a parser: a
snippet it calls complete may still be a syntax error, which the engine then
reports with its line and column. When in doubt (a stray closing bracket) it
says complete, so the person is never stuck at a continuation prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")": "(", "]": "[", "}": "{"}
TEMPLATE = "`"  # stack entry: inside a template literal's text
SUBSTITUTION = "${"  # stack entry: code inside a template literal's ${ }
OPERATOR_CHARS = "+-*%=&|^!~<>?:"
WORD = re.compile(r"[\w$#@]+")
# After these a `/` starts a regular expression, not a division.
REGEX_AFTER_WORDS = frozenset(
    "return typeof instanceof in of new delete void throw case do else yield await".split()
)
INDENT = "  "


@dataclass
class Scan:
    stack: list[str] = field(default_factory=list)
    last: str = ""  # the last significant token outside strings and comments
    open_comment: bool = False
    overclosed: bool = False  # a closing bracket with no opener: a syntax error to show


def scan(source: str) -> Scan:
    state = Scan()
    stack = state.stack
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if stack and stack[-1] == TEMPLATE:
            if c == "\\":
                i += 2
            elif c == "`":
                stack.pop()
                state.last = "`"
                i += 1
            elif source.startswith("${", i):
                stack.append(SUBSTITUTION)
                state.last = "${"
                i += 2
            else:
                i += 1
            continue
        if c.isspace():
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            if end < 0:
                state.open_comment = True
                return state
            i = end + 2
        elif c in "'\"":
            i = _skip_string(source, i)
            state.last = c
        elif c == "`":
            stack.append(TEMPLATE)
            i += 1
        elif c in OPENERS:
            stack.append(c)
            state.last = c
            i += 1
        elif c in CLOSERS:
            opener = CLOSERS[c]
            if stack and (stack[-1] == opener or (c == "}" and stack[-1] == SUBSTITUTION)):
                stack.pop()
            else:
                state.overclosed = True
            state.last = c
            i += 1
        elif c == "/":
            regex_end = _regex_end(source, i) if _regex_may_start(state.last) else None
            if regex_end is None:
                state.last = "/"
                i += 1
            else:
                i = regex_end
                state.last = "regex"
        elif c in OPERATOR_CHARS:
            j = i
            while j < n and source[j] in OPERATOR_CHARS:
                j += 1
            state.last = source[i:j]
            i = j
        elif (match := WORD.match(source, i)) is not None:
            state.last = match.group()
            i = match.end()
        else:  # . , ; \ and anything else: one character
            state.last = c
            i += 1
    return state


def _skip_string(source: str, start: int) -> int:
    """The index after a '...' or "..." string. A raw newline ends it (a syntax
    error the engine will name); a backslash before the newline continues it."""
    quote = source[start]
    i = start + 1
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
        elif c == quote:
            return i + 1
        elif c == "\n":
            return i
        else:
            i += 1
    return len(source)


def _regex_may_start(last: str) -> bool:
    if not last:
        return True
    if last in REGEX_AFTER_WORDS:
        return True
    return last[-1] in "(,=:[!&|?{};+-*%<>~^"


def _regex_end(source: str, start: int) -> int | None:
    """The index after a regex literal starting at `start`, or None if the line ends first."""
    i = start + 1
    in_class = False
    while i < len(source):
        c = source[i]
        if c == "\n":
            return None
        if c == "\\":
            i += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            i += 1
            while i < len(source) and (source[i].isalnum() or source[i] == "_"):
                i += 1
            return i
        i += 1
    return None


def _wants_more(last: str) -> bool:
    """Does the snippet end in a token that needs something after it?"""
    if not last:
        return False
    if last in (",", ".", "${"):
        return True
    if last[-1] not in OPERATOR_CHARS and last != "/":
        return False
    if last.endswith(("++", "--")):
        return False  # x++ is a whole expression
    if last == "!":
        return False  # TypeScript's non-null assertion: value!
    if set(last) == {">"}:
        return False  # the end of a generic type: Array<number>
    return True


def is_complete(source: str) -> bool:
    if not source.strip():
        return True
    if source.rstrip().endswith("\\"):
        return False
    state = scan(source)
    if state.open_comment:
        return False
    if state.overclosed:
        return True
    if state.stack:
        return False
    return not _wants_more(state.last)


def indent_for(text_before_cursor: str) -> str:
    """Indentation for a new line: two spaces per open bracket, none inside a
    template literal's text (the spaces would become part of the string)."""
    state = scan(text_before_cursor)
    if state.open_comment:
        return _line_indent(text_before_cursor)
    if state.stack and state.stack[-1] == TEMPLATE:
        return ""
    return INDENT * len([s for s in state.stack if s != TEMPLATE])


def _line_indent(text: str) -> str:
    line = text.rsplit("\n", 1)[-1]
    return line[: len(line) - len(line.lstrip())]
