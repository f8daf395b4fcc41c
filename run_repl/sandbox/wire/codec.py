"""The wire codec for values crossing between the guest and host functions.

One JSON text per transfer (never node by node). Plain JSON travels as
itself; other values are objects tagged with the key "\\u0000". The first
character says how much decoding is needed:

    J  plain JSON         (json.loads, nothing more)
    T  tagged values      (json.loads with an object hook)
    R  tagged, with shared references or cycles (a full walk)

The guest side of this codec is `encodeWire`/`decodeWire` in guest/prelude.js.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import json
import math
import re
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..errors import CodecError, HostResultTooLarge
from ..handles import HandleRef, HandleTable, is_handle
from ..values import (
    NO_CAUSE,
    UNDEFINED,
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
    python_set_or_jsset,
)
from .nesting import MAX_DEPTH, ValueTooDeep, check_depth, key_step

TAG = "\x00"
MAX_SAFE = 2**53 - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MIN_DATE_MS = (dt.datetime(1, 1, 1, tzinfo=dt.UTC) - _EPOCH) // dt.timedelta(milliseconds=1)
_MAX_DATE_MS = (
    dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC) - _EPOCH
) // dt.timedelta(milliseconds=1)


# ------------------------------------------------------------------ decoding


def _date_from_ms(ms: float | None) -> dt.datetime | JSDate:
    if ms is None:
        return JSDate(math.nan)
    if _MIN_DATE_MS <= ms <= _MAX_DATE_MS and float(ms).is_integer():
        return _EPOCH + dt.timedelta(milliseconds=ms)
    return JSDate(float(ms))


def _number(text: str) -> float:
    return -0.0 if text == "-0" else float(text)


def _typed(kind: str, data: str) -> Any:
    raw = base64.b64decode(data)
    if kind == "Uint8Array":
        return JSUint8Array(raw)
    return JSTypedArray(kind, raw)


def _error(d: dict[str, Any], cause: Any) -> JSError:
    return JSError(
        name=d.get("name", "Error"), message=d.get("message", ""), cause=cause, stack=d.get("stack")
    )


def _from_tag(d: dict[str, Any]) -> Any:
    """Turn one tagged object, whose contents are already decoded, into its value."""
    t = d[TAG]
    if t == "u":
        return UNDEFINED
    if t == "n":
        return _number(d["v"])
    if t == "b":
        # Hexadecimal: Python limits decimal conversions to 4,300 digits.
        return JSBigInt(int(d["x"], 16))
    if t == "d":
        return _date_from_ms(d["v"])
    if t == "r":
        return JSRegExp(d["s"], d["f"])
    if t == "m":
        return JSMap((k, v) for k, v in d["v"])
    if t == "s":
        return python_set_or_jsset(list(d["v"]))
    if t == "a":
        return JSArrayBuffer(base64.b64decode(d["v"]))
    if t == "t":
        return _typed(d["k"], d["v"])
    if t == "e":
        return _error(d, d["cause"] if "cause" in d else NO_CAUSE)
    if t == "o":
        return {k: v for k, v in d["v"]}
    if t == "h":
        return HandleRef(int(d["i"]))
    raise ValueError(f"unknown wire tag {t!r}")


def _hook(d: dict[str, Any]) -> Any:
    return _from_tag(d) if TAG in d else d


class _RefDecoder:
    """Decodes a payload with shared references: containers are made before
    their contents, so a cycle can point back at them."""

    def __init__(self) -> None:
        self.defs: dict[int, Any] = {}
        self.used: list[int] = []  # def ids looked up, in order

    def used_since(self, start: int) -> set[int]:
        return set(self.used[start:])

    def walk(self, x: Any, def_id: int | None = None) -> Any:
        if isinstance(x, list):
            if def_id is not None:
                self.defs[def_id] = x
            for i, item in enumerate(x):
                x[i] = self.walk(item)
            return x
        if not isinstance(x, dict):
            return x
        t = x.get(TAG)
        if t is None:
            if def_id is not None:
                self.defs[def_id] = x
            for k, v in x.items():
                x[k] = self.walk(v)
            return x
        if t == "#":
            return self.walk(x["v"], x["i"])
        if t == "@":
            self.used.append(x["i"])
            return self.defs[x["i"]]
        if t == "m":
            m = JSMap()
            if def_id is not None:
                self.defs[def_id] = m
            for k, v in x["v"]:
                key = self.walk(k)  # the key first: a reference in the value may point at it
                m[key] = self.walk(v)
            return m
        if t == "s":
            members = JSSet([])
            if def_id is not None:
                self.defs[def_id] = members
            before = len(self.used)
            members.members.extend(self.walk(v) for v in x["v"])
            if def_id is not None and def_id in self.used_since(before):
                return members  # it contains itself: only a JSSet can
            value = python_set_or_jsset(members.members)
            if def_id is not None:
                self.defs[def_id] = value
            return value
        if t == "e":
            err = JSError(
                name=x.get("name", "Error"), message=x.get("message", ""), stack=x.get("stack")
            )
            if def_id is not None:
                self.defs[def_id] = err
            err.cause = self.walk(x["cause"]) if "cause" in x else NO_CAUSE
            return err
        if t == "o":
            o: dict[str, Any] = {}
            if def_id is not None:
                self.defs[def_id] = o
            for k, v in x["v"]:
                o[k] = self.walk(v)
            return o
        value = _from_tag(x)
        if def_id is not None:
            self.defs[def_id] = value
        return value


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__; typeshed omits it


def _plain_json(body: str) -> Any:
    """json.loads, minus its layers for the common case: compact JSON (as
    JSON.stringify writes it) read in one step; anything else goes the long way
    (and gets json's own error)."""
    try:
        value, end = _SCAN(body, 0)
    except StopIteration:
        return json.loads(body)
    return value if end == len(body) else json.loads(body)


def decode(wire: str, *, levels: int = MAX_DEPTH) -> Any:
    """Decode a wire text made by the guest (or by `encode`), of a value that
    nests at most `levels` levels (ARGUMENTS_DEPTH for a call's arguments)."""
    # The guest keeps to the limit; a broken guest might not.
    try:
        return _decode(wire, levels)
    except RecursionError:
        raise CodecError(f"a value nested deeper than {MAX_DEPTH} levels", "$") from None
    except ValueTooDeep as deep:
        raise CodecError(f"a value nested deeper than {MAX_DEPTH} levels", deep.path) from None


def _decode(wire: str, levels: int) -> Any:
    mode, body = wire[:1], wire[1:]
    if mode == "J":
        value = _plain_json(body)
    elif mode == "T":
        value = json.loads(body, object_hook=_hook)
    elif mode == "R":
        # Checked as the tree the text is, before references join it into a graph
        # (shared parts walked as a tree could take forever; a cycle has no bottom).
        # Tags nest deeper than the value they stand for: a defined container is
        # wrapped once, a Map's entries twice.
        tree = json.loads(body)
        check_depth(tree, 4 * levels, text=body)
        return _RefDecoder().walk(tree)
    else:
        raise ValueError(f"not a wire text (starts with {mode!r})")
    check_depth(value, levels, text=body)
    return value


# ------------------------------------------------------------------ encoding


def _date_ms(value: dt.datetime | dt.date) -> float:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        delta = aware - _EPOCH
    else:
        delta = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC) - _EPOCH
    # Whole milliseconds, as a JavaScript Date holds them.
    return delta // dt.timedelta(milliseconds=1)


def _regexp_flags(pattern: re.Pattern[Any]) -> str:
    flags = ""
    if pattern.flags & re.IGNORECASE:
        flags += "i"
    if pattern.flags & re.MULTILINE:
        flags += "m"
    if pattern.flags & re.DOTALL:
        flags += "s"
    return flags


class _Encoder:
    def __init__(
        self,
        max_bytes: int | None = None,
        handles: HandleTable | None = None,
        levels: int = MAX_DEPTH,
    ) -> None:
        self.handles = handles
        self.levels = levels
        # A lower bound of the text's size, kept as the walk goes, so a value far
        # over the budget is refused long before it is all encoded.
        self.max_bytes = max_bytes
        self.size = 0
        self.tagged = False
        self.refs = False
        self.seen: dict[int, list[Any]] = {}  # id -> [out, holder, key, def id]
        self.keep: list[Any] = []  # keeps ids stable while we encode
        self.next_id = 0
        self.path: list[str | int] = []

    def where(self) -> str:
        out = "$"
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else key_step(p)
        return out

    def tag(self, t: str, **fields: Any) -> dict[str, Any]:
        self.tagged = True
        return {TAG: t, **fields}

    def container(self, value: Any, holder: Any, key: Any) -> dict[str, Any] | None:
        """A reference to an already seen container, or None (and it is now seen)."""
        prior = self.seen.get(id(value))
        if prior is not None:
            self.refs = self.tagged = True
            if prior[3] is None:
                prior[3] = self.next_id
                self.next_id += 1
                prior[1][prior[2]] = {TAG: "#", "i": prior[3], "v": prior[0]}
            return {TAG: "@", "i": prior[3]}
        if len(self.path) >= self.levels:  # this container is level len(path) + 1
            raise CodecError(f"a value nested deeper than {self.levels} levels", self.where())
        self.seen[id(value)] = [None, holder, key, None]
        self.keep.append(value)
        return None

    def set_out(self, value: Any, out: Any) -> None:
        self.seen[id(value)][0] = out

    def grow(self, n: int) -> None:
        self.size += n
        if self.size > self.max_bytes:  # type: ignore[operator]  # only called with a budget set
            raise HostResultTooLarge(self.max_bytes, self.where())  # type: ignore[arg-type]  # only called with a budget set

    def enc(self, v: Any, holder: Any, key: Any) -> Any:
        t = type(v)
        if self.max_bytes is not None:
            # Never more than the text will take (a string's quotes, one byte for the rest),
            # so a value at the budget is never refused by the estimate.
            self.grow(len(v) + 2 if t is str else 1)
        if t is str or v is None or t is bool:
            return v
        if t is int:
            return v if -MAX_SAFE <= v <= MAX_SAFE else self.tag("b", x=format(v, "x"))
        if t is float:
            if math.isfinite(v):
                return v
            return self.tag(
                "n", v="NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
            )
        if t is list or t is tuple:
            return self.shared(v, holder, key, self.enc_list)
        if t is dict:
            return self.shared(v, holder, key, self.enc_dict)
        return self.enc_other(v, holder, key)

    def leaf(self, v: Any, holder: Any, key: Any, make: Any) -> Any:
        """An object without contents (a date, a byte array): once, then references."""
        ref = self.container(v, holder, key)
        if ref is not None:
            return ref
        out = make()
        self.set_out(v, out)
        return out

    def shared(self, v: Any, holder: Any, key: Any, build: Any) -> Any:
        """Encode a container once; a second sight of it is a reference."""
        ref = self.container(v, holder, key)
        if ref is not None:
            return ref
        out = build(v)
        entry = self.seen[id(v)]
        if entry[3] is not None:
            # It was referenced from inside itself: the definition goes here,
            # where the parent is about to put it.
            return {TAG: "#", "i": entry[3], "v": entry[0]}
        return out

    def enc_list(self, v: list[Any] | tuple[Any, ...]) -> list[Any]:
        out: list[Any] = []
        self.set_out(v, out)
        for i, item in enumerate(v):
            self.path.append(i)
            out.append(None)
            out[i] = self.enc(item, out, i)
            self.path.pop()
        return out

    def enc_dict(self, v: Mapping[Any, Any]) -> Any:
        out: dict[str, Any] = {}
        self.set_out(v, out)
        for k, item in v.items():
            if type(k) is not str:
                if isinstance(k, bool) or k is None or not isinstance(k, int | float | str):
                    raise CodecError(f"a dict key of type {type(k).__name__}", self.where())
                k = str(k) if not isinstance(k, str) else k
            self.path.append(k)
            if self.max_bytes is not None:
                self.grow(len(k) + 3)
            out[k] = None
            out[k] = self.enc(item, out, k)
            self.path.pop()
        if TAG in out:
            wrapped = self.tag("o", v=[[k, x] for k, x in out.items()])
            self.set_out(v, wrapped)
            return wrapped
        return out

    def enc_map(self, v: JSMap) -> Any:
        pairs: list[Any] = []
        out = self.tag("m", v=pairs)
        self.set_out(v, out)
        for i, (k, item) in enumerate(v.pairs()):
            pair: list[Any] = [None, None]
            self.path.append(f"<map key {i}>")
            pair[0] = self.enc(k, pair, 0)
            self.path[-1] = f"<map value {i}>"
            pair[1] = self.enc(item, pair, 1)
            self.path.pop()
            pairs.append(pair)
        return out

    def enc_set(self, v: Any) -> Any:
        members: list[Any] = []
        out = self.tag("s", v=members)
        self.set_out(v, out)
        for i, item in enumerate(v):
            self.path.append(f"<set member {i}>")
            members.append(None)
            members[i] = self.enc(item, members, i)
            self.path.pop()
        return out

    def enc_error(self, v: Any) -> Any:
        if isinstance(v, JSError):
            out = self.tag("e", name=v.name, message=v.message)
            if v.stack is not None:
                out["stack"] = v.stack
            cause = v.cause
        else:
            out = self.tag("e", name=type(v).__name__, message=str(v))
            cause = v.__cause__ if v.__cause__ is not None else NO_CAUSE
        self.set_out(v, out)
        if cause is not NO_CAUSE:
            self.path.append("cause")
            out["cause"] = self.enc(cause, out, "cause")
            self.path.pop()
        return out

    def enc_other(self, v: Any, holder: Any, key: Any) -> Any:
        if isinstance(v, _Undefined):
            return self.tag("u")
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, JSBigInt):
            return self.tag("b", x=format(int(v), "x"))
        if isinstance(v, enum.Enum):
            return self.enc(v.value, holder, key)
        if isinstance(v, int):
            return self.enc(int(v), holder, key)
        if isinstance(v, float):
            if v == 0 and math.copysign(1, v) < 0:
                return -0.0
            return self.enc(float(v), holder, key)
        if isinstance(v, str):
            return str(v)
        if isinstance(v, dt.datetime | dt.date):
            return self.leaf(v, holder, key, lambda: self.tag("d", v=_date_ms(v)))
        if isinstance(v, JSDate):
            # A Date holds a finite time or none: infinity is an invalid date too.
            return self.leaf(
                v, holder, key, lambda: self.tag("d", v=v.ms if math.isfinite(v.ms) else None)
            )
        if self.max_bytes is not None and isinstance(
            v, bytes | bytearray | memoryview | JSTypedArray
        ):
            self.grow(len(v.data if isinstance(v, JSTypedArray) else v) * 4 // 3)
        if isinstance(v, JSArrayBuffer):
            return self.leaf(
                v, holder, key, lambda: self.tag("a", v=base64.b64encode(v).decode("ascii"))
            )
        if isinstance(v, bytes | bytearray | memoryview):
            data = base64.b64encode(bytes(v)).decode("ascii")
            if type(v) is bytes and len(v) < 2:
                # CPython shares these: the same object twice is not one array.
                return self.tag("t", k="Uint8Array", v=data)
            return self.leaf(v, holder, key, lambda: self.tag("t", k="Uint8Array", v=data))
        if isinstance(v, JSTypedArray):
            return self.leaf(
                v,
                holder,
                key,
                lambda: self.tag("t", k=v.kind, v=base64.b64encode(v.data).decode("ascii")),
            )
        if isinstance(v, JSRegExp):
            return self.leaf(v, holder, key, lambda: self.tag("r", s=v.source, f=v.flags))
        if isinstance(v, re.Pattern):
            if v.flags & (re.VERBOSE | re.LOCALE):
                # Sending it without these would change what it matches.
                raise CodecError(
                    "a regular expression with flags JavaScript has no match for", self.where()
                )
            source = v.pattern if isinstance(v.pattern, str) else v.pattern.decode("latin-1")
            return self.tag("r", s=source, f=_regexp_flags(v))
        if isinstance(v, Decimal):
            return self.enc(float(v), holder, key)
        if isinstance(v, uuid.UUID):
            return str(v)
        if isinstance(v, JSMap):
            return self.shared(v, holder, key, self.enc_map)
        if isinstance(v, set | frozenset | JSSet):
            return self.shared(v, holder, key, self.enc_set)
        if isinstance(v, JSError | BaseException):
            return self.shared(v, holder, key, self.enc_error)
        if isinstance(v, Mapping):
            return self.shared(v, holder, key, self.enc_dict)
        if isinstance(v, list | tuple):
            return self.shared(v, holder, key, self.enc_list)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.enc(
                {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}, holder, key
            )
        if is_handle(v):
            if self.handles is None:
                raise CodecError(
                    f"a handle ({type(v).__name__}; handles cross only as a host function's result)",
                    self.where(),
                )
            hid, label, tree = self.handles.register(v, self.where())
            return {**self.tag("h", i=hid, l=label), "t": tree}
        if isinstance(v, HandleRef):
            return self.tag("h", i=v.id)
        dump = getattr(v, "model_dump", None)
        if callable(dump) and not isinstance(v, type):
            return self.enc(dump(mode="python"), holder, key)
        raise CodecError(a_or_an(type(v).__name__), self.where())


def a_or_an(name: str) -> str:
    """A type's name with its article, as a refusal says it: "an object", "a set"."""
    return ("an " if name[:1].lower() in ("a", "e", "i", "o", "u") else "a ") + name


def encode(
    value: Any,
    *,
    max_bytes: int | None = None,
    handles: HandleTable | None = None,
    levels: int = MAX_DEPTH,
) -> str:
    """Encode a Python value (nesting at most `levels` levels) as a wire text for the guest.

    Raises CodecError, naming the path, for what JavaScript cannot hold, and
    HostResultTooLarge when the text would be over `max_bytes`. With `handles`,
    instances of @handle classes become handles registered there."""
    t = type(value)
    if t is str or t is bool or value is None or (t is int and -MAX_SAFE <= value <= MAX_SAFE):
        # Most host results are one plain value: no walk needed (and no encoder:
        # json makes a new one for each value that is not a string).
        if t is str:
            text = _JSON(value)
        elif t is int:
            text = int.__repr__(value)
        else:
            text = "null" if value is None else ("true" if value else "false")
        if max_bytes is not None and len(text) > max_bytes:
            raise HostResultTooLarge(max_bytes, "$")
        return "J" + text
    if max_bytes is not None:
        _refuse_if_clearly_over(value, max_bytes)
    enc = _Encoder(max_bytes, handles, levels)
    top: list[Any] = [None]
    try:
        top[0] = enc.enc(value, top, 0)
        text = _JSON(top[0])
    except CodecError:
        raise
    except RecursionError:
        raise CodecError(f"a value nested deeper than {MAX_DEPTH} levels", enc.where()) from None
    except (ValueError, OverflowError) as exc:
        raise CodecError(f"a value JSON cannot hold ({exc})", enc.where()) from None
    if max_bytes is not None and len(text) > max_bytes:
        raise HostResultTooLarge(max_bytes, "$")
    mode = "R" if enc.refs else ("T" if enc.tagged else "J")
    # ASCII (json's default) keeps lone surrogates and NULs safe on their way into QuickJS.
    return mode + text


# One encoder for every call (json.dumps with options builds a new one each time).
_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

SAMPLE_ITEMS = 256  # of a long list, encoded to estimate the whole


def _refuse_if_clearly_over(value: Any, max_bytes: int) -> None:
    """A long list (or an object's long list) far over the budget is refused from a
    sample of its items, in a millisecond, before the encoder walks it item by item."""
    lists = [("$", value)] if isinstance(value, list) else []
    if isinstance(value, dict):
        lists = [(f"$.{k}", v) for k, v in value.items() if isinstance(v, list)]
    for path, items in lists:
        if len(items) <= SAMPLE_ITEMS * 4:
            continue
        step = len(items) // SAMPLE_ITEMS
        try:
            sample = encode(items[::step][:SAMPLE_ITEMS])
        except CodecError:
            return  # the full encode says what is wrong, and where
        estimate = (len(sample) - 2) / SAMPLE_ITEMS * len(items)
        if estimate > 2 * max_bytes:
            raise HostResultTooLarge(max_bytes, path)


def preview(value: Any, limit: int = 160) -> str:
    """A one-line rendering of a value for audit trails, cut to `limit` characters."""
    text = _preview(value, 0)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _preview(v: Any, depth: int) -> str:
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, JSBigInt):
        if v.bit_length() > 3000:  # never convert a huge number to decimal just to preview it
            return f"<a {int(v.bit_length() * 0.30103)}-digit BigInt>"
        return f"{int(v)}n"
    if isinstance(v, int | float):
        if isinstance(v, float) and v.is_integer() and math.isfinite(v):
            return str(int(v)) if v != 0 or math.copysign(1, v) > 0 else "-0"
        return (
            repr(v)
            if math.isfinite(v)
            else ("NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity"))
        )
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if depth > 3:
        return "…"
    if isinstance(v, list | tuple):
        return (
            "["
            + ", ".join(_preview(x, depth + 1) for x in v[:20])
            + (", …" if len(v) > 20 else "")
            + "]"
        )
    if isinstance(v, dict):
        items = list(v.items())
        body = ", ".join(f"{k}: {_preview(x, depth + 1)}" for k, x in items[:20])
        return "{" + body + (", …" if len(items) > 20 else "") + "}"
    if isinstance(v, dt.datetime):
        return v.isoformat().replace("+00:00", "Z")
    if isinstance(v, bytes):
        return f"Uint8Array({len(v)})"
    if isinstance(v, JSMap):
        return (
            "Map("
            + str(len(v))
            + ") {"
            + ", ".join(
                f"{_preview(k, depth + 1)} => {_preview(x, depth + 1)}" for k, x in v.pairs()[:10]
            )
            + "}"
        )
    if isinstance(v, set | frozenset | JSSet):
        return (
            "Set("
            + str(len(v))
            + ") {"
            + ", ".join(_preview(x, depth + 1) for x in list(v)[:10])
            + "}"
        )
    if isinstance(v, JSRegExp):
        return str(v)
    if isinstance(v, JSError):
        return str(v)
    return repr(v)


def args_preview(args: list[Any], limit: int = 160) -> str:
    """How a call's arguments read in the audit trail: `("cus_1", {limit: 10})`."""
    inner = ", ".join(_preview(a, 0) for a in args)
    text = f"({inner})"
    return text if len(text) <= limit else text[: limit - 2] + "…)"
