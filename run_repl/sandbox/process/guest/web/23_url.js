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
