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
