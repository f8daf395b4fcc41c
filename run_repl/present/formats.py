"""Small formats every front end shares: durations, sizes, JSON, places in text.

Durations have one function, `format_ms`, and the rest of the package calls
it through this module (`formats.format_ms(...)`), so a test that needs
stable output (a snapshot) patches that one name.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

from pydantic import ValidationError


def format_ms(ms: float) -> str:
    """A duration for people: `0.4 ms`, `12.3 ms`, `1.25 s`, `2 min 5 s`."""
    if not math.isfinite(ms):
        return "? ms"
    if ms < 1000:
        return f"{ms:.1f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def format_bytes(size: int) -> str:
    """`512 B`, `1.5 KiB`, `64.0 MiB`, `2.0 GiB`."""
    if size < 1024:
        return f"{size} B"
    value = float(size) / 1024
    units = ["KiB", "MiB", "GiB"]
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.1f} {units[0]}"


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 call`, `3 calls`, `1,204 items`."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def _default(value: Any) -> Any:
    """Python values from hosts as JSON reads them (the envelope's own conventions)."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes | bytearray):
        return list(value)
    return str(value)


def pretty_json(value: Any) -> str:
    """Indented JSON, characters as they are (sanitizing is the renderer's job)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=_default)


def json_text(value: Any) -> str:
    """One-line JSON: how a value reads inside a sentence."""
    return json.dumps(value, ensure_ascii=False, default=_default)


def args_text(args: Any) -> str:
    """A call's decoded arguments, whole, as the snippet would write them: `("a", 2)`."""
    if not isinstance(args, list | tuple):
        return f"({json_text(args)})" if args is not None else "()"
    return "(" + ", ".join(json_text(a) for a in args) + ")"


def line_column(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of `text[index]`."""
    index = max(0, min(index, len(text)))
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def first_error(exc: ValidationError, *, prefix: str = "") -> str:
    """A pydantic error as one line: `limits.timeout_ms: Input should be greater than 0`."""
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in (prefix, *first["loc"]) if p != "")
    more = len(errors) - 1
    tail = f" (and {plural(more, 'more problem')})" if more else ""
    return f"{where}: {first['msg']}{tail}" if where else f"{first['msg']}{tail}"
