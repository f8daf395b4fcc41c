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
