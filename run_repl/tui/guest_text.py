"""Guest text made harmless for the IDE's screen: `present.sanitize.safe`, the one rule
of every front end, fitted to the two shapes the IDE draws.

Logs, call arguments, error messages, approval messages and values come from
untrusted snippets (and host data): control characters, bidirectional
controls and lone surrogates become visible `\\uXXXX` escapes (see
`run_repl/present/sanitize.py`). Tabs are expanded first, so columns line up.
"""

from __future__ import annotations

from ..present.sanitize import safe


def safe_lines(text: str) -> str:
    """Guest text whose newlines stay line breaks (multi-line logs, messages, stacks)."""
    return safe(text.expandtabs(4) if "\t" in text else text)


def safe_text(text: str) -> str:
    """Guest text drawn on one line: a newline in it is shown as its escape too."""
    return safe_lines(text).replace("\n", "\\u000a")
