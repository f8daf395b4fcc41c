"""Property test: values round-trip guest -> host -> guest unchanged.

Hypothesis generates JavaScript values as source text; a snippet sends each one
to an echo host function (`lambda x: x`) and compares what comes back with a
structural deep equality written in JavaScript (`same` below): NaN equals NaN,
-0 differs from 0, Map and Set entries compare in order, typed arrays by kind
and bytes, Errors by name, message and cause, and shared references or cycles
must map one to one. Many values go in one run (one worker process per run).

The generated values come in families, each its own test, so a codec bug in one
kind of value does not hide the others. Shrinking is off to keep a failing run
short; the failure names the value's source text and the first difference.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from run_repl import (
    UNDEFINED,
    JSBigInt,
    JSError,
    JSMap,
    JSRegExp,
    JSSet,
    JSTypedArray,
    JSUint8Array,
    Limits,
    run,
)

# The guest-side comparison. Sets: DESIGN.md says a JS Set becomes a Python
# `set` when its members are hashable and distinct in Python, and a `set` does
# not keep order; so a Set is compared in order first and, when Python would
# hold it as a `set` (`pythonSet`), as unordered.
SAME_JS = r"""
const tagOf = (v) => Object.prototype.toString.call(v);
function bytesOf(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}
function pyKey(m) {
  // How Python's set would see a member: null when unhashable.
  const t = typeof m;
  if (m === null) return "null";
  if (t === "undefined") return "undef";
  if (t === "boolean") return "num:" + (m ? 1 : 0);
  if (t === "number") return m !== m ? "nan" : "num:" + (m === 0 ? 0 : m);
  if (t === "bigint") return "num:" + m;
  if (t === "string") return "str:" + m;
  const tag = tagOf(m);
  if (tag === "[object Date]") return "date:" + m.getTime();
  if (tag === "[object RegExp]") return "re:" + m.source + "/" + m.flags;
  if (tag === "[object ArrayBuffer]" || tag === "[object Uint8Array]") return "bytes:" + Array.from(bytesOf(m)).join(",");
  if (ArrayBuffer.isView(m)) return "ta:" + tag + Array.from(bytesOf(m)).join(",");
  return null;
}
function pythonSet(s) {
  const keys = new Set();
  for (const m of s) {
    const k = pyKey(m);
    if (k === null || keys.has(k)) return false;
    keys.add(k);
  }
  return true;
}
function show(v) {
  try {
    if (typeof v === "bigint") return v + "n";
    if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
    if (typeof v === "string") return JSON.stringify(v);
    if (v === undefined) return "undefined";
    const t = tagOf(v);
    if (t === "[object Date]") return "Date(" + v.getTime() + ")";
    if (t === "[object Map]" || t === "[object Set]") return t.slice(8, -1) + "(" + v.size + ")";
    return t + " " + JSON.stringify(v, (k, x) => typeof x === "bigint" ? x + "n" : x)?.slice(0, 80);
  } catch (e) { return "<" + tagOf(v) + ">"; }
}
// Structural deep equality: NaN equals NaN, -0 differs from 0, Map and Set
// entries in order, typed arrays by kind and bytes, and shared references or
// cycles must map one to one.
function same(a, b, path = "$", pairs = new Map()) {
  if (typeof a !== typeof b) return path + ": typeof " + typeof a + " vs " + typeof b + " (" + show(a) + " vs " + show(b) + ")";
  if (a === null || b === null || (typeof a !== "object")) {
    return Object.is(a, b) ? null : path + ": " + show(a) + " vs " + show(b);
  }
  if (pairs.has(a)) return pairs.get(a) === b ? null : path + ": shared reference not preserved";
  for (const [x, y] of pairs) if (y === b) return path + ": two values became one reference";
  pairs.set(a, b);
  const ta = tagOf(a), tb = tagOf(b);
  if (ta !== tb) return path + ": kind " + ta + " vs " + tb;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return path + ": prototype differs";
  if (Array.isArray(a)) {
    if (a.length !== b.length) return path + ": length " + a.length + " vs " + b.length;
    for (let i = 0; i < a.length; i++) {
      if ((i in a) !== (i in b)) return path + "[" + i + "]: hole vs value";
      const d = same(a[i], b[i], path + "[" + i + "]", pairs);
      if (d) return d;
    }
    return null;
  }
  switch (ta) {
    case "[object Date]":
      return Object.is(a.getTime(), b.getTime()) ? null : path + ": Date " + a.getTime() + " vs " + b.getTime();
    case "[object RegExp]":
      return a.source === b.source && a.flags === b.flags ? null : path + ": " + a + " vs " + b;
    case "[object Map]": {
      if (a.size !== b.size) return path + ": Map size " + a.size + " vs " + b.size;
      const ea = [...a], eb = [...b];
      for (let i = 0; i < ea.length; i++) {
        const d = same(ea[i][0], eb[i][0], path + "<key " + i + ">", pairs) || same(ea[i][1], eb[i][1], path + "<value " + i + ">", pairs);
        if (d) return d;
      }
      return null;
    }
    case "[object Set]": {
      if (a.size !== b.size) return path + ": Set size " + a.size + " vs " + b.size;
      const ma = [...a], mb = [...b];
      const ordered = new Map(pairs);
      let d = null;
      for (let i = 0; i < ma.length && !d; i++) d = same(ma[i], mb[i], path + "<member " + i + ">", ordered);
      if (!d) { for (const [x, y] of ordered) pairs.set(x, y); return null; }
      // Python holds a Set whose members are hashable and distinct as a `set`,
      // which does not keep insertion order: then compare as unordered.
      if (!pythonSet(a)) return d;
      const rest = mb.slice();
      for (let i = 0; i < ma.length; i++) {
        const j = rest.findIndex((m) => same(ma[i], m, "", new Map(pairs)) === null);
        if (j < 0) return path + "<member " + i + ">: " + show(ma[i]) + " missing (unordered)";
        same(ma[i], rest[j], "", pairs);
        rest.splice(j, 1);
      }
      return null;
    }
    case "[object ArrayBuffer]":
    case "[object DataView]":
    case "[object Int8Array]": case "[object Uint8Array]": case "[object Uint8ClampedArray]":
    case "[object Int16Array]": case "[object Uint16Array]": case "[object Int32Array]":
    case "[object Uint32Array]": case "[object Float16Array]": case "[object Float32Array]":
    case "[object Float64Array]": case "[object BigInt64Array]": case "[object BigUint64Array]": {
      const x = bytesOf(a), y = bytesOf(b);
      if (x.length !== y.length) return path + ": " + ta + " byte length " + x.length + " vs " + y.length;
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return path + ": " + ta + " byte " + i + " differs";
      return null;
    }
    case "[object Error]": {
      if (a.name !== b.name || a.message !== b.message) return path + ": " + a + " vs " + b;
      if (Object.hasOwn(a, "cause") !== Object.hasOwn(b, "cause")) return path + ".cause: present vs absent";
      return Object.hasOwn(a, "cause") ? same(a.cause, b.cause, path + ".cause", pairs) : null;
    }
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.join("\u0001") !== kb.join("\u0001")) return path + ": keys " + JSON.stringify(ka) + " vs " + JSON.stringify(kb);
  for (const k of ka) {
    const d = same(a[k], b[k], path + "[" + JSON.stringify(k) + "]", pairs);
    if (d) return d;
  }
  return null;
}
"""

# ---------------------------------------------------------------- JavaScript literals


def js_string(text: str) -> str:
    """A JavaScript string literal: printable ASCII as itself, every other UTF-16
    unit (NUL, lone surrogates, line separators, emoji halves) as a \\u escape."""
    data = text.encode("utf-16-le", "surrogatepass")
    out = []
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        ch = chr(unit)
        out.append(ch if 0x20 <= unit < 0x7F and ch not in '"\\' else f"\\u{unit:04x}")
    return '"' + "".join(out) + '"'


def js_number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "(-Infinity)"
    if x == 0 and math.copysign(1, x) < 0:
        return "(-0)"
    text = repr(x)
    return f"({text})" if text.startswith("-") else text


def js_int(n: int, suffix: str = "") -> str:
    return f"({n}{suffix})" if n < 0 else f"{n}{suffix}"


# ---------------------------------------------------------------- strategies
# Strings: readable text, and raw UTF-16 units (lone surrogates, NUL, U+2028).
code_units = st.one_of(
    st.integers(0, 0xFFFF),
    st.sampled_from(
        [0x0000, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xD83D, 0xDE00, 0x2028, 0x2029, 0x22, 0x5C, 0xFEFF]
    ),
)
strings = st.one_of(
    st.text(max_size=8),
    st.lists(code_units, max_size=6).map(lambda units: "".join(map(chr, units))),
).map(js_string)

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(js_number),
    st.integers(-(2**53), 2**53).map(js_int),
    st.sampled_from(
        [
            "(-0)",
            "NaN",
            "Infinity",
            "(-Infinity)",
            "9007199254740991",
            "9007199254740993",
            "5e-324",
            "1.7976931348623157e308",
            "0.1",
        ]
    ),
)
bigints = st.one_of(
    st.integers(-(2**80), 2**80),
    st.sampled_from([0, 1, -1, 2**53, 2**63 - 1, -(2**63), 2**64]),
).map(lambda n: js_int(n, "n"))

scalars = st.one_of(
    st.sampled_from(["null", "true", "false", "undefined"]),
    numbers,
    bigints,
    strings,
)

dates = st.one_of(
    st.integers(-8_640_000_000_000_000, 8_640_000_000_000_000).map(js_int),
    st.sampled_from(
        [
            "NaN",
            "0",
            "(-1)",
            "(-62198755200000)",
            "253402300800000",
            "8640000000000000",
            "(-8640000000000000)",
        ]
    ),
).map(lambda ms: f"new Date({ms})")

PATTERNS = [
    "a+", "^\\d{2,3}$", "[\\u0000-\\u001f]", "(?<year>\\d{4})-(?<month>\\d\\d)", "\\/\\*", "",
    "é|ß|😀", "x*?y", "\\bword\\b", "[^\\n]+", "a{2}|b\\.c",
]  # fmt: skip
regexps = st.builds(
    lambda pattern, flags: f"new RegExp({js_string(pattern)}, {js_string(''.join(sorted(flags)))})",
    st.sampled_from(PATTERNS),
    st.sets(st.sampled_from("dgimsuy")),
)

INT_KINDS = {
    "Int8Array": 8, "Uint8Array": 8, "Uint8ClampedArray": 8, "Int16Array": 16,
    "Uint16Array": 16, "Int32Array": 32, "Uint32Array": 32,
}  # fmt: skip
FLOAT_KINDS = ["Float16Array", "Float32Array", "Float64Array"]
BIG_KINDS = ["BigInt64Array", "BigUint64Array"]


@st.composite
def typed_arrays(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from([*INT_KINDS, *FLOAT_KINDS, *BIG_KINDS, "DataView", "ArrayBuffer"]))
    if kind in FLOAT_KINDS:
        items = draw(
            st.lists(
                st.floats(width=32 if kind != "Float64Array" else 64).map(js_number), max_size=5
            )
        )
    elif kind in BIG_KINDS:
        items = draw(
            st.lists(st.integers(-(2**63), 2**64 - 1).map(lambda n: js_int(n, "n")), max_size=4)
        )
    else:
        bits = INT_KINDS.get(kind, 8)
        items = draw(st.lists(st.integers(-(2**bits), 2**bits).map(js_int), max_size=6))
    body = ", ".join(items)
    if kind == "DataView":
        return f"new DataView(new Uint8Array([{body}]).buffer, {1 if items else 0})"
    if kind == "ArrayBuffer":
        return f"new Uint8Array([{body}]).buffer"
    made = f"new {kind}([{body}])"
    # Sometimes a view that does not start at its buffer's first byte.
    return f"{made}.subarray(1)" if items and draw(st.booleans()) else made


ERROR_TYPES = [
    "Error",
    "TypeError",
    "RangeError",
    "SyntaxError",
    "ReferenceError",
    "EvalError",
    "URIError",
]


def errors(causes: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    # A cause that is explicitly `undefined` is not generated: the Python side
    # uses UNDEFINED for "no cause", so `{ cause: undefined }` comes back without one.
    cause = st.one_of(
        st.just(""), causes.filter(lambda c: c != "undefined").map(lambda c: f", {{ cause: {c} }}")
    )
    return st.builds(
        lambda name, message, c: f"new {name}({message}{c})",
        st.sampled_from(ERROR_TYPES),
        strings,
        cause,
    )


specials = st.one_of(dates, regexps, typed_arrays())

plain_keys = st.text(max_size=6).filter(lambda k: k != "__proto__").map(js_string)
odd_keys = st.one_of(
    st.text(max_size=6),
    st.sampled_from(
        [
            "\x00",
            "__proto__",
            "constructor",
            "toString",
            "then",
            "1",
            "-1",
            "",
            "a\x00b",
            "\ud800",
            "length",
        ]
    ),
).map(js_string)


def arrays(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(items, max_size=5).map(lambda xs: "[" + ", ".join(xs) + "]")


def objects(items: st.SearchStrategy[str], keys: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    # Object.fromEntries defines own data properties, so "__proto__" is a key like any other.
    entries = st.lists(st.tuples(keys, items), max_size=5)
    return entries.map(
        lambda es: "Object.fromEntries([" + ", ".join(f"[{k}, {v}]" for k, v in es) + "])"
    )


def maps(keys: st.SearchStrategy[str], items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    entries = st.lists(st.tuples(keys, items), max_size=5)
    return entries.map(lambda es: "new Map([" + ", ".join(f"[{k}, {v}]" for k, v in es) + "])")


def sets(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(items, max_size=5).map(lambda xs: "new Set([" + ", ".join(xs) + "])")


def containers(
    base: st.SearchStrategy[str], keys: st.SearchStrategy[str] = plain_keys, max_leaves: int = 12
) -> st.SearchStrategy[str]:
    return st.recursive(
        base, lambda inner: st.one_of(arrays(inner), objects(inner, keys)), max_leaves=max_leaves
    )


# The families: each is one test below.
JSON_LIKE = containers(scalars)
ODD_KEYS = containers(scalars, keys=odd_keys)
SPECIALS = st.recursive(
    st.one_of(scalars, specials),
    lambda inner: st.one_of(arrays(inner), objects(inner, plain_keys), errors(inner)),
    max_leaves=10,
)
MAP_SET_LEAVES = st.one_of(scalars, specials, arrays(scalars), objects(scalars, plain_keys))
MAPS_AND_SETS = st.recursive(
    MAP_SET_LEAVES,
    lambda inner: st.one_of(maps(inner, inner), sets(inner), arrays(inner)),
    max_leaves=10,
)


@st.composite
def shared_graphs(draw: st.DrawFn) -> str:
    """A value whose parts may be one object used in several places (`share(k, ...)`
    makes the object on its first use and returns the same one after), or a cycle."""

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        shared = st.builds(lambda k, v: f"share({k}, () => ({v}))", st.integers(0, 2), inner)
        cyclic = st.builds(
            lambda form, v: form.replace("VALUE", v),
            st.sampled_from(
                [
                    "(() => { const o = { v: VALUE }; o.self = o; return o })()",
                    "(() => { const a = [VALUE]; a.push(a); return a })()",
                    "(() => { const m = new Map([['v', VALUE]]); m.set(m, m); return m })()",
                    "(() => { const e = new Error('loop', { cause: VALUE }); e.cause = [e]; return e })()",
                ]
            ),
            inner,
        )
        return st.one_of(
            arrays(inner), objects(inner, plain_keys), maps(inner, inner), shared, cyclic
        )

    leaves = st.one_of(
        scalars, specials, st.integers(0, 2).map(lambda k: f"share({k}, () => ({{ id: {k} }}))")
    )
    body = draw(st.recursive(leaves, extend, max_leaves=10))
    return (
        "(() => { const pool = new Map(); "
        "const share = (k, make) => { if (!pool.has(k)) pool.set(k, make()); return pool.get(k) }; "
        f"return {body} }})()"
    )


# ---------------------------------------------------------------- the check
SETTINGS = settings(
    max_examples=20,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BATCH = st.lists  # one run checks a whole batch of values
ECHO = {"h": {"echo": lambda x: x}}


def batch_snippet(values: list[str]) -> str:
    listing = ",\n".join(f"  () => ({v})" for v in values)
    return (
        SAME_JS
        + f"const makers = [\n{listing}\n];\n"
        + """
const sent = makers.map((make) => make());
const results = await Promise.all(sent.map((v) => h.echo(v).then((r) => ({ r }), (e) => ({ e }))));
for (let i = 0; i < sent.length; i++) {
  const x = results[i];
  if (x.e) return { ok: false, index: i, diff: "the echo failed: " + x.e.code + ": " + x.e.message };
  const diff = same(sent[i], x.r);
  if (diff) return { ok: false, index: i, diff };
}
return { ok: true, count: sent.length };
"""
    )


async def assert_round_trips(values: list[str]) -> None:
    result = await run(batch_snippet(values), host_functions=ECHO, limits=Limits(timeout_ms=20_000))
    assert result.status == "ok", f"{result.error}\nvalues: {values}"
    outcome = result.value
    assert outcome["ok"], (
        f"value #{outcome['index']}: {values[outcome['index']]}\n  -> {outcome['diff']}"
    )
    assert outcome["count"] == len(values)


@SETTINGS
@given(BATCH(JSON_LIKE, min_size=1, max_size=25))
@example(["null", "true", "undefined", "(-0)", "NaN", "Infinity", "(-Infinity)", "9007199254740993", "123n", "(-18446744073709551616n)",
          js_string("a\x00b\ud800c\udfff😀\u2028"), "[undefined, null, (-0), [NaN]]", "Object.fromEntries([['a', undefined], ['b', [1, (-0)]]])"])  # fmt: skip
async def test_json_values_numbers_and_strings_round_trip(values: list[str]) -> None:
    await assert_round_trips(values)


@SETTINGS
@given(BATCH(ODD_KEYS, min_size=1, max_size=25))
@example([
    'Object.fromEntries([["\\u0000", 1], ["a\\u0000b", 2]])',
    'Object.fromEntries([["\\u0000", "u"]])',
    'Object.fromEntries([["__proto__", 1], ["x", [1]]])',
    'Object.fromEntries([["__proto__", { a: 1 }]])',
    'Object.fromEntries([["constructor", 1], ["toString", 2], ["then", 3], ["length", 4]])',
])  # fmt: skip
async def test_objects_with_any_keys_round_trip(values: list[str]) -> None:
    await assert_round_trips(values)


@pytest.mark.slow
@SETTINGS
@given(BATCH(SPECIALS, min_size=1, max_size=25))
@example([
    "new Date(0)", "new Date(NaN)", "new Date(8640000000000000)", "new Date(-62198755200000)",
    "/a\\/b/dgimsy", "new RegExp('', 'v')", "new Uint8Array([1, 2, 255])", "new Float64Array([NaN, -0, Infinity])",
    "new BigInt64Array([-1n, 2n])", "new Int16Array([1, -2, 3]).subarray(1)", "new Float16Array([1.5, -0])",
    "new DataView(new Uint8Array([1, 2, 3]).buffer, 1)", "new Uint8Array([9]).buffer",
    "new TypeError('t', { cause: new RangeError('inner', { cause: [1, undefined] }) })", "new Error('plain')",
    "new SyntaxError('s', { cause: null })",
])  # fmt: skip
async def test_dates_regexps_typed_arrays_and_errors_round_trip(values: list[str]) -> None:
    await assert_round_trips(values)


@SETTINGS
@given(BATCH(MAPS_AND_SETS, min_size=1, max_size=25))
@example([
    "new Map([[1, 'number'], ['1', 'string'], [true, 'bool'], [null, 'null'], [undefined, 'u'], [NaN, 'nan'], [[1], 'array'], [{}, 'object']])",
    "new Map([[1, 'number'], [1n, 'bigint']])",
    "new Map([[new Date(0), 'a'], [new Date(0), 'b']])",
    "new Set([1, 'a', null, undefined, 2n, new Date(5)])",
    "new Set([1, true])", "new Set([0, false])", "new Set([[1], [1]])", "new Set([1, 1n])",
    "new Set([new Uint8Array([1]), new Uint8Array([1]).buffer])",
])  # fmt: skip
async def test_maps_and_sets_round_trip(values: list[str]) -> None:
    await assert_round_trips(values)


@pytest.mark.slow
@SETTINGS
@given(BATCH(shared_graphs(), min_size=1, max_size=25))
@example([
    "(() => { const o = { x: 1 }; return [o, o, { o }] })()",
    "(() => { const o = { x: 1 }; o.self = o; return o })()",
    "(() => { const a = [1]; a.push(a); return a })()",
    "(() => { const a = [1]; return new Map([[a, a]]) })()",
    "(() => { const m = new Map(); m.set('me', m); return [m] })()",
    "(() => { const e = new Error('c'); e.cause = e; return e })()",
])  # fmt: skip
async def test_shared_references_and_cycles_round_trip(values: list[str]) -> None:
    await assert_round_trips(values)


# ---------------------------------------------------------------- what Python receives
async def test_python_receives_the_documented_types() -> None:
    received: list[Any] = []

    def echo(x: Any) -> Any:
        received.append(x)
        return x

    result = await run(
        r"""
const values = [10n, 2 ** 53, 7, 1.5, -0, NaN, undefined, null, new Map([[1, 'a'], [[2], 'b']]),
  new Set([1, 'x']), new Set([[1]]), new Uint8Array([1, 2]), new Int16Array([1]), new Uint8Array([3]).buffer,
  new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)), new Date(NaN), /a+/gi, new TypeError('t', { cause: 1 })];
const back = [];
for (const v of values) back.push(await h.echo(v));
return back.map((b, i) => same(values[i], b))
""".replace("const values", SAME_JS + "\nconst values"),
        host_functions={"h": {"echo": echo}},
    )
    assert result.status == "ok", result.error
    assert result.value == [None] * 18
    (big, unsafe, small, fraction, neg_zero, nan, undef, null, jsmap, hashable_set, list_set,
     u8, i16, buffer, date, bad_date, regexp, error) = received  # fmt: skip
    assert type(big) is JSBigInt and big == 10
    assert type(unsafe) is float and unsafe == 2**53
    assert type(small) is int and small == 7
    assert type(fraction) is float
    assert type(neg_zero) is float and math.copysign(1, neg_zero) < 0
    assert type(nan) is float and math.isnan(nan)
    assert undef is UNDEFINED and null is None
    assert type(jsmap) is JSMap and jsmap.pairs() == [(1, "a"), ([2], "b")]
    assert type(hashable_set) is set and hashable_set == {1, "x"}
    assert type(list_set) is JSSet and list_set.members == [[1]]
    assert isinstance(u8, bytes) and u8 == b"\x01\x02"
    assert type(u8) is JSUint8Array  # each array its own object
    assert i16 == JSTypedArray("Int16Array", b"\x01\x00")
    assert bytes(buffer) == b"\x03" and type(buffer).__name__ == "JSArrayBuffer"
    assert date == dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC)
    assert not bad_date.valid
    assert regexp == JSRegExp("a+", "gi")
    assert error == JSError("TypeError", "t", cause=1)
