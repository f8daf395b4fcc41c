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
  terminal encoding can write.

Each becomes `\\uXXXX`: the escape JSON, JavaScript and Python all read back
as the same character, and the one `json.dumps` already uses for C0 controls,
so a control character looks the same in a log line as in a value. The rule
is idempotent: `safe(safe(text)) == safe(text)`.
"""

from __future__ import annotations

import json
import re
from typing import Any

UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe(text: str) -> str:
    """`text` with every character a terminal could act on shown as `\\uXXXX`."""
    return UNSAFE.sub(_escape, text)


def is_safe(text: str) -> bool:
    return UNSAFE.search(text) is None


def safe_json(value: Any, *, indent: int | None = 2, default: Any = None) -> str:
    """JSON text for a terminal or a pipe: the same data as `json.dumps`, with
    every unsafe character (C1, DEL, bidi controls, lone surrogates) written as
    a `\\uXXXX` escape, so it is still valid JSON and reads back identical.

    Outside strings JSON is plain ASCII, and inside them a backslash is always
    written as `\\\\`, so a raw character found in the text is never part of an
    escape: replacing it with its escape keeps the document's meaning."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=default)
    return UNSAFE.sub(_escape, text)
