"""Host-side values written as JSON data, part by part, for the envelope.

An interruption's payload and its call's arguments may hold any value that
crosses the boundary (BigInt, Map, Set, Date, cycles...), while the envelope
is JSON that a store keeps and a person or a model reads. Each part that JSON
cannot hold becomes the nearest JSON data, so the rest stays as it was:

    BigInt            its digits, as a JSON number (an `int` here: exact)
    Date              ISO text; an invalid one null (as JSON.stringify)
    undefined         null
    Set               an array of its members
    Map               an array of [key, value] pairs (keys of any type, in order)
    Uint8Array, ArrayBuffer, other typed arrays   an array of numbers
    RegExp            its text, "/a+/g"
    Error             {name, message, cause?}
    a cycle           "[Circular $.path]", the path of the part it points back to

A part used twice is written out twice (as JSON.stringify does), unless that
would write more than MAX_SHOWN_NODES values: then each repeat is
"[Shared $.path]", the path where it was written first.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from ..values import (
    NO_CAUSE,
    UNDEFINED,
    JSBigInt,
    JSDate,
    JSError,
    JSMap,
    JSRegExp,
    JSSet,
    JSTypedArray,
)
from . import codec
from .nesting import MAX_DEPTH, MAX_SHOWN_NODES, ValueTooDeep, check_depth, key_step

__all__ = ["as_json_data"]


class _TooMany(Exception):
    """Written out, the value has more than the budget of parts."""


def as_json_data(value: Any, levels: int = MAX_DEPTH) -> Any:
    """`value` as JSON data (see the module's table); a preview text only when it
    nests past `levels` or holds something no host value should (never a payload
    that is data)."""
    try:
        # The codec's own reading of the value: what the guest or a resumed host
        # function would get (dataclasses, enums, tuples... as the values they become).
        value = codec.decode(codec.encode(value, levels=levels), levels=levels)
    except Exception:
        pass  # not a value that crosses (a handle...): each part is written as it can be
    try:
        try:
            data = _Writer(shared=False).write(value, "$")
        except _TooMany:
            data = _Writer(shared=True).write(value, "$")
        check_depth(data, levels)
    except (ValueTooDeep, RecursionError):
        return codec.preview(value)
    return data


class _Writer:
    def __init__(self, *, shared: bool) -> None:
        self.shared = shared  # repeats as "[Shared ...]" markers
        self.open: dict[int, str] = {}  # containers being written: id -> path
        self.seen: dict[int, str] = {}  # containers written: id -> first path
        self.count = 0

    def write(self, v: Any, path: str) -> Any:
        self.count += 1
        if not self.shared and self.count > MAX_SHOWN_NODES:
            raise _TooMany
        if v is None or isinstance(v, bool | str):
            return v
        if isinstance(v, JSBigInt):
            return int(v)
        if isinstance(v, int | float):
            return v
        if v is UNDEFINED:
            return None
        if isinstance(v, dt.datetime | dt.date):
            return v.isoformat()
        if isinstance(v, JSDate):
            return _iso_of_ms(v.ms) if v.valid else None
        if isinstance(v, JSRegExp):
            return str(v)
        if isinstance(v, JSTypedArray):
            return [int(x) if isinstance(x, JSBigInt) else x for x in v.tolist()]
        if isinstance(v, bytes | bytearray):
            return list(v)
        if not isinstance(v, dict | list | tuple | set | frozenset | JSSet | JSMap | JSError):
            return codec.preview(v)
        key = id(v)
        if key in self.open:
            return f"[Circular {self.open[key]}]"
        if self.shared and key in self.seen:
            return f"[Shared {self.seen[key]}]"
        self.open[key] = self.seen[key] = path
        try:
            return self._container(v, path)
        finally:
            del self.open[key]

    def _container(self, v: Any, path: str) -> Any:
        if isinstance(v, dict):
            return {str(k): self.write(x, path + key_step(k)) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [self.write(x, f"{path}[{n}]") for n, x in enumerate(v)]
        if isinstance(v, JSMap):
            return [
                [self.write(k, f"{path}[{n}][0]"), self.write(x, f"{path}[{n}][1]")]
                for n, (k, x) in enumerate(v.pairs())
            ]
        if isinstance(v, JSError):
            out: dict[str, Any] = {"name": v.name, "message": v.message}
            if v.cause is not NO_CAUSE:
                out["cause"] = self.write(v.cause, path + ".cause")
            return out
        return [self.write(x, f"{path}[{n}]") for n, x in enumerate(v)]  # a set


def _iso_of_ms(ms: float) -> str:
    """A valid Date outside years 1-9999 as JavaScript's toISOString writes it
    ("+010000-01-01T00:00:00.000Z")."""
    days, rest = divmod(int(ms), 86_400_000)
    # Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
    z = days + 719_468
    era = math.floor(z / 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    sign = "-" if year < 0 else "+"
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return (
        f"{sign}{abs(year):06d}-{month:02d}-{day:02d}"
        f"T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"
    )
