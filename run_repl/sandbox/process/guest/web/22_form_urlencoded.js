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
