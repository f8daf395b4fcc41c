"""Guest text made harmless for the screen: the IDE's one rule, for every guest-derived string.

Logs, call arguments, error messages, approval messages and values come from
untrusted snippets (and host data). Control characters (C0, DEL, C1) and the
bidirectional controls that reorder what a person reads (U+202A-U+202E,
U+2066-U+2069, and the marks U+200E, U+200F, U+061C) are shown as visible
escapes, never written raw.

(`run_repl/present/` will own this rule for every front end; until it lands,
this is the IDE's single copy.)
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_NEWLINES = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe_text(text: str) -> str:
    """One line fit for the screen: tabs expanded, every control and bidi character escaped."""
    if "\t" in text:
        text = text.expandtabs(4)
    return _UNSAFE.sub(_escape, text)


def safe_lines(text: str) -> str:
    """Like `safe_text`, but newlines stay line breaks (multi-line logs, messages, stacks)."""
    if "\t" in text:
        text = text.expandtabs(4)
    return _UNSAFE_KEEP_NEWLINES.sub(_escape, text)
