"""The parent's check of a snippet's text before any worker sees it."""

from __future__ import annotations

from typing import Any

from ..errors import ErrorCode
from ..process.frames import PRELUDE_LINE_BASE
from ..process.source import line_and_column
from ..result import RunErrorInfo, plain_error


def check_source(source: Any, max_source_bytes: int) -> RunErrorInfo | None:
    """Why `source` cannot run at all (too large, a NUL, a lone surrogate), or None."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError as exc:
        line, column = line_and_column(source, exc.start)
        return plain_error(
            ErrorCode.RUN_SYNTAX_ERROR,
            f"SyntaxError: the source holds a lone surrogate character (line {line}, column {column}).",
            line=line,
            column=column,
        )
    if size > max_source_bytes:
        return plain_error(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            f"The snippet is {size:,} bytes, over max_source_bytes ({max_source_bytes:,}).",
        )
    lines = source.count("\n") + 1
    if lines >= PRELUDE_LINE_BASE:
        return plain_error(
            ErrorCode.RUN_SOURCE_TOO_LARGE,
            f"The snippet has {lines:,} lines; at most {PRELUDE_LINE_BASE - 1:,} can run.",
        )
    nul = source.find("\x00")
    if nul >= 0:
        line, column = line_and_column(source, nul)
        return plain_error(
            ErrorCode.RUN_SYNTAX_ERROR,
            f"SyntaxError: the source holds a NUL character (line {line}, column {column}); "
            "write it as \\u0000 inside a string.",
            line=line,
            column=column,
        )
    return None
