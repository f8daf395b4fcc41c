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
