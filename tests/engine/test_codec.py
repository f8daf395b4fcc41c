"""Unit tests of the Python side of the wire codec (`run_repl.sandbox.wire.codec`).

No worker runs here: `encode` makes the text the guest decodes, and `decode`
reads the text the guest's `encodeWire` makes (first letter J, T or R).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import re
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import pydantic
import pytest

from run_repl import (
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
)
from run_repl.sandbox.wire.codec import MAX_DEPTH, CodecError, decode, encode

UTC = dt.UTC
T = "\\u0000"  # the tag key as it appears in wire text


def roundtrip(value: Any) -> Any:
    wire = encode(value)
    assert wire.isascii()
    return decode(wire)


def in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Call `fn` on a throwaway thread. A RecursionError from deep values stays
    there (CPython 3.11.7 can otherwise leave the main thread's AST recursion
    counter off, which breaks pytest's traceback rendering later)."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(fn, *args)
        try:
            return future.result()
        except RecursionError:
            pass
    # Report it short (outside the except block, so without the thousand-frame
    # traceback as context): it says nothing more.
    pytest.fail("RecursionError inside the codec (its depth limit is 1000 levels)")


def nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    n = 0
    while isinstance(value, list) and value:
        value = value[0]
        n += 1
    return n


# ---------------------------------------------------------------- scalars
@pytest.mark.parametrize(
    "value, expected, kind",
    [
        (None, None, type(None)),
        (True, True, bool),
        (False, False, bool),
        (0, 0, int),
        (-7, -7, int),
        (2**53 - 1, 2**53 - 1, int),
        (-(2**53 - 1), -(2**53 - 1), int),
        (2**53, 2**53, JSBigInt),
        (-(2**53), -(2**53), JSBigInt),
        (2**64 + 1, 2**64 + 1, JSBigInt),
        (-(2**100), -(2**100), JSBigInt),
        (JSBigInt(5), 5, JSBigInt),
        (JSBigInt(-(2**70)), -(2**70), JSBigInt),
        (1.5, 1.5, float),
        (1e300, 1e300, float),
        (5e-324, 5e-324, float),
        (-2.5e-10, -2.5e-10, float),
        (math.inf, math.inf, float),
        (-math.inf, -math.inf, float),
        ("", "", str),
        ("plain", "plain", str),
        ("a\x00b", "a\x00b", str),
        ("\ud800", "\ud800", str),
        ("x\udfffy\ud83d", "x\udfffy\ud83d", str),
        ("é😀\u2028\u2029\x7f", "é😀\u2028\u2029\x7f", str),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_scalars_round_trip_with_their_python_type(value: Any, expected: Any, kind: type) -> None:
    back = roundtrip(value)
    assert type(back) is kind
    assert back == expected


def test_undefined_is_a_falsy_singleton_distinct_from_none() -> None:
    back = roundtrip([UNDEFINED, None, {"u": UNDEFINED}])
    assert back[0] is UNDEFINED
    assert back[1] is None
    assert back[2]["u"] is UNDEFINED
    assert not UNDEFINED
    assert UNDEFINED is not None


def test_nan_and_negative_zero() -> None:
    nan, neg_zero, zero = roundtrip([math.nan, -0.0, 0.0])
    assert math.isnan(nan)
    assert neg_zero == 0 and math.copysign(1, neg_zero) < 0
    assert zero == 0 and math.copysign(1, zero) > 0


@pytest.mark.parametrize(
    "wire, expected",
    [
        (f'T[{{"{T}":"n","v":"NaN"}}]', [math.nan]),
        (f'T[{{"{T}":"n","v":"-0"}}]', [-0.0]),
        (f'T[{{"{T}":"n","v":"Infinity"}},{{"{T}":"n","v":"-Infinity"}}]', [math.inf, -math.inf]),
        # Integral numbers beyond 2**53 stay numbers (float), not BigInt.
        (f'T[{{"{T}":"n","v":"9007199254740992"}},{{"{T}":"n","v":"1e+21"}}]', [2.0**53, 1e21]),
        # BigInts travel in hexadecimal (Python limits decimal conversions).
        (
            f'T[{{"{T}":"b","x":"c"}},{{"{T}":"b","x":"-56bc75e2d630fffff"}}]',
            [12, -99999999999999999999],
        ),
        (f'T[{{"{T}":"u"}},null]', [UNDEFINED, None]),
    ],
    ids=["nan", "negative_zero", "infinities", "unsafe_integers", "bigints", "undefined"],
)
def test_guest_number_tags(wire: str, expected: list[Any]) -> None:
    back = decode(wire)
    assert len(back) == len(expected)
    for got, want in zip(back, expected, strict=True):
        if isinstance(want, float) and math.isnan(want):
            assert isinstance(got, float) and math.isnan(got)
        elif isinstance(want, float):
            assert type(got) is float and got == want
            assert math.copysign(1, got) == math.copysign(1, want)
        elif type(want) is int:
            assert type(got) is JSBigInt and got == want
        else:
            assert got is want


def test_guest_plain_numbers_are_int_when_integral() -> None:
    assert decode("J[1,-2,3.5,0]") == [1, -2, 3.5, 0]
    assert [type(x) for x in decode("J[1,-2,3.5]")] == [int, int, float]


def test_big_bigints_cross_both_ways() -> None:
    # Python refuses int <-> str conversions of more than 4300 digits by default;
    # a BigInt of that size is still ordinary JavaScript data.
    big = 10**5000 + 7
    assert roundtrip(big) == big
    assert type(roundtrip(big)) is JSBigInt
    assert decode(f'T{{"{T}":"b","x":"{big:x}"}}') == big
    assert decode(f'T{{"{T}":"b","x":"-{big:x}"}}') == -big


# ---------------------------------------------------------------- containers
def test_lists_tuples_and_dicts() -> None:
    assert roundtrip([1, [2, (3, 4)], {"a": (5,)}]) == [1, [2, [3, 4]], {"a": [5]}]
    assert type(roundtrip((1, 2))) is list


def test_int_keys_become_strings() -> None:
    assert roundtrip({1: "a", -2: "b", 2**60: "c"}) == {"1": "a", "-2": "b", str(2**60): "c"}


@pytest.mark.parametrize(
    "value, path",
    [
        ({True: 1}, "$"),
        ({None: 1}, "$"),
        ({(1, 2): 1}, "$"),
        ({"a": {"b": {(1,): 2}}}, "$.a.b"),
        ([0, {"x": {frozenset(): 1}}], "$[1].x"),
    ],
    ids=["bool", "none", "tuple", "nested", "in_list"],
)
def test_other_dict_keys_are_refused_with_the_path(value: Any, path: str) -> None:
    with pytest.raises(CodecError) as info:
        encode(value)
    assert info.value.path == path
    assert "key" in info.value.what


def test_odd_string_keys_survive() -> None:
    value = {"\x00": 1, "__proto__": {"x": 1}, "constructor": 2, "a\x00b": 3, "": 4, "\ud800": 5}
    wire = encode(value)
    assert wire.isascii()
    back = decode(wire)
    assert back == value
    assert list(back) == list(value)


def test_guest_object_with_the_tag_key_is_wrapped() -> None:
    # The guest sends an object that has "\u0000" as a key as an "o" tag.
    back = decode(f'T{{"{T}":"o","v":[["{T}","u"],["a",{{"{T}":"u"}}]]}}')
    assert back == {"\x00": "u", "a": UNDEFINED}


# ---------------------------------------------------------------- dates
@pytest.mark.parametrize(
    "value, expected",
    [
        (
            dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
            dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
        ),
        (
            dt.datetime(2024, 1, 2, 3, 4, 5, 123999, tzinfo=UTC),
            dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
        ),
        (
            dt.datetime(2024, 1, 2, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
            dt.datetime(2024, 1, 1, 21, 30, tzinfo=UTC),
        ),
        (dt.datetime(2024, 1, 2, 3, 4), dt.datetime(2024, 1, 2, 3, 4, tzinfo=UTC)),
        (dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, tzinfo=UTC)),
        (dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(1, 1, 1, tzinfo=UTC)),
        (
            dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        ),
        (
            dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
            dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
        ),
    ],
    ids=[
        "utc",
        "microseconds_cut_to_ms",
        "offset",
        "naive_is_utc",
        "date",
        "year_1",
        "before_epoch",
        "year_9999",
    ],
)
def test_datetimes_become_utc_aware_datetimes(value: Any, expected: dt.datetime) -> None:
    back = roundtrip(value)
    assert type(back) is dt.datetime
    assert back.tzinfo is not None and back.utcoffset() == dt.timedelta(0)
    assert back == expected


@pytest.mark.parametrize(
    "value",
    [
        JSDate(math.nan),
        JSDate(8.64e15),
        JSDate(-8.64e15),
        JSDate(-62198755200000.0),
        JSDate(253402300800000.0),
    ],
    ids=["invalid", "max", "min", "year_minus_1", "year_10000"],
)
def test_dates_python_cannot_hold_stay_jsdate(value: JSDate) -> None:
    back = roundtrip(value)
    assert type(back) is JSDate
    assert back == value
    assert back.valid == value.valid


def test_jsdate_beyond_the_javascript_range_is_an_invalid_date() -> None:
    # JavaScript clips a time value beyond ±8.64e15 ms (or infinite) to NaN.
    for ms in (math.inf, -math.inf):
        back = roundtrip(JSDate(ms))
        assert type(back) is JSDate and not back.valid


def test_guest_dates() -> None:
    wire = f'T[{{"{T}":"d","v":0}},{{"{T}":"d","v":null}},{{"{T}":"d","v":-1}},{{"{T}":"d","v":8640000000000000}}]'
    epoch, invalid, before, max_date = decode(wire)
    assert epoch == dt.datetime(1970, 1, 1, tzinfo=UTC)
    assert type(invalid) is JSDate and not invalid.valid
    assert before == dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
    assert max_date == JSDate(8.64e15)


# ---------------------------------------------------------------- binary data
def test_bytes_become_uint8array_and_come_back_as_bytes() -> None:
    for value in (b"", b"\x00\xff abc", bytearray(b"xy"), memoryview(b"mv")):
        back = roundtrip(value)
        # A bytes subclass: read as bytes, and each array stays its own object.
        assert type(back) is JSUint8Array and isinstance(back, bytes)
        assert back == bytes(value)
    assert '"k":"Uint8Array"' in encode(b"a")


@pytest.mark.parametrize(
    "kind, data",
    [
        ("Int8Array", b"\xff\x01"),
        ("Uint8ClampedArray", b"\xff"),
        ("Int16Array", b"\x01\x00\xff\xff"),
        ("Uint16Array", b"\x01\x02"),
        ("Int32Array", b"\x01\x00\x00\x80"),
        ("Uint32Array", b"\xff\xff\xff\xff"),
        ("Float16Array", b"\x00\x3c"),
        ("Float32Array", b"\x00\x00\xc0\x7f"),
        ("Float64Array", b"\x00" * 7 + b"\x80"),
        ("BigInt64Array", b"\xff" * 8),
        ("BigUint64Array", b"\x01" + b"\x00" * 7),
        ("DataView", b"\x00\x01\x02"),
    ],
)
def test_typed_arrays_keep_kind_and_bytes(kind: str, data: bytes) -> None:
    back = roundtrip(JSTypedArray(kind, data))
    assert back == JSTypedArray(kind, data)


def test_array_buffer_stays_an_array_buffer() -> None:
    back = roundtrip(JSArrayBuffer(b"\x00\x01"))
    assert type(back) is JSArrayBuffer
    assert back == b"\x00\x01"
    assert f'"{T}":"a"' in encode(JSArrayBuffer(b""))


def test_unknown_typed_array_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        JSTypedArray("Int64Array", b"")


# ---------------------------------------------------------------- sets and maps
def test_sets_of_hashable_distinct_members_are_python_sets() -> None:
    assert roundtrip({1, 2, "a"}) == {1, 2, "a"}
    assert type(roundtrip({1, 2})) is set
    assert type(roundtrip(frozenset({"x"}))) is set
    # A JSSet whose members Python can hold apart becomes a set too.
    assert roundtrip(JSSet([1, "1", None])) == {1, "1", None}


@pytest.mark.parametrize(
    "members",
    [
        [[1], [1]],
        [{"a": 1}, 2],
        [1, True],
        [0, False],
        [1, JSBigInt(1)],
        [b"a", JSArrayBuffer(b"a")],
    ],
    ids=[
        "unhashable_equal",
        "unhashable_dict",
        "one_and_true",
        "zero_and_false",
        "one_and_1n",
        "bytes_and_buffer",
    ],
)
def test_sets_python_cannot_hold_stay_ordered_jssets(members: list[Any]) -> None:
    back = roundtrip(JSSet(members))
    assert type(back) is JSSet
    assert back.members == members
    # bytes come back as JSUint8Array (a bytes): every other type as it went.
    expected = [JSUint8Array if type(m) is bytes else type(m) for m in members]
    assert [type(m) for m in back.members] == expected


def test_guest_set_decodes_to_set_or_jsset() -> None:
    plain = decode(f'T{{"{T}":"s","v":[1,"a"]}}')
    assert plain == {1, "a"} and type(plain) is set
    mixed = decode(f'T{{"{T}":"s","v":[1,true]}}')
    assert type(mixed) is JSSet and mixed.members == [1, True]


def test_set_type_does_not_depend_on_shared_references_elsewhere() -> None:
    # With a shared reference anywhere, the payload is decoded in "R" mode: a
    # Set of hashable members must still be a Python set there.
    shared = [1]
    back = roundtrip([{1, 2}, shared, shared])
    assert type(back[0]) is set and back[0] == {1, 2}
    assert back[1] is back[2]


def test_jsmap_keeps_any_keys_in_order() -> None:
    m = JSMap()
    list_key = [1, 2]
    dict_key = {"k": "v"}
    for key, value in [
        (1, "number"), ("1", "string"), (True, "true"), (None, "null"), (UNDEFINED, "undefined"),
        (1.5, "float"), (list_key, "list"), (dict_key, "dict"), (dt.datetime(2020, 1, 1, tzinfo=UTC), "date"),
    ]:  # fmt: skip
        m[key] = value
    back = roundtrip(m)
    assert type(back) is JSMap
    assert back.pairs() == m.pairs()
    assert [type(k) for k in back] == [type(k) for k in m]
    assert back[True] == "true" and back[1] == "number" and back["1"] == "string"


def test_jsmap_number_and_bigint_keys_are_different_keys() -> None:
    # In JavaScript, 1 and 1n are two keys of one Map.
    m = JSMap([(1, "number"), (JSBigInt(1), "bigint")])
    assert len(m) == 2
    back = decode(f'T{{"{T}":"m","v":[[1,"number"],[{{"{T}":"b","x":"1"}},"bigint"]]}}')
    assert len(back) == 2
    assert [type(k) for k in back] == [int, JSBigInt]


def test_guest_map_with_two_equal_dates_as_keys_keeps_both() -> None:
    # Two Date objects with the same time are two keys of a JavaScript Map.
    back = decode(f'T{{"{T}":"m","v":[[{{"{T}":"d","v":0}},1],[{{"{T}":"d","v":0}},2]]}}')
    assert len(back) == 2
    assert [v for _, v in back.pairs()] == [1, 2]


# ---------------------------------------------------------------- regexps
def test_regexps() -> None:
    assert roundtrip(JSRegExp("a+\\/b", "gimsuy")) == JSRegExp("a+\\/b", "gimsuy")
    assert roundtrip(JSRegExp("x", "dv")) == JSRegExp("x", "dv")
    assert roundtrip(re.compile("a.b", re.IGNORECASE | re.MULTILINE | re.DOTALL)) == JSRegExp(
        "a.b", "ims"
    )
    assert roundtrip(re.compile("^\\d+$")) == JSRegExp("^\\d+$", "")
    assert roundtrip(re.compile(b"ab")) == JSRegExp("ab", "")


def test_python_regex_flags_javascript_lacks_are_refused() -> None:
    # re.VERBOSE changes what the pattern means; silently dropping it would send
    # a different regular expression.
    with pytest.raises(CodecError) as info:
        encode({"r": re.compile("a b  # comment", re.VERBOSE)})
    assert info.value.path == "$.r"


# ---------------------------------------------------------------- errors
def test_jserror_with_cause() -> None:
    err = JSError(
        "TypeError",
        "bad",
        cause=JSError("Error", "inner", cause=[1, {"a": UNDEFINED}]),
        stack="at x",
    )
    back = roundtrip(err)
    assert type(back) is JSError
    assert back == err
    assert back.stack == "at x"
    assert type(back.cause) is JSError and back.cause.cause == [1, {"a": UNDEFINED}]
    assert roundtrip(JSError("RangeError", "no cause")).cause is NO_CAUSE
    # `cause: undefined` is a cause, and stays one.
    assert roundtrip(JSError("Error", "u", cause=UNDEFINED)).cause is UNDEFINED


def test_python_exceptions_become_errors_with_their_cause() -> None:
    try:
        try:
            raise KeyError("k")
        except KeyError as inner:
            raise ValueError("outer") from inner
    except ValueError as exc:
        back = roundtrip({"e": exc})["e"]
    assert back == JSError("ValueError", "outer", cause=JSError("KeyError", "'k'"))


def test_guest_error() -> None:
    back = decode(
        f'T{{"{T}":"e","name":"RangeError","message":"m","stack":"s","cause":{{"{T}":"u"}}}}'
    )
    assert back == JSError("RangeError", "m", cause=UNDEFINED)
    assert back.stack == "s"


# ---------------------------------------------------------------- other Python types
class Color(enum.Enum):
    RED = "red"
    ONE = 1


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: int
    y: float
    tags: list[str]


@dataclasses.dataclass
class Shape:
    name: str
    points: list[Point]
    at: dt.datetime


class Order(pydantic.BaseModel):
    id: str
    total: Decimal
    placed: dt.datetime
    lines: list[int]


@pytest.mark.parametrize(
    "value, expected",
    [
        (Color.RED, "red"),
        (Color.ONE, 1),
        (Level.HIGH, 3),
        (Decimal("1.25"), 1.25),
        (Decimal("-0"), -0.0),
        (uuid.UUID("12345678-1234-5678-1234-567812345678"), "12345678-1234-5678-1234-567812345678"),
        (Point(1, 2.5, ["a"]), {"x": 1, "y": 2.5, "tags": ["a"]}),
        (
            Shape("s", [Point(0, 0.5, [])], dt.datetime(2020, 1, 1, tzinfo=UTC)),
            {
                "name": "s",
                "points": [{"x": 0, "y": 0.5, "tags": []}],
                "at": dt.datetime(2020, 1, 1, tzinfo=UTC),
            },
        ),
        (
            Order(
                id="o1",
                total=Decimal("9.5"),
                placed=dt.datetime(2021, 5, 6, tzinfo=UTC),
                lines=[1, 2],
            ),
            {
                "id": "o1",
                "total": 9.5,
                "placed": dt.datetime(2021, 5, 6, tzinfo=UTC),
                "lines": [1, 2],
            },
        ),
    ],
    ids=[
        "enum_str",
        "enum_int",
        "intenum",
        "decimal",
        "decimal_negative_zero",
        "uuid",
        "dataclass",
        "nested_dataclass",
        "pydantic",
    ],
)
def test_python_types_become_data(value: Any, expected: Any) -> None:
    back = roundtrip(value)
    assert back == expected
    if isinstance(expected, float):
        assert math.copysign(1, back) == math.copysign(1, expected)


def test_decimal_nan_and_infinity() -> None:
    nan, inf = roundtrip([Decimal("NaN"), Decimal("-Infinity")])
    assert math.isnan(nan) and inf == -math.inf


# ---------------------------------------------------------------- refusals
class Opaque:
    pass


@pytest.mark.parametrize(
    "value, path",
    [
        (object(), "$"),
        (lambda: 1, "$"),
        ([1, {"a": Opaque()}], "$[1].a"),
        ({"a b": [0, Opaque()]}, '$["a b"][1]'),
        ({"café": Opaque()}, '$["café"]'),
        ({'a"b': Opaque()}, '$["a\\"b"]'),
        ({"\ud800": Opaque()}, '$["\\ud800"]'),
        ({"deep": {"er": (1, 2, print)}}, "$.deep.er[2]"),
        (JSError("E", "m", cause=Opaque()), "$.cause"),
        (Opaque, "$"),
    ],
    ids=[
        "object",
        "lambda",
        "in_list",
        "odd_key",
        "non_ascii_key",
        "quoted_key",
        "lone_surrogate_key",
        "builtin_function",
        "error_cause",
        "class",
    ],
)
def test_refusals_name_the_path(value: Any, path: str) -> None:
    with pytest.raises(CodecError) as info:
        encode(value)
    assert info.value.path == path
    assert "cannot cross" in str(info.value)


def test_refusals_name_paths_as_the_guest_does() -> None:
    # The guest writes a path's keys as JavaScript does (`.name`, else a JSON string in
    # brackets); a refusal on the host side names the same place the same way.
    with pytest.raises(CodecError) as info:
        encode({"rows": [{"it's": object()}]})
    assert str(info.value) == 'an object at $.rows[0]["it\'s"] cannot cross the sandbox boundary'
    with pytest.raises(CodecError) as info:
        encode([Opaque()])
    assert str(info.value) == "an Opaque at $[0] cannot cross the sandbox boundary"
    with pytest.raises(CodecError) as info:
        encode({"f": print})
    assert (
        str(info.value) == "a builtin_function_or_method at $.f cannot cross the sandbox boundary"
    )


def test_refusals_inside_maps_and_sets_name_the_entry() -> None:
    with pytest.raises(CodecError) as info:
        encode({"m": JSMap([("k", Opaque())])})
    assert info.value.path.startswith("$.m") and "map value 0" in info.value.path
    with pytest.raises(CodecError) as info:
        encode([JSSet([1, [Opaque()]])])
    assert info.value.path.startswith("$[0]") and "set member 1" in info.value.path


# ---------------------------------------------------------------- depth
def test_values_within_the_depth_limit_cross() -> None:
    for depth in (100, MAX_DEPTH - 1):  # nested_list(n) is n + 1 levels
        back = in_thread(roundtrip, nested_list(depth))
        assert depth_of(back) == depth


def test_values_beyond_the_depth_limit_are_refused_with_a_path() -> None:
    for value in (nested_list(MAX_DEPTH), nested_list(5000)):
        with pytest.raises(CodecError) as info:
            in_thread(encode, value)
        assert "deeper" in info.value.what
        assert info.value.path.startswith("$[0][0]")


# ---------------------------------------------------------------- shared references and cycles
def test_shared_references_keep_their_identity() -> None:
    shared_list = [1]
    shared_dict = {"a": 1}
    shared_map = JSMap([("k", 1)])
    value = {
        "l1": shared_list,
        "l2": shared_list,
        "d": [shared_dict, shared_dict],
        "m": [shared_map, shared_map],
    }
    wire = encode(value)
    assert wire.startswith("R")
    back = decode(wire)
    assert back["l1"] is back["l2"]
    assert back["d"][0] is back["d"][1]
    assert back["m"][0] is back["m"][1] and type(back["m"][0]) is JSMap
    assert back == value


def test_guest_shared_reference_inside_a_map_entry() -> None:
    # JS: const a = [1]; new Map([[a, a]]) — the key is defined first, then
    # referred to by the value.
    back = decode(f'R{{"{T}":"m","v":[[{{"{T}":"#","i":0,"v":[1]}},{{"{T}":"@","i":0}}]]}}')
    ((key, value),) = back.pairs()
    assert key == [1] and key is value


def test_guest_cycle_decodes_with_identity() -> None:
    # JS: const o = { n: 1 }; o.self = o; o.list = [o]
    back = decode(
        f'R{{"{T}":"#","i":0,"v":{{"n":1,"self":{{"{T}":"@","i":0}},"list":[{{"{T}":"@","i":0}}]}}}}'
    )
    assert back["self"] is back and back["list"][0] is back


def _cycle_list() -> Any:
    a: list[Any] = [1]
    a.append(a)
    return a


def _cycle_dict() -> Any:
    d: dict[str, Any] = {"n": 1}
    d["self"] = d
    d["list"] = [d]
    return d


def _cycle_map() -> Any:
    m = JSMap()
    m["self"] = m
    return m


def _cycle_error() -> Any:
    outer = JSError("Error", "outer")
    inner = JSError("Error", "inner", cause=outer)
    outer.cause = inner
    return outer


def _cycle_in_nested_list() -> Any:
    root: dict[str, Any] = {"children": []}
    root["children"].append({"parent": root})
    return [root]


@pytest.mark.parametrize(
    "make, check",
    [
        (_cycle_list, lambda v: v[1] is v),
        (_cycle_dict, lambda v: v["self"] is v and v["list"][0] is v),
        (_cycle_map, lambda v: v["self"] is v),
        (_cycle_error, lambda v: v.cause.cause is v),
        (_cycle_in_nested_list, lambda v: v[0]["children"][0]["parent"] is v[0]),
    ],
    ids=["list", "dict", "jsmap", "error_cause", "nested"],
)
def test_cycles_round_trip_with_identity(
    make: Callable[[], Any], check: Callable[[Any], bool]
) -> None:
    wire = encode(make())
    assert wire.startswith("R")
    assert check(decode(wire))


# ---------------------------------------------------------------- the wire text
def test_wire_mode_letters() -> None:
    assert encode([1, "a", None, {"b": True}]).startswith("J")
    assert encode([UNDEFINED]).startswith("T")
    assert encode(b"x").startswith("T")
    shared = [1]
    assert encode([shared, shared]).startswith("R")


def test_encode_output_is_pure_ascii() -> None:
    value = {
        "é": "ünïcödé 😀 \u2028\u2029",
        "\ud800": ["\udfff", "a\x00b", "\x7f\x80\xff"],
        "nested": JSMap([("ключ", {"値": "中文"})]),
        "err": JSError("Ошибка", "сообщение 😀"),
        "re": JSRegExp("é+", "u"),
        "set": {"ß", "😀"},
    }
    wire = encode(value)
    assert wire.isascii()
    back = decode(wire)
    assert back["é"] == value["é"]
    assert back["\ud800"] == value["\ud800"]
    assert back["nested"]["ключ"] == {"値": "中文"}
    assert back["err"] == value["err"] and back["re"] == value["re"] and back["set"] == value["set"]


def test_a_long_list_far_over_the_budget_is_refused_from_a_sample() -> None:
    from run_repl.sandbox.errors import HostResultTooLarge

    rows = [{"id": i, "name": "n" * 40} for i in range(200_000)]
    with pytest.raises(HostResultTooLarge) as refused:
        encode({"rows": rows, "count": 200_000}, max_bytes=1 << 20)
    assert refused.value.path == "$.rows"
    # Near the budget, the sample decides nothing: the real size does.
    small = [{"id": i} for i in range(5_000)]
    text = encode(small, max_bytes=len(encode(small)))
    assert text.startswith("J[")
