"""Lines as prompt-toolkit formatted text, for the line REPL.

As ptpython's printer does, the REPL prints `FormattedText` built from
fragments, never ANSI escape strings parsed back. Every fragment's text goes
through `sanitize.safe` here, at the last step before the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable

from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.styles import Style

from .sanitize import safe
from .styled import STYLE_NAMES, Line

PTK_STYLE = Style.from_dict(
    {
        "ok": "ansigreen",
        "error": "ansired",
        "warn": "ansiyellow",
        "info": "ansicyan",
        "dim": "#888888",
        "bold": "bold",
        "path": "bold",
        "decision": "ansimagenta",
        "caret": "ansired bold",
        "hint": "ansicyan",
        "string": "ansigreen",
        "mark": "bold reverse ansiyellow",
        "log.debug": "#888888",
        "log.info": "ansicyan",
        "log.warn": "ansiyellow",
        "log.error": "ansired",
    }
)


def _classes(names: str) -> str:
    return " ".join(f"class:{n}" for n in names.split() if n in STYLE_NAMES)


def to_formatted_text(lines: Iterable[Line], *, color: bool = True) -> FormattedText:
    """The lines, each ended by a newline; without `color`, no styles at all."""
    out: list[tuple[str, str]] = []
    for x in lines:
        for style, text in x:
            out.append((_classes(style) if color and style else "", safe(text)))
        out.append(("", "\n"))
    return FormattedText(out)
