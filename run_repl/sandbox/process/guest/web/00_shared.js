// web/: Web/Node-compatible helpers for the guest runtime, one file per API (this one:
// the captured intrinsics and helpers the others share).
//
// These files are concatenated in name order, with prelude.js, into ONE strict-mode
// function scope that runs before user code and before the intrinsics are
// frozen.  It only declares names (URL, URLSearchParams, TextEncoder,
// TextDecoder, inspect, formatLogArgs, structuredCloneValue and private
// helpers); it never touches globalThis or a builtin prototype.  Every
// function must survive hostile user input (throwing getters, proxies,
// cycles): it either returns a result or throws an ordinary JS error.

// ---------------------------------------------------------------------------
// Captured intrinsics and small shared helpers
// ---------------------------------------------------------------------------

const getProto = Object.getPrototypeOf;
const getOwnDesc = Object.getOwnPropertyDescriptor;
const ownKeys = Reflect.ownKeys;
const hasOwn = Object.hasOwn;
const defineProp = Object.defineProperty;
const isArray = Array.isArray;
const fromCharCode = String.fromCharCode;
const MAX_PROTO_WALK = 1000;

function getterOf(proto, key) {
  const d = proto && getOwnDesc(proto, key);
  return d && typeof d.get === "function" ? d.get : undefined;
}

const TypedArrayProto = getProto(Uint8Array.prototype);
const taTagGet = getterOf(TypedArrayProto, Symbol.toStringTag);
const taLengthGet = getterOf(TypedArrayProto, "length");
const taByteOffsetGet = getterOf(TypedArrayProto, "byteOffset");
const taByteLengthGet = getterOf(TypedArrayProto, "byteLength");
const taBufferGet = getterOf(TypedArrayProto, "buffer");
const abByteLengthGet = getterOf(ArrayBuffer.prototype, "byteLength");
const abResizableGet = getterOf(ArrayBuffer.prototype, "resizable");
const abMaxByteLengthGet = getterOf(ArrayBuffer.prototype, "maxByteLength");
const SAB = typeof SharedArrayBuffer === "function" ? SharedArrayBuffer : null;
const sabByteLengthGet = SAB ? getterOf(SAB.prototype, "byteLength") : undefined;
const dvBufferGet = getterOf(DataView.prototype, "buffer");
const dvByteLengthGet = getterOf(DataView.prototype, "byteLength");
const dvByteOffsetGet = getterOf(DataView.prototype, "byteOffset");
const mapSizeGet = getterOf(Map.prototype, "size");
const setSizeGet = getterOf(Set.prototype, "size");
const mapEntriesFn = Map.prototype.entries;
const setValuesFn = Set.prototype.values;
const weakMapHas = WeakMap.prototype.has;
const weakSetHas = WeakSet.prototype.has;
const weakRefDeref = typeof WeakRef === "function" ? WeakRef.prototype.deref : null;
const finRegUnregister =
  typeof FinalizationRegistry === "function" ? FinalizationRegistry.prototype.unregister : null;
const regexpSourceGet = getterOf(RegExp.prototype, "source");
const REGEXP_FLAGS = [
  ["hasIndices", "d"], ["global", "g"], ["ignoreCase", "i"], ["multiline", "m"],
  ["dotAll", "s"], ["unicode", "u"], ["unicodeSets", "v"], ["sticky", "y"],
].map(([k, ch]) => [getterOf(RegExp.prototype, k), ch]).filter(([g]) => g !== undefined);
const dateGetTime = Date.prototype.getTime;
const dateToISO = Date.prototype.toISOString;
const fnToString = Function.prototype.toString;
const objToString = Object.prototype.toString;
const numberValueOf = Number.prototype.valueOf;
const stringValueOf = String.prototype.valueOf;
const booleanValueOf = Boolean.prototype.valueOf;
const bigintValueOf = BigInt.prototype.valueOf;
const symbolValueOf = Symbol.prototype.valueOf;
const symbolToString = Symbol.prototype.toString;
const errorStackGet = getterOf(Error.prototype, "stack");
const isErrorBuiltin = typeof Error.isError === "function" ? Error.isError : null;
const DOMExceptionCtor = typeof DOMException === "function" ? DOMException : null;
const AsyncFunctionProto = getProto(async function () {});
const GeneratorFunctionProto = getProto(function* () {});
const AsyncGeneratorFunctionProto = getProto(async function* () {});
const GeneratorProto = getProto(getProto((function* () {})()));
const AsyncGeneratorProto = getProto(getProto((async function* () {})()));

const TYPED_ARRAYS = new Map();
for (const C of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
  Uint32Array, typeof Float16Array === "function" ? Float16Array : null, Float32Array,
  Float64Array, BigInt64Array, BigUint64Array]) {
  if (C) TYPED_ARRAYS.set(C.name, C);
}

// Builtin getters that are safe to call on foreign objects (never user code).
const SAFE_GETTERS = new Set([errorStackGet].filter(Boolean));
if (DOMExceptionCtor) {
  for (const k of ["name", "message", "code"]) {
    const g = getterOf(DOMExceptionCtor.prototype, k);
    if (g) SAFE_GETTERS.add(g);
  }
}

// Builtin prototypes as they were when this file loaded.  The prelude later
// turns some of their data properties into accessors (its fix for the
// "override mistake") and replaces the Function constructors with poisoned
// ones; lookups of these keys keep using the original values, which are what
// the accessors return anyway and never involve user code.
const INTRINSIC_SNAPSHOT = new Map();
for (const proto of [
  Object.prototype, Function.prototype, Array.prototype, String.prototype, Number.prototype,
  Boolean.prototype, Symbol.prototype, BigInt.prototype, Date.prototype, RegExp.prototype,
  Promise.prototype, Map.prototype, Set.prototype, WeakMap.prototype, WeakSet.prototype,
  ArrayBuffer.prototype, DataView.prototype, TypedArrayProto, Error.prototype,
  EvalError.prototype, RangeError.prototype, ReferenceError.prototype, SyntaxError.prototype,
  TypeError.prototype, URIError.prototype, AggregateError.prototype, AsyncFunctionProto,
  GeneratorFunctionProto, AsyncGeneratorFunctionProto, ...[...TYPED_ARRAYS.values()].map((C) => C.prototype),
  SAB && SAB.prototype, typeof WeakRef === "function" && WeakRef.prototype,
  typeof FinalizationRegistry === "function" && FinalizationRegistry.prototype,
  DOMExceptionCtor && DOMExceptionCtor.prototype,
]) {
  if (!proto) continue;
  const snap = new Map();
  for (const key of ["constructor", "name", "message"]) {
    const d = getOwnDesc(proto, key);
    if (d !== undefined && "value" in d) snap.set(key, d.value);
  }
  INTRINSIC_SNAPSHOT.set(proto, snap);
}

// Own property descriptor, with the snapshot above taking precedence.
function ownDesc(obj, key) {
  const snap = INTRINSIC_SNAPSHOT.get(obj);
  if (snap !== undefined && snap.has(key)) {
    return { value: snap.get(key), writable: false, enumerable: false, configurable: false };
  }
  return getOwnDesc(obj, key);
}

// Try a brand-checking getter/method; true when `v` has the internal slot.
function hasBrand(fn, v, ...args) {
  if (!fn) return false;
  try {
    fn.call(v, ...args);
    return true;
  } catch {
    return false;
  }
}

// Property descriptor lookup along the prototype chain (never calls getters).
function findDesc(obj, key) {
  for (let i = 0; obj !== null && obj !== undefined && i < MAX_PROTO_WALK; i++) {
    const d = ownDesc(obj, key);
    if (d !== undefined) return d;
    obj = getProto(obj);
  }
  return undefined;
}

// Value of a data property (own or inherited), or of a known-safe builtin
// getter; undefined for user accessors.
function safeGet(obj, key) {
  const d = findDesc(obj, key);
  if (d === undefined) return undefined;
  if ("value" in d) return d.value;
  if (d.get && SAFE_GETTERS.has(d.get)) {
    try {
      return d.get.call(obj);
    } catch {
      return undefined; // e.g. a brand check failing on a look-alike object
    }
  }
  return undefined;
}

function protoChainIncludes(obj, proto) {
  if (!proto) return false;
  for (let p = getProto(obj), i = 0; p !== null && i < MAX_PROTO_WALK; p = getProto(p), i++) {
    if (p === proto) return true;
  }
  return false;
}

function isObjectLike(v) {
  return v !== null && (typeof v === "object" || typeof v === "function");
}

// WebIDL USVString conversion (throws on symbols, replaces lone surrogates).
function toUSV(v) {
  return `${v}`.toWellFormed();
}

const HEX2 = [];
for (let i = 0; i < 256; i++) HEX2.push((i < 16 ? "0" : "") + i.toString(16).toUpperCase());
