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
