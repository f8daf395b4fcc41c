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
