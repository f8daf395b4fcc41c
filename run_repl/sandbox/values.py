"""Python stand-ins for JavaScript values that have no exact Python twin.

A host function receives and returns these; the codec turns them back into
the same JavaScript type, so a host function that echoes what it received
gives the guest back what it sent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final


class _Undefined:
    """JavaScript `undefined`: a falsy singleton distinct from `None` (null)."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Final = _Undefined()


class _NoCause:
    """An Error without a `cause` (not even `cause: undefined`)."""

    def __repr__(self) -> str:
        return "NO_CAUSE"

    def __bool__(self) -> bool:
        return False


NO_CAUSE: Final = _NoCause()


class JSBigInt(int):
    """A JavaScript BigInt. Plain `int`s beyond ±2**53 also travel as BigInt."""

    def __repr__(self) -> str:
        return f"JSBigInt({int(self)})"


@dataclass(frozen=True)
class JSRegExp:
    """A JavaScript RegExp: its source and flags, exactly as JavaScript has them."""

    source: str
    flags: str = ""

    def __str__(self) -> str:
        return f"/{self.source}/{self.flags}"


@dataclass
class JSError:
    """A JavaScript Error value (not a raised exception): name, message and cause."""

    name: str = "Error"
    message: str = ""
    cause: Any = NO_CAUSE
    stack: str | None = None

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name

    def __eq__(self, other: object) -> bool:
        # The stack says where an error was made, not what it is.
        if not isinstance(other, JSError):
            return NotImplemented
        return (self.name, self.message, self.cause) == (other.name, other.message, other.cause)

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable


@dataclass(frozen=True)
class JSDate:
    """A JavaScript Date that `datetime` cannot hold: invalid, or outside years 1-9999.

    `ms` is milliseconds since the epoch (NaN for an invalid date).
    """

    ms: float

    @property
    def valid(self) -> bool:
        return not math.isnan(self.ms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JSDate):
            return NotImplemented
        return self.ms == other.ms or (math.isnan(self.ms) and math.isnan(other.ms))

    def __hash__(self) -> int:
        return hash(("JSDate", None if math.isnan(self.ms) else self.ms))


TYPED_ARRAY_KINDS: Final = (
    "Int8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
    "DataView",
)


@dataclass(frozen=True)
class JSTypedArray:
    """A typed array other than Uint8Array (which is `bytes`), or a DataView.

    `data` holds the view's bytes in the platform's (little-endian) order.
    """

    kind: str
    data: bytes

    def __post_init__(self) -> None:
        if self.kind not in TYPED_ARRAY_KINDS:
            raise ValueError(f"unknown typed array kind {self.kind!r}")

    def tolist(self) -> list[Any]:
        """The elements as Python numbers (DataView: its bytes)."""
        import array

        codes = {
            "Int8Array": "b",
            "Uint8ClampedArray": "B",
            "Int16Array": "h",
            "Uint16Array": "H",
            "Int32Array": "i",
            "Uint32Array": "I",
            "Float32Array": "f",
            "Float64Array": "d",
            "BigInt64Array": "q",
            "BigUint64Array": "Q",
        }
        if self.kind == "DataView":
            return list(self.data)
        if self.kind == "Float16Array":
            import struct

            return [v for (v,) in struct.iter_unpack("<e", self.data)]
        return array.array(codes[self.kind], self.data).tolist()


class JSUint8Array(bytes):
    """A JavaScript Uint8Array as it arrives from the guest: a `bytes` (read it as
    one). A subclass so each one is its own object, as each array is in
    JavaScript (CPython shares empty and one-byte `bytes`)."""

    def __repr__(self) -> str:
        return f"JSUint8Array({bytes(self)!r})"


class JSArrayBuffer(bytes):
    """A JavaScript ArrayBuffer: its bytes (a `bytes`, so it reads like one)."""

    def __repr__(self) -> str:
        return f"JSArrayBuffer({bytes(self)!r})"


class JSMap(MutableMapping[Any, Any]):
    """A JavaScript Map: insertion order kept, and any keys (lists and dicts too).

    Keys compare as in JavaScript: strings, numbers, booleans, BigInts, null and
    undefined by value (1 and 1n are different keys); everything else, which is
    an object in JavaScript (a date, bytes, a list), by identity.
    """

    def __init__(self, pairs: Iterable[tuple[Any, Any]] | None = None) -> None:
        self._keys: list[Any] = []
        self._values: list[Any] = []
        self._index: dict[tuple[Any, ...], int] = {}
        for key, value in pairs or ():
            self[key] = value

    @staticmethod
    def _slot(key: Any) -> tuple[Any, ...]:
        """The key's identity as JavaScript's SameValueZero sees it."""
        if key is None or key is UNDEFINED:
            return ("null" if key is None else "undefined",)
        if isinstance(key, bool):
            return ("boolean", key)
        if isinstance(key, JSBigInt):
            return ("bigint", int(key))
        if isinstance(key, int | float):
            # 1 and 1.0 are one number; NaN is one key; -0 and 0 are one key.
            return (
                ("number", "NaN")
                if isinstance(key, float) and math.isnan(key)
                else ("number", float(key))
            )
        if isinstance(key, str):
            return ("string", key)
        # Anything else is a JavaScript object: a key by identity, never by value.
        return ("object", id(key))

    def _find(self, key: Any) -> int | None:
        return self._index.get(self._slot(key))

    def __getitem__(self, key: Any) -> Any:
        i = self._find(key)
        if i is None:
            raise KeyError(key)
        return self._values[i]

    def __setitem__(self, key: Any, value: Any) -> None:
        i = self._find(key)
        if i is not None:
            self._values[i] = value
            return
        self._index[self._slot(key)] = len(self._keys)
        self._keys.append(key)
        self._values.append(value)

    def __delitem__(self, key: Any) -> None:
        i = self._find(key)
        if i is None:
            raise KeyError(key)
        pairs = [p for j, p in enumerate(zip(self._keys, self._values, strict=True)) if j != i]
        self.__init__(pairs)  # type: ignore[misc]  # rebuilds the index in place

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def pairs(self) -> list[tuple[Any, Any]]:
        """The entries in insertion order."""
        return list(zip(self._keys, self._values, strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JSMap):
            return self.pairs() == other.pairs()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by value, so unhashable

    def __repr__(self) -> str:
        return f"JSMap({self.pairs()!r})"


@dataclass
class JSSet:
    """A JavaScript Set whose members Python's `set` cannot hold (unhashable, or
    colliding like `1` and `True`): the members in insertion order."""

    members: list[Any] = field(default_factory=list)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, value: Any) -> bool:
        return any(m is value or m == value for m in self.members)


def python_set_or_jsset(members: list[Any]) -> set[Any] | JSSet:
    """A `set` when Python's set keeps every member apart, else a `JSSet`."""
    try:
        as_set = set(members)
    except TypeError:
        return JSSet(members)
    if len(as_set) != len(members):
        return JSSet(members)
    return as_set
