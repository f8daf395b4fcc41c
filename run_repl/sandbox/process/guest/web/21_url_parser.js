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
