// The guest runtime: the JavaScript that runs inside QuickJS before a snippet.
//
// The worker evaluates it once, while it waits as a spare, as
//     (function () { "use strict"; <web/*.js> <prelude.js> })()
// placed far below line 1 (see PRELUDE_LINE_BASE in worker.py), so a stack
// frame of this file is told from a snippet frame by its line number.
// It returns `dispatch(op, ...args)`, the worker's only handle on the guest.
//
// Everything the snippet can reach is decided here: the globals, the host
// namespaces, console, and the codec that turns values into the wire text
// that crosses to Python. Intrinsics are captured first and frozen last, so
// nothing a snippet does can change how this file behaves.

// ---------------------------------------------------------------- intrinsics
const send = globalThis.__rr_send;
delete globalThis.__rr_send;

const G = globalThis;
const {
  freeze, getPrototypeOf, getOwnPropertyNames, getOwnPropertyDescriptor,
  defineProperty, keys: objectKeys, create: objectCreate, isFrozen,
} = Object;
const ownKeys = Reflect.ownKeys;
const reflectApply = Reflect.apply;
const reflectConstruct = Reflect.construct;
const hasOwn = Object.hasOwn;
const isArray = Array.isArray;
const JSONstringify = JSON.stringify;
const JSONparse = JSON.parse;
const RealDate = Date;
const RealMap = Map;
const RealSet = Set;
const RealWeakMap = WeakMap;
const RealWeakSet = WeakSet;
const RealPromise = Promise;
const RealError = Error;
const RealTypeError = TypeError;
// The engine's own InternalError (out of memory, too long a string): the snippet
// never gets its constructor, so one it throws on its own is told from the engine's.
const InternalErrorProto = G.InternalError.prototype;
const objectToString = Object.prototype.toString;
const RealProxy = Proxy;
const RealString = String;
const RealNumber = Number;
const ObjectProto = Object.prototype;
const ArrayProto = Array.prototype;
const ErrorProto = Error.prototype;
const PromiseProto = Promise.prototype;
const promiseThen = PromiseProto.then;
const isPrototypeOf = ObjectProto.isPrototypeOf;
const mapGet = RealMap.prototype.get;
const mapSet = RealMap.prototype.set;
const mapHas = RealMap.prototype.has;
const mapDelete = RealMap.prototype.delete;
const mapEntries = RealMap.prototype.entries;
const setHas = RealSet.prototype.has;
const setAdd = RealSet.prototype.add;
const setValues = RealSet.prototype.values;
const weakMapGet = RealWeakMap.prototype.get;
const weakMapSet = RealWeakMap.prototype.set;
const weakSetAdd = RealWeakSet.prototype.add;
const weakSetHas = RealWeakSet.prototype.has;
const arrayPush = ArrayProto.push;
const arrayJoin = ArrayProto.join;
const arraySlice = ArrayProto.slice;
const stringSlice = RealString.prototype.slice;
const stringSplit = RealString.prototype.split;
const stringIncludes = RealString.prototype.includes;
const charCodeAt = RealString.prototype.charCodeAt;
const toWellFormed = RealString.prototype.toWellFormed;
const dateGetTime = RealDate.prototype.getTime;
const dateNow = RealDate.now;
const mathFloor = Math.floor;
const mathMin = Math.min;
const numberIsInteger = Number.isInteger;
const numberIsSafeInteger = Number.isSafeInteger;
const mapSizeGetter = getOwnPropertyDescriptor(RealMap.prototype, "size").get;
const setSizeGetter = getOwnPropertyDescriptor(RealSet.prototype, "size").get;
const regexpSourceGetter = getOwnPropertyDescriptor(RegExp.prototype, "source").get;
const regexpFlagsGetter = getOwnPropertyDescriptor(RegExp.prototype, "flags").get;
const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
const TypedArrayProto = getPrototypeOf(Uint8Array.prototype);
const typedArrayTag = getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get;
const typedArrayBuffer = getOwnPropertyDescriptor(TypedArrayProto, "buffer").get;
const typedArrayByteOffset = getOwnPropertyDescriptor(TypedArrayProto, "byteOffset").get;
const typedArrayByteLength = getOwnPropertyDescriptor(TypedArrayProto, "byteLength").get;
const dataViewBuffer = getOwnPropertyDescriptor(DataView.prototype, "buffer").get;
const dataViewByteOffset = getOwnPropertyDescriptor(DataView.prototype, "byteOffset").get;
const dataViewByteLength = getOwnPropertyDescriptor(DataView.prototype, "byteLength").get;
const errorIsError = Error.isError;
const BigIntToString = BigInt.prototype.toString;
const RealUint8Array = Uint8Array;
const AsyncFunctionProto = getPrototypeOf(async function () {});
const GeneratorFunctionProto = getPrototypeOf(function* () {});
const AsyncGeneratorFunctionProto = getPrototypeOf(async function* () {});
const IteratorProto = getPrototypeOf(getPrototypeOf([][Symbol.iterator]()));
const AsyncIteratorProto = getPrototypeOf(AsyncGeneratorFunctionProto.prototype);

const call = (fn, self, ...args) => reflectApply(fn, self, args);
const TAG = "\u0000";
const TYPED_ARRAYS = {
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
  Uint32Array, Float16Array: G.Float16Array, Float32Array, Float64Array,
  BigInt64Array, BigUint64Array,
};

// ---------------------------------------------------------------- run state
const config = {
  namespaces: {},
  maxLogLines: 500,
  maxLogLineBytes: 2048,
  maxValueBytes: 4 << 20,
  maxHostCalls: 10000,
  maxInFlight: 256,
  maxArgumentBytes: 1048576,
  maxArgumentBytesPerRun: 67108864,
  clockMs: 0,
};
let clockElapsed = 0;        // ms of run time the guest has seen (moves when a call settles)
let logsSent = 0;
let logsDropped = 0;
let callsStarted = 0;
let callsInFlight = 0;
let finished = false;
let returning = false;  // the snippet has returned: its value is being read
let lateCall = null;  // a host call made while the value was read: the run fails with it
const calls = new RealMap(); // id -> {path, resolve, reject, promise, site, settled, observed, failure}
const ownErrors = new RealWeakSet();
const observedCalls = new RealWeakSet();

function post(kind, a, b, c, d) {
  // Every string crossing to Python must be flat and NUL-free: JSON text is both.
  return send(kind, a, b, c, d);
}

// ---------------------------------------------------------------- errors
function makeError(code, message, extra) {
  const err = new RealError(message);
  defineProperty(err, "name", { value: errorName(code), writable: true, configurable: true });
  // The code and the facts beside it are the engine's: a snippet that catches the
  // error cannot rewrite them (and so cannot make a run end with a code of its choosing).
  defineProperty(err, "code", { value: code, writable: false, configurable: false, enumerable: true });
  if (extra) {
    for (const k of objectKeys(extra)) {
      defineProperty(err, k, { value: extra[k], writable: false, configurable: false, enumerable: true });
    }
  }
  call(weakSetAdd, ownErrors, err);
  return err;
}

function errorName(code) {
  switch (code) {
    case "RUN_UNKNOWN_MEMBER": return "UnknownMemberError";
    case "RUN_ARGUMENT_NOT_CLONEABLE": return "DataCloneError";
    case "RUN_HOST_FUNCTION_ERROR": return "HostFunctionError";
    case "RUN_APPROVAL_DENIED": return "ApprovalDeniedError";
    case "RUN_BRIDGE_LIMIT": return "BridgeLimitError";
    case "RUN_DETACHED_CALL": return "DetachedCallError";
    case "RUN_VALUE_NOT_SERIALIZABLE": return "ValueNotSerializableError";
    case "RUN_VALUE_TOO_LARGE": return "ValueTooLargeError";
    case "RUN_REPLAY_MISMATCH": return "ReplayMismatchError";
    default: return "Error";
  }
}

function safeGet(obj, key) {
  try { return obj[key]; } catch (e) { return undefined; }
}

function safeString(v) {
  try {
    if (typeof v === "string") return v;
    if (typeof v === "symbol") return call(Symbol.prototype.toString, v);
    return RealString(v);
  } catch (e) {
    return "[unprintable value]";
  }
}

// Error text crosses to the parent cut to these many characters: a snippet can
// throw a 20 MB message, but the envelope, the store and the screen get a few KB.
const MAX_ERROR_TEXT = 8192;
const MAX_ERROR_FIELD = 1024;
const MAX_STACK_TEXT = 16384;

function cut(text, max) {
  return text.length > max ? call(stringSlice, text, 0, max) + "… [" + (text.length - max) + " more characters cut]" : text;
}

function cutField(v) {
  return typeof v === "string" ? cut(v, MAX_ERROR_FIELD) : undefined;
}

// A description of anything thrown, for the parent; never throws itself.
function describeThrown(err) {
  try {
    if (err !== null && (typeof err === "object" || typeof err === "function")) {
      const own = call(weakSetHas, ownErrors, err);
      const name = cut(safeString(safeGet(err, "name") ?? "Error"), MAX_ERROR_FIELD);
      const message = cut(safeString(safeGet(err, "message") ?? ""), MAX_ERROR_TEXT);
      const stack = safeGet(err, "stack");
      const out = {
        code: own ? safeString(err.code) : "RUN_EXCEPTION",
        name, message,
        stack: typeof stack === "string" ? cut(stack, MAX_STACK_TEXT) : null,
        is_error: true,
      };
      if (own) {
        for (const k of ["path", "hint", "host_code", "interruption_id"]) {
          const v = cutField(safeGet(err, k));
          if (v !== undefined) out[k] = v;
        }
        const seq = safeGet(err, "seq");
        if (typeof seq === "number") out.seq = seq;
        const dym = safeGet(err, "did_you_mean");
        if (isArray(dym)) {
          out.did_you_mean = [];
          for (let i = 0; i < dym.length && i < 10; i++) {
            const v = cutField(dym[i]);
            if (v !== undefined) call(arrayPush, out.did_you_mean, v);
          }
        }
        const site = safeGet(err, "site");
        if (typeof site === "string") out.site = cut(site, MAX_STACK_TEXT);
      } else {
        if (getPrototypeOf(err) === InternalErrorProto && call(objectToString, err) === "[object Error]") {
          out.engine_internal = true;  // the engine's own error: no snippet can make one
        }
        // The snippet's own `code` is its business: reported beside RUN_EXCEPTION, never as ours.
        const guestCode = safeGet(err, "code");
        if (typeof guestCode === "string" || typeof guestCode === "number") {
          out.guest_code = cut(safeString(guestCode), MAX_ERROR_FIELD);
        }
      }
      return out;
    }
    return {
      code: "RUN_EXCEPTION",
      name: err === null ? "null" : typeof err,
      message: cut(safeString(err), MAX_ERROR_TEXT),
      stack: null,
      is_error: false,
      thrown_null: err === null,
    };
  } catch (e) {
    return { code: "RUN_EXCEPTION", name: "Error", message: "[an error that could not be read]", stack: null, is_error: false };
  }
}

// ---------------------------------------------------------------- base64
// QuickJS-ng's own (TC39 Uint8Array base64), captured before the snippet can touch them.
const uint8ToBase64 = RealUint8Array.prototype.toBase64;
const uint8FromBase64 = RealUint8Array.fromBase64;

function bytesToBase64(bytes) {
  return call(uint8ToBase64, bytes);
}

function base64ToBytes(text) {
  return call(uint8FromBase64, RealUint8Array, text);
}

// ---------------------------------------------------------------- brands
// Internal-slot checks: a user object cannot pass for a Map by faking a tag.
function brandOf(v) {
  if (errorIsError ? errorIsError(v) : call(isPrototypeOf, ErrorProto, v)) return "Error";
  try { call(dateGetTime, v); return "Date"; } catch (e) { /* not a Date */ }
  try { call(mapSizeGetter, v); return "Map"; } catch (e) { /* not a Map */ }
  try { call(setSizeGetter, v); return "Set"; } catch (e) { /* not a Set */ }
  const ta = call(typedArrayTag, v);
  if (ta !== undefined) return ta;
  try { call(arrayBufferByteLength, v); return "ArrayBuffer"; } catch (e) { /* no */ }
  try { call(dataViewByteLength, v); return "DataView"; } catch (e) { /* no */ }
  if (v !== RegExp.prototype) {
    try { call(regexpSourceGetter, v); return "RegExp"; } catch (e) { /* no */ }
  }
  if (call(isPrototypeOf, PromiseProto, v)) return "Promise";
  return null;
}

function describeKind(v) {
  if (typeof v === "function") return "a function";
  if (typeof v === "symbol") return "a symbol";
  if (typeof v === "bigint") return "a BigInt";
  const brand = brandOf(v);
  if (brand === "Promise") return "a Promise";
  if (brand) return "a " + brand;
  if (v instanceof RealWeakMap) return "a WeakMap";
  if (v instanceof RealWeakSet) return "a WeakSet";
  let name = null;
  try {
    const proto = getPrototypeOf(v);
    const ctor = proto && getOwnPropertyDescriptor(proto, "constructor");
    if (ctor && typeof ctor.value === "function") name = safeString(ctor.value.name);
  } catch (e) { /* a hostile proxy */ }
  return name ? "an instance of class " + name : "an object with a custom prototype";
}

// ---------------------------------------------------------------- paths
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function pathText(parts) {
  let out = parts[0];
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i];
    if (typeof p === "number") out += "[" + p + "]";
    else if (typeof p === "string" && IDENT.test(p)) out += "." + p;
    else out += "[" + JSONstringify(safeString(p)) + "]";
  }
  return out;
}

// ---------------------------------------------------------------- wire codec
// Values crossing to and from host functions. Plain JSON travels as itself;
// anything else is an object tagged with the key "\u0000". The first letter
// of the wire text says what a decoder must do: J (plain JSON), T (tags),
// R (tags and shared references).
class NotCloneable extends RealError {}

const MAX_DEPTH = 128;  // levels of arrays and objects a value may nest (nesting.py says why)

// Arguments that are only strings, booleans, null and plain numbers need no walk.
function plainArgs(args) {
  for (let i = 0; i < args.length; i++) {
    const v = args[i];
    const t = typeof v;
    if (t === "string" || t === "boolean" || v === null) continue;
    if (t === "number" && (v !== 0 || 1 / v > 0) && (numberIsSafeInteger(v) || (v === v && !numberIsInteger(v) && v !== Infinity && v !== -Infinity))) continue;
    return false;
  }
  return true;
}

// `rootDepth` -1: the root is a list of values (a call's arguments), not a value.
// The common case stays apart from the general one: a function's nested
// function declarations are made at every call, and closures that see each
// other are a cycle only QuickJS's collector frees (it ran every ~190 calls).
function encodeWire(root, rootName, rootDepth = 0) {
  if (isArray(root) && plainArgs(root)) return ["J", JSONstringify(root)];
  return encodeTagged(root, rootName, rootDepth);
}

function encodeTagged(root, rootName, rootDepth) {
  let tagged = false;
  let refs = false;
  const seen = new RealMap();
  let nextId = 0;
  const path = [rootName];
  const top = [undefined];

  function refuse(what) {
    const err = new NotCloneable(what);
    err.path = pathText(path);
    err.kind = what;
    throw err;
  }

  function tag(t, extra) {
    tagged = true;
    const o = { [TAG]: t };
    if (extra) for (const k of objectKeys(extra)) o[k] = extra[k];
    return o;
  }

  // A container referenced from inside itself is defined where its parent puts it.
  function defined(entry) {
    return entry.id === undefined ? entry.out : { [TAG]: "#", i: entry.id, v: entry.out };
  }

  function enc(v, holder, key, depth) {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        if (v !== v) return tag("n", { v: "NaN" });
        if (v === Infinity) return tag("n", { v: "Infinity" });
        if (v === -Infinity) return tag("n", { v: "-Infinity" });
        if (v === 0 && 1 / v < 0) return tag("n", { v: "-0" });
        if (numberIsInteger(v) && !numberIsSafeInteger(v)) return tag("n", { v: RealString(v) });
        return v;
      case "undefined":
        return tag("u");
      case "bigint":
        // Hexadecimal: Python limits decimal conversions to 4,300 digits.
        return tag("b", { x: v < 0n ? "-" + call(BigIntToString, -v, 16) : call(BigIntToString, v, 16) });
      case "symbol":
        return refuse("a symbol");
      case "function":
        return refuse("a function");
    }
    if (v === null) return null;
    const held = call(weakMapGet, handleInfo, v);
    if (held !== undefined) return tag("h", { i: held.id });
    const prior = call(mapGet, seen, v);
    if (prior !== undefined) {
      refs = tagged = true;
      if (prior.id === undefined) {
        prior.id = nextId++;
        prior.holder[prior.key] = { [TAG]: "#", i: prior.id, v: prior.out };
      }
      return { [TAG]: "@", i: prior.id };
    }
    if (depth >= MAX_DEPTH) refuse("a value nested deeper than " + MAX_DEPTH + " levels");
    const entry = { out: undefined, holder, key, id: undefined };
    if (isArray(v)) {
      const out = [];
      entry.out = out;
      call(mapSet, seen, v, entry);
      const n = v.length;
      for (let i = 0; i < n; i++) {
        call(arrayPush, path, i);
        out[i] = enc(v[i], out, i, depth + 1);
        path.length--;
      }
      return defined(entry);
    }
    const proto = getPrototypeOf(v);
    if (proto === ObjectProto || proto === null) {
      // No prototype: an own "__proto__" key stays a key.
      const out = objectCreate(null);
      entry.out = out;
      call(mapSet, seen, v, entry);
      const ks = objectKeys(v);
      let hasTagKey = false;
      for (let i = 0; i < ks.length; i++) {
        const k = ks[i];
        if (k === TAG) hasTagKey = true;
        call(arrayPush, path, k);
        out[k] = enc(v[k], out, k, depth + 1);
        path.length--;
      }
      if (hasTagKey) {
        const pairs = [];
        for (const k of ks) call(arrayPush, pairs, [k, out[k]]);
        const wrapped = tag("o", { v: pairs });
        entry.out = wrapped;
        return defined(entry);
      }
      return defined(entry);
    }
    const brand = brandOf(v);
    let out;
    // Objects without contents keep their identity too: once, then references.
    const leaf = (tagged) => {
      entry.out = tagged;
      call(mapSet, seen, v, entry);
      return tagged;
    };
    switch (brand) {
      case "Date": {
        const ms = call(dateGetTime, v);
        return leaf(tag("d", { v: ms === ms ? ms : null }));
      }
      case "RegExp":
        return leaf(tag("r", { s: call(regexpSourceGetter, v), f: call(regexpFlagsGetter, v) }));
      case "Map": {
        const pairs = [];
        out = tag("m", { v: pairs });
        entry.out = out;
        call(mapSet, seen, v, entry);
        let i = 0;
        const it = call(mapEntries, v);
        for (const [k, val] of { [Symbol.iterator]: () => it }) {
          const pair = [];
          call(arrayPush, path, "<map key " + i + ">");
          pair[0] = enc(k, pair, 0, depth + 1);
          path.length--;
          call(arrayPush, path, "<map value " + i + ">");
          pair[1] = enc(val, pair, 1, depth + 1);
          path.length--;
          call(arrayPush, pairs, pair);
          i++;
        }
        return defined(entry);
      }
      case "Set": {
        const members = [];
        out = tag("s", { v: members });
        entry.out = out;
        call(mapSet, seen, v, entry);
        let i = 0;
        const it = call(setValues, v);
        for (const m of { [Symbol.iterator]: () => it }) {
          call(arrayPush, path, "<set member " + i + ">");
          members[i] = enc(m, members, i, depth + 1);
          path.length--;
          i++;
        }
        return defined(entry);
      }
      case "ArrayBuffer":
        return leaf(tag("a", { v: bytesToBase64(new RealUint8Array(v)) }));
      case "DataView": {
        const bytes = new RealUint8Array(call(dataViewBuffer, v), call(dataViewByteOffset, v), call(dataViewByteLength, v));
        return leaf(tag("t", { k: "DataView", v: bytesToBase64(bytes) }));
      }
      case "Error": {
        out = tag("e", {});
        entry.out = out;
        call(mapSet, seen, v, entry);
        out.name = safeString(safeGet(v, "name") ?? "Error");
        out.message = safeString(safeGet(v, "message") ?? "");
        const stack = safeGet(v, "stack");
        if (typeof stack === "string") out.stack = stack;
        if (hasOwn(v, "cause")) {
          call(arrayPush, path, "cause");
          out.cause = enc(v.cause, out, "cause", depth + 1);
          path.length--;
        }
        return defined(entry);
      }
      case "Promise":
        return refuse("a Promise (await it first)");
      case null:
        break;
      default: {
        // A typed array: send its own bytes, whatever buffer it views.
        const bytes = new RealUint8Array(call(typedArrayBuffer, v), call(typedArrayByteOffset, v), call(typedArrayByteLength, v));
        return leaf(tag("t", { k: brand, v: bytesToBase64(bytes) }));
      }
    }
    if (v instanceof RealNumber || v instanceof RealString || v instanceof Boolean) {
      return enc(v.valueOf(), holder, key, depth);
    }
    return refuse(describeKind(v));
  }

  const body = enc(root, top, 0, rootDepth);
  top[0] = body;
  return [refs ? "R" : tagged ? "T" : "J", JSONstringify(top[0])];
}

function decodeWire(mode, text) {
  const v = JSONparse(text);
  return mode === "J" ? v : decodeTagged(v);  // apart, as encodeWire
}

function decodeTagged(v) {
  const defs = [];
  function dec(x) {
    if (x === null || typeof x !== "object") return x;
    if (isArray(x)) {
      for (let i = 0; i < x.length; i++) x[i] = dec(x[i]);
      return x;
    }
    const t = x[TAG];
    if (t === undefined) {
      for (const k of objectKeys(x)) x[k] = dec(x[k]);
      return x;
    }
    const value = decTag(x, t);
    if (x.__def !== undefined && defs[x.__def] === undefined) defs[x.__def] = value;
    return value;
  }
  function decTag(x, t) {
    switch (t) {
      case "u": return undefined;
      case "n": return RealNumber(x.v);
      case "b": return x.x[0] === "-" ? -BigInt("0x" + call(stringSlice, x.x, 1)) : BigInt("0x" + x.x);
      case "d": return new RealDate(x.v === null ? NaN : x.v);
      case "r": return new RegExp(x.s, x.f);
      case "m": {
        const m = new RealMap();
        if (x.__def !== undefined) defs[x.__def] = m;
        for (const pair of x.v) call(mapSet, m, dec(pair[0]), dec(pair[1]));
        return m;
      }
      case "s": {
        const s = new RealSet();
        if (x.__def !== undefined) defs[x.__def] = s;
        for (const m of x.v) call(setAdd, s, dec(m));
        return s;
      }
      case "a": return base64ToBytes(x.v).buffer;
      case "t": {
        const bytes = base64ToBytes(x.v);
        if (x.k === "DataView") return new DataView(bytes.buffer);
        const Ctor = TYPED_ARRAYS[x.k];
        if (!Ctor) throw new RealTypeError("unknown typed array kind " + x.k);
        return x.k === "Uint8Array" ? bytes : new Ctor(bytes.buffer);
      }
      case "e": {
        const Ctor = ERROR_TYPES[x.name] || RealError;
        const err = new Ctor(x.message);
        if (!ERROR_TYPES[x.name]) defineProperty(err, "name", { value: x.name, writable: true, configurable: true });
        if (x.__def !== undefined) defs[x.__def] = err;
        if (typeof x.stack === "string") defineProperty(err, "stack", { value: x.stack, writable: true, configurable: true });
        if (hasOwn(x, "cause")) defineProperty(err, "cause", { value: dec(x.cause), writable: true, configurable: true });
        return err;
      }
      case "o": {
        const o = {};
        if (x.__def !== undefined) defs[x.__def] = o;
        for (const pair of x.v) defineProperty(o, pair[0], { value: dec(pair[1]), writable: true, enumerable: true, configurable: true });
        return o;
      }
      case "#": {
        // Register the container before its contents, so a cycle finds it.
        const inner = x.v;
        if (inner !== null && typeof inner === "object" && inner[TAG] === undefined) {
          defs[x.i] = inner;
          return dec(inner);
        }
        inner.__def = x.i;
        return dec(inner);
      }
      case "@": return defs[x.i];
      case "h": return makeHandle(x.i, x.l, x.t);
    }
    throw new RealTypeError("unknown wire tag " + safeString(t));
  }
  return dec(v);
}

const ERROR_TYPES = {
  Error: RealError, TypeError: RealTypeError, RangeError, SyntaxError, ReferenceError,
  EvalError, URIError, AggregateError,
};

// ---------------------------------------------------------------- the run's value
// The value a person or a model reads is JSON data. JSON.stringify is native
// and fast; the traps below make it refuse what it would otherwise turn into
// a silent {} (Map, Set, ...), and a slow walk afterwards names the path.
let serializing = false;
class NotSerializable extends RealError {}

function jsonTrap() {
  if (serializing) throw new NotSerializable("not JSON data");
  return this;
}

function installJsonTraps() {
  const protos = [
    Function.prototype, RealMap.prototype, RealSet.prototype, RealWeakMap.prototype,
    RealWeakSet.prototype, PromiseProto, RegExp.prototype, ErrorProto,
    ArrayBuffer.prototype, DataView.prototype, TypedArrayProto, Symbol.prototype,
    IteratorProto, AsyncIteratorProto,
  ];
  for (const p of protos) {
    if (!hasOwn(p, "toJSON")) {
      defineProperty(p, "toJSON", { value: jsonTrap, writable: false, enumerable: false, configurable: false });
    }
  }
}

function conversionHint(v) {
  const kind = typeof v;
  if (kind === "bigint") return "String(value), or Number(value) if it is small";
  if (kind === "function") return "call the function and return its result instead";
  if (kind === "symbol") return "String(symbol) or symbol.description";
  switch (brandOf(v)) {
    case "Map": return "Object.fromEntries(map) (string keys) or [...map] (any keys)";
    case "Set": return "[...set]";
    case "Promise": return "await it";
    case "RegExp": return "String(regexp)";
    case "Error": return "{ name: error.name, message: error.message }";
    case "ArrayBuffer": return "Array.from(new Uint8Array(buffer))";
    case null: break;
    case "Date": return "date.toISOString()";
    default: return "Array.from(typedArray)";
  }
  if (v instanceof RealWeakMap || v instanceof RealWeakSet) return "return the data it holds instead";
  if (call(isPrototypeOf, IteratorProto, v) || call(isPrototypeOf, AsyncIteratorProto, v)) return "[...iterator]";
  return "copy the data you need into a plain object";
}

// Walk the value as JSON.stringify would, and name the first part that is not data.
function findUnserializable(root) {
  const stack = new RealSet();
  const path = ["$"];
  function visit(v, holder, key, depth) {
    const held = v !== null && typeof v === "object" ? call(weakMapGet, handleInfo, v) : undefined;
    if (held !== undefined) {
      return { path: pathText(path), what: "a handle (" + held.label + ")", hint: "a handle lives only in this run: await its methods and return the data they give" };
    }
    if (v !== null && (typeof v === "object" || typeof v === "bigint")) {
      let toJSON;
      try { toJSON = v.toJSON; } catch (e) { toJSON = undefined; }
      if (typeof toJSON === "function" && toJSON !== jsonTrap) v = call(toJSON, v, key);
    }
    const kind = typeof v;
    if (kind === "bigint" || kind === "symbol") return { path: pathText(path), what: describeKind(v), hint: conversionHint(v) };
    if (kind === "function") return { path: pathText(path), what: "a function", hint: conversionHint(v) };
    if (v === null || kind !== "object") return null;
    if (call(setHas, stack, v)) return { path: pathText(path), what: "a cycle (the value refers back to itself)", hint: "return a copy without the back-reference" };
    if (depth >= MAX_DEPTH) return { path: pathText(path), what: "a value nested deeper than " + MAX_DEPTH + " levels", hint: "flatten it" };
    const brand = isArray(v) ? null : brandOf(v);
    if (brand || v instanceof RealWeakMap || v instanceof RealWeakSet ||
        call(isPrototypeOf, IteratorProto, v) || call(isPrototypeOf, AsyncIteratorProto, v)) {
      return { path: pathText(path), what: describeKind(v), hint: conversionHint(v) };
    }
    call(setAdd, stack, v);
    const ks = isArray(v) ? null : objectKeys(v);
    const n = isArray(v) ? v.length : ks.length;
    for (let i = 0; i < n; i++) {
      const k = ks ? ks[i] : i;
      call(arrayPush, path, k);
      const found = visit(v[k], v, ks ? k : RealString(i), depth + 1);
      path.length--;
      if (found) return found;
    }
    stack.delete(v);
    return null;
  }
  return visit(root, { "": root }, "", 0);
}

function notSerializableError(found) {
  return makeError(
    "RUN_VALUE_NOT_SERIALIZABLE",
    "The run's value is not JSON data: " + found.what + " at " + found.path + ". Convert it first: " + found.hint + ".",
    { path: found.path, hint: "Convert it first: " + found.hint + "." },
  );
}

function serializeValue(value) {
  const top = typeof value;
  if (top === "function" || top === "symbol" || top === "bigint") {
    throw notSerializableError({ path: "$", what: describeKind(value), hint: conversionHint(value) });
  }
  const text = serializeValueOf(value, value);
  if (text === undefined) {
    throw notSerializableError({ path: "$", what: describeKind(value), hint: conversionHint(value) });
  }
  if (call(stringIncludes, text, "{}")) checkWhole(value);
  return text;
}

// A toJSON that returns a Map (or a Set, a Promise...) comes out as {} without
// the traps seeing it. Where "{}" appears, walk the value once to be sure.
function checkWhole(value) {
  const found = findUnserializable(value);
  if (found) throw notSerializableError(found);
}

// ---------------------------------------------------------------- host calls
// A host call's promise notes when something awaits it or chains on it, so a
// call nobody awaited is caught at the end instead of vanishing.
class HostCall extends RealPromise {
  static get [Symbol.species]() { return RealPromise; }
  then(onFulfilled, onRejected) {
    call(weakSetAdd, observedCalls, this);
    return call(promiseThen, this, onFulfilled, onRejected);
  }
}
// `await` reads a promise's constructor: answering Promise notes the await and
// lets it take a native promise's path (one job per settled call, not three).
// Replaying a run recorded before that (legacyAwait), it answers HostCall, so
// the await goes through `then` as it did then, and calls keep their order.
let legacyAwait = false;
defineProperty(HostCall.prototype, "constructor", {
  get() {
    if (legacyAwait) return HostCall;
    call(weakSetAdd, observedCalls, this);
    return RealPromise;
  },
  configurable: true,
});

function userSite() {
  // The first frame of the snippet's own code, for messages about a call.
  const stack = safeGet(new RealError(), "stack");
  return typeof stack === "string" ? stack : "";
}

// Every call the snippet attempts gets the next number, run or refused, so the
// audit lists them in order; a replay numbers them the same way.
let callSeq = 0;

function refused(id, path, err) {
  // The parent records a refused call too (it never ran); past the call budget,
  // refusals are no longer reported one by one.
  if (id <= config.maxHostCalls + 1) {
    post("refused", id, path, JSONstringify({ code: err.code, message: err.message }));
  }
  return rejectedCall(err);
}

function hostCall(path, args) {
  const site = userSite();
  const id = ++callSeq;
  if (finished || returning) {
    const late = makeError("RUN_DETACHED_CALL", path + "() was called after the snippet returned (from its value's toJSON or a getter?): it was not run.", { path, site });
    if (!lateCall) lateCall = late;
    return rejectedCall(late);
  }
  if (id > config.maxHostCalls) {
    return refused(id, path, makeError("RUN_BRIDGE_LIMIT",
      "More than " + config.maxHostCalls + " host calls in one run (max_host_calls); " + path + "() was not called.",
      { path, site }));
  }
  if (callsInFlight >= config.maxInFlight) {
    return refused(id, path, makeError("RUN_BRIDGE_LIMIT",
      "More than " + config.maxInFlight + " host calls at once (max_host_calls_in_flight); " + path + "() was not called.",
      { path, site }));
  }
  let wire;
  try {
    wire = encodeWire(args, "arguments", -1);
  } catch (e) {
    if (e instanceof NotCloneable) {
      return refused(id, path, makeError("RUN_ARGUMENT_NOT_CLONEABLE",
        "Arguments to " + path + "() must be data: " + e.kind + " at " + e.path + " cannot be sent, so the host function was not called.",
        { path: e.path, site }));
    }
    throw e;  // a getter of the snippet's own threw while we read the arguments
  }
  const text = wire[1];
  // The worker counts the bytes (natively) and refuses a call over the per-call
  // limit or the run's budget: then nothing was sent.
  const verdict = post("call", id, path, wire[0], text);
  if (typeof verdict === "string") {
    const parts = call(stringSplit, verdict, ":");
    return refused(id, path, makeError("RUN_ARGUMENT_TOO_LARGE", parts[0] === "call"
      ? "Arguments to " + path + "() are " + parts[1] + " bytes as JSON, over max_host_argument_bytes (" + config.maxArgumentBytes + "): the host function was not called."
      : "This run has sent " + parts[1] + " bytes of arguments; " + path + "() would pass max_host_argument_bytes_per_run (" + config.maxArgumentBytesPerRun + "), so it was not called.",
      { path, site }));
  }
  callsStarted++;
  callsInFlight++;
  let resolve, reject;
  const promise = new HostCall((res, rej) => { resolve = res; reject = rej; });
  call(mapSet, calls, id, { path, resolve, reject, promise, site, settled: false });
  return promise;
}

function rejectedCall(err) {
  let reject;
  const promise = new HostCall((res, rej) => { reject = rej; });
  reject(err);
  call(mapSet, calls, "refused:" + calls.size, { path: err.path, promise, settled: true, failure: err, refused: true });
  return promise;
}

function settle(id, ok, mode, text, elapsed) {
  const c = call(mapGet, calls, id);
  if (!c || c.settled) return;
  c.settled = true;
  callsInFlight--;
  // Awaited already: nothing left to check at the end, so let it go.
  if (call(weakSetHas, observedCalls, c.promise)) call(mapDelete, calls, id);
  if (elapsed > clockElapsed) clockElapsed = elapsed;
  let value;
  try {
    value = decodeWire(mode, text);
  } catch (e) {
    c.failure = makeError("RUN_HOST_FUNCTION_ERROR", c.path + "() returned a value the sandbox could not read.", { path: c.path, site: c.site });
    c.reject(c.failure);
    return;
  }
  if (ok) {
    c.resolve(value);
    return;
  }
  // value: {code, message, name?, host_code?, details?, next_actions?}
  const code = value.code || "RUN_HOST_FUNCTION_ERROR";
  const err = makeError(code, value.message, { path: c.path, site: c.site, seq: id });
  if (value.name) defineProperty(err, "name", { value: value.name, writable: true, configurable: true });
  if (value.host_code !== undefined) defineProperty(err, "hostCode", { value: value.host_code, writable: false, configurable: false, enumerable: true });
  if (value.details !== undefined) defineProperty(err, "details", { value: value.details, writable: false, configurable: false, enumerable: true });
  // The host's next actions, as the envelope has them ({type, command?, why, ...}).
  if (value.next_actions !== undefined) defineProperty(err, "nextActions", { value: value.next_actions, writable: false, configurable: false, enumerable: true });
  if (value.interruption_id !== undefined) defineProperty(err, "interruption_id", { value: value.interruption_id, writable: false, configurable: false });
  c.failure = err;
  c.reject(err);
}

// Calls still running, or finished but never awaited, when the snippet returns.
function detachedProblem() {
  for (const [id, c] of { [Symbol.iterator]: () => call(mapEntries, calls) }) {
    if (!c.settled) {
      return makeError("RUN_DETACHED_CALL",
        c.path + "() was still running when the snippet returned: await it (or Promise.all the calls) before returning.",
        { path: c.path, site: c.site, seq: typeof id === "number" ? id : undefined });
    }
  }
  for (const [id, c] of { [Symbol.iterator]: () => call(mapEntries, calls) }) {
    if (!call(weakSetHas, observedCalls, c.promise)) {
      if (c.failure) return c.failure;
      return makeError("RUN_DETACHED_CALL",
        c.path + "() was never awaited: await it so the snippet sees its result (and its errors).",
        { path: c.path, site: c.site, seq: typeof id === "number" ? id : undefined });
    }
  }
  return null;
}

// ---------------------------------------------------------------- host namespaces
const NAMESPACE_PROBES = new RealSet([
  "then", "toJSON", "constructor", "valueOf", "toString", "inspect", "nodeType",
  "asymmetricMatch", "$$typeof", "prototype", "length", "name", "__proto__",
]);

function levenshtein(a, b) {
  const m = a.length, n = b.length;
  let prev = [];
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      cur[j] = mathMin(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[n];
}

let allPaths = [];   // every host function's dotted path

function didYouMean(parentPath, name) {
  // Close names under the same parent first; then where that name lives elsewhere.
  const lower = name.toLowerCase();
  const scored = [];
  const prefix = parentPath ? parentPath + "." : "";
  const siblings = new RealSet();
  for (const p of allPaths) {
    if (parentPath && !p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const head = rest.split(".")[0];
    call(setAdd, siblings, head);
  }
  for (const s of siblings) {
    const sl = s.toLowerCase();
    let score = null;
    if (sl === lower) score = 0;
    else {
      const d = levenshtein(sl, lower);
      if (d <= (lower.length < 5 ? 1 : 2)) score = d;
      else if (lower.length >= 3 && (sl.includes(lower) || lower.includes(sl))) score = 10;
    }
    if (score !== null) call(arrayPush, scored, [score, prefix + s]);
  }
  scored.sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1));
  const out = [];
  for (const [, p] of scored) if (out.length < 3) call(arrayPush, out, p);
  if (out.length === 0) {
    for (const p of allPaths) {
      const leaf = p.slice(p.lastIndexOf(".") + 1);
      if (leaf.toLowerCase() === lower && out.length < 3) call(arrayPush, out, p);
    }
  }
  return out;
}

function unknownMember(parentPath, name) {
  const path = parentPath ? parentPath + "." + safeString(name) : safeString(name);
  const suggestions = didYouMean(parentPath, name);
  const hint = suggestions.length ? " Did you mean " + suggestions.join(", ") + "?" : "";
  const err = makeError("RUN_UNKNOWN_MEMBER",
    "The host has no " + path + "." + hint,
    { path, did_you_mean: suggestions });
  // An attempted call too: it goes in the audit, as refused.
  const id = ++callSeq;
  if (id <= config.maxHostCalls + 1) {
    post("refused", id, path, JSONstringify({ code: err.code, message: err.message }));
  }
  return err;
}

function makeHostFunction(path, leaf) {
  // A method definition: callable, never constructible, named like the host's function.
  const holder = { [leaf](...args) { return hostCall(path, args); } };
  const fn = holder[leaf];
  freeze(fn);
  return fn;
}

function makeNamespace(path, tree) {
  const target = objectCreate(null);
  for (const name of objectKeys(tree)) {
    const childPath = path ? path + "." + name : name;
    const node = tree[name];
    target[name] = node === true ? makeHostFunction(childPath, name) : makeNamespace(childPath, node);
  }
  freeze(target);
  const refuse = () => false;
  return new RealProxy(target, {
    get(t, key) {
      if (typeof key === "symbol" || hasOwn(t, key)) return t[key];
      if (call(setHas, NAMESPACE_PROBES, key)) return undefined;
      throw unknownMember(path, key);
    },
    set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse,
  });
}

// Handles: objects the host returned that are not data. The guest holds an id
// and the members the host listed; a call goes to "@<id>.member.path".
const handleInfo = new RealWeakMap();  // handle proxy -> { id, label }

function makeHandle(id, label, tree) {
  const proxy = makeHandleNode(id, label, "", tree);
  call(weakMapSet, handleInfo, proxy, { id, label });
  return proxy;
}

function makeHandleNode(id, label, prefix, tree) {
  const target = objectCreate(null);
  for (const name of objectKeys(tree)) {
    const memberPath = prefix ? prefix + "." + name : name;
    const node = tree[name];
    if (node === true) {
      const holder = { [name](...args) { return hostCall("@" + id + "." + memberPath, args); } };
      target[name] = freeze(holder[name]);
    } else {
      target[name] = makeHandleNode(id, label, memberPath, node);
    }
  }
  freeze(target);
  const refuse = () => false;
  const shown = prefix ? label + "." + prefix : label;
  return new RealProxy(target, {
    get(t, key) {
      if (typeof key === "symbol" || hasOwn(t, key)) return t[key];
      if (call(setHas, NAMESPACE_PROBES, key)) return undefined;
      const names = objectKeys(t);
      const close = [];
      for (const n of names) if (levenshtein(n.toLowerCase(), safeString(key).toLowerCase()) <= 2) call(arrayPush, close, shown + "." + n);
      throw makeError("RUN_UNKNOWN_MEMBER",
        "The handle " + shown + " has no member " + safeString(key) + "." + (close.length ? " Did you mean " + call(arrayJoin, close, ", ") + "?" : ""),
        { path: shown + "." + safeString(key), did_you_mean: close });
    },
    set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse,
  });
}

function collectPaths(prefix, tree) {
  for (const name of objectKeys(tree)) {
    const p = prefix ? prefix + "." + name : name;
    if (tree[name] === true) call(arrayPush, allPaths, p);
    else collectPaths(p, tree[name]);
  }
}

// ---------------------------------------------------------------- clock and randomness
// Date and Math.random replay exactly: the seed and the clock's start travel
// in the continuation, and the clock moves only when a host call settles, to
// the whole millisecond the parent recorded for that settle.
function now() { return mathFloor(config.clockMs + clockElapsed); }

let rngState = [0x9e3779b9, 0x243f6a88, 0xb7e15162, 0x12345678];
function rngNext() {
  // sfc32: small, fast, good enough for a sandbox's Math.random
  let [a, b, c, d] = rngState;
  a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
  const t = (a + b | 0) + d | 0;
  d = d + 1 | 0;
  a = b ^ (b >>> 9);
  b = c + (c << 3) | 0;
  c = (c << 21) | (c >>> 11);
  c = c + t | 0;
  rngState = [a, b, c, d];
  return (t >>> 0) / 4294967296;
}

function installDeterministicTime() {
  const DateProto = RealDate.prototype;
  function Date(...args) {
    if (new.target === undefined) return call(DateProto.toString, new RealDate(now()));
    if (args.length === 0) return reflectConstruct(RealDate, [now()], new.target);
    return reflectConstruct(RealDate, args, new.target);
  }
  defineProperty(Date, "prototype", { value: DateProto, writable: false, enumerable: false, configurable: false });
  defineProperty(Date, "now", { value: function now_() { return now(); }, writable: true, configurable: true });
  defineProperty(Date, "parse", { value: RealDate.parse, writable: true, configurable: true });
  defineProperty(Date, "UTC", { value: RealDate.UTC, writable: true, configurable: true });
  defineProperty(Date.now, "name", { value: "now" });
  defineProperty(DateProto, "constructor", { value: Date, writable: true, configurable: true });
  defineProperty(G, "Date", { value: Date, writable: true, configurable: true });
  defineProperty(Math, "random", { value: function random() { return rngNext(); }, writable: true, configurable: true });
}

function randomUUID() {
  const hex = "0123456789abcdef";
  let out = "";
  for (let i = 0; i < 16; i++) {
    let byte = mathFloor(rngNext() * 256);
    if (i === 6) byte = (byte & 0x0f) | 0x40;
    if (i === 8) byte = (byte & 0x3f) | 0x80;
    out += hex[byte >> 4] + hex[byte & 15];
    if (i === 3 || i === 5 || i === 7 || i === 9) out += "-";
  }
  return out;
}

// ---------------------------------------------------------------- console
function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = call(charCodeAt, s, i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++; }
    else n += 3;
  }
  return n;
}

function cutToBytes(s, max) {
  // Only the first `max` characters can matter: never measure a huge line whole.
  if (s.length * 3 <= max || (s.length <= max && utf8Length(s) <= max)) return s;
  // Keep whole characters within the budget, and say how much was cut.
  const marker = " …[cut]";
  const budget = max - 10;
  let n = 0, i = 0;
  for (; i < s.length; i++) {
    const c = call(charCodeAt, s, i);
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c < 0xdc00) ? 4 : 3;
    if (n + w > budget) break;
    n += w;
    if (w === 4) i++;
  }
  return call(stringSlice, s, 0, i) + marker;
}

let groupIndent = "";
const counters = new RealMap();
const timers = new RealMap();

function emit(level, args) {
  if (logsSent >= config.maxLogLines) { logsDropped++; return; }
  let text;
  for (let i = 0; i < args.length; i++) {
    const held = args[i] !== null && typeof args[i] === "object" ? call(weakMapGet, handleInfo, args[i]) : undefined;
    if (held !== undefined) args[i] = "[Handle " + held.label + "]";
  }
  try {
    text = formatLogArgs(args);
  } catch (e) {
    text = "[console argument could not be printed: " + safeString(safeGet(e, "message")) + "]";
  }
  if (groupIndent) text = groupIndent + call(arrayJoin, call(stringSplit, text, "\n"), "\n" + groupIndent);
  text = cutToBytes(text, config.maxLogLineBytes);
  logsSent++;
  post("log", level, JSONstringify(call(toWellFormed, text)));
}

function makeConsole() {
  const c = objectCreate(ObjectProto);
  const method = (name, fn) => defineProperty(c, name, { value: ({ [name]: fn })[name], writable: true, enumerable: true, configurable: true });
  method("log", (...a) => emit("log", a));
  method("info", (...a) => emit("info", a));
  method("warn", (...a) => emit("warn", a));
  method("error", (...a) => emit("error", a));
  method("debug", (...a) => emit("debug", a));
  method("trace", (...a) => {
    const stack = safeGet(new RealError(), "stack") || "";
    emit("debug", ["Trace" + (a.length ? ": " + formatLogArgs(a) : "") + "\n" + userFrames(stack)]);
  });
  method("dir", (v, opts) => emit("log", [inspect(v, opts)]));
  method("assert", (cond, ...a) => {
    if (!cond) emit("error", a.length ? ["Assertion failed:", ...a] : ["Assertion failed"]);
  });
  method("count", (label = "default") => {
    const k = safeString(label);
    const n = (call(mapGet, counters, k) || 0) + 1;
    call(mapSet, counters, k, n);
    emit("info", [k + ": " + n]);
  });
  method("countReset", (label = "default") => { call(mapDelete, counters, safeString(label)); });
  method("time", (label = "default") => { call(mapSet, timers, safeString(label), now()); });
  method("timeLog", (label = "default", ...a) => {
    const k = safeString(label);
    if (!call(mapHas, timers, k)) return emit("warn", ["Timer '" + k + "' does not exist"]);
    emit("info", [k + ": " + (now() - call(mapGet, timers, k)) + "ms", ...a]);
  });
  method("timeEnd", (label = "default") => {
    const k = safeString(label);
    if (!call(mapHas, timers, k)) return emit("warn", ["Timer '" + k + "' does not exist"]);
    emit("info", [k + ": " + (now() - call(mapGet, timers, k)) + "ms"]);
    call(mapDelete, timers, k);
  });
  method("group", (...a) => { if (a.length) emit("log", a); groupIndent += "  "; });
  method("groupCollapsed", (...a) => { if (a.length) emit("log", a); groupIndent += "  "; });
  method("groupEnd", () => { groupIndent = call(stringSlice, groupIndent, 2); });
  method("table", (data) => emit("log", [typeof data === "object" && data !== null ? formatTable(data) : inspect(data)]));
  freeze(c);
  return c;
}

function formatTable(data) {
  const rows = [];
  const columns = [];
  const seenColumns = new RealSet();
  let hasValues = false;
  const rowKeys = isArray(data) ? data.map((_, i) => i) : objectKeys(data);
  for (const rk of rowKeys) {
    const row = data[rk];
    const cells = {};
    if (row !== null && typeof row === "object") {
      for (const ck of objectKeys(row)) {
        if (!call(setHas, seenColumns, ck)) { call(setAdd, seenColumns, ck); call(arrayPush, columns, ck); }
        cells[ck] = inspect(row[ck], { depth: 0 });
      }
    } else {
      hasValues = true;
      cells["\u0000v"] = inspect(row, { depth: 0 });
    }
    call(arrayPush, rows, [RealString(rk), cells]);
  }
  const header = ["(index)", ...columns, ...(hasValues ? ["Values"] : [])];
  const keysOf = [...columns, ...(hasValues ? ["\u0000v"] : [])];
  const table = rows.map(([rk, cells]) => [rk, ...keysOf.map((k) => cells[k] ?? "")]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)) + 2);
  const pad = (s, w) => {
    const left = mathFloor((w - s.length) / 2);
    return " ".repeat(left) + s + " ".repeat(w - s.length - left);
  };
  const line = (l, m, r) => l + widths.map((w) => "─".repeat(w)).join(m) + r;
  const out = [line("┌", "┬", "┐"), "│" + header.map((h, i) => pad(h, widths[i])).join("│") + "│", line("├", "┼", "┤")];
  for (const r of table) call(arrayPush, out, "│" + r.map((c, i) => pad(c, widths[i])).join("│") + "│");
  call(arrayPush, out, line("└", "┴", "┘"));
  return out.join("\n");
}

// ---------------------------------------------------------------- stacks
// Keep the snippet's own frames; the parent maps their positions back to the
// user's text. Frames of this file sit below PRELUDE_LINE_BASE.
let preludeLineBase = 1000000;
function userFrames(stack) {
  const lines = call(stringSplit, stack, "\n");
  const kept = [];
  for (const l of lines) {
    const m = /<input>:(\d+):\d+/.exec(l);
    if (m && RealNumber(m[1]) >= preludeLineBase) continue;
    if (l.trim() === "") continue;
    if (/^\s+at /.test(l)) call(arrayPush, kept, l);
  }
  return call(arrayJoin, kept, "\n");
}

// ---------------------------------------------------------------- hardening
function poisonConstructors() {
  const message = "Dynamic code evaluation is disabled in this sandbox";
  const poison = (ctorProto) => {
    const poisoned = function () { throw new RealTypeError(message); };
    defineProperty(poisoned, "prototype", { value: ctorProto, writable: false, enumerable: false, configurable: false });
    defineProperty(ctorProto, "constructor", { value: poisoned, writable: false, enumerable: false, configurable: false });
    return poisoned;
  };
  const FunctionPoisoned = poison(Function.prototype);
  defineProperty(FunctionPoisoned, "name", { value: "Function" });
  defineProperty(G, "Function", { value: FunctionPoisoned, writable: false, enumerable: false, configurable: false });
  poison(AsyncFunctionProto);
  poison(GeneratorFunctionProto);
  poison(AsyncGeneratorFunctionProto);
  const noInternalErrors = function () { throw new RealTypeError("InternalError cannot be constructed in this sandbox"); };
  defineProperty(InternalErrorProto, "constructor", { value: noInternalErrors, writable: false, enumerable: false, configurable: false });
}

const REMOVED_GLOBALS = [
  "eval", "SharedArrayBuffer", "Atomics", "WebAssembly", "performance", "DOMException",
  "btoa", "atob", "queueMicrotask", "WeakRef", "FinalizationRegistry", "InternalError",
  "setTimeout", "setInterval", "clearTimeout", "clearInterval", "setImmediate", "fetch",
  "print", "os", "std", "scriptArgs", "require", "process", "navigator",
];

function removeGlobals() {
  for (const name of REMOVED_GLOBALS) {
    if (hasOwn(G, name)) delete G[name];
  }
  // CallSite objects would hand a snippet the functions and receivers of other frames.
  for (const name of ["prepareStackTrace"]) {
    if (hasOwn(RealError, name)) delete RealError[name];
  }
  // A settable limit would let a snippet strip the frames its errors are placed by.
  const limit = RealError.stackTraceLimit;
  defineProperty(RealError, "stackTraceLimit", { value: limit, writable: false, enumerable: false, configurable: false });
}

// The "override mistake": on a frozen prototype, `err.name = 'X'` would fail.
// These properties become accessors whose setter defines an own property.
function enableOverrides() {
  const list = [
    [ObjectProto, ["constructor", "toString", "valueOf", "toLocaleString", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable"]],
    [Function.prototype, ["toString", "bind", "call", "apply"]],
    [ArrayProto, ["constructor", "toString", "push", "join", "map", "filter", "forEach", "slice", "concat"]],
    [PromiseProto, ["then", "catch", "finally"]],
    [IteratorProto, ["next", "return", "throw"]],
  ];
  for (const E of [RealError, RealTypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError]) {
    call(arrayPush, list, [E.prototype, ["constructor", "name", "message", "toString"]]);
  }
  for (const [proto, names] of list) {
    for (const name of names) {
      const d = getOwnPropertyDescriptor(proto, name);
      if (!d || !("value" in d) || !d.configurable) continue;
      const value = d.value;
      defineProperty(proto, name, {
        get: ({ [name]() { return value; } })[name],
        set: ({ [name](v) {
          if (this === proto) throw new RealTypeError("Cannot assign to read only property '" + name + "' of a frozen prototype");
          defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
        } })[name],
        enumerable: d.enumerable,
        configurable: false,
      });
    }
  }
}

function deepFreeze(roots) {
  const seen = new RealSet();
  const queue = [...roots];
  while (queue.length) {
    const o = queue.pop();
    if (o === null || (typeof o !== "object" && typeof o !== "function")) continue;
    if (o === G || call(setHas, seen, o)) continue;  // the global object stays open for the snippet's own globals
    call(setAdd, seen, o);
    freeze(o);
    call(arrayPush, queue, getPrototypeOf(o));
    for (const k of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, k);
      if (!d) continue;
      if ("value" in d) call(arrayPush, queue, d.value);
      else { call(arrayPush, queue, d.get); call(arrayPush, queue, d.set); }
    }
  }
}

const GUEST_GLOBALS = {};

function harden() {
  installDeterministicTime();
  installJsonTraps();
  poisonConstructors();
  removeGlobals();
  GUEST_GLOBALS.console = makeConsole();
  GUEST_GLOBALS.URL = URL;
  GUEST_GLOBALS.URLSearchParams = URLSearchParams;
  GUEST_GLOBALS.TextEncoder = TextEncoder;
  GUEST_GLOBALS.TextDecoder = TextDecoder;
  GUEST_GLOBALS.structuredClone = function structuredClone(value) { return structuredCloneValue(value); };
  const crypto = objectCreate(ObjectProto);
  defineProperty(crypto, "randomUUID", { value: function randomUUID_() { return randomUUID(); }, enumerable: true });
  defineProperty(crypto.randomUUID, "name", { value: "randomUUID" });
  GUEST_GLOBALS.crypto = crypto;
  for (const name of objectKeys(GUEST_GLOBALS)) {
    defineProperty(G, name, { value: GUEST_GLOBALS[name], writable: false, enumerable: false, configurable: false });
  }
  enableOverrides();
  const roots = [];
  for (const k of ownKeys(G)) {
    const d = getOwnPropertyDescriptor(G, k);
    if ("value" in d) call(arrayPush, roots, d.value);
    // Builtin globals stay readable but cannot be swapped for a fake.
    defineProperty(G, k, { writable: false, configurable: false });
  }
  call(arrayPush, roots, AsyncFunctionProto, GeneratorFunctionProto, AsyncGeneratorFunctionProto,
    IteratorProto, AsyncIteratorProto, TypedArrayProto, HostCall, HostCall.prototype,
    getPrototypeOf(new RealMap().entries()), getPrototypeOf(new RealSet().values()),
    getPrototypeOf(""[Symbol.iterator]()), getPrototypeOf(/a/[Symbol.matchAll]("")),
    getPrototypeOf((function* () {})()), getPrototypeOf((async function* () {})()));
  try { call(arrayPush, roots, getPrototypeOf(Iterator.from({ next() { return { done: true }; } }))); } catch (e) { /* absent */ }
  try { call(arrayPush, roots, getPrototypeOf([].values().map((x) => x))); } catch (e) { /* absent */ }
  deepFreeze(roots);
  freeze(G.Date);
}

// ---------------------------------------------------------------- the run
function configure(text) {
  const c = JSONparse(text);
  config.namespaces = c.namespaces;
  config.maxLogLines = c.maxLogLines;
  config.maxLogLineBytes = c.maxLogLineBytes;
  config.maxValueBytes = c.maxValueBytes;
  config.maxHostCalls = c.maxHostCalls;
  config.maxInFlight = c.maxInFlight;
  config.maxArgumentBytes = c.maxArgumentBytes;
  config.maxArgumentBytesPerRun = c.maxArgumentBytesPerRun;
  config.clockMs = c.clockMs;
  legacyAwait = c.legacyAwait === true;
  clockElapsed = c.clockElapsed || 0;
  rngState = c.seed;
  for (let i = 0; i < 12; i++) rngNext();
  allPaths = [];
  collectPaths("", c.namespaces);
  for (const name of objectKeys(c.namespaces)) {
    if (hasOwn(G, name)) {
      throw new RealTypeError("host namespace " + name + " would replace the global of the same name");
    }
    const node = c.namespaces[name];
    const value = node === true ? makeHostFunction(name, name) : makeNamespace(name, node);
    defineProperty(G, name, { value, writable: false, enumerable: false, configurable: false });
  }
  if (c.values) defineValues(decodeWire(c.values[0], c.values[1]));
}

// Data the host hands the snippet (run(..., values=...)): a copy, frozen, one global per name.
function defineValues(values) {
  for (const name of objectKeys(values)) {
    if (hasOwn(G, name)) {
      throw new RealTypeError("value " + name + " would replace the global of the same name");
    }
    const value = values[name];
    freezeData(value);
    defineProperty(G, name, { value, writable: false, enumerable: true, configurable: false });
  }
}

function freezeData(root) {
  const seen = new RealSet();
  const queue = [root];
  while (queue.length) {
    const o = queue.pop();
    if (o === null || typeof o !== "object" || call(setHas, seen, o)) continue;
    call(setAdd, seen, o);
    if (isArray(o) || getPrototypeOf(o) === ObjectProto || getPrototypeOf(o) === null) {
      for (const k of objectKeys(o)) call(arrayPush, queue, o[k]);
      freeze(o);
    }
  }
}

function report(kind, payload, valueText) {
  if (finished) return;
  finished = true;
  payload.logs_dropped = logsDropped;
  payload.calls_in_flight = callsInFlight;
  post(kind, JSONstringify(payload), valueText === undefined ? "" : valueText);
}

function fail(err) {
  report("fail", { error: describeThrown(err) });
}

// A large array (or an object's large array, entries or a string's lines)
// goes out in chunks of CHUNK_ITEMS items, so the parent never has to parse
// the whole value to show its first page.
const CHUNK_ITEMS = 1000;

function hasToJSON(v) {
  try { return typeof v.toJSON === "function"; } catch (e) { return true; }
}

function largeShape(value) {
  if (typeof value === "string") {
    const lines = call(stringSplit, value, "\n");
    return lines.length > CHUNK_ITEMS ? { path: "$lines", items: lines, rest: undefined } : null;
  }
  if (value === null || typeof value !== "object" || hasToJSON(value)) return null;
  if (isArray(value)) return value.length > CHUNK_ITEMS ? { path: "$", items: value, rest: undefined } : null;
  const proto = getPrototypeOf(value);
  if (proto !== ObjectProto && proto !== null) return null;
  const ks = objectKeys(value);
  let best = null;
  let size = -1;
  for (const k of ks) {
    const v = value[k];
    if (isArray(v) && v.length > size) { best = k; size = v.length; }
  }
  if (best !== null) {
    if (size <= CHUNK_ITEMS || hasToJSON(value[best])) return null;
    const rest = {};
    for (const k of ks) if (k !== best) rest[k] = value[k];
    return { path: IDENT.test(best) ? "$." + best : "$[" + JSONstringify(best) + "]", items: value[best], rest };
  }
  if (ks.length <= CHUNK_ITEMS) return null;
  return { path: "$entries", items: ks, rest: undefined, entriesOf: value };
}

function finishChunked(value, shape) {
  const n = shape.items.length;
  let sent = 0;
  let sawEmpty = false;
  for (let i = 0; i < n; i += CHUNK_ITEMS) {
    let part = call(arraySlice, shape.items, i, i + CHUNK_ITEMS);
    if (shape.entriesOf) {
      const obj = shape.entriesOf;
      const entries = [];
      for (const k of part) call(arrayPush, entries, { key: k, value: obj[k] });
      part = entries;
    }
    const text = serializeValueOf(value, part);
    if (!sawEmpty && call(stringIncludes, text, "{}")) sawEmpty = true;
    sent += text.length;  // UTF-16 units: never more than the UTF-8 bytes
    if (sent > config.maxValueBytes) {
      throw makeError("RUN_VALUE_TOO_LARGE",
        "The run's value is over " + config.maxValueBytes + " bytes as JSON (max_value_bytes): select less in the snippet.", {});
    }
    post("chunk", text);
  }
  const restText = shape.rest === undefined ? "" : serializeValueOf(value, shape.rest);
  if (sawEmpty || call(stringIncludes, restText, "{}")) checkWhole(value);
  return { kind: "json", mode: "chunked", path: shape.path, total: n, chunk_items: CHUNK_ITEMS, restText };
}

// Serialize part of the value; if it is not data, name the path in the whole value.
function serializeValueOf(whole, part) {
  serializing = true;
  try {
    return JSONstringify(part);
  } catch (e) {
    serializing = false;
    const found = findUnserializable(whole);
    if (found) throw notSerializableError(found);
    throw e;
  } finally {
    serializing = false;
  }
}

function finish(value) {
  if (finished) return;
  returning = true;
  const problem = detachedProblem();
  if (problem) return fail(problem);
  if (value === undefined) return report("done", { kind: "undefined" });
  let text;
  try {
    const shape = largeShape(value);
    if (shape) {
      const done = finishChunked(value, shape);
      if (lateCall) return fail(lateCall);
      const restText = done.restText;
      delete done.restText;
      return report("done", done, restText);
    }
    text = serializeValue(value);
  } catch (e) {
    return fail(e);
  }
  if (lateCall) return fail(lateCall);
  if (text.length > config.maxValueBytes) {
    return fail(makeError("RUN_VALUE_TOO_LARGE",
      "The run's value is over " + config.maxValueBytes + " bytes as JSON (max_value_bytes): select less in the snippet.", {}));
  }
  report("done", { kind: "json", mode: "whole" }, text);
}

function start(fn) {
  let p;
  try {
    p = fn();
  } catch (e) {
    return fail(e);
  }
  call(promiseThen, p, finish, fail);
}

function dispatch(op, a, b, c, d, e) {
  switch (op) {
    case "configure": return configure(a);
    case "start": return start(a);
    case "settle": return settle(a, b, c, d, e);
    case "line_base": preludeLineBase = a; return undefined;
    // For the differential tests of web/*.js in this hardened realm: only Python holds
    // `dispatch`, never a snippet.
    case "test_exports": return { URL, URLSearchParams, TextEncoder, TextDecoder, inspect, formatLogArgs, structuredCloneValue };
  }
  throw new RealTypeError("unknown op " + op);
}

harden();
return dispatch;
