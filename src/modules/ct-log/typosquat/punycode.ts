/**
 * Punycode (RFC 3492) for one label: decoding an "xn--" A-label into its Unicode form, for
 * the typosquatting detector (certificate names are A-labels; lookalikes are judged on
 * what a user sees), and encoding a Unicode label into its A-label (the permutations the
 * discovery asks DNS about). Invalid input is a typed error, never a crash.
 */
export class PunycodeError extends Error {
  override readonly name = "PunycodeError";
}

const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;

function adapt(delta: number, numPoints: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / numPoints);
  let k = 0;
  while (d > ((BASE - TMIN) * TMAX) >> 1) {
    d = Math.floor(d / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - TMIN + 1) * d) / (d + SKEW));
}

function digit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 22; // '0'..'9' -> 26..35
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61;
  return -1;
}

/** Decodes the part after "xn--" (RFC 3492 §6.2). */
export function punycodeDecode(input: string): string {
  const out: number[] = [];
  const cut = input.lastIndexOf("-");
  for (let j = 0; j < Math.max(cut, 0); j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) throw new PunycodeError("non-basic code point before the delimiter");
    out.push(c);
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let pos = cut >= 0 ? cut + 1 : 0; pos < input.length; ) {
    const oldi = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (pos >= input.length) throw new PunycodeError("truncated punycode");
      const d = digit(input.charCodeAt(pos++));
      if (d < 0) throw new PunycodeError("invalid punycode digit");
      i += d * w;
      if (i > 0x7fffffff) throw new PunycodeError("punycode overflow");
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
      if (d < t) break;
      w *= BASE - t;
    }
    bias = adapt(i - oldi, out.length + 1, oldi === 0);
    n += Math.floor(i / (out.length + 1));
    i %= out.length + 1;
    if (n > 0x10ffff) throw new PunycodeError("code point out of range");
    out.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...out);
}

/** The Unicode form of a label: "xn--" labels decoded, others unchanged. Throws PunycodeError. */
export function labelToUnicode(label: string): string {
  return label.startsWith("xn--") ? punycodeDecode(label.slice(4)) : label;
}

function encodeDigit(d: number): string {
  return String.fromCharCode(d < 26 ? 0x61 + d : 0x30 + d - 26);
}

/** Encodes a Unicode label into the part after "xn--" (RFC 3492 §6.3). Throws PunycodeError on overflow. */
export function punycodeEncode(input: string): string {
  const cps = Array.from(input, (c) => c.codePointAt(0)!);
  let out = cps.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join("");
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += "-";
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < cps.length) {
    let m = 0x10ffff + 1;
    for (const c of cps) if (c >= n && c < m) m = c;
    if ((m - n) * (handled + 1) > 0x7fffffff - delta) throw new PunycodeError("punycode overflow");
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of cps) {
      if (c < n) delta++;
      if (c === n) {
        let q = delta;
        for (let k = BASE; ; k += BASE) {
          const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
          if (q < t) break;
          out += encodeDigit(t + ((q - t) % (BASE - t)));
          q = Math.floor((q - t) / (BASE - t));
        }
        out += encodeDigit(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return out;
}

/** The A-label of a Unicode label: ASCII labels unchanged, others "xn--" + Punycode. */
export function labelToAscii(label: string): string {
  for (let i = 0; i < label.length; i++) if (label.charCodeAt(i) >= 0x80) return "xn--" + punycodeEncode(label);
  return label;
}
