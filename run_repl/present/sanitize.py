"""The one rule for guest-derived text on its way to a terminal.

A snippet's logs, values, errors and source, a host's approval messages and
the arguments of its calls are untrusted. Written raw, a control character in
them could recolour the screen, move the cursor, rewrite a line the approver
already read, set the window title or the clipboard (OSC 52), or reorder what
is shown with a bidirectional override. So at the last write to a terminal,
every such character becomes a visible escape:

- C0 controls except newline and tab, DEL, and C1 controls (U+0080-U+009F,
  among them U+009B, a one-character CSI);
- the bidirectional controls U+061C, U+200E, U+200F, U+202A-U+202E and
  U+2066-U+2069;
- lone surrogates (U+D800-U+DFFF), which JavaScript strings may hold and no
  terminal encoding can write;
- every character a reader cannot see (`INVISIBLE`): Unicode's default-ignorable
  code points (zero-width characters, the BOM, the soft hyphen, variation
  selectors, Hangul fillers, tag characters, which carry hidden ASCII to a
  model), the other format characters, and the line and paragraph separators
  U+2028 and U+2029, which some screens break lines at and others do not.

Each becomes `\\uXXXX` (a character beyond U+FFFF, its UTF-16 pair
`\\udb40\\udc41`): the escape JSON and JavaScript read back as the same
character, and the one `json.dumps` already uses for C0 controls, so a
control character looks the same in a log line as in a value. The rule is
idempotent: `safe(safe(text)) == safe(text)`.

Newline and tab stay, for text that has lines (logs, values, sources). Text
that must stay on one line, such as an approval's message, marks them too
(`present.approvals.message_fragments`).
"""

from __future__ import annotations

import json
import re
from typing import Any

_INVISIBLE_BMP = (
    # Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) below U+10000...
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    # ... the other format characters (Cf), and the line and paragraph separators.
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\ufff9-\ufffb\u2028\u2029"
)
_INVISIBLE_ASTRAL = (  # the same beyond U+FFFF: tags, variation selectors 17-256, ...
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
    "\U000110bd\U000110cd\U00013430-\U0001345f"
)
INVISIBLE = _INVISIBLE_BMP + _INVISIBLE_ASTRAL
"""A character class (without brackets) of the characters a reader cannot see."""

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff"
UNSAFE = re.compile(f"[{_CONTROLS}{INVISIBLE}]")
"""Every character `safe` escapes."""

# The same, fast: `re` tests a class of characters below U+10000 by a bitmap, and one
# with ranges beyond by each range in turn (a 4 MB log took 4 times as long). Text
# rarely holds a character beyond U+FFFF: only then is the second class tried.
_UNSAFE_BMP = re.compile(f"[{_CONTROLS}{_INVISIBLE_BMP}]")
_ANY_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_UNSAFE_ASTRAL = re.compile(f"[{_INVISIBLE_ASTRAL}]")


def escape(char: str) -> str:
    """One character as `\\uXXXX`; beyond U+FFFF as its UTF-16 pair, as JSON writes it."""
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _escape(match: re.Match[str]) -> str:
    return escape(match.group())


def safe(text: str) -> str:
    """`text` with every character a terminal could act on, or a reader could not see,
    shown as `\\uXXXX`."""
    text = _UNSAFE_BMP.sub(_escape, text)
    if not text.isascii() and _ANY_ASTRAL.search(text):
        text = _UNSAFE_ASTRAL.sub(_escape, text)
    return text


def is_safe(text: str) -> bool:
    if _UNSAFE_BMP.search(text):
        return False
    return text.isascii() or not (_ANY_ASTRAL.search(text) and _UNSAFE_ASTRAL.search(text))


def safe_json(value: Any, *, indent: int | None = 2, default: Any = None) -> str:
    """JSON text for a terminal or a pipe: the same data as `json.dumps`, with
    every unsafe character (C1, DEL, bidi controls, invisible characters, lone
    surrogates) written as
    a `\\uXXXX` escape, so it is still valid JSON and reads back identical.

    Outside strings JSON is plain ASCII, and inside them a backslash is always
    written as `\\\\`, so a raw character found in the text is never part of an
    escape: replacing it with its escape keeps the document's meaning."""
    return safe(json.dumps(value, indent=indent, ensure_ascii=False, default=default))
