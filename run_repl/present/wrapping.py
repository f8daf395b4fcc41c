"""The approval question wrapped at a known width, each wrapped row visibly marked.

A line longer than the screen wraps, and a wrapped row can begin with any text
the line holds: a snippet's argument in a message could put `  call: ...` or
`arg 1 of 1 (string, ...)` exactly where a row starts, passing for the
question's own lines. So the question is not left to the terminal (or a widget)
to wrap: each line is cut here, at the width it is shown in, and every row after
a line's first begins with the line's own indent and CONTINUATION. A row that
starts without the mark is the start of one of the question's lines; text from
the snippet never starts one.

Cut by terminal cells (a wide character takes two), after `sanitize.safe` (an
escape is as wide as it is shown); tabs become the spaces they stand for.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from rich.cells import cell_len

from .sanitize import safe
from .styled import Line

CONTINUATION = "↪ "
"""What begins every wrapped row: the row goes on with the line above."""
CONTINUATION_STYLE = "dim"
MIN_TEXT = 8
"""The fewest cells of text a wrapped row keeps (the indent shrinks first)."""


def _untabbed(line: Line) -> Line:
    """The line with every fragment sanitized and its tabs expanded (to the next
    multiple of 8 columns of the whole line)."""
    out: Line = []
    column = 0
    for style, text in line:
        text = safe(text)
        if "\t" in text:
            parts = []
            for ch in text:
                if ch == "\t":
                    spaces = 8 - column % 8
                    parts.append(" " * spaces)
                    column += spaces
                else:
                    parts.append(ch)
                    column += cell_len(ch)
            text = "".join(parts)
        else:
            column += cell_len(text)
        out.append((style, text))
    return out


def _indent_of(line: Line) -> str:
    text = "".join(t for _, t in line)
    return text[: len(text) - len(text.lstrip(" "))]


def _cuts(text: str, width: int, room_after: int) -> list[int]:
    """Where the rows of `text` start (after the first): each row at most its room of
    cells, cut after a blank in its last third when it has one (words stay whole, as
    people read them), else where the room ends."""
    cuts: list[int] = []
    start, room, used = 0, width, 0
    # One cell each (most text): by arithmetic, row by row. Not `cell_len(text) ==
    # len(text)`: a mark of no width and a character of two add up to the same.
    if text.isascii():
        while len(text) - start > room:
            i = start + room
            blank = text.rfind(" ", start + (room * 2) // 3, i)
            words = blank >= start and blank + 1 < i and text[start:blank].strip()
            start, room = (blank + 1 if words else i), room_after
            cuts.append(start)
        return cuts
    for i, ch in enumerate(text):
        cells = cell_len(ch)
        if used + cells > room and i > start:
            blank = text.rfind(" ", start + (room * 2) // 3, i)
            # Not within the row's leading blanks (an indent): a row is never all blank.
            words = blank >= start and blank + 1 < i and text[start:blank].strip()
            cut = blank + 1 if words else i
            cuts.append(cut)
            start, room = cut, room_after
            used = sum(cell_len(c) for c in text[cut:i])
        used += cells
    return cuts


def wrap_line(line: Line, width: int) -> list[Line]:
    """`line` as rows of at most `width` cells; each row after the first starts
    with the line's indent and CONTINUATION."""
    line = _untabbed(line)
    text = "".join(t for _, t in line)
    if width <= 0 or cell_len(text) <= width:
        return [line]
    mark = cell_len(CONTINUATION)
    indent = _indent_of(line)[: max(0, width - mark - MIN_TEXT)]
    prefix: Line = [("", indent)] if indent else []
    prefix.append((CONTINUATION_STYLE, CONTINUATION))
    bounds = [0, *_cuts(text, width, max(1, width - len(indent) - mark)), len(text)]
    rows: list[Line] = []
    at = 0  # where the fragment `line[0]` starts in `text`
    fragments = list(line)
    for n, (begin, stop) in enumerate(pairwise(bounds)):
        row: Line = list(prefix) if n else []
        while fragments and at < stop:
            style, part = fragments[0]
            lo, hi = max(begin, at), min(stop, at + len(part))
            if hi > lo:
                row.append((style, part[lo - at : hi - at]))
            if at + len(part) <= stop:
                fragments.pop(0)
                at += len(part)
            else:
                break
        rows.append(row)
    return rows


def wrap_lines(lines: Iterable[Line], width: int | None) -> list[Line]:
    """Every line wrapped at `width` (`wrap_line`); None: as they are (a pipe, a file:
    nothing wraps them, so nothing needs marking)."""
    if width is None:
        return list(lines)
    return [row for x in lines for row in wrap_line(x, width)]


def row_texts(rows: Iterable[Line]) -> list[str]:
    return ["".join(t for _, t in row) for row in rows]


__all__ = ["CONTINUATION", "row_texts", "wrap_line", "wrap_lines"]
