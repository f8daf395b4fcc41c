"""Styled text without a terminal: lines of (style, text) fragments.

Everything in `run_repl.present` words things as `Line`s: a list of
`(style, text)` pairs, the shape of prompt-toolkit's `FormattedText`. A style
is a space-separated list of the names below, never a colour or an escape
sequence; each front end maps the names to its own look (Rich styles for the
CLI, prompt-toolkit classes for the line REPL, the app theme in the IDE).
Text is plain: renderers pass it through `sanitize.safe` as they write it.

Style names:

    ok        a success (green)          error     a failure (red)
    warn      needs attention (yellow)   info      neutral news (cyan)
    dim       secondary text             bold      emphasis
    path      a host function's path     decision  an approval decision (magenta)
    caret     the ^ under an error       hint      what to do next (cyan)
    string    a string in JSON (green)   mark      what hides in plain sight: a run
                                                   of blanks, an invisible character
    log.debug log.log log.info log.warn log.error    a console line's level
"""

from __future__ import annotations

from collections.abc import Iterable

Fragment = tuple[str, str]
"""(style names, text)."""
Line = list[Fragment]
"""One line of output, without its newline."""

STYLE_NAMES = (
    "ok",
    "error",
    "warn",
    "info",
    "dim",
    "bold",
    "path",
    "decision",
    "caret",
    "hint",
    "string",
    "mark",
    "log.debug",
    "log.log",
    "log.info",
    "log.warn",
    "log.error",
)


def line(*parts: str | Fragment) -> Line:
    """A line from plain strings and (style, text) fragments: `line("a ", ("ok", "b"))`."""
    return [
        ("", p) if isinstance(p, str) else p for p in parts if (p if isinstance(p, str) else p[1])
    ]


def styled(style: str, text: str) -> Line:
    return [(style, text)] if text else []


def plain(line: Line) -> str:
    """The line's text, without styles."""
    return "".join(text for _, text in line)


def plain_lines(lines: Iterable[Line]) -> str:
    return "\n".join(plain(x) for x in lines)


def indent(lines: Iterable[Line], prefix: str = "  ") -> list[Line]:
    return [[("", prefix), *x] for x in lines]


def text_lines(text: str, style: str = "") -> list[Line]:
    """Each line of `text` as a line of one fragment."""
    return [[(style, t)] if t else [] for t in text.split("\n")]
