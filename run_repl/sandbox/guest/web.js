// web.js: Web/Node-compatible helpers for the guest runtime.
//
// This file is concatenated, together with prelude.js, into ONE strict-mode
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

// ---------------------------------------------------------------------------
// UTF-8 encode / decode cores (shared by URL and TextEncoder/TextDecoder)
// ---------------------------------------------------------------------------

// Encode a JS string to UTF-8; lone surrogates become U+FFFD (EF BF BD).
function utf8Encode(str) {
  const n = str.length;
  const out = new Uint8Array(n * 3);
  let w = 0;
  for (let i = 0; i < n; i++) {
    let c = str.charCodeAt(i);
    if (c < 0x80) {
      out[w++] = c;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? str.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        out[w++] = 0xf0 | (c >> 18);
        out[w++] = 0x80 | ((c >> 12) & 0x3f);
        out[w++] = 0x80 | ((c >> 6) & 0x3f);
        out[w++] = 0x80 | (c & 0x3f);
        continue;
      }
      c = 0xfffd;
    }
    if (c < 0x800) {
      out[w++] = 0xc0 | (c >> 6);
      out[w++] = 0x80 | (c & 0x3f);
    } else {
      out[w++] = 0xe0 | (c >> 12);
      out[w++] = 0x80 | ((c >> 6) & 0x3f);
      out[w++] = 0x80 | (c & 0x3f);
    }
  }
  return out.slice(0, w);
}

// Collects UTF-16 code units into a string without huge argument lists.
class StringSink {
  constructor() {
    this.parts = [];
    this.units = new Uint16Array(4096);
    this.n = 0;
  }
  push(cp) {
    if (this.n >= 4093) this.flushUnits();
    if (cp > 0xffff) {
      cp -= 0x10000;
      this.units[this.n++] = 0xd800 + (cp >> 10);
      this.units[this.n++] = 0xdc00 + (cp & 0x3ff);
    } else {
      this.units[this.n++] = cp;
    }
  }
  pushString(str) {
    this.flushUnits();
    this.parts.push(str);
  }
  flushUnits() {
    if (this.n) this.parts.push(fromCharCode.apply(null, this.units.subarray(0, this.n)));
    this.n = 0;
  }
  toString() {
    this.flushUnits();
    return this.parts.join("");
  }
}

function newUtf8State() {
  return { cp: 0, seen: 0, need: 0, lower: 0x80, upper: 0xbf };
}

const NON_ASCII = /[\x80-\xff]/;

// WHATWG UTF-8 decoder (maximal-subpart replacement).  `st` carries a
// partial sequence across chunks; `flush` ends the stream.  Hot loop: state
// lives in locals and code units go straight into the sink's buffer.
function utf8DecodeInto(st, bytes, flush, fatal, sink) {
  let cp = st.cp, seen = st.seen, need = st.need, lower = st.lower, upper = st.upper;
  const out = sink.units;
  let n = sink.n, run = 0;
  const len = bytes.length;
  const fail = () => {
    cp = seen = need = 0;
    lower = 0x80;
    upper = 0xbf;
    if (fatal) throw new TypeError("The encoded data was not valid for encoding utf-8");
    out[n++] = 0xfffd;
  };
  for (let i = 0; i < len; i++) {
    if (n >= 4093) {
      sink.n = n;
      sink.flushUnits();
      n = 0;
    }
    const b = bytes[i];
    if (need === 0) {
      if (b < 0x80) {
        out[n++] = b;
        if (++run >= 32 && i + 1 < len) {
          // A long ASCII run: let native code find where it ends.
          const end = Math.min(len, i + 8193);
          const chunk = fromCharCode.apply(null, bytes.subarray(i + 1, end));
          const stop = chunk.search(NON_ASCII);
          sink.n = n;
          sink.pushString(stop === -1 ? chunk : chunk.slice(0, stop));
          n = 0;
          if (stop === -1) i = end - 1;
          else {
            i += stop;
            run = 0;
          }
        }
        continue;
      }
      run = 0;
      if (b >= 0xc2 && b <= 0xdf) {
        need = 1;
        cp = b & 0x1f;
      } else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) lower = 0xa0;
        if (b === 0xed) upper = 0x9f;
        need = 2;
        cp = b & 0xf;
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) lower = 0x90;
        if (b === 0xf4) upper = 0x8f;
        need = 3;
        cp = b & 0x7;
      } else fail();
      continue;
    }
    if (b < lower || b > upper) {
      fail();
      i--; // the offending byte starts over
      continue;
    }
    lower = 0x80;
    upper = 0xbf;
    cp = (cp << 6) | (b & 0x3f);
    if (++seen === need) {
      if (cp > 0xffff) {
        out[n++] = 0xd800 + ((cp - 0x10000) >> 10);
        out[n++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      } else {
        out[n++] = cp;
      }
      cp = seen = need = 0;
    }
  }
  if (flush && need !== 0) fail();
  sink.n = n;
  st.cp = cp;
  st.seen = seen;
  st.need = need;
  st.lower = lower;
  st.upper = upper;
}

function utf8DecodeNoBOM(bytes) {
  const sink = new StringSink();
  utf8DecodeInto(newUtf8State(), bytes, true, false, sink);
  return sink.toString();
}

// ---------------------------------------------------------------------------
// URL: percent-encode sets, host parsing (IPv4/IPv6/IDNA-lite), punycode
// ---------------------------------------------------------------------------

const inC0Set = (c) => c < 0x20 || c > 0x7e;
const inFragmentSet = (c) => inC0Set(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e ||
  c === 0x60;
const inQuerySet = (c) => inC0Set(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c ||
  c === 0x3e;
const inSpecialQuerySet = (c) => inQuerySet(c) || c === 0x27;
// Node 20 (ada) predates the addition of "^" to the path set; we follow it.
const inPathSet = (c) => inQuerySet(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
const inUserinfoSet = (c) => inPathSet(c) || c === 0x2f || c === 0x3a || c === 0x3b ||
  c === 0x3d || c === 0x40 || (c >= 0x5b && c <= 0x5e) || c === 0x7c;
const inComponentSet = (c) => inUserinfoSet(c) || (c >= 0x24 && c <= 0x26) || c === 0x2b ||
  c === 0x2c;
const inFormSet = (c) => inComponentSet(c) || c === 0x21 || (c >= 0x27 && c <= 0x29) ||
  c === 0x7e;

// Percent-encode one code point (given as a string) if it is in `inSet`.
function pctEncodeChar(ch, inSet) {
  if (!inSet(ch.codePointAt(0))) return ch;
  let out = "";
  for (const b of utf8Encode(ch)) out += "%" + HEX2[b];
  return out;
}

function pctEncodeString(str, inSet) {
  let out = "";
  for (const ch of str) out += pctEncodeChar(ch, inSet);
  return out;
}

const isHexByte = (b) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) ||
  (b >= 0x61 && b <= 0x66);

function pctDecodeBytes(bytes) {
  const out = new Uint8Array(bytes.length);
  let w = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x25 && i + 2 < bytes.length && isHexByte(bytes[i + 1]) && isHexByte(bytes[i + 2])) {
      out[w++] = parseInt(fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
      i += 2;
    } else out[w++] = b;
  }
  return out.slice(0, w);
}

const FAILURE = Symbol("failure");

// RFC 3492 punycode.
const PUNY_BASE = 36, PUNY_TMIN = 1, PUNY_TMAX = 26, PUNY_SKEW = 38, PUNY_DAMP = 700;

function punyAdapt(delta, numPoints, first) {
  delta = first ? Math.floor(delta / PUNY_DAMP) : delta >> 1;
  delta += Math.floor(delta / numPoints);
  let k = 0;
  while (delta > ((PUNY_BASE - PUNY_TMIN) * PUNY_TMAX) >> 1) {
    delta = Math.floor(delta / (PUNY_BASE - PUNY_TMIN));
    k += PUNY_BASE;
  }
  return k + Math.floor(((PUNY_BASE - PUNY_TMIN + 1) * delta) / (delta + PUNY_SKEW));
}

function punycodeEncode(label) {
  const cps = Array.from(label, (ch) => ch.codePointAt(0));
  let out = "";
  for (const c of cps) if (c < 0x80) out += fromCharCode(c);
  const b = out.length;
  let h = b, n = 128, delta = 0, bias = 72;
  if (b > 0) out += "-";
  const digit = (d) => fromCharCode(d < 26 ? 97 + d : 22 + d);
  while (h < cps.length) {
    let m = Infinity;
    for (const c of cps) if (c >= n && c < m) m = c;
    delta += (m - n) * (h + 1);
    n = m;
    for (const c of cps) {
      if (c < n) delta++;
      if (c === n) {
        let q = delta;
        for (let k = PUNY_BASE; ; k += PUNY_BASE) {
          const t = k <= bias ? PUNY_TMIN : k >= bias + PUNY_TMAX ? PUNY_TMAX : k - bias;
          if (q < t) break;
          out += digit(t + ((q - t) % (PUNY_BASE - t)));
          q = Math.floor((q - t) / (PUNY_BASE - t));
        }
        out += digit(q);
        bias = punyAdapt(delta, h + 1, h === b);
        delta = 0;
        h++;
      }
    }
    delta++;
    n++;
  }
  return out;
}

// Decode the part after "xn--"; returns FAILURE on malformed input.
function punycodeDecode(input) {
  const out = [];
  let basic = input.lastIndexOf("-");
  if (basic < 0) basic = 0;
  for (let j = 0; j < basic; j++) {
    if (input.charCodeAt(j) >= 0x80) return FAILURE;
    out.push(input.charCodeAt(j));
  }
  let n = 128, i = 0, bias = 72;
  for (let idx = basic > 0 ? basic + 1 : 0; idx < input.length;) {
    const oldi = i;
    let w = 1;
    for (let k = PUNY_BASE; ; k += PUNY_BASE) {
      if (idx >= input.length) return FAILURE;
      const c = input.charCodeAt(idx++);
      const d = c >= 48 && c <= 57 ? c - 22 : c >= 65 && c <= 90 ? c - 65
        : c >= 97 && c <= 122 ? c - 97 : PUNY_BASE;
      if (d >= PUNY_BASE) return FAILURE;
      i += d * w;
      if (i > 0x10ffff * 64) return FAILURE;
      const t = k <= bias ? PUNY_TMIN : k >= bias + PUNY_TMAX ? PUNY_TMAX : k - bias;
      if (d < t) break;
      w *= PUNY_BASE - t;
    }
    bias = punyAdapt(i - oldi, out.length + 1, oldi === 0);
    n += Math.floor(i / (out.length + 1));
    i %= out.length + 1;
    if (n > 0x10ffff) return FAILURE;
    out.splice(i, 0, n);
    i++;
  }
  return out;
}

// Characters UTS #46 ignores (removed before anything else).
const IDNA_IGNORED =
  /[\u00ad\u034f\u180b-\u180d\u180f\u200b\u2060\ufe00-\ufe0f\ufeff\u{1bca0}-\u{1bca3}\u{e0100}-\u{e01ef}]/gu;
// Approximation of UTS #46 "disallowed" (no Unicode data tables here):
// unassigned, private use, surrogates, controls, format characters (this
// includes ZWJ/ZWNJ, whose CONTEXTJ rule rarely passes), U+FFFD, noncharacters.
const IDNA_DISALLOWED =
  /[\p{Cn}\p{Co}\p{Cs}\p{Cc}\p{Cf}\ufffd\ufdd0-\ufdef\ufffe\uffff\u{1fffe}\u{1ffff}\u{10fffe}\u{10ffff}]/u;

function isValidUnicodeLabel(label) {
  return !IDNA_DISALLOWED.test(label) && !/^\p{M}/u.test(label);
}

// UTS #46 "domain to ASCII" (non-transitional, no STD3 rules), reduced to:
// ignored characters removed, NFKC + lowercase as the mapping, ideographic
// dots, validity checks, punycode for non-ASCII labels and validation of
// existing "xn--" labels.
function domainToASCII(domain) {
  let s = domain;
  if (/[^\x00-\x7f]/.test(s)) s = s.replace(IDNA_IGNORED, "").normalize("NFKC");
  s = s.toLowerCase().replace(/[\u3002\uff0e\uff61]/g, ".");
  const labels = s.split(".");
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i];
    if (label.startsWith("xn--")) {
      if (/[^\x00-\x7f]/.test(label)) return FAILURE;
      const cps = punycodeDecode(label.slice(4));
      if (cps === FAILURE || cps.length === 0) return FAILURE;
      let decoded = "";
      for (const cp of cps) decoded += String.fromCodePoint(cp);
      // The decoded label must be valid and already in mapped (NFKC, lower) form.
      if (!isValidUnicodeLabel(decoded) || decoded.normalize("NFKC").toLowerCase() !== decoded) {
        return FAILURE;
      }
    } else if (/[^\x00-\x7f]/.test(label)) {
      if (!isValidUnicodeLabel(label)) return FAILURE;
      labels[i] = "xn--" + punycodeEncode(label);
    }
  }
  const result = labels.join(".");
  if (result === "") return FAILURE;
  return result;
}

function parseIPv4Number(s) {
  if (s === "") return FAILURE;
  let radix = 10;
  if (s.length >= 2 && s[0] === "0" && (s[1] === "x" || s[1] === "X")) {
    s = s.slice(2);
    radix = 16;
  } else if (s.length >= 2 && s[0] === "0") {
    s = s.slice(1);
    radix = 8;
  }
  if (s === "") return 0;
  const re = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
  if (!re.test(s)) return FAILURE;
  return parseInt(s, radix);
}

function endsInANumber(s) {
  const parts = s.split(".");
  if (parts[parts.length - 1] === "") {
    if (parts.length === 1) return false;
    parts.pop();
  }
  const last = parts[parts.length - 1];
  if (last !== "" && /^[0-9]+$/.test(last)) return true;
  return parseIPv4Number(last) !== FAILURE;
}

function parseIPv4(s) {
  const parts = s.split(".");
  if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop();
  if (parts.length > 4) return FAILURE;
  const nums = [];
  for (const p of parts) {
    const n = parseIPv4Number(p);
    if (n === FAILURE) return FAILURE;
    nums.push(n);
  }
  for (let i = 0; i < nums.length - 1; i++) if (nums[i] > 255) return FAILURE;
  if (nums[nums.length - 1] >= 256 ** (5 - nums.length)) return FAILURE;
  let ipv4 = nums[nums.length - 1];
  for (let i = 0; i < nums.length - 1; i++) ipv4 += nums[i] * 256 ** (3 - i);
  return ipv4;
}

function serializeIPv4(n) {
  const out = [];
  for (let i = 0; i < 4; i++) {
    out.unshift(String(n % 256));
    n = Math.floor(n / 256);
  }
  return out.join(".");
}

function parseIPv6(input) {
  const addr = [0, 0, 0, 0, 0, 0, 0, 0];
  let pieceIndex = 0, compress = null, p = 0;
  const isHex = (ch) => ch !== undefined && /^[0-9a-fA-F]$/.test(ch);
  const isDigit = (ch) => ch !== undefined && ch >= "0" && ch <= "9";
  if (input[p] === ":") {
    if (input[p + 1] !== ":") return FAILURE;
    p += 2;
    pieceIndex++;
    compress = pieceIndex;
  }
  while (p < input.length) {
    if (pieceIndex === 8) return FAILURE;
    if (input[p] === ":") {
      if (compress !== null) return FAILURE;
      p++;
      pieceIndex++;
      compress = pieceIndex;
      continue;
    }
    let value = 0, length = 0;
    while (length < 4 && isHex(input[p])) {
      value = value * 16 + parseInt(input[p], 16);
      p++;
      length++;
    }
    if (input[p] === ".") {
      if (length === 0) return FAILURE;
      p -= length;
      if (pieceIndex > 6) return FAILURE;
      let numbersSeen = 0;
      while (p < input.length) {
        let ipv4Piece = null;
        if (numbersSeen > 0) {
          if (input[p] === "." && numbersSeen < 4) p++;
          else return FAILURE;
        }
        if (!isDigit(input[p])) return FAILURE;
        while (isDigit(input[p])) {
          const number = input.charCodeAt(p) - 48;
          if (ipv4Piece === null) ipv4Piece = number;
          else if (ipv4Piece === 0) return FAILURE;
          else ipv4Piece = ipv4Piece * 10 + number;
          if (ipv4Piece > 255) return FAILURE;
          p++;
        }
        addr[pieceIndex] = addr[pieceIndex] * 0x100 + ipv4Piece;
        numbersSeen++;
        if (numbersSeen === 2 || numbersSeen === 4) pieceIndex++;
      }
      if (numbersSeen !== 4) return FAILURE;
      break;
    } else if (input[p] === ":") {
      p++;
      if (p >= input.length) return FAILURE;
    } else if (p < input.length) return FAILURE;
    addr[pieceIndex] = value;
    pieceIndex++;
  }
  if (compress !== null) {
    let swaps = pieceIndex - compress;
    pieceIndex = 7;
    while (pieceIndex !== 0 && swaps > 0) {
      const tmp = addr[compress + swaps - 1];
      addr[compress + swaps - 1] = addr[pieceIndex];
      addr[pieceIndex] = tmp;
      pieceIndex--;
      swaps--;
    }
  } else if (pieceIndex !== 8) return FAILURE;
  return addr;
}

function serializeIPv6(addr) {
  // Longest run (length > 1) of zero pieces is compressed to "::".
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (addr[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && addr[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === best) {
      out += i === 0 ? "::" : ":";
      i += bestLen - 1;
      continue;
    }
    out += addr[i].toString(16);
    if (i !== 7) out += ":";
  }
  return out;
}

const FORBIDDEN_HOST = /[\u0000\t\n\r #/:<>?@[\\\]^|]/;
const FORBIDDEN_DOMAIN = /[\u0000-\u001f #%/:<>?@[\\\]^|\u007f]/;

// Host parser; returns the serialized host string or FAILURE.
function parseHost(input, isOpaque) {
  if (input.startsWith("[")) {
    if (!input.endsWith("]")) return FAILURE;
    const addr = parseIPv6(input.slice(1, -1));
    return addr === FAILURE ? FAILURE : "[" + serializeIPv6(addr) + "]";
  }
  if (isOpaque) {
    if (FORBIDDEN_HOST.test(input)) return FAILURE;
    return pctEncodeString(input, inC0Set);
  }
  const domain = utf8DecodeNoBOM(pctDecodeBytes(utf8Encode(input)));
  const ascii = domainToASCII(domain);
  if (ascii === FAILURE || FORBIDDEN_DOMAIN.test(ascii)) return FAILURE;
  if (endsInANumber(ascii)) {
    const v4 = parseIPv4(ascii);
    return v4 === FAILURE ? FAILURE : serializeIPv4(v4);
  }
  return ascii;
}

// ---------------------------------------------------------------------------
// URL: the basic URL parser state machine and serializer
// ---------------------------------------------------------------------------

const SPECIAL_SCHEMES = new Map([
  ["ftp", 21], ["file", null], ["http", 80], ["https", 443], ["ws", 80], ["wss", 443],
]);
const isSpecialScheme = (s) => SPECIAL_SCHEMES.has(s);
const defaultPort = (s) => (SPECIAL_SCHEMES.has(s) ? SPECIAL_SCHEMES.get(s) : null);

const S_SCHEME_START = 1, S_SCHEME = 2, S_NO_SCHEME = 3, S_SPECIAL_RELATIVE_OR_AUTHORITY = 4,
  S_PATH_OR_AUTHORITY = 5, S_RELATIVE = 6, S_RELATIVE_SLASH = 7, S_SPECIAL_AUTHORITY_SLASHES = 8,
  S_SPECIAL_AUTHORITY_IGNORE_SLASHES = 9, S_AUTHORITY = 10, S_HOST = 11, S_HOSTNAME = 12,
  S_PORT = 13, S_FILE = 14, S_FILE_SLASH = 15, S_FILE_HOST = 16, S_PATH_START = 17, S_PATH = 18,
  S_OPAQUE_PATH = 19, S_QUERY = 20, S_FRAGMENT = 21;

function newURLRecord() {
  return {
    scheme: "", username: "", password: "", host: null, port: null,
    path: [], query: null, fragment: null,
  };
}

const hasOpaquePath = (rec) => typeof rec.path === "string";
const includesCredentials = (rec) => rec.username !== "" || rec.password !== "";
const cannotHaveUserinfoOrPort = (rec) =>
  rec.host === null || rec.host === "" || rec.scheme === "file";
const isAsciiAlpha = (ch) => ch !== undefined && /^[a-zA-Z]$/.test(ch);
const isWindowsDriveLetter = (s) => s.length === 2 && isAsciiAlpha(s[0]) &&
  (s[1] === ":" || s[1] === "|");
const isNormalizedWindowsDriveLetter = (s) =>
  typeof s === "string" && isWindowsDriveLetter(s) && s[1] === ":";
const isSingleDot = (s) => s === "." || s.toLowerCase() === "%2e";
const isDoubleDot = (s) => {
  const l = s.toLowerCase();
  return l === ".." || l === ".%2e" || l === "%2e." || l === "%2e%2e";
};

function startsWithWindowsDriveLetter(cps, p) {
  return cps.length - p >= 2 && isAsciiAlpha(cps[p]) && (cps[p + 1] === ":" || cps[p + 1] === "|") &&
    (cps.length - p === 2 || "/\\?#".includes(cps[p + 2]));
}

function shortenPath(rec) {
  const path = rec.path;
  if (rec.scheme === "file" && path.length === 1 && isNormalizedWindowsDriveLetter(path[0])) return;
  path.pop();
}

function copyAuthority(rec, base) {
  rec.username = base.username;
  rec.password = base.password;
  rec.host = base.host;
  rec.port = base.port;
}

// The WHATWG "basic URL parser".  Returns a URL record, or FAILURE.  With a
// state override it mutates `rec` in place (used by the setters).
function basicParse(input, base = null, rec = null, override = 0) {
  if (rec === null) {
    rec = newURLRecord();
    input = input.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  }
  input = input.replace(/[\t\n\r]/g, "");
  const cps = Array.from(input);
  let state = override || S_SCHEME_START;
  let buffer = "", atSignSeen = false, insideBrackets = false, passwordTokenSeen = false;
  const special = () => isSpecialScheme(rec.scheme);
  for (let p = 0; p <= cps.length; p++) {
    const c = cps[p]; // undefined means end of input
    switch (state) {
      case S_SCHEME_START:
        if (isAsciiAlpha(c)) {
          buffer += c.toLowerCase();
          state = S_SCHEME;
        } else if (!override) {
          state = S_NO_SCHEME;
          p--;
        } else return FAILURE;
        break;
      case S_SCHEME:
        if (c !== undefined && /^[a-zA-Z0-9+\-.]$/.test(c)) buffer += c.toLowerCase();
        else if (c === ":") {
          if (override) {
            if (isSpecialScheme(rec.scheme) !== isSpecialScheme(buffer)) return rec;
            if ((includesCredentials(rec) || rec.port !== null) && buffer === "file") return rec;
            if (rec.scheme === "file" && rec.host === "") return rec;
          }
          rec.scheme = buffer;
          if (override) {
            if (rec.port === defaultPort(rec.scheme)) rec.port = null;
            return rec;
          }
          buffer = "";
          if (rec.scheme === "file") state = S_FILE;
          else if (special() && base !== null && base.scheme === rec.scheme) {
            state = S_SPECIAL_RELATIVE_OR_AUTHORITY;
          } else if (special()) state = S_SPECIAL_AUTHORITY_SLASHES;
          else if (cps[p + 1] === "/") {
            state = S_PATH_OR_AUTHORITY;
            p++;
          } else {
            rec.path = "";
            state = S_OPAQUE_PATH;
          }
        } else if (!override) {
          buffer = "";
          state = S_NO_SCHEME;
          p = -1;
        } else return FAILURE;
        break;
      case S_NO_SCHEME:
        if (base === null || (hasOpaquePath(base) && c !== "#")) return FAILURE;
        if (hasOpaquePath(base) && c === "#") {
          rec.scheme = base.scheme;
          rec.path = base.path;
          rec.query = base.query;
          rec.fragment = "";
          state = S_FRAGMENT;
        } else if (base.scheme !== "file") {
          state = S_RELATIVE;
          p--;
        } else {
          state = S_FILE;
          p--;
        }
        break;
      case S_SPECIAL_RELATIVE_OR_AUTHORITY:
        if (c === "/" && cps[p + 1] === "/") {
          state = S_SPECIAL_AUTHORITY_IGNORE_SLASHES;
          p++;
        } else {
          state = S_RELATIVE;
          p--;
        }
        break;
      case S_PATH_OR_AUTHORITY:
        if (c === "/") state = S_AUTHORITY;
        else {
          state = S_PATH;
          p--;
        }
        break;
      case S_RELATIVE:
        rec.scheme = base.scheme;
        if (c === "/" || (special() && c === "\\")) state = S_RELATIVE_SLASH;
        else {
          copyAuthority(rec, base);
          rec.path = base.path.slice();
          rec.query = base.query;
          if (c === "?") {
            rec.query = "";
            state = S_QUERY;
          } else if (c === "#") {
            rec.fragment = "";
            state = S_FRAGMENT;
          } else if (c !== undefined) {
            rec.query = null;
            shortenPath(rec);
            state = S_PATH;
            p--;
          }
        }
        break;
      case S_RELATIVE_SLASH:
        if (special() && (c === "/" || c === "\\")) state = S_SPECIAL_AUTHORITY_IGNORE_SLASHES;
        else if (c === "/") state = S_AUTHORITY;
        else {
          copyAuthority(rec, base);
          state = S_PATH;
          p--;
        }
        break;
      case S_SPECIAL_AUTHORITY_SLASHES:
        state = S_SPECIAL_AUTHORITY_IGNORE_SLASHES;
        if (c === "/" && cps[p + 1] === "/") p++;
        else p--;
        break;
      case S_SPECIAL_AUTHORITY_IGNORE_SLASHES:
        if (c !== "/" && c !== "\\") {
          state = S_AUTHORITY;
          p--;
        }
        break;
      case S_AUTHORITY:
        if (c === "@") {
          if (atSignSeen) buffer = "%40" + buffer;
          atSignSeen = true;
          for (const ch of buffer) {
            if (ch === ":" && !passwordTokenSeen) {
              passwordTokenSeen = true;
              continue;
            }
            const enc = pctEncodeChar(ch, inUserinfoSet);
            if (passwordTokenSeen) rec.password += enc;
            else rec.username += enc;
          }
          buffer = "";
        } else if (c === undefined || c === "/" || c === "?" || c === "#" ||
          (special() && c === "\\")) {
          if (atSignSeen && buffer === "") return FAILURE;
          p -= Array.from(buffer).length + 1;
          buffer = "";
          state = S_HOST;
        } else buffer += c;
        break;
      case S_HOST:
      case S_HOSTNAME:
        if (override && rec.scheme === "file") {
          p--;
          state = S_FILE_HOST;
        } else if (c === ":" && !insideBrackets) {
          if (buffer === "") return FAILURE;
          if (override === S_HOSTNAME) return FAILURE;
          const host = parseHost(buffer, !special());
          if (host === FAILURE) return FAILURE;
          rec.host = host;
          buffer = "";
          state = S_PORT;
        } else if (c === undefined || c === "/" || c === "?" || c === "#" ||
          (special() && c === "\\")) {
          p--;
          if (special() && buffer === "") return FAILURE;
          if (override && buffer === "" && (includesCredentials(rec) || rec.port !== null)) {
            return FAILURE;
          }
          const host = parseHost(buffer, !special());
          if (host === FAILURE) return FAILURE;
          rec.host = host;
          buffer = "";
          state = S_PATH_START;
          if (override) return rec;
        } else {
          if (c === "[") insideBrackets = true;
          if (c === "]") insideBrackets = false;
          buffer += c;
        }
        break;
      case S_PORT:
        if (c !== undefined && c >= "0" && c <= "9") buffer += c;
        else if (c === undefined || c === "/" || c === "?" || c === "#" ||
          (special() && c === "\\") || override) {
          if (buffer !== "") {
            const port = parseInt(buffer, 10);
            if (port > 65535) return FAILURE;
            rec.port = port === defaultPort(rec.scheme) ? null : port;
            buffer = "";
          }
          if (override) return rec;
          state = S_PATH_START;
          p--;
        } else return FAILURE;
        break;
      case S_FILE:
        rec.scheme = "file";
        rec.host = "";
        if (c === "/" || c === "\\") state = S_FILE_SLASH;
        else if (base !== null && base.scheme === "file") {
          rec.host = base.host;
          rec.path = base.path.slice();
          rec.query = base.query;
          if (c === "?") {
            rec.query = "";
            state = S_QUERY;
          } else if (c === "#") {
            rec.fragment = "";
            state = S_FRAGMENT;
          } else if (c !== undefined) {
            rec.query = null;
            if (!startsWithWindowsDriveLetter(cps, p)) shortenPath(rec);
            else rec.path = [];
            state = S_PATH;
            p--;
          }
        } else {
          state = S_PATH;
          p--;
        }
        break;
      case S_FILE_SLASH:
        if (c === "/" || c === "\\") state = S_FILE_HOST;
        else {
          if (base !== null && base.scheme === "file") {
            rec.host = base.host;
            if (!startsWithWindowsDriveLetter(cps, p) &&
              isNormalizedWindowsDriveLetter(base.path[0])) {
              rec.path.push(base.path[0]);
            }
          }
          state = S_PATH;
          p--;
        }
        break;
      case S_FILE_HOST:
        if (c === undefined || c === "/" || c === "\\" || c === "?" || c === "#") {
          p--;
          if (!override && isWindowsDriveLetter(buffer)) {
            state = S_PATH; // buffer is kept: it becomes the first path segment
          } else if (buffer === "") {
            rec.host = "";
            if (override) return rec;
            state = S_PATH_START;
          } else {
            let host = parseHost(buffer, !special());
            if (host === FAILURE) return FAILURE;
            if (host === "localhost") host = "";
            rec.host = host;
            if (override) return rec;
            buffer = "";
            state = S_PATH_START;
          }
        } else buffer += c;
        break;
      case S_PATH_START:
        if (special()) {
          state = S_PATH;
          if (c !== "/" && c !== "\\") p--;
        } else if (!override && c === "?") {
          rec.query = "";
          state = S_QUERY;
        } else if (!override && c === "#") {
          rec.fragment = "";
          state = S_FRAGMENT;
        } else if (c !== undefined) {
          state = S_PATH;
          if (c !== "/") p--;
        } else if (override && rec.host === null) rec.path.push("");
        break;
      case S_PATH: {
        const slash = c === "/" || (special() && c === "\\");
        if (c === undefined || slash || (!override && (c === "?" || c === "#"))) {
          if (isDoubleDot(buffer)) {
            shortenPath(rec);
            if (!slash) rec.path.push("");
          } else if (isSingleDot(buffer) && !slash) rec.path.push("");
          else if (!isSingleDot(buffer)) {
            if (rec.scheme === "file" && rec.path.length === 0 && isWindowsDriveLetter(buffer)) {
              buffer = buffer[0] + ":";
            }
            rec.path.push(buffer);
          }
          buffer = "";
          if (c === "?") {
            rec.query = "";
            state = S_QUERY;
          }
          if (c === "#") {
            rec.fragment = "";
            state = S_FRAGMENT;
          }
        } else buffer += pctEncodeChar(c, inPathSet);
        break;
      }
      case S_OPAQUE_PATH:
        if (c === "?") {
          rec.query = "";
          state = S_QUERY;
        } else if (c === "#") {
          rec.fragment = "";
          state = S_FRAGMENT;
        } else if (c !== undefined) rec.path += pctEncodeChar(c, inC0Set);
        break;
      case S_QUERY:
        if ((!override && c === "#") || c === undefined) {
          rec.query += pctEncodeString(buffer, special() ? inSpecialQuerySet : inQuerySet);
          buffer = "";
          if (c === "#") {
            rec.fragment = "";
            state = S_FRAGMENT;
          }
        } else buffer += c;
        break;
      case S_FRAGMENT:
        if (c !== undefined) rec.fragment += pctEncodeChar(c, inFragmentSet);
        break;
    }
  }
  return rec;
}

function serializePath(rec) {
  if (hasOpaquePath(rec)) return rec.path;
  let out = "";
  for (const seg of rec.path) out += "/" + seg;
  return out;
}

function serializeURL(rec, excludeFragment = false) {
  let out = rec.scheme + ":";
  if (rec.host !== null) {
    out += "//";
    if (includesCredentials(rec)) {
      out += rec.username;
      if (rec.password !== "") out += ":" + rec.password;
      out += "@";
    }
    out += rec.host;
    if (rec.port !== null) out += ":" + rec.port;
  }
  if (rec.host === null && !hasOpaquePath(rec) && rec.path.length > 1 && rec.path[0] === "") {
    out += "/.";
  }
  out += serializePath(rec);
  if (rec.query !== null) out += "?" + rec.query;
  if (!excludeFragment && rec.fragment !== null) out += "#" + rec.fragment;
  return out;
}

function serializeOrigin(rec) {
  switch (rec.scheme) {
    case "blob": {
      const inner = basicParse(serializePath(rec));
      if (inner !== FAILURE && (inner.scheme === "http" || inner.scheme === "https")) {
        return serializeOrigin(inner);
      }
      return "null";
    }
    case "ftp": case "http": case "https": case "ws": case "wss":
      return rec.scheme + "://" + rec.host + (rec.port !== null ? ":" + rec.port : "");
    default:
      return "null";
  }
}

function stripTrailingSpacesFromOpaquePath(rec) {
  if (!hasOpaquePath(rec) || rec.fragment !== null || rec.query !== null) return;
  rec.path = rec.path.replace(/ +$/, "");
}

// ---------------------------------------------------------------------------
// application/x-www-form-urlencoded
// ---------------------------------------------------------------------------

// Input is always a well-formed (USV) string, so text without "%" or "+"
// decodes to itself.
function formDecode(s) {
  if (!/[%+]/.test(s)) return s;
  return utf8DecodeNoBOM(pctDecodeBytes(utf8Encode(s.replace(/\+/g, " "))));
}

function parseFormUrlencoded(input) {
  const list = [];
  for (const seq of input.split("&")) {
    if (seq === "") continue;
    const eq = seq.indexOf("=");
    list.push(eq < 0 ? [formDecode(seq), ""] : [formDecode(seq.slice(0, eq)), formDecode(seq.slice(eq + 1))]);
  }
  return list;
}

function formEncode(str) {
  let out = "";
  for (const b of utf8Encode(str)) {
    if (b === 0x20) out += "+";
    else if (inFormSet(b)) out += "%" + HEX2[b];
    else out += fromCharCode(b);
  }
  return out;
}

function serializeFormUrlencoded(list) {
  return list.map(([k, v]) => formEncode(k) + "=" + formEncode(v)).join("&");
}

// ---------------------------------------------------------------------------
// class URL
// ---------------------------------------------------------------------------

const URL_STATE = new WeakMap(); // URL -> { rec, query: URLSearchParams }
const USP_STATE = new WeakMap(); // URLSearchParams -> { list, url: URL | null }

function urlState(self) {
  const st = URL_STATE.get(self);
  if (st === undefined) throw new TypeError("Receiver is not a URL");
  return st;
}

function invalidURL(input) {
  return new TypeError("Invalid URL: " + input);
}

function parseWithBase(url, base) {
  let parsedBase = null;
  if (base !== undefined) {
    parsedBase = basicParse(toUSV(base));
    if (parsedBase === FAILURE) return FAILURE;
  }
  return basicParse(toUSV(url), parsedBase);
}

class URL {
  constructor(url, base = undefined) {
    if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
    const input = toUSV(url);
    const rec = parseWithBase(input, base);
    if (rec === FAILURE) throw invalidURL(input);
    const query = new URLSearchParams();
    const qst = USP_STATE.get(query);
    qst.list = rec.query === null ? [] : parseFormUrlencoded(rec.query);
    qst.url = this;
    URL_STATE.set(this, { rec, query });
  }

  static canParse(url, base = undefined) {
    return parseWithBase(url, base) !== FAILURE;
  }

  static parse(url, base = undefined) {
    try {
      return new URL(url, base);
    } catch {
      return null;
    }
  }

  get href() {
    return serializeURL(urlState(this).rec);
  }
  set href(value) {
    const st = urlState(this);
    const input = toUSV(value);
    const rec = basicParse(input);
    if (rec === FAILURE) throw invalidURL(input);
    st.rec = rec;
    USP_STATE.get(st.query).list = rec.query === null ? [] : parseFormUrlencoded(rec.query);
  }

  get origin() {
    return serializeOrigin(urlState(this).rec);
  }

  get protocol() {
    return urlState(this).rec.scheme + ":";
  }
  set protocol(value) {
    const st = urlState(this);
    basicParse(toUSV(value) + ":", null, st.rec, S_SCHEME_START);
  }

  get username() {
    return urlState(this).rec.username;
  }
  set username(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (cannotHaveUserinfoOrPort(rec)) return;
    rec.username = pctEncodeString(v, inUserinfoSet);
  }

  get password() {
    return urlState(this).rec.password;
  }
  set password(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (cannotHaveUserinfoOrPort(rec)) return;
    rec.password = pctEncodeString(v, inUserinfoSet);
  }

  get host() {
    const rec = urlState(this).rec;
    if (rec.host === null) return "";
    return rec.port === null ? rec.host : rec.host + ":" + rec.port;
  }
  set host(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (hasOpaquePath(rec)) return;
    basicParse(v, null, rec, S_HOST);
  }

  get hostname() {
    const rec = urlState(this).rec;
    return rec.host === null ? "" : rec.host;
  }
  set hostname(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (hasOpaquePath(rec)) return;
    basicParse(v, null, rec, S_HOSTNAME);
  }

  get port() {
    const rec = urlState(this).rec;
    return rec.port === null ? "" : String(rec.port);
  }
  set port(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (cannotHaveUserinfoOrPort(rec)) return;
    if (v === "") rec.port = null;
    else basicParse(v, null, rec, S_PORT);
  }

  get pathname() {
    return serializePath(urlState(this).rec);
  }
  set pathname(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (hasOpaquePath(rec)) return;
    rec.path = [];
    basicParse(v, null, rec, S_PATH_START);
  }

  get search() {
    const q = urlState(this).rec.query;
    return q === null || q === "" ? "" : "?" + q;
  }
  set search(value) {
    const st = urlState(this);
    const rec = st.rec;
    const v = toUSV(value);
    const qst = USP_STATE.get(st.query);
    if (v === "") {
      rec.query = null;
      qst.list = [];
      stripTrailingSpacesFromOpaquePath(rec);
      return;
    }
    rec.query = "";
    basicParse(v[0] === "?" ? v.slice(1) : v, null, rec, S_QUERY);
    // The spec parses the setter's input; parsing the resulting query instead
    // (as Node does) also drops tabs and newlines, like the URL itself.
    qst.list = parseFormUrlencoded(rec.query);
  }

  get searchParams() {
    return urlState(this).query;
  }

  get hash() {
    const f = urlState(this).rec.fragment;
    return f === null || f === "" ? "" : "#" + f;
  }
  set hash(value) {
    const rec = urlState(this).rec;
    const v = toUSV(value);
    if (v === "") {
      rec.fragment = null;
      stripTrailingSpacesFromOpaquePath(rec);
      return;
    }
    rec.fragment = "";
    basicParse(v[0] === "#" ? v.slice(1) : v, null, rec, S_FRAGMENT);
  }

  toString() {
    return serializeURL(urlState(this).rec);
  }

  toJSON() {
    return serializeURL(urlState(this).rec);
  }
}
defineProp(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });

// ---------------------------------------------------------------------------
// class URLSearchParams
// ---------------------------------------------------------------------------

function uspState(self) {
  const st = USP_STATE.get(self);
  if (st === undefined) throw new TypeError("Receiver is not a URLSearchParams");
  return st;
}

function uspUpdate(st) {
  if (st.url === null) return;
  const rec = URL_STATE.get(st.url).rec;
  const s = serializeFormUrlencoded(st.list);
  rec.query = s === "" ? null : s;
  if (rec.query === null) stripTrailingSpacesFromOpaquePath(rec);
}

function requireArgs(count, needed, what) {
  if (count < needed) throw new TypeError(`The "${what}" argument must be specified`);
}

function* iterateParams(st, kind) {
  for (let i = 0; i < st.list.length; i++) {
    const [k, v] = st.list[i];
    yield kind === 0 ? [k, v] : kind === 1 ? k : v;
  }
}

class URLSearchParams {
  constructor(init = undefined) {
    const st = { list: [], url: null };
    USP_STATE.set(this, st);
    if (init === undefined || init === null) return;
    if (typeof init === "object" || typeof init === "function") {
      const iterFn = init[Symbol.iterator];
      if (iterFn !== undefined && iterFn !== null) {
        if (typeof iterFn !== "function") throw new TypeError("Query pairs must be iterable");
        const it = iterFn.call(init);
        for (;;) {
          const step = it.next();
          if (step.done) break;
          const pair = step.value;
          if (!isObjectLike(pair)) {
            throw new TypeError("Each query pair must be an iterable [name, value] tuple");
          }
          const items = Array.from(pair);
          if (items.length !== 2) {
            throw new TypeError("Each query pair must be an iterable [name, value] tuple");
          }
          st.list.push([toUSV(items[0]), toUSV(items[1])]);
        }
      } else {
        for (const key of ownKeys(init)) {
          const d = getOwnDesc(init, key);
          if (d === undefined || !d.enumerable) continue;
          const name = toUSV(key);
          st.list.push([name, toUSV(init[key])]);
        }
      }
      return;
    }
    let s = toUSV(init);
    if (s[0] === "?") s = s.slice(1);
    st.list = parseFormUrlencoded(s);
  }

  get size() {
    return uspState(this).list.length;
  }

  append(name, value) {
    const st = uspState(this);
    requireArgs(arguments.length, 2, arguments.length ? "value" : "name");
    st.list.push([toUSV(name), toUSV(value)]);
    uspUpdate(st);
  }

  delete(name, value = undefined) {
    const st = uspState(this);
    requireArgs(arguments.length, 1, "name");
    const n = toUSV(name);
    const v = value === undefined ? undefined : toUSV(value);
    st.list = st.list.filter(([k, val]) => !(k === n && (v === undefined || val === v)));
    uspUpdate(st);
  }

  get(name) {
    const st = uspState(this);
    requireArgs(arguments.length, 1, "name");
    const n = toUSV(name);
    const hit = st.list.find(([k]) => k === n);
    return hit === undefined ? null : hit[1];
  }

  getAll(name) {
    const st = uspState(this);
    requireArgs(arguments.length, 1, "name");
    const n = toUSV(name);
    return st.list.filter(([k]) => k === n).map(([, v]) => v);
  }

  has(name, value = undefined) {
    const st = uspState(this);
    requireArgs(arguments.length, 1, "name");
    const n = toUSV(name);
    const v = value === undefined ? undefined : toUSV(value);
    return st.list.some(([k, val]) => k === n && (v === undefined || val === v));
  }

  set(name, value) {
    const st = uspState(this);
    requireArgs(arguments.length, 2, arguments.length ? "value" : "name");
    const n = toUSV(name);
    const v = toUSV(value);
    const i = st.list.findIndex(([k]) => k === n);
    if (i < 0) st.list.push([n, v]);
    else {
      st.list[i] = [n, v];
      st.list = st.list.filter(([k], j) => j <= i || k !== n);
    }
    uspUpdate(st);
  }

  sort() {
    const st = uspState(this);
    // Stable sort by code units of the name.
    st.list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    uspUpdate(st);
  }

  forEach(callback, thisArg = undefined) {
    const st = uspState(this);
    if (typeof callback !== "function") throw new TypeError("The callback must be a function");
    for (let i = 0; i < st.list.length; i++) {
      const [k, v] = st.list[i];
      callback.call(thisArg, v, k, this);
    }
  }

  entries() {
    return iterateParams(uspState(this), 0);
  }

  keys() {
    return iterateParams(uspState(this), 1);
  }

  values() {
    return iterateParams(uspState(this), 2);
  }

  toString() {
    return serializeFormUrlencoded(uspState(this).list);
  }
}
defineProp(URLSearchParams.prototype, Symbol.iterator, {
  value: URLSearchParams.prototype.entries, writable: true, configurable: true,
});
defineProp(URLSearchParams.prototype, Symbol.toStringTag, {
  value: "URLSearchParams", configurable: true,
});

// ---------------------------------------------------------------------------
// TextEncoder / TextDecoder (utf-8, utf-16le/be, windows-1252)
// ---------------------------------------------------------------------------

const TEXT_ENCODERS = new WeakSet();

class TextEncoder {
  constructor() {
    TEXT_ENCODERS.add(this);
  }

  get encoding() {
    if (!TEXT_ENCODERS.has(this)) throw new TypeError("Receiver is not a TextEncoder");
    return "utf-8";
  }

  encode(input = "") {
    if (!TEXT_ENCODERS.has(this)) throw new TypeError("Receiver is not a TextEncoder");
    return utf8Encode(`${input}`);
  }

  encodeInto(source, destination) {
    if (!TEXT_ENCODERS.has(this)) throw new TypeError("Receiver is not a TextEncoder");
    const str = `${source}`;
    if (taTagGet.call(destination) !== "Uint8Array") {
      throw new TypeError('The "dest" argument must be an instance of Uint8Array');
    }
    const cap = taLengthGet.call(destination);
    let read = 0, written = 0;
    for (let i = 0; i < str.length;) {
      let c = str.charCodeAt(i), units = 1;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < str.length) {
        const d = str.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          units = 2;
        }
      }
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
      const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (written + n > cap) break;
      if (n === 1) destination[written] = c;
      else if (n === 2) {
        destination[written] = 0xc0 | (c >> 6);
        destination[written + 1] = 0x80 | (c & 0x3f);
      } else if (n === 3) {
        destination[written] = 0xe0 | (c >> 12);
        destination[written + 1] = 0x80 | ((c >> 6) & 0x3f);
        destination[written + 2] = 0x80 | (c & 0x3f);
      } else {
        destination[written] = 0xf0 | (c >> 18);
        destination[written + 1] = 0x80 | ((c >> 12) & 0x3f);
        destination[written + 2] = 0x80 | ((c >> 6) & 0x3f);
        destination[written + 3] = 0x80 | (c & 0x3f);
      }
      written += n;
      read += units;
      i += units;
    }
    return { read, written };
  }
}
defineProp(TextEncoder.prototype, Symbol.toStringTag, { value: "TextEncoder", configurable: true });

const ENCODING_LABELS = new Map();
for (const [name, labels] of [
  ["utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"],
  ["utf-16le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"],
  ["utf-16be", "unicodefffe utf-16be"],
  ["windows-1252", "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 " +
    "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252"],
]) {
  for (const label of labels.split(" ")) ENCODING_LABELS.set(label, name);
}

// windows-1252 bytes 0x80..0x9F (all other bytes map to the same code point).
const WIN1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039,
  0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
  0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

const TEXT_DECODERS = new WeakMap(); // TextDecoder -> state

function decoderState(self) {
  const st = TEXT_DECODERS.get(self);
  if (st === undefined) throw new TypeError("Receiver is not a TextDecoder");
  return st;
}

function resetDecoder(st) {
  st.utf8 = newUtf8State();
  st.leadByte = null;
  st.leadSurrogate = null;
  st.bomSeen = false;
}

// View any BufferSource as a Uint8Array without copying.
function bufferSourceBytes(input) {
  if (hasBrand(abByteLengthGet, input) || hasBrand(sabByteLengthGet, input)) {
    return new Uint8Array(input);
  }
  if (taTagGet.call(input) !== undefined) {
    return new Uint8Array(taBufferGet.call(input), taByteOffsetGet.call(input),
      taByteLengthGet.call(input));
  }
  if (hasBrand(dvBufferGet, input)) {
    return new Uint8Array(dvBufferGet.call(input), dvByteOffsetGet.call(input),
      dvByteLengthGet.call(input));
  }
  throw new TypeError('The "input" argument must be an instance of ArrayBuffer or ' +
    "ArrayBufferView");
}

function utf16DecodeInto(st, bytes, flush, fatal, sink, bigEndian) {
  const error = () => {
    if (fatal) {
      st.leadByte = st.leadSurrogate = null;
      throw new TypeError(`The encoded data was not valid for encoding ${st.encoding}`);
    }
    sink.push(0xfffd);
  };
  for (let i = 0; i < bytes.length; i++) {
    if (st.leadByte === null) {
      st.leadByte = bytes[i];
      continue;
    }
    const unit = bigEndian ? (st.leadByte << 8) | bytes[i] : st.leadByte | (bytes[i] << 8);
    st.leadByte = null;
    if (st.leadSurrogate !== null) {
      const lead = st.leadSurrogate;
      st.leadSurrogate = null;
      if (unit >= 0xdc00 && unit <= 0xdfff) {
        sink.push(0x10000 + ((lead - 0xd800) << 10) + (unit - 0xdc00));
        continue;
      }
      error();
      // fall through: `unit` is processed again on its own
    }
    if (unit >= 0xd800 && unit <= 0xdbff) st.leadSurrogate = unit;
    else if (unit >= 0xdc00 && unit <= 0xdfff) error();
    else sink.push(unit);
  }
  if (flush && (st.leadByte !== null || st.leadSurrogate !== null)) {
    st.leadByte = st.leadSurrogate = null;
    error();
  }
}

class TextDecoder {
  constructor(label = "utf-8", options = undefined) {
    const key = `${label}`.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "").toLowerCase();
    const encoding = ENCODING_LABELS.get(key);
    if (encoding === undefined) throw new RangeError(`The "${label}" encoding is not supported`);
    let fatal = false, ignoreBOM = false;
    if (options !== undefined && options !== null) {
      if (typeof options !== "object" && typeof options !== "function") {
        throw new TypeError('The "options" argument must be of type object');
      }
      fatal = Boolean(options.fatal);
      ignoreBOM = Boolean(options.ignoreBOM);
    }
    const st = { encoding, fatal, ignoreBOM, doNotFlush: false };
    resetDecoder(st);
    TEXT_DECODERS.set(this, st);
  }

  get encoding() {
    return decoderState(this).encoding;
  }

  get fatal() {
    return decoderState(this).fatal;
  }

  get ignoreBOM() {
    return decoderState(this).ignoreBOM;
  }

  decode(input = undefined, options = undefined) {
    const st = decoderState(this);
    const bytes = input === undefined ? new Uint8Array(0) : bufferSourceBytes(input);
    let stream = false;
    if (options !== undefined && options !== null) {
      if (typeof options !== "object" && typeof options !== "function") {
        throw new TypeError('The "options" argument must be of type object');
      }
      stream = Boolean(options.stream);
    }
    if (!st.doNotFlush) resetDecoder(st);
    st.doNotFlush = stream;
    const sink = new StringSink();
    try {
      if (st.encoding === "utf-8") utf8DecodeInto(st.utf8, bytes, !stream, st.fatal, sink);
      else if (st.encoding === "windows-1252") {
        for (let i = 0; i < bytes.length; i += 8192) {
          sink.pushString(fromCharCode.apply(null, bytes.subarray(i, i + 8192))
            .replace(/[\x80-\x9f]/g, (ch) => fromCharCode(WIN1252_HIGH[ch.charCodeAt(0) - 0x80])));
        }
      } else {
        utf16DecodeInto(st, bytes, !stream, st.fatal, sink, st.encoding === "utf-16be");
      }
    } catch (err) {
      resetDecoder(st);
      st.doNotFlush = false;
      throw err;
    }
    let out = sink.toString();
    if (!st.bomSeen && out.length > 0) {
      st.bomSeen = true;
      if (!st.ignoreBOM && st.encoding !== "windows-1252" && out.charCodeAt(0) === 0xfeff) {
        out = out.slice(1);
      }
    }
    return out;
  }
}
defineProp(TextDecoder.prototype, Symbol.toStringTag, { value: "TextDecoder", configurable: true });

// ---------------------------------------------------------------------------
// inspect: a port of Node's util.inspect (no colors, no custom inspect hooks)
// ---------------------------------------------------------------------------

const K_OBJECT = 0, K_ARRAY = 1, K_ARRAY_EXTRAS = 2;

// Escapes for code units 0x00-0x9F used by strEscape (Node's `meta` table).
const ESCAPE_META = [];
for (let i = 0; i < 0xa0; i++) {
  let e = "";
  if (i < 0x20 || (i >= 0x7f && i <= 0x9f)) e = "\\x" + HEX2[i];
  ESCAPE_META.push(e);
}
ESCAPE_META[8] = "\\b";
ESCAPE_META[9] = "\\t";
ESCAPE_META[10] = "\\n";
ESCAPE_META[12] = "\\f";
ESCAPE_META[13] = "\\r";
ESCAPE_META[0x27] = "\\'";
ESCAPE_META[0x5c] = "\\\\";

const ESCAPE_RE_SINGLE =
  /[\x00-\x1f\x27\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const ESCAPE_RE_OTHER =
  /[\x00-\x1f\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const escapeChar = (ch) => {
  const c = ch.charCodeAt(0);
  return c < ESCAPE_META.length ? ESCAPE_META[c] : "\\u" + c.toString(16);
};

// Quote a string the way Node does: prefer ', then ", then `.
function strEscape(str) {
  let quote = "'", re = ESCAPE_RE_SINGLE;
  if (str.includes("'")) {
    if (!str.includes('"')) quote = '"';
    else if (!str.includes("`") && !str.includes("${")) quote = "`";
    if (quote !== "'") re = ESCAPE_RE_OTHER;
  }
  return quote + str.replace(re, escapeChar) + quote;
}

const KEY_IDENT = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

function formatNumber(n) {
  return Object.is(n, -0) ? "-0" : `${n}`;
}

function formatPrimitive(value, ctx) {
  switch (typeof value) {
    case "string": {
      let trailer = "";
      if (value.length > ctx.maxStringLength) {
        const remaining = value.length - ctx.maxStringLength;
        value = value.slice(0, ctx.maxStringLength);
        trailer = `... ${remaining} more character${remaining > 1 ? "s" : ""}`;
      }
      if (ctx.compact !== true && value.length > 16 &&
        value.length > ctx.breakLength - ctx.indentationLvl - 4) {
        return value.split(/(?<=\n)/).map(strEscape)
          .join(` +\n${" ".repeat(ctx.indentationLvl + 2)}`) + trailer;
      }
      return strEscape(value) + trailer;
    }
    case "number":
      return formatNumber(value);
    case "bigint":
      return `${value}n`;
    case "boolean":
      return `${value}`;
    case "undefined":
      return "undefined";
    default:
      return symbolToString.call(value);
  }
}

// Message of a thrown value, without running user code.
function thrownMessage(err) {
  try {
    if (isObjectLike(err)) {
      const m = safeGet(err, "message");
      return typeof m === "string" ? m : objToString.call(err);
    }
    return typeof err === "symbol" ? symbolToString.call(err) : `${err}`;
  } catch {
    return "unknown error";
  }
}

function dataOwnString(obj, key) {
  const d = getOwnDesc(obj, key);
  return d !== undefined && typeof d.value === "string" ? d.value : undefined;
}

// V8's internal class name, roughly (a string @@toStringTag data property wins).
function internalClassName(v) {
  const tag = safeGet(v, Symbol.toStringTag);
  if (typeof tag === "string" && tag !== "") return tag;
  if (typeof v === "function") return "Function";
  if (isArray(v)) return "Array";
  return "Object";
}

// Node's getConstructorName, reading only data properties.
function getConstructorName(obj, ctx, recurseTimes) {
  let firstProto;
  const tmp = obj;
  for (let i = 0; obj !== null && i < MAX_PROTO_WALK; i++) {
    const d = ownDesc(obj, "constructor");
    if (d !== undefined && typeof d.value === "function") {
      const name = dataOwnString(d.value, "name");
      if (name) {
        const proto = getOwnDesc(d.value, "prototype");
        if (proto !== undefined && isObjectLike(proto.value) &&
          protoChainIncludes(tmp, proto.value)) {
          return name;
        }
      }
    }
    obj = getProto(obj);
    if (firstProto === undefined) firstProto = obj;
  }
  if (firstProto === null) return null;
  const res = internalClassName(tmp);
  if (recurseTimes > ctx.depth) return `${res} <Complex prototype>`;
  const protoConstr = getConstructorName(firstProto, ctx, recurseTimes + 1);
  if (protoConstr === null) {
    const sub = newInspectContext(ctx);
    sub.depth = -1;
    return `${res} <${formatValue(sub, firstProto, 0)}>`;
  }
  return `${res} <${protoConstr}>`;
}

function getPrefix(constructor, tag, fallback, size = "") {
  if (constructor === null) {
    if (tag !== "" && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
    return `[${fallback}${size}: null prototype] `;
  }
  if (tag !== "" && constructor !== tag) return `${constructor}${size} [${tag}] `;
  return `${constructor}${size} `;
}

// Prefix for objects without a more specific type.
function getCtxStyle(value, constructor, tag) {
  let fallback = "";
  if (constructor === null) {
    fallback = internalClassName(value);
    if (fallback === tag) fallback = "Object";
  }
  return getPrefix(constructor, tag, fallback);
}

function isIndexKey(k) {
  return typeof k === "string" && ARRAY_INDEX.test(k) && Number(k) < 4294967295;
}

function getKeys(value, showHidden) {
  const keys = [];
  for (const k of ownKeys(value)) {
    if (showHidden) {
      keys.push(k);
      continue;
    }
    const d = getOwnDesc(value, k);
    if (d !== undefined && d.enumerable) keys.push(k);
  }
  // Strings first, then symbols (ownKeys already orders them that way).
  return keys;
}

// Own keys of an array-like that are not array indices.  Ordinary objects
// list index keys first, so only the tail of ownKeys() needs checking.
function getNonIndexKeys(value, showHidden) {
  const all = ownKeys(value);
  let start = all.length;
  while (start > 0 && !isIndexKey(all[start - 1])) start--;
  const keys = [];
  for (let i = start; i < all.length; i++) {
    const k = all[i];
    if (showHidden) keys.push(k);
    else {
      const d = getOwnDesc(value, k);
      if (d !== undefined && d.enumerable) keys.push(k);
    }
  }
  return keys;
}

function remainingText(n) {
  return `... ${n} more item${n > 1 ? "s" : ""}`;
}

function formatProperty(ctx, value, recurseTimes, key, type, desc) {
  let name, str;
  let extra = " ";
  if (desc === undefined) desc = getOwnDesc(value, key);
  if (desc === undefined) {
    const inherited = findDesc(value, key);
    desc = inherited === undefined ? { value: undefined, enumerable: true }
      : { value: inherited.value, get: inherited.get, set: inherited.set, enumerable: true };
  }
  if (desc.value !== undefined) {
    const diff = ctx.compact !== true || type !== K_OBJECT ? 2 : 3;
    ctx.indentationLvl += diff;
    str = formatValue(ctx, desc.value, recurseTimes);
    if (diff === 3 && ctx.breakLength < str.length) {
      extra = `\n${" ".repeat(ctx.indentationLvl)}`;
    }
    ctx.indentationLvl -= diff;
  } else if (desc.get !== undefined) {
    str = desc.set !== undefined ? "[Getter/Setter]" : "[Getter]";
  } else if (desc.set !== undefined) {
    str = "[Setter]";
  } else {
    str = "undefined";
  }
  if (type === K_ARRAY) return str;
  if (typeof key === "symbol") {
    name = `[${symbolToString.call(key).replace(ESCAPE_RE_SINGLE, escapeChar)}]`;
  } else if (key === "__proto__") {
    name = "['__proto__']";
  } else if (desc.enumerable === false) {
    name = `[${String(key).replace(ESCAPE_RE_SINGLE, escapeChar)}]`;
  } else if (KEY_IDENT.test(key)) {
    name = key;
  } else {
    name = strEscape(String(key));
  }
  return `${name}:${extra}${str}`;
}

function formatArray(ctx, value, recurseTimes) {
  const lenDesc = getOwnDesc(value, "length");
  const valLen = lenDesc !== undefined && typeof lenDesc.value === "number" ? lenDesc.value : 0;
  const len = Math.min(Math.max(0, ctx.maxArrayLength), valLen);
  const remaining = valLen - len;
  const output = [];
  for (let i = 0; i < len; i++) {
    if (!hasOwn(value, i)) return formatSpecialArray(ctx, value, recurseTimes, len, output, i);
    output.push(formatProperty(ctx, value, recurseTimes, i, K_ARRAY));
  }
  if (remaining > 0) output.push(remainingText(remaining));
  return output;
}

// Sparse arrays: runs of holes print as "<N empty items>".
function formatSpecialArray(ctx, value, recurseTimes, maxLength, output, i) {
  const keys = Object.keys(value);
  let index = i;
  for (; i < keys.length && output.length < maxLength; i++) {
    const key = keys[i];
    const tmp = +key;
    if (tmp > 2 ** 32 - 2) break;
    if (`${index}` !== key) {
      if (!ARRAY_INDEX.test(key)) break;
      const emptyItems = tmp - index;
      output.push(`<${emptyItems} empty item${emptyItems > 1 ? "s" : ""}>`);
      index = tmp;
      if (output.length === maxLength) break;
    }
    output.push(formatProperty(ctx, value, recurseTimes, key, K_ARRAY));
    index++;
  }
  const lenDesc = getOwnDesc(value, "length");
  const remaining = (lenDesc ? lenDesc.value : 0) - index;
  if (output.length !== maxLength) {
    if (remaining > 0) output.push(`<${remaining} empty item${remaining > 1 ? "s" : ""}>`);
  } else if (remaining > 0) {
    output.push(remainingText(remaining));
  }
  return output;
}

function formatTypedArray(ctx, value, length) {
  const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
  const remaining = length - maxLength;
  const output = [];
  for (let i = 0; i < maxLength; i++) {
    const v = value[i];
    output.push(typeof v === "bigint" ? `${v}n` : formatNumber(v));
  }
  if (remaining > 0) output.push(remainingText(remaining));
  return output;
}

function formatArrayBufferContents(ctx, value) {
  let bytes;
  try {
    bytes = new Uint8Array(value);
  } catch {
    return ["(detached)"];
  }
  const n = Math.min(ctx.maxArrayLength, bytes.length);
  const hex = [];
  for (let i = 0; i < n; i++) hex.push(HEX2[bytes[i]].toLowerCase());
  let str = hex.join(" ");
  const remaining = bytes.length - ctx.maxArrayLength;
  if (remaining > 0) str += ` ... ${remaining} more byte${remaining > 1 ? "s" : ""}`;
  return [`[Uint8Contents]: <${str}>`];
}

function formatSetEntries(ctx, value, recurseTimes) {
  const length = setSizeGet.call(value);
  const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
  const output = [];
  ctx.indentationLvl += 2;
  let i = 0;
  for (const v of setValuesFn.call(value)) {
    if (i >= maxLength) break;
    output.push(formatValue(ctx, v, recurseTimes));
    i++;
  }
  ctx.indentationLvl -= 2;
  if (length - maxLength > 0) output.push(remainingText(length - maxLength));
  return output;
}

function formatMapEntries(ctx, value, recurseTimes) {
  const length = mapSizeGet.call(value);
  const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
  const output = [];
  ctx.indentationLvl += 2;
  let i = 0;
  for (const [k, v] of mapEntriesFn.call(value)) {
    if (i >= maxLength) break;
    output.push(`${formatValue(ctx, k, recurseTimes)} => ${formatValue(ctx, v, recurseTimes)}`);
    i++;
  }
  ctx.indentationLvl -= 2;
  if (length - maxLength > 0) output.push(remainingText(length - maxLength));
  return output;
}

function regexpToString(value) {
  let flags = "";
  for (const [g, ch] of REGEXP_FLAGS) if (g.call(value)) flags += ch;
  return `/${regexpSourceGet.call(value)}/${flags}`;
}

function isRegExpValue(v) {
  return v !== RegExp.prototype && hasBrand(regexpSourceGet, v);
}

function isErrorValue(v) {
  if (isErrorBuiltin !== null && isErrorBuiltin(v)) return true;
  return protoChainIncludes(v, Error.prototype);
}

// Error.prototype.toString, on data properties only.
function errorHeader(err) {
  let name = safeGet(err, "name");
  name = name === undefined ? "Error" : typeof name === "string" ? name : thrownMessage(name);
  let msg = safeGet(err, "message");
  msg = msg === undefined ? "" : typeof msg === "string" ? msg : thrownMessage(msg);
  if (name === "") return msg;
  if (msg === "") return name;
  return `${name}: ${msg}`;
}

// The error's stack; QuickJS stacks hold only frames, so the "Name: message"
// header that V8 puts on the first line is added here.
function getStackString(err) {
  const stack = safeGet(err, "stack");
  if (typeof stack === "string" && stack !== "") {
    if (/^\s+at /.test(stack)) return errorHeader(err) + "\n" + stack.replace(/\n+$/, "");
    return stack;
  }
  if (stack !== undefined && stack !== null && stack !== "" && stack !== false && stack !== 0) {
    return thrownMessage(stack);
  }
  return errorHeader(err);
}

function improveStack(stack, constructor, name, tag) {
  let len = name.length;
  if (constructor === null ||
    (name.endsWith("Error") && stack.startsWith(name) &&
      (stack.length === len || stack[len] === ":" || stack[len] === "\n"))) {
    let fallback = "Error";
    if (constructor === null) {
      const start = /^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n\s+at)/.exec(stack) ||
        /^([a-z_A-Z0-9-]*Error)$/.exec(stack);
      fallback = (start && start[1]) || "";
      len = fallback.length;
      fallback = fallback || "Error";
    }
    const prototype = getPrefix(constructor, tag, fallback).slice(0, -1);
    if (name !== prototype) {
      if (prototype.includes(name)) {
        stack = len === 0 ? `${prototype}: ${stack}` : `${prototype}${stack.slice(len)}`;
      } else {
        stack = `${prototype} [${name}]${stack.slice(len)}`;
      }
    }
  }
  return stack;
}

function formatError(err, constructor, tag, ctx, keys) {
  const nameVal = safeGet(err, "name");
  const name = nameVal !== undefined && nameVal !== null ? thrownMessage(nameVal) : "Error";
  let stack = getStackString(err);
  if (!ctx.showHidden && keys.length !== 0) {
    for (const k of ["name", "message", "stack"]) {
      const index = keys.indexOf(k);
      if (index === -1) continue;
      const d = getOwnDesc(err, k);
      const v = d && "value" in d ? d.value : undefined;
      if (stack.includes(typeof v === "string" ? v : String(v))) keys.splice(index, 1);
    }
  }
  if (findDesc(err, "cause") !== undefined && !keys.includes("cause")) keys.push("cause");
  if (isArray(safeGet(err, "errors")) && !keys.includes("errors")) keys.push("errors");
  stack = improveStack(stack, constructor, name, tag);
  const message = safeGet(err, "message");
  let pos = (typeof message === "string" && message && stack.indexOf(message)) || -1;
  if (pos !== -1) pos += message.length;
  const stackStart = stack.indexOf("\n    at", pos);
  if (stackStart === -1) stack = `[${stack}]`;
  if (ctx.indentationLvl !== 0) {
    stack = stack.replace(/\n/g, `\n${" ".repeat(ctx.indentationLvl)}`);
  }
  return stack;
}

function getFunctionBase(value, constructor, tag) {
  let source = "";
  try {
    source = fnToString.call(value);
  } catch {
    // e.g. a proxy of a function
  }
  if (/^class\b/.test(source) && source.endsWith("}")) {
    const nameD = getOwnDesc(value, "name");
    const cname = (nameD && typeof nameD.value === "string" && nameD.value) || "(anonymous)";
    let base = `class ${cname}`;
    if (constructor !== "Function" && constructor !== null) base += ` [${constructor}]`;
    if (tag !== "" && constructor !== tag) base += ` [${tag}]`;
    if (constructor !== null) {
      const superName = safeGet(getProto(value), "name");
      if (typeof superName === "string" && superName) base += ` extends ${superName}`;
    } else {
      base += " extends [null prototype]";
    }
    return `[${base}]`;
  }
  let type = "Function";
  if (protoChainIncludes(value, GeneratorFunctionProto)) type = "GeneratorFunction";
  if (protoChainIncludes(value, AsyncFunctionProto)) type = "AsyncFunction";
  if (protoChainIncludes(value, AsyncGeneratorFunctionProto)) type = "AsyncGeneratorFunction";
  let base = `[${type}`;
  if (constructor === null) base += " (null prototype)";
  const name = safeGet(value, "name");
  if (typeof name !== "string" || name === "") base += " (anonymous)";
  else base += `: ${name}`;
  base += "]";
  if (constructor !== type && constructor !== null) base += ` ${constructor}`;
  if (tag !== "" && constructor !== tag) base += ` [${tag}]`;
  return base;
}

function getBoxedBase(value, ctx, keys, constructor, tag) {
  let type, prim;
  if (hasBrand(numberValueOf, value)) {
    type = "Number";
    prim = numberValueOf.call(value);
  } else if (hasBrand(stringValueOf, value)) {
    type = "String";
    prim = stringValueOf.call(value);
    keys.splice(0, prim.length);
  } else if (hasBrand(booleanValueOf, value)) {
    type = "Boolean";
    prim = booleanValueOf.call(value);
  } else if (hasBrand(bigintValueOf, value)) {
    type = "BigInt";
    prim = bigintValueOf.call(value);
  } else {
    type = "Symbol";
    prim = symbolValueOf.call(value);
  }
  let base = `[${type}`;
  if (type !== constructor) base += constructor === null ? " (null prototype)" : ` (${constructor})`;
  base += `: ${formatPrimitive(prim, ctx)}]`;
  if (tag !== "" && tag !== constructor) base += ` [${tag}]`;
  return base;
}

function isBoxedPrimitive(v) {
  return hasBrand(numberValueOf, v) || hasBrand(stringValueOf, v) ||
    hasBrand(booleanValueOf, v) || hasBrand(bigintValueOf, v) || hasBrand(symbolValueOf, v);
}

function groupArrayElements(ctx, output, value) {
  let totalLength = 0;
  let maxLength = 0;
  let i = 0;
  let outputLength = output.length;
  if (ctx.maxArrayLength < output.length) outputLength--;
  const separatorSpace = 2;
  const dataLen = new Array(outputLength);
  for (; i < outputLength; i++) {
    const len = output[i].length;
    dataLen[i] = len;
    totalLength += len + separatorSpace;
    if (maxLength < len) maxLength = len;
  }
  const actualMax = maxLength + separatorSpace;
  if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
    (totalLength / actualMax > 5 || maxLength <= 6)) {
    const approxCharHeights = 2.5;
    const averageBias = Math.sqrt(actualMax - totalLength / output.length);
    const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
    const columns = Math.min(
      Math.round(Math.sqrt(approxCharHeights * biasedMax * outputLength) / biasedMax),
      Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
      ctx.compact * 4,
      15,
    );
    if (columns <= 1) return output;
    const tmp = [];
    const maxLineLength = [];
    for (let c = 0; c < columns; c++) {
      let lineLength = 0;
      for (let j = c; j < output.length; j += columns) {
        if (dataLen[j] > lineLength) lineLength = dataLen[j];
      }
      maxLineLength.push(lineLength + separatorSpace);
    }
    let padStart = true;
    if (value !== undefined) {
      for (let k = 0; k < output.length; k++) {
        let v;
        if (taTagGet.call(value) !== undefined) v = value[k];
        else {
          const d = getOwnDesc(value, k);
          v = d === undefined ? undefined : d.value;
        }
        if (typeof v !== "number" && typeof v !== "bigint") {
          padStart = false;
          break;
        }
      }
    }
    for (let r = 0; r < outputLength; r += columns) {
      const max = Math.min(r + columns, outputLength);
      let str = "";
      let j = r;
      for (; j < max - 1; j++) {
        const padding = maxLineLength[j - r];
        str += padStart ? `${output[j]}, `.padStart(padding, " ")
          : `${output[j]}, `.padEnd(padding, " ");
      }
      if (padStart) {
        str += output[j].padStart(maxLineLength[j - r] - separatorSpace, " ");
      } else {
        str += output[j];
      }
      tmp.push(str);
    }
    if (ctx.maxArrayLength < output.length) tmp.push(output[outputLength]);
    output = tmp;
  }
  return output;
}

function isBelowBreakLength(ctx, output, start, base) {
  let totalLength = output.length + start;
  if (totalLength + output.length > ctx.breakLength) return false;
  for (let i = 0; i < output.length; i++) {
    totalLength += output[i].length;
    if (totalLength > ctx.breakLength) return false;
  }
  return base === "" || !base.includes("\n");
}

function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
  if (ctx.compact !== true) {
    if (typeof ctx.compact === "number" && ctx.compact >= 1) {
      const entries = output.length;
      if (extrasType === K_ARRAY_EXTRAS && entries > 6) {
        output = groupArrayElements(ctx, output, value);
      }
      if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
        const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
        if (isBelowBreakLength(ctx, output, start, base)) {
          const joined = output.join(", ");
          if (!joined.includes("\n")) {
            return `${base ? `${base} ` : ""}${braces[0]} ${joined} ${braces[1]}`;
          }
        }
      }
    }
    const indentation = `\n${" ".repeat(ctx.indentationLvl)}`;
    return `${base ? `${base} ` : ""}${braces[0]}${indentation}  ${
      output.join(`,${indentation}  `)}${indentation}${braces[1]}`;
  }
  if (isBelowBreakLength(ctx, output, 0, base)) {
    return `${braces[0]}${base ? ` ${base}` : ""} ${output.join(", ")} ${braces[1]}`;
  }
  const indentation = " ".repeat(ctx.indentationLvl);
  const ln = base === "" && braces[0].length === 1 ? " " : `${base ? ` ${base}` : ""}\n${indentation}  `;
  return `${braces[0]}${ln}${output.join(`,\n${indentation}  `)} ${braces[1]}`;
}

// Our own classes print like Node prints its built-in ones.
function formatOwnClass(ctx, value, recurseTimes) {
  const depthLeft = ctx.depth - recurseTimes;
  if (URL_STATE.has(value)) {
    if (depthLeft < 0) return undefined;
    const obj = {};
    for (const k of ["href", "origin", "protocol", "username", "password", "host", "hostname",
      "port", "pathname", "search", "searchParams", "hash"]) {
      obj[k] = getOwnDesc(URL.prototype, k).get.call(value);
    }
    const sub = newInspectContext(ctx);
    return `URL ${formatValue(sub, obj, 0)}`;
  }
  if (USP_STATE.has(value)) {
    if (depthLeft < 0) return "[Object]";
    const sub = newInspectContext(ctx);
    const output = USP_STATE.get(value).list.map(
      ([k, v]) => `${formatPrimitive(k, sub)} => ${formatPrimitive(v, sub)}`);
    const length = output.reduce((prev, cur) => prev + cur.length + 2, -2);
    if (length > ctx.breakLength) return `URLSearchParams {\n  ${output.join(",\n  ")} }`;
    if (output.length) return `URLSearchParams { ${output.join(", ")} }`;
    return "URLSearchParams {}";
  }
  if (TEXT_DECODERS.has(value)) {
    if (depthLeft < 0) return undefined;
    const st = TEXT_DECODERS.get(value);
    const sub = newInspectContext(INSPECT_DEFAULTS);
    return `TextDecoder ${formatValue(sub, {
      encoding: st.encoding, fatal: st.fatal, ignoreBOM: st.ignoreBOM,
    }, 0)}`;
  }
  if (TEXT_ENCODERS.has(value)) {
    if (depthLeft < 0) return undefined;
    return formatValue(newInspectContext(ctx), { encoding: "utf-8" }, 0);
  }
  return undefined;
}

function formatValue(ctx, value, recurseTimes) {
  if (typeof value !== "object" && typeof value !== "function") {
    return formatPrimitive(value, ctx);
  }
  if (value === null) return "null";
  const seenLength = ctx.seen.length;
  const indentation = ctx.indentationLvl;
  const currentDepth = ctx.currentDepth;
  try {
    const own = formatOwnClass(ctx, value, recurseTimes);
    if (own !== undefined) {
      return ctx.indentationLvl === 0 ? own
        : own.replace(/\n/g, `\n${" ".repeat(ctx.indentationLvl)}`);
    }
    if (ctx.seen.includes(value)) {
      let index = 1;
      if (ctx.circular === null) {
        ctx.circular = new Map([[value, index]]);
      } else {
        index = ctx.circular.get(value);
        if (index === undefined) {
          index = ctx.circular.size + 1;
          ctx.circular.set(value, index);
        }
      }
      return `[Circular *${index}]`;
    }
    return formatRaw(ctx, value, recurseTimes);
  } catch (err) {
    // A hostile proxy or getter threw (or the stack overflowed): report it
    // in place and keep going with the rest of the structure.
    ctx.seen.length = seenLength;
    ctx.indentationLvl = indentation;
    ctx.currentDepth = currentDepth;
    return `[Inspection threw: ${thrownMessage(err)}]`;
  }
}

function formatRaw(ctx, value, recurseTimes) {
  let keys;
  const constructor = getConstructorName(value, ctx, recurseTimes);
  let tag = "";
  const tagDesc = findDesc(value, Symbol.toStringTag);
  if (tagDesc !== undefined && typeof tagDesc.value === "string" && tagDesc.value !== "") {
    const own = getOwnDesc(value, Symbol.toStringTag);
    if (own === undefined || (!ctx.showHidden && !own.enumerable)) tag = tagDesc.value;
  }
  let base = "";
  let formatter = () => [];
  let braces;
  let noIterator = true;
  let extrasType = K_OBJECT;
  const extraDescs = new Map();

  if (Symbol.iterator in value || constructor === null) {
    noIterator = false;
    const taTag = taTagGet.call(value);
    if (isArray(value)) {
      const lenDesc = getOwnDesc(value, "length");
      const length = lenDesc ? lenDesc.value : 0;
      const prefix = constructor !== "Array" || tag !== ""
        ? getPrefix(constructor, tag, "Array", `(${length})`) : "";
      keys = getNonIndexKeys(value, ctx.showHidden);
      braces = [`${prefix}[`, "]"];
      if (length === 0 && keys.length === 0) return `${braces[0]}]`;
      extrasType = K_ARRAY_EXTRAS;
      formatter = () => formatArray(ctx, value, recurseTimes);
    } else if (hasBrand(setSizeGet, value)) {
      const size = setSizeGet.call(value);
      const prefix = getPrefix(constructor, tag, "Set", `(${size})`);
      keys = getKeys(value, ctx.showHidden);
      formatter = () => formatSetEntries(ctx, value, recurseTimes);
      if (size === 0 && keys.length === 0) return `${prefix}{}`;
      braces = [`${prefix}{`, "}"];
    } else if (hasBrand(mapSizeGet, value)) {
      const size = mapSizeGet.call(value);
      const prefix = getPrefix(constructor, tag, "Map", `(${size})`);
      keys = getKeys(value, ctx.showHidden);
      formatter = () => formatMapEntries(ctx, value, recurseTimes);
      if (size === 0 && keys.length === 0) return `${prefix}{}`;
      braces = [`${prefix}{`, "}"];
    } else if (taTag !== undefined) {
      const size = taLengthGet.call(value);
      // Enumerating own keys of a huge typed array is costly; extra
      // (non-index) properties on typed arrays are vanishingly rare.
      keys = size <= 100000 ? getNonIndexKeys(value, ctx.showHidden) : [];
      const fallback = constructor === null ? taTag : "";
      const prefix = getPrefix(constructor, tag, fallback, `(${size})`);
      braces = [`${prefix}[`, "]"];
      if (size === 0 && keys.length === 0 && !ctx.showHidden) return `${braces[0]}]`;
      formatter = () => formatTypedArray(ctx, value, size);
      extrasType = K_ARRAY_EXTRAS;
    } else {
      noIterator = true;
    }
  }
  if (noIterator) {
    keys = getKeys(value, ctx.showHidden);
    braces = ["{", "}"];
    if (constructor === "Object") {
      if (tagDesc === undefined && objToString.call(value) === "[object Arguments]") {
        braces[0] = "[Arguments] {";
      } else if (tag !== "") {
        braces[0] = `${getPrefix(constructor, tag, "Object")}{`;
      }
      if (keys.length === 0) return `${braces[0]}}`;
    } else if (typeof value === "function") {
      base = getFunctionBase(value, constructor, tag);
      if (keys.length === 0) return base;
    } else if (isRegExpValue(value)) {
      base = regexpToString(value);
      const prefix = getPrefix(constructor, tag, "RegExp");
      if (prefix !== "RegExp ") base = `${prefix}${base}`;
      if (keys.length === 0 || recurseTimes > ctx.depth) return base;
    } else if (hasBrand(dateGetTime, value)) {
      const t = dateGetTime.call(value);
      base = Number.isNaN(t) ? "Invalid Date" : dateToISO.call(value);
      const prefix = getPrefix(constructor, tag, "Date");
      if (prefix !== "Date ") base = `${prefix}${base}`;
      if (keys.length === 0) return base;
    } else if (isErrorValue(value)) {
      base = formatError(value, constructor, tag, ctx, keys);
      if (keys.length === 0) return base;
    } else if (hasBrand(abByteLengthGet, value) || hasBrand(sabByteLengthGet, value)) {
      const isAB = hasBrand(abByteLengthGet, value);
      const prefix = getPrefix(constructor, tag, isAB ? "ArrayBuffer" : "SharedArrayBuffer");
      formatter = () => formatArrayBufferContents(ctx, value);
      braces[0] = `${prefix}{`;
      keys.unshift("byteLength");
      extraDescs.set("byteLength", {
        value: (isAB ? abByteLengthGet : sabByteLengthGet).call(value), enumerable: true,
      });
    } else if (hasBrand(dvBufferGet, value)) {
      braces[0] = `${getPrefix(constructor, tag, "DataView")}{`;
      keys.unshift("byteLength", "byteOffset", "buffer");
      let byteLength = 0, byteOffset = 0;
      try {
        byteLength = dvByteLengthGet.call(value);
        byteOffset = dvByteOffsetGet.call(value);
      } catch {
        // detached buffer
      }
      extraDescs.set("byteLength", { value: byteLength, enumerable: true });
      extraDescs.set("byteOffset", { value: byteOffset, enumerable: true });
      extraDescs.set("buffer", { value: dvBufferGet.call(value), enumerable: true });
    } else if (protoChainIncludes(value, Promise.prototype)) {
      braces[0] = `${getPrefix(constructor, tag, "Promise")}{`;
      // QuickJS offers no synchronous way to read a promise's state.
      formatter = () => ["<unknown>"];
    } else if (hasBrand(weakSetHas, value, {})) {
      braces[0] = `${getPrefix(constructor, tag, "WeakSet")}{`;
      formatter = () => ["<items unknown>"];
    } else if (hasBrand(weakMapHas, value, {})) {
      braces[0] = `${getPrefix(constructor, tag, "WeakMap")}{`;
      formatter = () => ["<items unknown>"];
    } else if (isBoxedPrimitive(value)) {
      base = getBoxedBase(value, ctx, keys, constructor, tag);
      if (keys.length === 0) return base;
    } else {
      if (keys.length === 0) return `${getCtxStyle(value, constructor, tag)}{}`;
      braces[0] = `${getCtxStyle(value, constructor, tag)}{`;
    }
  }

  if (recurseTimes > ctx.depth) {
    let name = getCtxStyle(value, constructor, tag).slice(0, -1);
    if (constructor !== null) name = `[${name}]`;
    return name;
  }
  recurseTimes += 1;
  ctx.seen.push(value);
  ctx.currentDepth = recurseTimes;
  const output = formatter();
  for (let i = 0; i < keys.length; i++) {
    output.push(formatProperty(ctx, value, recurseTimes, keys[i], extrasType,
      extraDescs.get(keys[i])));
  }
  if (ctx.circular !== null) {
    const index = ctx.circular.get(value);
    if (index !== undefined) {
      const reference = `<ref *${index}>`;
      if (ctx.compact !== true) base = base === "" ? reference : `${reference} ${base}`;
      else braces[0] = `${reference} ${braces[0]}`;
    }
  }
  ctx.seen.pop();
  return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
}

const INSPECT_DEFAULTS = {
  depth: 2, breakLength: 80, compact: 3, maxArrayLength: 100, maxStringLength: 10000,
  showHidden: false,
};

function newInspectContext(opts) {
  return {
    seen: [], circular: null, indentationLvl: 0, currentDepth: 0,
    depth: opts.depth, breakLength: opts.breakLength, compact: opts.compact,
    maxArrayLength: opts.maxArrayLength, maxStringLength: opts.maxStringLength,
    showHidden: opts.showHidden,
  };
}

// inspect(value, {depth, breakLength, compact, maxArrayLength, maxStringLength, showHidden})
function inspect(value, options = undefined) {
  const ctx = newInspectContext(INSPECT_DEFAULTS);
  if (isObjectLike(options)) {
    const num = (v) => (v === null || v === Infinity ? Infinity : Number(v));
    const d = (k) => {
      const desc = getOwnDesc(options, k);
      return desc !== undefined && "value" in desc ? desc.value : undefined;
    };
    if (d("depth") !== undefined) ctx.depth = num(d("depth"));
    if (d("breakLength") !== undefined) ctx.breakLength = num(d("breakLength"));
    if (d("maxArrayLength") !== undefined) ctx.maxArrayLength = num(d("maxArrayLength"));
    if (d("maxStringLength") !== undefined) ctx.maxStringLength = num(d("maxStringLength"));
    if (d("showHidden") !== undefined) ctx.showHidden = Boolean(d("showHidden"));
    const compact = d("compact");
    if (compact === true) ctx.compact = true;
    else if (compact === false) ctx.compact = 0;
    else if (typeof compact === "number") ctx.compact = compact;
    for (const k of ["depth", "breakLength", "maxArrayLength", "maxStringLength"]) {
      if (Number.isNaN(ctx[k])) ctx[k] = INSPECT_DEFAULTS[k];
    }
  }
  return formatValue(ctx, value, 0);
}

// ---------------------------------------------------------------------------
// formatLogArgs: Node's util.format
// ---------------------------------------------------------------------------

const BUILTIN_CTOR_NAMES = new Set([
  "Object", "Function", "Array", "Number", "Boolean", "String", "Symbol", "Date", "Promise",
  "RegExp", "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError",
  "SyntaxError", "TypeError", "URIError", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Map",
  "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "BigInt", "Proxy", "Iterator",
  ...TYPED_ARRAYS.keys(),
]);

// True when `value` would stringify with a builtin toString / @@toPrimitive
// (Node's rule for choosing between String() and inspect() for %s).
function hasBuiltInToString(value) {
  try {
    let checkToString = true, checkToPrimitive = true;
    if (typeof value.toString !== "function") {
      if (typeof value[Symbol.toPrimitive] !== "function") return true;
      if (hasOwn(value, Symbol.toPrimitive)) return false;
      checkToString = false;
    } else if (hasOwn(value, "toString")) {
      return false;
    } else if (typeof value[Symbol.toPrimitive] !== "function") {
      checkToPrimitive = false;
    } else if (hasOwn(value, Symbol.toPrimitive)) {
      return false;
    }
    let pointer = value;
    for (let i = 0; ; i++) {
      pointer = getProto(pointer);
      if (pointer === null || i > MAX_PROTO_WALK) return true;
      if ((checkToString && hasOwn(pointer, "toString")) ||
        (checkToPrimitive && hasOwn(pointer, Symbol.toPrimitive))) break;
    }
    const d = ownDesc(pointer, "constructor");
    return d !== undefined && typeof d.value === "function" &&
      BUILTIN_CTOR_NAMES.has(dataOwnString(d.value, "name"));
  } catch {
    return true;
  }
}

function tryStringify(v) {
  try {
    return JSON.stringify(v);
  } catch (err) {
    if (err instanceof TypeError && /circular/i.test(thrownMessage(err))) return "[Circular]";
    throw err;
  }
}

function formatLogArgs(args) {
  const list = isArray(args) ? args : Array.from(args);
  const first = list[0];
  let a = 0;
  let str = "";
  let join = "";
  if (typeof first === "string") {
    if (list.length === 1) return first;
    let tempStr;
    let lastPos = 0;
    for (let i = 0; i < first.length - 1; i++) {
      if (first.charCodeAt(i) !== 37) continue; // '%'
      const nextChar = first.charCodeAt(++i);
      if (a + 1 !== list.length) {
        switch (nextChar) {
          case 115: { // 's'
            const arg = list[++a];
            if (typeof arg === "number") tempStr = formatNumber(arg);
            else if (typeof arg === "bigint") tempStr = `${arg}n`;
            else if (typeof arg !== "object" || arg === null || !hasBuiltInToString(arg)) {
              tempStr = String(arg);
            }
            else tempStr = inspect(arg, { depth: 0 });
            break;
          }
          case 106: // 'j'
            tempStr = tryStringify(list[++a]);
            break;
          case 100: { // 'd'
            const n = list[++a];
            if (typeof n === "bigint") tempStr = `${n}n`;
            else if (typeof n === "symbol") tempStr = "NaN";
            else tempStr = formatNumber(Number(n));
            break;
          }
          case 79: // 'O'
            tempStr = inspect(list[++a]);
            break;
          case 111: // 'o'
            tempStr = inspect(list[++a], { showHidden: true, depth: 4 });
            break;
          case 105: { // 'i'
            const n = list[++a];
            if (typeof n === "bigint") tempStr = `${n}n`;
            else if (typeof n === "symbol") tempStr = "NaN";
            else tempStr = formatNumber(parseInt(n));
            break;
          }
          case 102: { // 'f'
            const n = list[++a];
            tempStr = typeof n === "symbol" ? "NaN" : formatNumber(parseFloat(n));
            break;
          }
          case 99: // 'c'
            a += 1;
            tempStr = "";
            break;
          case 37: // '%'
            str += first.slice(lastPos, i);
            lastPos = i + 1;
            continue;
          default:
            continue;
        }
        if (lastPos !== i - 1) str += first.slice(lastPos, i - 1);
        str += tempStr;
        lastPos = i + 1;
      } else if (nextChar === 37) {
        str += first.slice(lastPos, i);
        lastPos = i + 1;
      }
    }
    if (lastPos !== 0) {
      a++;
      join = " ";
      if (lastPos < first.length) str += first.slice(lastPos);
    }
  }
  while (a < list.length) {
    const value = list[a];
    str += join;
    str += typeof value !== "string" ? inspect(value) : value;
    join = " ";
    a++;
  }
  return str;
}

// ---------------------------------------------------------------------------
// structuredCloneValue: the HTML structured clone algorithm (no transfer)
// ---------------------------------------------------------------------------

const CLONEABLE_ERROR_NAMES = new Map([
  ["Error", Error], ["EvalError", EvalError], ["RangeError", RangeError],
  ["ReferenceError", ReferenceError], ["SyntaxError", SyntaxError], ["TypeError", TypeError],
  ["URIError", URIError],
]);

// Prototypes whose instances carry internal state that cannot be cloned.
const UNCLONEABLE_PROTOS = [
  [Promise.prototype, "a Promise"],
  [GeneratorProto, "a Generator"],
  [AsyncGeneratorProto, "an AsyncGenerator"],
  [getProto(new Map().entries()), "a Map Iterator"],
  [getProto(new Set().values()), "a Set Iterator"],
  [getProto([].values()), "an Array Iterator"],
  [getProto(""[Symbol.iterator]()), "a String Iterator"],
  [getProto(/x/[Symbol.matchAll]("")), "a RegExp String Iterator"],
];
if (typeof Iterator === "function" && typeof Iterator.prototype.map === "function") {
  UNCLONEABLE_PROTOS.push([getProto([].values().map((x) => x)), "an Iterator Helper"]);
}
if (typeof DisposableStack === "function") {
  UNCLONEABLE_PROTOS.push([DisposableStack.prototype, "a DisposableStack"]);
}
if (typeof AsyncDisposableStack === "function") {
  UNCLONEABLE_PROTOS.push([AsyncDisposableStack.prototype, "an AsyncDisposableStack"]);
}

// Path of the value being cloned, e.g. value.a[2]: a linked list of
// {parent, key, how} nodes, rendered only when an error is reported.
function renderClonePath(node) {
  const segs = [];
  for (; node !== null; node = node.parent) {
    const k = node.key;
    switch (node.how) {
      case "prop":
        segs.push(/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : ARRAY_INDEX.test(k) ? `[${k}]`
          : `[${JSON.stringify(k)}]`);
        break;
      case "mapkey":
        segs.push(`.keys()[${k}]`);
        break;
      case "mapvalue":
        segs.push(`.get(${typeof k === "string" ? JSON.stringify(k)
          : typeof k === "number" ? formatNumber(k) : "<key>"})`);
        break;
      case "setvalue":
        segs.push(`.values()[${k}]`);
        break;
      default:
        segs.push(k); // "value", ".buffer", ".cause"
    }
  }
  return segs.reverse().join("");
}

function dataCloneError(what, pathNode) {
  const message = `structuredClone: ${what} at ${renderClonePath(pathNode)} could not be cloned`;
  if (DOMExceptionCtor !== null) return new DOMExceptionCtor(message, "DataCloneError");
  const err = new Error(message);
  defineProp(err, "name", { value: "DataCloneError", writable: true, configurable: true });
  return err;
}

const DATA_DESC = { __proto__: null, value: undefined, writable: true, enumerable: true,
  configurable: true };

// CreateDataProperty; plain assignment would hit frozen prototype properties
// (toString, constructor, ...) or the __proto__ setter.
function defineData(obj, key, value) {
  DATA_DESC.value = value;
  defineProp(obj, key, DATA_DESC);
  DATA_DESC.value = undefined;
}

function cloneArrayBuffer(buf) {
  const len = abByteLengthGet.call(buf);
  let copy;
  if (abResizableGet && abResizableGet.call(buf)) {
    copy = new ArrayBuffer(len, { maxByteLength: abMaxByteLengthGet.call(buf) });
  } else {
    copy = new ArrayBuffer(len);
  }
  new Uint8Array(copy).set(new Uint8Array(buf));
  return copy;
}

// Clone the object `v` that is not in `memory` yet.  Leaf types are copied
// here; containers are created empty, registered in `memory`, and a frame is
// pushed on `frames` so their contents get cloned afterwards.
function cloneObject(v, parent, key, how, memory, frames, clone) {
  const path = { parent, key, how };
  const proto = getProto(v);
  let plain = proto === Object.prototype || (proto === Array.prototype && isArray(v));
  let out;
  if (!plain) {
    if (hasBrand(booleanValueOf, v)) out = Object(booleanValueOf.call(v));
    else if (hasBrand(numberValueOf, v)) out = Object(numberValueOf.call(v));
    else if (hasBrand(bigintValueOf, v)) out = Object(bigintValueOf.call(v));
    else if (hasBrand(stringValueOf, v)) out = Object(stringValueOf.call(v));
    else if (hasBrand(symbolValueOf, v)) throw dataCloneError("a Symbol object", path);
    else if (hasBrand(dateGetTime, v)) out = new Date(dateGetTime.call(v));
    else if (isRegExpValue(v)) {
      const re = regexpToString(v);
      out = new RegExp(regexpSourceGet.call(v), re.slice(re.lastIndexOf("/") + 1));
    } else if (hasBrand(abByteLengthGet, v)) {
      try {
        out = cloneArrayBuffer(v);
      } catch {
        throw dataCloneError("a detached ArrayBuffer", path);
      }
    } else if (hasBrand(sabByteLengthGet, v)) {
      out = v; // shared memory stays shared
    } else if (taTagGet.call(v) !== undefined) {
      const buffer = clone(taBufferGet.call(v), path, ".buffer", "");
      const Ctor = TYPED_ARRAYS.get(taTagGet.call(v));
      out = new Ctor(buffer, taByteOffsetGet.call(v), taLengthGet.call(v));
    } else if (hasBrand(dvBufferGet, v)) {
      const buffer = clone(dvBufferGet.call(v), path, ".buffer", "");
      out = new DataView(buffer, dvByteOffsetGet.call(v), dvByteLengthGet.call(v));
    } else if (hasBrand(mapSizeGet, v)) {
      out = new Map();
      memory.set(v, out);
      frames.push({ kind: "map", out, path, items: Array.from(mapEntriesFn.call(v)), i: 0 });
      return out;
    } else if (hasBrand(setSizeGet, v)) {
      out = new Set();
      memory.set(v, out);
      frames.push({ kind: "set", out, path, items: Array.from(setValuesFn.call(v)), i: 0 });
      return out;
    } else if (hasBrand(weakMapHas, v, {})) throw dataCloneError("a WeakMap", path);
    else if (hasBrand(weakSetHas, v, {})) throw dataCloneError("a WeakSet", path);
    else if (hasBrand(weakRefDeref, v)) throw dataCloneError("a WeakRef", path);
    else if (hasBrand(finRegUnregister, v, {})) {
      throw dataCloneError("a FinalizationRegistry", path);
    } else if (isErrorValue(v)) {
      let name = v.name;
      name = typeof name === "string" && CLONEABLE_ERROR_NAMES.has(name) ? name : "Error";
      const msgDesc = getOwnDesc(v, "message");
      const Ctor = CLONEABLE_ERROR_NAMES.get(name);
      out = msgDesc !== undefined && "value" in msgDesc ? new Ctor(`${msgDesc.value}`) : new Ctor();
      const stack = safeGet(v, "stack");
      if (typeof stack === "string") {
        defineProp(out, "stack", { value: stack, writable: true, configurable: true });
      }
      memory.set(v, out);
      if (getOwnDesc(v, "cause") !== undefined) frames.push({ kind: "cause", v, out, path });
      return out;
    } else {
      for (const [p, what] of UNCLONEABLE_PROTOS) {
        if (protoChainIncludes(v, p)) throw dataCloneError(what, path);
      }
      plain = true; // class instances and null-prototype objects
    }
  }
  if (plain) {
    if (isArray(v)) {
      const lenDesc = getOwnDesc(v, "length");
      out = new Array(lenDesc && typeof lenDesc.value === "number" ? lenDesc.value : 0);
    } else {
      out = {};
    }
    memory.set(v, out);
    // Own enumerable string keys; array indices come first and can be
    // assigned directly.
    const keys = Object.keys(v);
    let indexCount = 0;
    if (isArray(out)) {
      indexCount = keys.length;
      while (indexCount > 0 && !isIndexKey(keys[indexCount - 1])) indexCount--;
    }
    if (keys.length) frames.push({ kind: "props", v, out, path, items: keys, i: 0, indexCount });
    return out;
  }
  memory.set(v, out);
  return out;
}

// structuredCloneValue(value): deep copy per the HTML structured clone
// algorithm.  Iterative (no recursion), depth-first in property order, so
// arbitrarily deep input is fine and the first uncloneable value found is the
// one the spec would report.
function structuredCloneValue(value) {
  const memory = new Map();
  const frames = [];
  // `parent`, `key` and `how` describe the path; a node is only allocated
  // for objects and errors.
  const clone = (v, parent, key, how) => {
    const t = typeof v;
    if (t === "symbol") throw dataCloneError("a symbol", { parent, key, how });
    if (t === "function") throw dataCloneError("a function", { parent, key, how });
    if (v === null || t !== "object") return v;
    const seen = memory.get(v);
    if (seen !== undefined) return seen;
    return cloneObject(v, parent, key, how, memory, frames, clone);
  };
  const result = clone(value, null, "value", "");
  while (frames.length > 0) {
    const f = frames[frames.length - 1];
    if (f.kind === "cause") {
      frames.pop();
      const cause = clone(f.v.cause, f.path, ".cause", "");
      defineProp(f.out, "cause", { value: cause, writable: true, configurable: true });
    } else if (f.i >= f.items.length) {
      frames.pop();
    } else if (f.kind === "props") {
      const i = f.i++;
      const k = f.items[i];
      if (!hasOwn(f.v, k)) continue;
      const cv = clone(f.v[k], f.path, k, "prop");
      if (i < f.indexCount) f.out[k] = cv;
      else defineData(f.out, k, cv);
    } else if (f.kind === "set") {
      const i = f.i++;
      f.out.add(clone(f.items[i], f.path, i, "setvalue"));
    } else if (!f.keyDone) {
      // Map entry: the key (and anything it contains) first, then the value.
      f.key = clone(f.items[f.i][0], f.path, f.i, "mapkey");
      f.keyDone = true;
    } else {
      const [k, val] = f.items[f.i];
      f.out.set(f.key, clone(val, f.path, k, "mapvalue"));
      f.keyDone = false;
      f.i++;
    }
  }
  return result;
}
