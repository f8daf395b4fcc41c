"""Escape attempts against the guest sandbox: each must fail safely.

"Safely" means: the attempt throws inside the guest (the snippet catches it and
returns a marker) or the run ends with a specific error code; no host function
runs that should not; and a following run still sees a clean, working sandbox
(`assert_sandbox_clean`): the same globals, unpolluted prototypes, working host
calls and the real clock.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from typing import Any

import pytest

from run_repl import HostError, JSMap, Limits, RunResult, run

# The global object's own names: the ECMAScript builtins QuickJS provides, and
# what DESIGN.md adds. Nothing else (no eval, no bridge, no timers, no modules).
ES_BUILTINS = frozenset(
    {
        "AggregateError", "Array", "ArrayBuffer", "AsyncDisposableStack", "BigInt",
        "BigInt64Array", "BigUint64Array", "Boolean", "DataView", "Date",
        "DisposableStack", "Error", "EvalError", "Float16Array", "Float32Array",
        "Float64Array", "Function", "Infinity", "Int16Array", "Int32Array", "Int8Array",
        "Iterator", "JSON", "Map", "Math", "NaN", "Number", "Object", "Promise", "Proxy",
        "RangeError", "ReferenceError", "Reflect", "RegExp", "Set", "String",
        "SuppressedError", "Symbol", "SyntaxError", "TypeError", "URIError",
        "Uint16Array", "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakMap",
        "WeakSet", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent",
        "escape", "globalThis", "isFinite", "isNaN", "parseFloat", "parseInt",
        "undefined", "unescape",
    }
)  # fmt: skip
SANDBOX_GLOBALS = frozenset(
    {"console", "URL", "URLSearchParams", "TextEncoder", "TextDecoder", "structuredClone", "crypto"}
)
HOST_NAMESPACES = frozenset({"ns"})
EXPECTED_GLOBALS = ES_BUILTINS | SANDBOX_GLOBALS | HOST_NAMESPACES

OBJECT_PROTOTYPE_NAMES = sorted(
    [
        "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
        "__proto__", "constructor", "hasOwnProperty", "isPrototypeOf",
        "propertyIsEnumerable", "toLocaleString", "toString", "valueOf",
    ]
)  # fmt: skip

FAST = Limits(timeout_ms=5_000)


class Host:
    """The host functions every escape test gets, recording what reached Python."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def functions(self) -> dict[str, Any]:
        def fn(*args: Any) -> Any:
            self.calls.append(("fn", args))
            return args[0] if args else None

        def boom() -> None:
            self.calls.append(("boom", ()))
            raise ValueError("secret: hunter2")

        def refuse() -> None:
            self.calls.append(("refuse", ()))
            raise HostError("refused on purpose", code="NOPE")

        def g() -> int:
            self.calls.append(("sub.g", ()))
            return 1

        return {"ns": {"fn": fn, "boom": boom, "refuse": refuse, "sub": {"g": g}}}


async def guest(source: str, host: Host | None = None, limits: Limits = FAST) -> RunResult:
    return await run(source, host_functions=(host or Host()).functions(), limits=limits)


def _live_children() -> int:
    """Worker processes of this test process that are still running (not zombies)."""
    me = str(os.getpid())
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            count += 1
    return count


CLEAN_CHECK = r"""
const names = Object.getOwnPropertyNames(globalThis).sort();
const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
const frozen = [Object.prototype, Array.prototype, Function.prototype, Promise.prototype,
  Object, Array, JSON, Math, Date, Error, Reflect, console].every(Object.isFrozen);
const sent = { a: [1, 2], d: new Date(5), m: new Map([[1, 'x']]), s: 'a\u0000b' };
const back = await ns.fn(sent);
const echoed = back.a[1] === 2 && back.d.getTime() === 5 && back.m.get(1) === 'x' && back.s === 'a\u0000b';
return {
  names, protoNames, frozen, echoed,
  json: JSON.stringify({ k: [1] }),
  pwned: typeof globalThis.pwned,
  now: Date.now(),
  fnCtor: (() => { try { (() => 0).constructor('return 1'); return 'open' } catch (e) { return 'closed' } })(),
}
"""


async def assert_sandbox_clean() -> None:
    """A following run: the same globals, clean prototypes, host calls and clock work."""
    host = Host()
    before = time.time() * 1000
    result = await guest(CLEAN_CHECK, host)
    assert result.status == "ok", result.error
    value = result.value
    assert set(value["names"]) == EXPECTED_GLOBALS
    assert value["protoNames"] == OBJECT_PROTOTYPE_NAMES
    assert value["frozen"] is True
    assert value["echoed"] is True
    assert value["json"] == '{"k":[1]}'
    assert value["pwned"] == "undefined"
    assert value["fnCtor"] == "closed"
    assert before - 5_000 <= value["now"] <= time.time() * 1000 + 5_000
    assert [c[0] for c in host.calls] == ["fn"]
    assert isinstance(host.calls[0][1][0]["m"], JSMap)
    # Killed or finished workers do not pile up: at most the spares remain.
    assert _live_children() <= 4


def attempt_then_check(attempt: str) -> str:
    """A snippet that runs `attempt` (statements; may await) and reports whether it
    got through, then checks in the same run that the engine is untouched: the
    globals, Object.prototype, JSON and a host call whose arguments and result go
    through the codec (array, Date, Map, BigInt)."""
    return f"""
let attempt;
try {{ const r = await (async () => {{ {attempt} }})(); attempt = 'ESCAPED ' + String(r) }}
catch (e) {{ attempt = 'blocked ' + (e && e.name) }}
const expected = new Set({json.dumps(sorted(EXPECTED_GLOBALS))});
const names = Object.getOwnPropertyNames(globalThis);
const back = await ns.fn({{ a: [1, 2], d: new Date(5), m: new Map([[1, 'x']]), n: 2n ** 64n }});
return {{
  attempt,
  extra: names.filter((n) => !expected.has(n)).sort(),
  missing: [...expected].filter((n) => !names.includes(n)),
  proto: Object.getOwnPropertyNames(Object.prototype).sort(),
  echo: back.a[1] === 2 && back.d.getTime() === 5 && back.m.get(1) === 'x' && back.n === 2n ** 64n,
  json: JSON.stringify({{ k: [1], s: 'x' }}),
  polluted: typeof ({{}}).polluted,
  pwned: typeof globalThis.pwned,
  nsKeys: Object.keys(ns), fnName: ns.fn.name, evil: typeof Object.getOwnPropertyDescriptor(ns, 'evil'),
  now: Date.now(), random: Math.random(), uuid: /^[0-9a-f]{{8}}-[0-9a-f]{{4}}-4/.test(crypto.randomUUID()),
}}
"""


async def assert_blocked(attempt: str, host: Host | None = None) -> None:
    host = host or Host()
    result = await guest(attempt_then_check(attempt), host)
    assert result.status == "ok", result.error
    value = result.value
    assert value["attempt"].startswith("blocked "), value["attempt"]
    assert value["extra"] == [] and value["missing"] == []
    assert value["proto"] == OBJECT_PROTOTYPE_NAMES
    assert value["echo"] is True
    assert value["json"] == '{"k":[1],"s":"x"}'
    assert value["polluted"] == value["pwned"] == value["evil"] == "undefined"
    assert value["nsKeys"] == ["fn", "boom", "refuse", "sub"] and value["fnName"] == "fn"
    assert abs(value["now"] - time.time() * 1000) < 60_000
    assert 0 <= value["random"] < 1 and value["uuid"] is True
    # Only the check's own call reached Python, with what the guest sent.
    assert [name for name, _ in host.calls][-1:] == ["fn"]
    sent = host.calls[-1][1][0]
    assert sent["a"] == [1, 2] and isinstance(sent["m"], JSMap) and sent["n"] == 2**64


# ---------------------------------------------------------------- dynamic code
# Every way to turn a string into code. `6*7` is the payload: 42 means it ran.
DYNAMIC_CODE = {
    "eval": "return eval('6*7')",
    "indirect_eval": "return (0, globalThis['ev' + 'al'])('6*7')",
    "Function_call": "return Function('return 6*7')()",
    "new_Function": "return new Function('return 6*7')()",
    "arrow_constructor": "return (() => {}).constructor('return 6*7')()",
    "class_constructor": "return (class {}).constructor('return 6*7')()",
    "async_function_constructor": "return Object.getPrototypeOf(async function () {}).constructor('return 6*7')()",
    "generator_function_constructor": "return Object.getPrototypeOf(function* () {}).constructor('yield 6*7')().next().value",
    "async_generator_function_constructor": "return (await Object.getPrototypeOf(async function* () {}).constructor('yield 6*7')().next()).value",
    "generator_object_constructor_chain": "return (function* () {})().constructor.constructor('yield 6*7')().next().value",
    "reflect_construct_Function": "return Reflect.construct(Function, ['return 6*7'])()",
    "reflect_construct_with_new_target": "return Reflect.construct(Function, ['return 6*7'], class {})()",
    "bound_Function": "return Function.prototype.bind.call(Function, null, 'return 6*7')()()",
    "subclass_Function": "return new (class extends Function {})('return 6*7')()",
    "host_function_constructor": "return ns.fn.constructor('return 6*7')()",
    "host_nested_function_constructor": "return ns.sub.g.constructor('return 6*7')()",
    "host_namespace_constructor": "return ns.constructor('return 6*7')()",
    "host_result_object": "return (await ns.fn({ a: 1 })).constructor.constructor('return 6*7')()",
    "host_result_array": "return (await ns.fn([1])).constructor.constructor('return 6*7')()",
    "host_result_date": "return (await ns.fn(new Date(0))).constructor.constructor('return 6*7')()",
    "host_result_map": "return (await ns.fn(new Map([[1, 2]]))).constructor.constructor('return 6*7')()",
    "host_result_error": "return (await ns.fn(new Error('e'))).constructor.constructor('return 6*7')()",
    "host_result_bytes": "return (await ns.fn(new Uint8Array([1]))).constructor.constructor('return 6*7')()",
    "host_call_promise": "const p = ns.fn(1); try { return p.constructor.constructor('return 6*7')() } finally { await p }",
    "host_error_object": "try { await ns.boom() } catch (e) { return e.constructor.constructor('return 6*7')() }",
    "host_error_proto": "try { await ns.refuse() } catch (e) { return Object.getPrototypeOf(e).constructor.constructor('return 6*7')() }",
    "unknown_member_error": "try { ns.nope } catch (e) { return e.constructor.constructor('return 6*7')() }",
    "type_error_object": "try { null.x } catch (e) { return e.constructor.constructor('return 6*7')() }",
    "console_log_constructor": "return console.log.constructor('return 6*7')()",
    "structuredClone_constructor": "return structuredClone.constructor('return 6*7')()",
    "structuredClone_result": "return structuredClone({ a: 1 }).constructor.constructor('return 6*7')()",
    "URL_constructor": "return URL.constructor('return 6*7')()",
    "URL_instance": "return new URL('https://example.com/').constructor.constructor('return 6*7')()",
    "TextEncoder_result": "return new TextEncoder().encode('a').constructor.constructor('return 6*7')()",
    "crypto_randomUUID_constructor": "return crypto.randomUUID.constructor('return 6*7')()",
    "iterator_helper_constructor": "return [].values().map((x) => x).constructor.constructor('return 6*7')()",
    "assign_Function_prototype_constructor": "Function.prototype.constructor = function () { return () => 42 }; return (() => 0).constructor('x')()",
    "redefine_Function_prototype_constructor": "Object.defineProperty(Function.prototype, 'constructor', { value: () => () => 42 }); return (() => 0).constructor()()",
}


@pytest.mark.parametrize("attempt", DYNAMIC_CODE.values(), ids=DYNAMIC_CODE.keys())
async def test_no_dynamic_code_by_any_path(attempt: str) -> None:
    await assert_blocked(attempt)


async def test_poisoned_constructors_cannot_be_unpoisoned() -> None:
    result = await guest(r"""
const protos = [Function.prototype,
  Object.getPrototypeOf(async function () {}),
  Object.getPrototypeOf(function* () {}),
  Object.getPrototypeOf(async function* () {})];
return protos.map((p) => {
  const d = Object.getOwnPropertyDescriptor(p, 'constructor');
  return [d.writable, d.configurable, Object.isFrozen(p), Object.isFrozen(d.value)];
}).concat([[Object.getOwnPropertyDescriptor(globalThis, 'Function').writable,
  Object.getOwnPropertyDescriptor(globalThis, 'Function').configurable]])
""")
    assert result.value == [[False, False, True, True]] * 4 + [[False, False]]


# ---------------------------------------------------------------- stack-trace APIs
async def test_prepare_stack_trace_cannot_be_installed() -> None:
    host = Host()
    result = await guest(
        r"""
const out = {};
try { Error.prepareStackTrace = (e, sites) => sites; out.set = 'set' } catch (e) { out.set = e.name }
try { Object.defineProperty(Error, 'prepareStackTrace', { value: (e, s) => s }); out.define = 'defined' } catch (e) { out.define = e.name }
class Sub extends Error {}
Sub.prepareStackTrace = (e, sites) => sites;
out.subStack = typeof new Sub('x').stack;
out.stack = typeof new Error('x').stack;
out.hasPrepare = Object.hasOwn(Error, 'prepareStackTrace');
return out
""",
        host,
    )
    assert result.value == {
        "set": "TypeError",
        "define": "TypeError",
        "subStack": "string",
        "stack": "string",
        "hasPrepare": False,
    }


async def test_capture_stack_trace_gives_text_not_call_sites() -> None:
    # captureStackTrace may exist, but it only writes a string: no CallSite
    # objects, so no receivers or functions of the engine's frames.
    result = await guest(r"""
const o = {};
if (typeof Error.captureStackTrace === 'function') {
  Error.captureStackTrace(o);
  Error.captureStackTrace(o, ns.fn);
}
const d = Object.getOwnPropertyDescriptor(o, 'stack');
const values = d ? [d.value, d.get, d.set] : [];
return {
  kinds: values.map((v) => typeof v).filter((t) => t !== 'undefined'),
  fnOnly: values.filter((v) => typeof v === 'function' || (typeof v === 'object' && v !== null)).length,
}
""")
    assert result.status == "ok", result.error
    assert result.value["fnOnly"] == 0
    assert set(result.value["kinds"]) <= {"string"}


# ---------------------------------------------------------------- prototype pollution
# Each must throw; the same run then makes a host call whose arguments and result
# go through the engine's codec (arrays, objects, Map, Date, BigInt), and checks
# JSON, the globals and Object.prototype (`assert_blocked`).
POLLUTION = {
    "Object_prototype_new_key": "Object.prototype.polluted = 1",
    "Object_prototype_toJSON": "Object.prototype.toJSON = function () { return 'owned' }",
    "Object_prototype_then_getter": "Object.defineProperty(Object.prototype, 'then', { get() { return (r) => r('owned') } })",
    "Object_prototype_setter_on_key": "Object.defineProperty(Object.prototype, 'a', { set(v) { globalThis.pwned = v } })",
    "Object_prototype_proto_swap": "Object.setPrototypeOf(Object.prototype, { polluted: 1 })",
    "Object_prototype_toString": "Object.prototype.toString = () => 'owned'",
    "Array_prototype_push": "Array.prototype.push = function () { return 0 }",
    "Array_prototype_index_setter": "Object.defineProperty(Array.prototype, '0', { set(v) { globalThis.pwned = v } })",
    "Array_prototype_iterator": "Array.prototype[Symbol.iterator] = function* () { yield 'owned' }",
    "Promise_prototype_then": "Promise.prototype.then = function () { return 'owned' }",
    "Promise_prototype_then_define": "Object.defineProperty(Promise.prototype, 'then', { value: () => 'owned' })",
    "Promise_species": "Object.defineProperty(Promise, Symbol.species, { get() { return function () {} } })",
    "JSON_stringify": "JSON.stringify = () => 'owned'",
    "Function_prototype_call": "Function.prototype.call = function () { return 'owned' }",
    "Function_prototype_apply": "Function.prototype.apply = function () { return 'owned' }",
    "Reflect_apply": "Reflect.apply = () => 'owned'",
    "Map_prototype_set": "Map.prototype.set = function () { return this }",
    "Set_prototype_add": "Set.prototype.add = function () { return this }",
    "Date_prototype_getTime": "Date.prototype.getTime = () => 0",
    "Symbol_iterator": "Symbol.iterator = Symbol('x')",
    "Error_prototype_toString": "Error.prototype.toString = () => 'owned'",
    "Object_keys": "Object.keys = () => []",
    "Object_defineProperty": "Object.defineProperty = () => ({})",
}


@pytest.mark.parametrize("attempt", POLLUTION.values(), ids=POLLUTION.keys())
async def test_prototype_pollution_fails_and_engine_still_works(attempt: str) -> None:
    await assert_blocked(attempt)


async def test_own_property_overrides_stay_local() -> None:
    # The "override mistake" fix lets an object shadow a frozen prototype's
    # method; that must not leak to other objects or to the engine.
    result = await guest(r"""
const o = {}; o.toString = () => 'mine';
const a = [1]; a.push = () => 'mine';
const e = new Error('x'); e.name = 'Mine';
const back = await ns.fn([o.toString === Object.prototype.toString, a.push(2), [].push(5), e.name]);
return [back, String({}), new Error('y').name, ({}).toString === Object.prototype.toString]
""")
    assert result.value == [[False, "mine", 1, "Mine"], "[object Object]", "Error", True]


# ---------------------------------------------------------------- replacing globals and namespaces
REPLACE = {
    "assign_JSON": "JSON = { stringify: () => 'owned', parse: () => 'owned' }",
    "assign_Promise": "Promise = function () {}",
    "assign_Object": "Object = null",
    "assign_Date": "Date = function () { return 0 }",
    "assign_Date_now": "Date.now = () => 0",
    "assign_Math_random": "Math.random = () => 0.5",
    "define_Math_random": "Object.defineProperty(Math, 'random', { value: () => 0.5 })",
    "assign_crypto_randomUUID": "crypto.randomUUID = () => 'fixed'",
    "assign_console_log": "console.log = () => {}",
    "delete_Promise": "delete globalThis.Promise",
    "assign_ns": "ns = { fn: () => 'fake' }",
    "assign_globalThis_ns": "globalThis.ns = { fn: () => 'fake' }",
    "delete_globalThis_ns": "delete globalThis.ns",
    "define_globalThis_ns": "Object.defineProperty(globalThis, 'ns', { value: { fn: () => 'fake' } })",
    "reflect_set_ns": "if (!Reflect.set(globalThis, 'ns', {})) throw new TypeError('refused')",
    "add_function_to_namespace": "ns.evil = () => 'fake'",
    "define_function_on_namespace": "Object.defineProperty(ns, 'evil', { value: () => 'fake' })",
    "replace_function_in_namespace": "ns.fn = () => 'fake'",
    "delete_function_in_namespace": "delete ns.fn",
    "add_to_nested_namespace": "ns.sub.evil = () => 'fake'",
    "namespace_prototype": "Object.setPrototypeOf(ns, { evil() { return 'fake' } })",
    "host_function_name": "Object.defineProperty(ns.fn, 'name', { value: 'other' })",
}


@pytest.mark.parametrize("attempt", REPLACE.values(), ids=REPLACE.keys())
async def test_replacing_globals_and_namespaces_fails(attempt: str) -> None:
    await assert_blocked(attempt)


async def test_changing_the_global_prototype_does_not_reach_the_engine() -> None:
    host = Host()
    result = await guest(
        r"""
let note;
try {
  Object.setPrototypeOf(globalThis, new Proxy({}, {
    has: () => true, get: (t, k) => (typeof k === 'string' ? 'hijacked' : undefined),
  }));
  note = 'set';
} catch (e) { note = 'blocked ' + e.name }
const back = await ns.fn([1, new Map([[1, 2]]), 3n]);
return [back[0], back[1] instanceof Map, back[1].get(1), typeof back[2]]
""",
        host,
    )
    assert result.value == [1, True, 2, "bigint"]
    await assert_sandbox_clean()


# ---------------------------------------------------------------- capabilities that must not exist
MISSING = {
    "import_os": "import('os')",
    "import_qjs_std": "import('qjs:std')",
    "import_file": "import('/etc/passwd')",
    "import_data_url": "import('data:text/javascript,export default 42')",
    "require": "require('fs')",
    "process_env": "process.env",
    "std_global": "std.loadFile('/etc/passwd')",
    "os_global": "os.exec(['true'])",
    "fetch": "fetch('https://example.com/')",
    "setTimeout": "new Promise((r) => setTimeout(r, 0))",
    "setInterval": "setInterval(() => {}, 1)",
    "queueMicrotask": "queueMicrotask(() => {})",
    "WebAssembly": "new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))",
    "SharedArrayBuffer": "new SharedArrayBuffer(8)",
    "Atomics": "Atomics.wait(new Int32Array(4), 0, 0, 1)",
    "WeakRef": "new WeakRef({})",
    "FinalizationRegistry": "new FinalizationRegistry(() => {})",
    "performance": "performance.now()",
    "bridge_rr_send": "__rr_send('log', 'log', '\"x\"')",
    "bridge_via_globalThis": "globalThis.__rr_send('call', 1, 'ns.fn', 'J', '[1]')",
    "print": "print('x')",
    "arguments_callee": "(function () { return arguments.callee })()",
    "function_caller": "(function f() { return f.caller })()",
    "host_function_caller": "ns.fn.caller",
    "new_host_function": "new ns.fn(1)",
}


@pytest.mark.parametrize("expression", MISSING.values(), ids=MISSING.keys())
async def test_capability_is_missing(expression: str) -> None:
    await assert_blocked(f"return {expression}")


async def test_global_names_are_exactly_builtins_sandbox_globals_and_hosts() -> None:
    result = await guest(r"""
return {
  names: Object.getOwnPropertyNames(globalThis),
  symbols: Object.getOwnPropertySymbols(globalThis).map(String),
  proto: Object.getPrototypeOf(globalThis) === Object.prototype,
  cryptoKeys: Object.getOwnPropertyNames(crypto),
  consoleFns: Object.values(console).every((f) => typeof f === 'function'),
}
""")
    value = result.value
    assert sorted(value["names"]) == sorted(EXPECTED_GLOBALS)
    assert value["symbols"] == ["Symbol(Symbol.toStringTag)"]
    assert value["proto"] is True
    assert value["cryptoKeys"] == ["randomUUID"]
    assert value["consoleFns"] is True


async def test_strict_mode_everywhere() -> None:
    result = await guest(r"""
function sloppyLooking() { return this }
return [typeof this, typeof sloppyLooking(), (function () { 'use strict'; return typeof this })(),
  (() => { try { undeclared = 1; return 'created' } catch (e) { return e.name } })()]
""")
    assert result.value == ["undefined", "undefined", "undefined", "ReferenceError"]


# ---------------------------------------------------------------- host call promises
async def test_species_games_on_host_call_promises() -> None:
    host = Host()
    result = await guest(
        r"""
const out = {};
const p = ns.fn(1);
try { p.constructor.prototype.then = () => 'owned'; out.protoThen = 'CHANGED' } catch (e) { out.protoThen = e.name }
try { Object.defineProperty(p.constructor, Symbol.species, { value: function () {} }); out.species = 'CHANGED' } catch (e) { out.species = e.name }
// The snippet may decorate its own promise object; that only affects itself.
Object.defineProperty(p, 'constructor', { value: { [Symbol.species]: function (executor) { executor(() => {}, () => {}) } } });
p.then((x) => x);
out.value = await p;
class Evil extends Promise { static get [Symbol.species]() { return Promise } then(a, b) { return super.then(a, b) } }
out.viaEvil = await Evil.resolve(ns.fn(2));
out.all = await Promise.all([ns.fn(3), ns.fn(4)]);
out.chained = await ns.fn(5).then((x) => x + 1);
const last = ns.fn(6).then(() => 0);
out.thenResult = Object.getPrototypeOf(last) === Promise.prototype;
await last;
return out
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value == {
        "protoThen": "TypeError",
        "species": "TypeError",
        "value": 1,
        "viaEvil": 2,
        "all": [3, 4],
        "chained": 6,
        "thenResult": True,
    }
    assert [c[1] for c in host.calls] == [(1,), (2,), (3,), (4,), (5,), (6,)]
    await assert_sandbox_clean()


# ---------------------------------------------------------------- hostile host arguments
async def test_thenable_argument_is_refused_not_called() -> None:
    host = Host()
    result = await guest("await ns.fn({ then(resolve) { resolve(42) } })", host)
    assert result.error is not None and result.error.code == "RUN_ARGUMENT_NOT_CLONEABLE"
    assert "arguments[0].then" in result.error.message
    assert host.calls == []
    await assert_sandbox_clean()


HOSTILE_ARGUMENTS = {
    "getter_that_throws": "({ get x() { throw new Error('getter says no') } })",
    "getter_that_calls_host": "({ get x() { globalThis.inner = ns.fn('inner'); throw new Error('getter says no') } })",
    "proxy_ownKeys_throws": "new Proxy({}, { ownKeys() { throw new Error('trap says no') } })",
    "proxy_get_throws": "new Proxy({ a: 1 }, { get() { throw new Error('trap says no') } })",
    "proxy_getPrototypeOf_throws": "new Proxy({}, { getPrototypeOf() { throw new Error('trap says no') } })",
    "revoked_proxy": "(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()",
    "array_proxy_huge_length": "new Proxy([], { get: (t, k) => (k === 'length' ? 2 ** 32 - 1 : 0) })",
    "sparse_array_max_length": "(() => { const a = []; a.length = 2 ** 32 - 1; return a })()",
    "symbol_keyed_function": "({ [Symbol('s')]: 1, f() {} })",
    "class_instance": "new (class Secret { constructor() { this.x = 1 } })()",
    "weakmap": "new WeakMap()",
    "generator": "(function* () {})()",
    "host_function_itself": "ns.fn",
    "host_namespace_itself": "ns",
}


@pytest.mark.parametrize("argument", HOSTILE_ARGUMENTS.values(), ids=HOSTILE_ARGUMENTS.keys())
async def test_hostile_arguments_fail_in_the_guest_and_never_reach_python(argument: str) -> None:
    host = Host()
    result = await guest(
        f"""
let out;
try {{ const r = await ns.fn({argument}); out = 'SENT ' + JSON.stringify(r) }}
catch (e) {{ out = 'caught ' + e.name }}
if (globalThis.inner) await globalThis.inner;
return out
""",
        host,
        # A smaller heap makes the huge-length proxy run out of memory sooner.
        Limits(timeout_ms=5_000, memory_bytes=(16 if "Proxy([]" in argument else 64) << 20),
    )
    assert result.status == "ok", result.error
    assert result.value.startswith("caught "), result.value
    # The outer call never reached Python (a getter's own inner call may have).
    assert all(args != () and args[0] == "inner" for _, args in host.calls), host.calls
    await assert_sandbox_clean()


async def test_lying_proxy_argument_sends_only_plain_data() -> None:
    host = Host()
    result = await guest(
        "const r = await ns.fn(new Proxy({ a: 1 }, { ownKeys: () => ['a', 'b'], get: (t, k) => String(k) })); return r",
        host,
    )
    assert result.status == "ok", result.error
    assert host.calls == [("fn", ({"a": "a"},))]
    assert type(host.calls[0][1][0]) is dict


async def test_deeply_nested_argument_is_refused_with_a_path() -> None:
    # 10,000 levels: beyond the codec's depth limit, so the call is refused as
    # RUN_ARGUMENT_NOT_CLONEABLE (not a stack overflow inside the encoder).
    host = Host()
    result = await guest(
        r"""
let a = [];
for (let i = 0; i < 10000; i++) a = [a];
try { await ns.fn(a); return 'SENT' } catch (e) { return [e.name, e.code, e.message.slice(0, 200)] }
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value[1] == "RUN_ARGUMENT_NOT_CLONEABLE", result.value
    assert "arguments[0]" in result.value[2]
    assert host.calls == []
    await assert_sandbox_clean()


async def test_cyclic_argument_reaches_python_with_its_cycle() -> None:
    host = Host()
    result = await guest(
        r"""
const o = { name: 'root', list: [] };
o.self = o; o.list.push(o);
const back = await ns.fn(o);
return [back.self === back, back.list[0] === back, back.name]
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value == [True, True, "root"]
    sent = host.calls[0][1][0]
    assert sent["self"] is sent and sent["list"][0] is sent


async def test_nul_and_lone_surrogates_reach_the_host_and_the_log_intact() -> None:
    host = Host()
    text = "a\x00b\ud800c\udc00d\U0001f600\u2028e"
    result = await guest(
        r"""
const s = 'a\u0000b\ud800c\udc00d\ud83d\ude00\u2028e';
const back = await ns.fn(s, { [s]: s });
console.log(s);
console.log({ s });
return [back === s, back.length, s.length]
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value == [True, 11, 11]
    assert host.calls == [("fn", (text, {text: text}))]
    logged = result.logs[0].text
    # A lone surrogate cannot be shown as text: it may become U+FFFD, nothing else changes.
    assert logged in (text, text.replace("\ud800", "\ufffd").replace("\udc00", "\ufffd"))
    # Inspecting an object shows the NUL escaped, as Node does.
    assert "a\\x00b" in result.logs[1].text or "a\\u0000b" in result.logs[1].text
    await assert_sandbox_clean()


async def test_reentrant_host_call_from_an_argument_getter() -> None:
    host = Host()
    result = await guest(
        r"""
let inner;
const arg = { get x() { inner = ns.fn('inner'); return 1 } };
const outer = await ns.fn(arg);
return [outer, await inner]
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value == [{"x": 1}, "inner"]
    assert sorted(str(c[1][0]) for c in host.calls) == ["inner", "{'x': 1}"]


# ---------------------------------------------------------------- logs
async def test_huge_log_line_is_cut() -> None:
    result = await guest("console.log('x'.repeat(1 << 18)); console.log('é'.repeat(1 << 18)); 1")
    assert result.status == "ok", result.error
    assert len(result.logs) == 2
    for line in result.logs:
        assert len(line.text.encode("utf-8")) <= 2048
        assert "cut" in line.text
    await assert_sandbox_clean()


async def test_huge_number_of_log_lines_is_bounded() -> None:
    result = await guest("for (let i = 0; i < 200000; i++) console.log(i); 'done'")
    assert result.status == "ok", result.error
    assert result.value == "done"
    assert result.logs_dropped == 200000 - 500
    assert [line.text for line in result.logs[:3]] == ["0", "1", "2"]
    await assert_sandbox_clean()


async def test_console_survives_hostile_arguments() -> None:
    result = await guest(r"""
console.log(new Proxy({}, { ownKeys() { throw new Error('t') }, get() { throw new Error('g') }, getPrototypeOf() { throw new Error('p') } }));
console.log({ get x() { throw new Error('gx') } });
console.log({ toString() { throw new Error('ts') }, [Symbol.toPrimitive]() { throw new Error('tp') } });
const cyc = { a: 1 }; cyc.self = cyc; console.log(cyc);
let deep = []; for (let i = 0; i < 10000; i++) deep = [deep]; console.log(deep);
try { console.table(new Proxy([], { get() { throw new Error('table') } })) } catch {}
'still here'
""")
    assert result.status == "ok", result.error
    assert result.value == "still here"
    assert len(result.logs) >= 5


# ---------------------------------------------------------------- wrapper breakout
BREAKOUTS = {
    "close_and_reopen": "}); globalThis.pwned = 1; (async function(){",
    "close_call_reopen": "})(); globalThis.pwned = (function () { return this })() === globalThis; (async function(){ return globalThis.pwned",
    "comment_close": "*/ }); globalThis.pwned = 1; (async function(){ /*",
    "open_comment_at_end": "1 /*",
    "line_separator_comment": "// x\u2028}); globalThis.pwned = 1; (async function(){",
    "paragraph_separator_comment": "// x\u2029}); globalThis.pwned = 1; (async function(){",
    "html_open_comment": "1 <!-- }); globalThis.pwned = 1; (async function(){",
    "html_close_comment": "1\n--> }); globalThis.pwned = 1; (async function(){",
    "regex_vs_division": "let x = 4, g = 2; x /}); globalThis.pwned = 1; (async function(){/ g",
    "template_literal": "`${ '`' }}); globalThis.pwned = 1; (async function(){`",
    "hashbang": "#!/usr/bin/env node\n}); globalThis.pwned = 1; (async function(){",
    "unicode_escape_brace": "\\u007d); globalThis.pwned = 1; (async function(){",
    "typescript_type_with_brace": "let x: { a: 1 } = { a: 1 }}); globalThis.pwned = 1; (async function(){ return 1",
}


@pytest.mark.parametrize("source", BREAKOUTS.values(), ids=BREAKOUTS.keys())
async def test_source_cannot_break_out_of_the_wrapper(source: str) -> None:
    result = await guest(source + "\nreturn typeof globalThis.pwned")
    if result.status == "ok":
        assert result.value == "undefined"
    else:
        assert result.error is not None
        assert result.error.code in ("RUN_SYNTAX_ERROR", "RUN_EXCEPTION")
    await assert_sandbox_clean()


async def test_braces_in_strings_regexes_and_comments_are_fine() -> None:
    result = await guest(
        "const a = '})'; const b = /}\\)/.source; /* }) */ // })\n[a, b, `${'})'}`]"
    )
    assert result.value == ["})", "}\\)", "})"]


# ---------------------------------------------------------------- the run's value
async def test_value_getter_that_throws_is_a_run_exception() -> None:
    result = await guest("({ ok: 1, get bad() { throw new Error('getter in the value') } })")
    assert result.error is not None and result.error.code == "RUN_EXCEPTION"
    assert "getter in the value" in result.error.message
    await assert_sandbox_clean()


DETACHED = {"RUN_DETACHED_CALL"}
SERIALIZING_CALLS = {
    # The value is a host call's promise as well: either refusal is right.
    "toJSON_returns_host_promise": (
        "({ toJSON() { return ns.fn(1) } })",
        DETACHED | {"RUN_VALUE_NOT_SERIALIZABLE"},
    ),
    "toJSON_fires_host_call": ("({ toJSON() { ns.fn(1); return 5 } })", DETACHED),
    "getter_fires_host_call": ("({ get v() { ns.fn(1); return 5 } })", DETACHED),
    "proxy_trap_fires_host_call": (
        "[new Proxy({}, { ownKeys() { ns.fn(1); return [] } })]",
        DETACHED,
    ),
}


@pytest.mark.parametrize("case", SERIALIZING_CALLS.values(), ids=SERIALIZING_CALLS.keys())
async def test_value_serialization_cannot_call_the_host(case: tuple[str, set[str]]) -> None:
    # Serializing the value happens after the snippet returned: a host call made
    # from there is detached (DESIGN: RUN_DETACHED_CALL) and must not run.
    source, codes = case
    host = Host()
    result = await guest(source, host)
    assert host.calls == [], "a host function ran after the snippet returned"
    assert result.error is not None and result.error.code in codes, result


@pytest.mark.parametrize(
    "returned",
    ["new Map([[1, 2]])", "new Set([1])", "Promise.resolve(1)", "new WeakMap()"],
)
async def test_to_json_returning_non_data_is_not_a_silent_empty_object(returned: str) -> None:
    result = await guest(f"({{ a: {{ toJSON() {{ return {returned} }} }} }})")
    assert result.error is not None, f"value became {result.value!r}"
    assert result.error.code == "RUN_VALUE_NOT_SERIALIZABLE"


# ---------------------------------------------------------------- resource bombs
async def test_infinite_recursion_is_a_catchable_range_error() -> None:
    result = await guest(
        "function f() { return f() }\n"
        "let caught; try { f() } catch (e) { caught = e.name }\n"
        "const back = await ns.fn(caught); f()"
    )
    assert result.error is not None and result.error.code == "RUN_EXCEPTION"
    assert "RangeError" in result.error.message
    await assert_sandbox_clean()


MEMORY_BOMBS = {
    "repeat_2_30": ("'x'.repeat(2 ** 30).length", {"RUN_EXCEPTION", "RUN_MEMORY_EXCEEDED"}),
    "repeat_2_27": ("'x'.repeat(2 ** 27).length", {"RUN_MEMORY_EXCEEDED"}),
    "array_buffer_2_31": (
        "new ArrayBuffer(2 ** 31).byteLength",
        {"RUN_EXCEPTION", "RUN_MEMORY_EXCEEDED"},
    ),
    "array_buffer_2_28": ("new ArrayBuffer(2 ** 28).byteLength", {"RUN_MEMORY_EXCEEDED"}),
    "object_flood": (
        "const a = []; for (;;) a.push({ i: a.length, s: 'x' + a.length })",
        {"RUN_MEMORY_EXCEEDED"},
    ),
    "flat_string_flood": (
        "const a = []; for (let i = 0; ; i++) a.push('x'.repeat(1 << 16) + i)",
        {"RUN_MEMORY_EXCEEDED"},
    ),
    "string_doubling": (
        "let s = 'x'; for (;;) s = (s + s).slice(0)",
        {"RUN_EXCEPTION", "RUN_MEMORY_EXCEEDED"},
    ),
    "map_flood": (
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, [i])",
        {"RUN_MEMORY_EXCEEDED"},
    ),
}


@pytest.mark.parametrize("case", MEMORY_BOMBS.values(), ids=MEMORY_BOMBS.keys())
async def test_memory_bombs_end_the_run(case: tuple[str, set[str]]) -> None:
    source, codes = case
    result = await guest(source, limits=Limits(timeout_ms=5_000, memory_bytes=16 << 20))
    assert result.error is not None, result.value
    assert result.error.code in codes, result.error
    await assert_sandbox_clean()


async def test_out_of_memory_while_encoding_arguments_is_not_a_hang_report() -> None:
    # Encoding a sparse array of length 2**32-1 runs out of memory. With a small
    # heap the run must say so (or the snippet catches it), not claim that
    # "nothing will ever settle".
    host = Host()
    result = await guest(
        "const a = []; a.length = 2 ** 32 - 1;\n"
        "try { await ns.fn(a); return 'SENT' } catch (e) { return 'caught ' + e.name }",
        host,
        Limits(timeout_ms=5_000, memory_bytes=16 << 20),
    )
    assert host.calls == []
    if result.status == "ok":
        assert result.value.startswith("caught ")
    else:
        assert result.error is not None and result.error.code == "RUN_MEMORY_EXCEEDED", result.error
    await assert_sandbox_clean()


TIMEOUTS = {
    "catch_all": "try { while (true) {} } catch {} ; return 'escaped'",
    "finally_return": "try { while (true) {} } finally { return 'escaped' }",
    "nested_catch": "for (;;) { try { try { for (;;) {} } catch (e) {} } catch (e) {} }",
    "microtask_loop": "for (;;) { await null }",
    "promise_spin": "await new Promise(() => { const spin = () => { Promise.resolve().then(spin) }; spin() })",
    "async_generator": "for await (const x of (async function* () { for (;;) yield 1 })()) {}",
    "host_calls_forever": "for (;;) { try { await ns.fn(1) } catch {} }",
}


@pytest.mark.parametrize("source", TIMEOUTS.values(), ids=TIMEOUTS.keys())
async def test_timeout_cannot_be_caught(source: str) -> None:
    result = await run(
        source,
        host_functions=Host().functions(),
        limits=Limits(timeout_ms=200, max_host_calls=100_000_000),
    )
    assert result.error is not None and result.error.code == "RUN_TIMEOUT", result
    await assert_sandbox_clean()


# ---------------------------------------------------------------- host results that break the codec
async def isolated_run(source: str, host_functions: dict[str, Any], limits: Limits) -> RunResult:
    """Run in a throwaway thread and event loop.

    The host-side failures provoked below (a RecursionError or ValueError escaping the
    engine's own task) must not disturb the test process's main thread; the task's
    "exception was never retrieved" finalizer runs here too, not later in pytest.
    """

    def in_thread() -> RunResult:
        async def main() -> RunResult:
            return await run(source, host_functions=host_functions, limits=limits)

        try:
            return asyncio.run(main())
        finally:
            gc.collect()

    return await asyncio.to_thread(in_thread)


async def test_deep_host_result_fails_the_call_quickly() -> None:
    def deep() -> list[Any]:
        value: list[Any] = []
        for _ in range(2000):
            value = [value]
        return value

    result = await isolated_run(
        "try { await ns.deep(); return 'got it' } catch (e) { return e.code }",
        {"ns": {"deep": deep}},
        Limits(timeout_ms=1_500),
    )
    assert result.status == "ok", result.error
    assert result.value == "RUN_HOST_FUNCTION_ERROR"
    await assert_sandbox_clean()


async def test_big_int_host_result_crosses() -> None:
    result = await isolated_run(
        "const b = await ns.big(); return [typeof b, String(b).length, b === 10n ** 5000n]",
        {"ns": {"big": lambda: 10**5000}},
        Limits(timeout_ms=1_500),
    )
    assert result.status == "ok", result.error
    assert result.value == ["bigint", 5001, True]


# ---------------------------------------------------------------- nothing persists
async def test_nothing_persists_between_runs() -> None:
    first = await guest(r"""
globalThis.leak = 'first';
var leakedVar = 1;
let proto;
try { Object.prototype.leak = 1; proto = 'set' } catch (e) { proto = e.name }
const draws = []; for (let i = 0; i < 1000; i++) draws.push(Math.random());
return { proto, next: Math.random(), first: draws[0], uuid: crypto.randomUUID(), now: Date.now() }
""")
    second = await guest(r"""
return {
  leak: typeof globalThis.leak, leakedVar: typeof leakedVar, proto: typeof ({}).leak,
  first: Math.random(), uuid: crypto.randomUUID(), now: Date.now(),
}
""")
    assert first.status == second.status == "ok"
    assert first.value["proto"] == "TypeError"
    assert second.value["leak"] == "undefined"
    assert second.value["leakedVar"] == "undefined"
    assert second.value["proto"] == "undefined"
    # A fresh random state per run: not carried over, and not the same seed each time.
    assert second.value["first"] != first.value["next"]
    assert second.value["first"] != first.value["first"]
    assert second.value["uuid"] != first.value["uuid"]
    assert second.value["now"] >= first.value["now"]


async def test_clock_and_randomness_cannot_be_steered() -> None:
    host = Host()
    before = time.time() * 1000
    result = await guest(
        r"""
const tries = [
  () => { Date.now = () => 0 },
  () => { Date.prototype.getTime = () => 0 },
  () => { Math.random = () => 0 },
  () => { Object.defineProperty(Date, 'now', { get: () => () => 0 }) },
  () => { Object.setPrototypeOf(Date, { now: () => 0 }) },
  () => { globalThis.Date = class { static now() { return 0 } } },
  () => { crypto.randomUUID = () => '00000000-0000-4000-8000-000000000000' },
];
const blocked = tries.map((t) => { try { t(); return 'CHANGED' } catch (e) { return e.name } });
const d = new Date();
const back = await ns.fn(d);
const draws = new Set(); for (let i = 0; i < 100; i++) draws.add(Math.random());
return { blocked, now: Date.now(), same: back.getTime() === d.getTime(), distinct: draws.size }
""",
        host,
    )
    assert result.status == "ok", result.error
    assert result.value["blocked"] == ["TypeError"] * 7
    assert before - 5_000 <= result.value["now"] <= time.time() * 1000 + 5_000
    assert result.value["same"] is True
    assert result.value["distinct"] == 100
    sent = host.calls[0][1][0]
    assert abs(sent.timestamp() * 1000 - before) < 10_000
