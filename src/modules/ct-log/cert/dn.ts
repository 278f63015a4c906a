/**
 * X.501 distinguished names: decoding the DER Name, formatting it as an
 * RFC 4514 string (most significant RDN last, e.g. "CN=WE1,O=Google Trust Services,C=US",
 * as `openssl -nameopt RFC2253` prints it), and parsing such a string back into
 * attributes (the CAA issuer mapping needs O= and CN= from a stored DN string).
 */
import { DerError, TAG, children, decodeOid, readElement, toHex, utf8OrLatin1, latin1, type DerElement } from "./der";
import { DN_ATTRIBUTE_NAMES } from "./oids";

export interface DnAttribute {
  /** Short name (CN, O, ...) or the dotted OID when there is none. */
  type: string;
  oid: string;
  /** Decoded string value; for non-string values the RFC 4514 "#hex" form. */
  value: string;
  /** True when `value` is the "#hex" form (written unescaped). */
  hex?: boolean;
}

/** One relative distinguished name: usually one attribute, several when multi-valued. */
export type Rdn = DnAttribute[];

/** Decodes a Name (SEQUENCE OF SET OF AttributeTypeAndValue) in encoded order (most significant first). */
export function decodeName(buf: Uint8Array, name: DerElement): Rdn[] {
  if (name.tag !== TAG.SEQUENCE) throw new DerError("Name is not a SEQUENCE", name.start);
  const rdns: Rdn[] = [];
  let p = name.valueStart;
  while (p < name.end) {
    const set = readElement(buf, p, name.end);
    if (set.tag !== TAG.SET) throw new DerError("RDN is not a SET", set.start);
    const rdn: Rdn = [];
    for (const atv of children(buf, set)) {
      if (atv.tag !== TAG.SEQUENCE) throw new DerError("AttributeTypeAndValue is not a SEQUENCE", atv.start);
      const typeEl = readElement(buf, atv.valueStart, atv.end);
      if (typeEl.tag !== TAG.OID) throw new DerError("attribute type is not an OID", typeEl.start);
      const valueEl = readElement(buf, typeEl.end, atv.end);
      const oid = decodeOid(buf, typeEl);
      const value = decodeDirectoryString(buf, valueEl);
      const attr: DnAttribute = { type: DN_ATTRIBUTE_NAMES[oid] ?? oid, oid, value };
      if (!STRING_TAGS.has(valueEl.tag)) attr.hex = true;
      rdn.push(attr);
    }
    rdns.push(rdn);
    p = set.end;
  }
  return rdns;
}

const STRING_TAGS = new Set<number>([
  TAG.PRINTABLE_STRING, TAG.IA5_STRING, TAG.UTF8_STRING, TAG.TELETEX_STRING, TAG.BMP_STRING, TAG.UNIVERSAL_STRING,
]);

/** DirectoryString and friends to a JS string; anything else as "#<hex of the TLV>" (RFC 4514 §2.4). */
export function decodeDirectoryString(buf: Uint8Array, el: DerElement): string {
  switch (el.tag) {
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.UTF8_STRING:
      return utf8OrLatin1(buf, el.valueStart, el.end);
    case TAG.TELETEX_STRING:
      return latin1(buf, el.valueStart, el.end);
    case TAG.BMP_STRING: {
      let s = "";
      for (let i = el.valueStart; i + 1 < el.end; i += 2) s += String.fromCharCode((buf[i] << 8) | buf[i + 1]);
      return s;
    }
    case TAG.UNIVERSAL_STRING: {
      let s = "";
      for (let i = el.valueStart; i + 3 < el.end; i += 4) {
        const cp = ((buf[i] << 24) | (buf[i + 1] << 16) | (buf[i + 2] << 8) | buf[i + 3]) >>> 0;
        s += cp <= 0x10ffff ? String.fromCodePoint(cp) : "\ufffd";
      }
      return s;
    }
    default:
      return "#" + toHex(buf, el.start, el.end);
  }
}

/** RFC 4514 §2.4 escaping of one attribute value. */
export function escapeDnValue(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const c = value.charCodeAt(i);
    if (c === 0) out += "\\00";
    else if (ch === '"' || ch === "+" || ch === "," || ch === ";" || ch === "<" || ch === ">" || ch === "\\") out += "\\" + ch;
    else if (i === 0 && (ch === " " || ch === "#")) out += "\\" + ch;
    else if (i === value.length - 1 && ch === " ") out += "\\ ";
    else out += ch;
  }
  return out;
}

/** RFC 4514 string: RDNs in reverse encoded order, joined by ","; multi-valued RDNs by "+". */
export function formatDn(rdns: Rdn[]): string {
  const parts: string[] = [];
  for (let i = rdns.length - 1; i >= 0; i--) {
    parts.push(rdns[i].map((a) => `${a.type}=${a.hex ? a.value : escapeDnValue(a.value)}`).join("+"));
  }
  return parts.join(",");
}

/**
 * Parses an RFC 4514 string into attributes (order as written: most specific
 * first). Tolerant: unknown escapes keep the character, hex-pair escapes are
 * decoded as UTF-8, ", " separators (OpenSSL's default) are accepted too.
 */
export function parseDnString(dn: string): DnAttribute[] {
  const out: DnAttribute[] = [];
  let i = 0;
  const n = dn.length;
  while (i < n) {
    while (i < n && dn[i] === " ") i++;
    const eq = dn.indexOf("=", i);
    if (eq < 0) break;
    const type = dn.slice(i, eq).trim();
    i = eq + 1;
    const bytes: number[] = [];
    const enc = new TextEncoder();
    while (i < n && dn[i] !== "," && dn[i] !== "+") {
      if (dn[i] === "\\" && i + 1 < n) {
        const h = dn.slice(i + 1, i + 3);
        if (/^[0-9a-fA-F]{2}$/.test(h)) {
          bytes.push(parseInt(h, 16));
          i += 3;
        } else {
          bytes.push(...enc.encode(dn[i + 1]));
          i += 2;
        }
      } else {
        const cp = dn.codePointAt(i)!;
        const ch = String.fromCodePoint(cp);
        bytes.push(...enc.encode(ch));
        i += ch.length;
      }
    }
    const value = new TextDecoder().decode(Uint8Array.from(bytes)).trim();
    const oid = Object.keys(DN_ATTRIBUTE_NAMES).find((k) => DN_ATTRIBUTE_NAMES[k].toLowerCase() === type.toLowerCase()) ?? type;
    out.push({ type: DN_ATTRIBUTE_NAMES[oid] ?? type, oid, value });
    if (i < n) i++; // skip separator
  }
  return out;
}
