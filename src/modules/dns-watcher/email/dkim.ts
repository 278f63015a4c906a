/**
 * DKIM public keys (RFC 6376 §3.6.1, Ed25519 RFC 8463) at `<selector>._domainkey.<domain>`:
 * key type, RSA modulus length, revoked (`p=` empty), testing flag. Selectors cannot be
 * discovered from DNS; the domain declares them (`dkim_selectors`).
 *
 * The RSA key is read with @peculiar/asn1-schema and its RSA and X.509 structures (the
 * project's ASN.1 library), not by hand: `p=` holds a SubjectPublicKeyInfo; a bare
 * PKCS#1 RSAPublicKey, which some signers publish and most verifiers accept, is read too.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { RSAPublicKey } from "@peculiar/asn1-rsa";
import { SubjectPublicKeyInfo } from "@peculiar/asn1-x509";
import { parseTagList, quoted } from "./tags";

/** Under this many bits an RSA key can be factored by a determined attacker (RFC 8301: verifiers must reject < 1024). */
export const DKIM_RSA_WEAK_BELOW = 1024;
/** Keys of at least 1024 but fewer bits than this are legacy (RFC 8301 asks signers for 2048). */
export const DKIM_RSA_RECOMMENDED = 2048;

export type DkimKeyStrength = "strong" | "legacy" | "weak" | "";

export interface DkimKey {
  /** The key record, "" when the selector has none. */
  record: string;
  /** rsa or ed25519 (k=, default rsa); "" when unknown. */
  key_type: string;
  /** RSA modulus length in bits (Ed25519: 256); 0 when not readable. */
  bits: number;
  /** strong (RSA >= 2048, Ed25519), legacy (RSA 1024-2047), weak (RSA < 1024); "" without a usable key. */
  strength: DkimKeyStrength;
  /** p= is empty: the key was revoked (RFC 6376 §3.6.1). */
  revoked: boolean;
  /** t=y: the domain is testing DKIM, verifiers must not treat failures differently. */
  testing: boolean;
  /** SHA-256 of the key bytes (hex, first 16 digits): what "the key changed" compares. */
  fingerprint: string;
  errors: string[];
}

export const NO_DKIM_KEY: DkimKey = { record: "", key_type: "", bits: 0, strength: "", revoked: false, testing: false, fingerprint: "", errors: [] };

function base64Bytes(text: string): Uint8Array | null {
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) return null;
  try {
    return Uint8Array.from(atob(clean), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

const bitLength = (integer: ArrayBuffer): number => {
  const b = new Uint8Array(integer);
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return i === b.length ? 0 : (b.length - i - 1) * 8 + (32 - Math.clz32(b[i]));
};

/** The modulus length of an RSA key given as SubjectPublicKeyInfo or PKCS#1 RSAPublicKey DER; null when it is neither. */
export function rsaModulusBits(der: Uint8Array): number | null {
  const modulusOf = (bytes: ArrayBuffer) => bitLength(AsnConvert.parse(bytes, RSAPublicKey).modulus);
  try {
    const spki = AsnConvert.parse(der, SubjectPublicKeyInfo);
    if (spki.algorithm.algorithm !== "1.2.840.113549.1.1.1") return null; // rsaEncryption
    return modulusOf(spki.subjectPublicKey);
  } catch {
    try {
      return modulusOf(der.slice().buffer);
    } catch {
      return null;
    }
  }
}

/** Cheap, non-cryptographic use: telling two keys apart in a history item (not a security decision). */
async function fingerprintOf(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest.slice(0, 8), (x) => x.toString(16).padStart(2, "0")).join("");
}

export function dkimStrength(keyType: string, bits: number): DkimKeyStrength {
  if (keyType === "ed25519") return bits === 256 ? "strong" : "";
  if (keyType !== "rsa" || bits === 0) return "";
  if (bits < DKIM_RSA_WEAK_BELOW) return "weak";
  return bits < DKIM_RSA_RECOMMENDED ? "legacy" : "strong";
}

/** Parses the TXT set of `<selector>._domainkey.<domain>` (strings glued per record). */
export async function parseDkimKey(txts: readonly string[]): Promise<DkimKey> {
  // A key record may omit v=; any record with a p= tag is one (RFC 6376 §3.6.1).
  const candidates = txts.filter((t) => /^\s*v\s*=\s*DKIM1\s*(;|$)/.test(t) || /(^|;)\s*p\s*=/.test(t));
  if (candidates.length === 0) return { ...NO_DKIM_KEY, errors: txts.length ? ["no DKIM key record (no v=DKIM1 or p= tag)"] : [] };
  if (candidates.length > 1) return { ...NO_DKIM_KEY, record: candidates.join(" | "), errors: [`${candidates.length} key records: verifiers may pick either`] };
  const record = candidates[0];
  const t = parseTagList(record);
  const out: DkimKey = { ...NO_DKIM_KEY, record, errors: [...t.errors] };
  if (t.tags.has("v") && (t.order[0] !== "v" || t.tags.get("v") !== "DKIM1")) out.errors.push("v= must come first and be DKIM1");
  out.key_type = (t.tags.get("k") ?? "rsa").toLowerCase();
  out.testing = (t.tags.get("t") ?? "").split(":").some((f) => f.trim().toLowerCase() === "y");
  const p = t.tags.get("p");
  if (p === undefined) {
    out.errors.push("no p= tag (the public key)");
    return out;
  }
  if (p.replace(/\s+/g, "") === "") {
    out.revoked = true;
    return out;
  }
  const bytes = base64Bytes(p);
  if (!bytes) {
    out.errors.push("p= is not base64");
    return out;
  }
  out.fingerprint = await fingerprintOf(bytes);
  if (out.key_type === "rsa") {
    const bits = rsaModulusBits(bytes);
    if (bits === null) out.errors.push("p= is not an RSA public key");
    else out.bits = bits;
  } else if (out.key_type === "ed25519") {
    if (bytes.length === 32) out.bits = 256;
    else out.errors.push(`an Ed25519 key is 32 bytes, p= has ${bytes.length}`);
  } else {
    out.errors.push(`k=${quoted(out.key_type)} is not rsa or ed25519`);
  }
  out.strength = out.errors.length ? "" : dkimStrength(out.key_type, out.bits);
  return out;
}
