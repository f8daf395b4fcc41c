"""A host call's arguments and result as a person reads them: decoded from the wire
text the call record keeps, and printed the way JavaScript would show them.

The wire tags what JSON cannot hold (`{"\\u0000": "d", "v": 1746435600000}` is a
Date): that is the engine's business, never a person's. Decoded, a Date reads
as `Date 2025-05-05T09:00:00.000Z`, a BigInt as `12n`, a Map as
`Map(1) {"a" => 1}`, undefined as `undefined`; objects and arrays are indented
as pretty JSON is, and strings have their hidden blanks marked as in approvals.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from ..sandbox.values import (
    NO_CAUSE,
    JSArrayBuffer,
    JSBigInt,
    JSDate,
    JSError,
    JSMap,
    JSRegExp,
    JSSet,
    JSTypedArray,
    JSUint8Array,
    _Undefined,
)
from ..sandbox.wire.codec import decode
from . import formats
from .approvals import marked_fragments
from .styled import Fragment, Line

INDENT = "  "
MAX_BYTES_SHOWN = 64  # of a byte array, listed; the count says how many there are


class NotDecoded(Exception):
    """The text is not a whole wire value (it was cut at the record's limit)."""


def decode_text(text: str) -> Any:
    """The value of a call record's `args_text` / `result_text` (a wire text without its
    first character); NotDecoded when it cannot be read whole."""
    try:
        return decode("R" + text)  # the full walk reads plain, tagged and shared values
    except Exception as exc:  # cut mid-value, or not wire at all: shown as it is
        raise NotDecoded(str(exc)) from exc


def _date(value: dt.datetime | dt.date) -> str:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return aware.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value.isoformat()


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 and math.copysign(1, value) < 0:
        return "-0"
    return formats.json_text(value)


class _Printer:
    def __init__(self) -> None:
        self.lines: list[Line] = [[]]
        self.active: set[int] = set()  # containers being printed: one met again is a cycle

    def put(self, *fragments: Fragment) -> None:
        self.lines[-1].extend(f for f in fragments if f[1])

    def newline(self, depth: int) -> None:
        self.lines.append([("", INDENT * depth)] if depth else [])

    def value(self, v: Any, depth: int) -> None:
        if v is None:
            self.put(("dim", "null"))
        elif isinstance(v, _Undefined):
            self.put(("dim", "undefined"))
        elif isinstance(v, bool):
            self.put(("info", "true" if v else "false"))
        elif isinstance(v, JSBigInt):
            self.put(("info", f"{int(v)}n"))
        elif isinstance(v, int | float):
            self.put(("info", _number(v)))
        elif isinstance(v, str):
            self.lines[-1].extend(marked_fragments(formats.json_text(v), "string"))
        elif isinstance(v, dt.datetime | dt.date):
            self.put(("decision", "Date "), ("info", _date(v)))
        elif isinstance(v, JSDate):
            self.put(
                ("decision", "Date "), ("error", "Invalid Date" if math.isnan(v.ms) else str(v.ms))
            )
        elif isinstance(v, JSRegExp):
            self.put(("info", f"/{v.source}/{v.flags}"))
        elif isinstance(v, JSUint8Array | JSArrayBuffer | bytes | bytearray):
            kind = "ArrayBuffer" if isinstance(v, JSArrayBuffer) else "Uint8Array"
            self._bytes(kind, bytes(v))
        elif isinstance(v, JSTypedArray):
            self._bytes(v.kind, bytes(v.data))
        elif id(v) in self.active:
            self.put(("warn", "[Circular]"))
        elif isinstance(v, JSError):
            self._error(v, depth)
        elif isinstance(v, JSMap):
            self._container(f"Map({len(v)}) ", "{", "}", list(v.items()), depth, arrow=True, of=v)
        elif isinstance(v, JSSet | set | frozenset):
            members = list(v.members if isinstance(v, JSSet) else v)
            self._container(f"Set({len(members)}) ", "[", "]", members, depth, of=v)
        elif isinstance(v, dict):
            self._container("", "{", "}", list(v.items()), depth, keyed=True, of=v)
        elif isinstance(v, list | tuple):
            self._container("", "[", "]", list(v), depth, of=v)
        else:
            self.put(("", formats.json_text(v)))

    def _bytes(self, kind: str, data: bytes) -> None:
        shown = ", ".join(str(b) for b in data[:MAX_BYTES_SHOWN])
        more = f", … {len(data) - MAX_BYTES_SHOWN:,} more" if len(data) > MAX_BYTES_SHOWN else ""
        self.put(("decision", f"{kind}({len(data):,}) "), ("", f"[{shown}{more}]"))

    def _error(self, v: JSError, depth: int) -> None:
        self.put(("error", f"{v.name}: "), ("", v.message))
        if v.cause is not NO_CAUSE:
            self.active.add(id(v))
            self.put(("dim", " { cause: "))
            self.value(v.cause, depth)
            self.put(("dim", " }"))
            self.active.discard(id(v))

    def _container(
        self,
        head: str,
        open_: str,
        close: str,
        entries: list[Any],
        depth: int,
        *,
        of: Any,
        keyed: bool = False,
        arrow: bool = False,
    ) -> None:
        if head:
            self.put(("decision", head))
        if not entries:
            self.put(("", open_ + close))
            return
        self.active.add(id(of))
        self.put(("", open_))
        for n, entry in enumerate(entries):
            self.newline(depth + 1)
            if keyed:
                key, item = entry
                self.lines[-1].extend(marked_fragments(formats.json_text(str(key)), "bold"))
                self.put(("", ": "))
            elif arrow:
                key, item = entry
                self.value(key, depth + 1)
                self.put(("", " => "))
            else:
                item = entry
            self.value(item, depth + 1)
            if n < len(entries) - 1:
                self.put(("", ","))
        self.newline(depth)
        self.put(("", close))
        self.active.discard(id(of))


def inspect_lines(value: Any) -> list[Line]:
    """`value` (as the codec decodes it) printed the way JavaScript would show it."""
    printer = _Printer()
    printer.value(value, 0)
    return printer.lines
