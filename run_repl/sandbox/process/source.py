"""Turn a snippet into JavaScript that QuickJS evaluates to one async function.

The snippet is the body of that function: top-level `await` works, and the value of an
explicit `return`, else of the last expression statement, is the result. The wrapper's
header shares the user's first line, so user line N is line N of the code; columns are
mapped back by `PreparedSource.to_user_position`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .typescript import TypeScriptSyntaxError, strip_types

__all__ = [
    "WARM_UP_SOURCE",
    "WRAPPER_FUNCTION_NAME",
    "PreparedSource",
    "TypeScriptSyntaxError",
    "line_and_column",
    "prepare_source",
]

WRAPPER_FUNCTION_NAME = "__snippet__"

_HEADER = f'(async function {WRAPPER_FUNCTION_NAME}() {{"use strict";'
_FOOTER = "\n})"
_RETURN = "return "


@dataclass(frozen=True)
class PreparedSource:
    """JavaScript for QuickJS's `eval`, and the way back to the user's positions."""

    code: str
    user_lines: int
    # Where `return ` was inserted: 1-based code line and 0-based character column on
    # that code line (header included), or line 0 when nothing was inserted.
    _return_line: int = field(default=0, repr=False)
    _return_column: int = field(default=0, repr=False)
    _last_line_length: int = field(default=0, repr=False)

    def to_user_position(self, line: int, byte_column: int) -> tuple[int, int]:
        """Map QuickJS's (1-based line, 1-based UTF-8 byte column) to the user's text.

        Returns a 1-based line and a 1-based column counted in characters of the user's
        original source. Positions in the header map to column 1, inside the inserted
        `return ` to where it was inserted, and past the user's last line (the footer) to
        the end of that line.
        """
        if line < 1:
            return 1, 1
        if line > self.user_lines:
            return self.user_lines, self._last_line_length + 1
        text = self._code_lines[line - 1]
        encoded = text.encode("utf-8")
        offset = max(byte_column - 1, 0)
        if offset <= len(encoded):
            # A column inside a multi-byte character lands on that character.
            column = len(encoded[:offset].decode("utf-8", errors="ignore"))
        else:
            column = len(text) + offset - len(encoded)
        if line == self._return_line and column >= self._return_column:
            column = max(column - len(_RETURN), self._return_column)
        if line == 1:
            column = max(column - len(_HEADER), 0)
        return line, column + 1

    @functools.cached_property
    def _code_lines(self) -> list[str]:
        return self.code.split("\n")

    def to_wire(self) -> dict[str, int]:
        """What `from_wire` needs besides the code (the worker prepares, the parent maps)."""
        return {
            "user_lines": self.user_lines,
            "return_line": self._return_line,
            "return_column": self._return_column,
            "last_line_length": self._last_line_length,
        }

    @classmethod
    def from_wire(cls, fields: Mapping[str, Any], code: str) -> PreparedSource:
        """Rebuild what a worker prepared; ValueError for fields that are not counts."""
        values: list[Any] = [fields.get(k) for k in ("user_lines", "return_line", "return_column")]
        values.append(fields.get("last_line_length"))
        if not all(type(v) is int and 0 <= v for v in values) or not isinstance(code, str):
            raise ValueError("a prepared source needs counts for its positions")
        user_lines, return_line, return_column, last_line_length = values
        return cls(code, user_lines, return_line, return_column, last_line_length)


# What a worker prepares before any run comes, to warm what preparing touches: the
# parser, the queries' first run, type annotations and the last expression's return.
WARM_UP_SOURCE = "type Row = { id: number }\nconst rows: Row[] = [{ id: 1 }]\nrows.length as number"


@functools.lru_cache(maxsize=256)
def prepare_source(source: str) -> PreparedSource:
    """Strip types and wrap `source`; raise `TypeScriptSyntaxError` for what needs compiling.

    Cached by source text, because replaying a session prepares the same sources again.
    """
    stripped = strip_types(source)
    body = stripped.code
    return_line = return_column = 0
    insert_at = stripped.last_expression_start
    if insert_at is not None:
        body = body[:insert_at] + _RETURN + body[insert_at:]
        return_line = body.count("\n", 0, insert_at) + 1
        return_column = insert_at - (body.rfind("\n", 0, insert_at) + 1)
        if return_line == 1:
            return_column += len(_HEADER)
    last_line_length = len(source) - (source.rfind("\n") + 1)
    return PreparedSource(
        code=_HEADER + body + _FOOTER,
        user_lines=source.count("\n") + 1,
        _return_line=return_line,
        _return_column=return_column,
        _last_line_length=last_line_length,
    )


def line_and_column(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of `text[index]`."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1
