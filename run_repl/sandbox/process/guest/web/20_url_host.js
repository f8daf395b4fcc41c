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
