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
