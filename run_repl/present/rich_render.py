"""Lines as Rich text: the CLI writes them, the IDE can show them in any widget.

Sanitizing happens here, at the last step before a terminal: every fragment's
text goes through `sanitize.safe`, whatever produced it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from .color import color_enabled
from .sanitize import safe
from .styled import Line
from .wrapping import wrap_lines

RICH_STYLES: Mapping[str, str] = {
    "ok": "green",
    "error": "red",
    "warn": "yellow",
    "info": "cyan",
    "dim": "dim",
    "bold": "bold",
    "path": "bold",
    "decision": "magenta",
    "caret": "bold red",
    "hint": "cyan",
    "string": "green",
    "mark": "bold reverse yellow",
    "log.debug": "dim",
    "log.log": "",
    "log.info": "cyan",
    "log.warn": "yellow",
    "log.error": "red",
}


def rich_style(names: str, styles: Mapping[str, str] = RICH_STYLES) -> str:
    """The Rich style for space-separated style names (unknown names add nothing)."""
    return " ".join(s for s in (styles.get(n, "") for n in names.split()) if s)


def to_text(line: Line, styles: Mapping[str, str] = RICH_STYLES) -> Text:
    """One line as a Rich `Text`, its texts sanitized."""
    text = Text()
    for style, part in line:
        text.append(safe(part), style=rich_style(style, styles) if style else None)
    return text


def lines_to_text(lines: Iterable[Line], styles: Mapping[str, str] = RICH_STYLES) -> Text:
    """Several lines as one `Text` (joined by newlines), for a Static or a cell."""
    return Text("\n").join(to_text(x, styles) for x in lines)


class WrappedLines:
    """Lines for a widget that wraps them at its own width (an IDE panel, resized at
    will): cut at the width they are drawn in, each wrapped row marked
    (`present.wrapping`), so no row of a snippet's text passes for a line of its own."""

    def __init__(self, lines: Iterable[Line], styles: Mapping[str, str] = RICH_STYLES) -> None:
        self.lines = list(lines)
        self.styles = styles

    @property
    def plain(self) -> str:
        """The lines' text, unwrapped."""
        return lines_to_text(self.lines, self.styles).plain

    def __str__(self) -> str:
        return self.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        for row in wrap_lines(self.lines, options.max_width):
            text = to_text(row, self.styles)
            text.no_wrap = True  # cut to fit already: Rich must not wrap it again
            yield text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((to_text(x).cell_len for x in self.lines), default=0)
        return Measurement(min(widest, 1), min(widest, options.max_width))


def terminal_width(stream: Any) -> int | None:
    """The width of the terminal `stream` writes to; None when it is not a terminal
    (a pipe or a file: nothing wraps what is written there)."""
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit the process itself; the front end decides what a closed
        # pipe means (the CLI: stop quietly), so hand it the error.
        self.quiet = True
        raise BrokenPipeError(32, "Broken pipe")


class TerminalWriter:
    """Writes lines to one stream (stdout or stderr), coloured when `color_enabled`.

    Long lines are not wrapped (a pipe gets them whole; a terminal wraps them
    itself), and no markup, emoji or highlighting is interpreted in the text."""

    def __init__(self, stream: IO[str], *, color: bool | None = None) -> None:
        self.stream = stream
        self.color = color_enabled(stream) if color is None else color
        self.console = _Console(
            file=stream,
            force_terminal=self.color,
            no_color=not self.color,
            color_system="auto" if self.color else None,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=True,
        )

    def lines(self, lines: Iterable[Line]) -> None:
        for x in lines:
            self.console.print(to_text(x), soft_wrap=True)
        self.stream.flush()

    def line(self, line: Line) -> None:
        self.lines([line])

    def question(self, lines: Iterable[Line]) -> None:
        """An approval question: on a terminal, wrapped here at its width with every
        wrapped row marked (`present.wrapping`), not by the terminal, which could
        start a row with a snippet's text; to a pipe or a file, its lines whole."""
        self.lines(wrap_lines(lines, terminal_width(self.stream)))

    def text(self, text: str) -> None:
        """Plain text (a JSON document, say), sanitized, then a newline."""
        self.stream.write(safe(text) + "\n")
        self.stream.flush()


def writer_for(stream: Any) -> TerminalWriter:
    return TerminalWriter(stream)
