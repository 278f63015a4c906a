/**
 * TLS DigitallySigned (RFC 5246 §4.7 as used by RFC 6962 §3.2/§3.5) and the
 * verification of signed tree heads.
 *
 *   struct { HashAlgorithm hash; SignatureAlgorithm signature; opaque signature<0..2^16-1>; } DigitallySigned;
 *   struct { Version version; SignatureType signature_type = tree_hash;
 *            uint64 timestamp; uint64 tree_size; opaque sha256_root_hash[32]; } TreeHeadSignature;
 *
 * CT logs sign with ECDSA P-256 (signature DER-encoded) or RSA PKCS#1 v1.5, both
 * over SHA-256. WebCrypto wants ECDSA signatures as raw r||s, so the DER is
 * converted here.
 */
import { CtWireError, TlsReader, TlsWriter, bytesEqual, fromBase64, sha256 } from "./bytes";

export const HashAlgorithm = { sha256: 4 } as const;
export const SignatureAlgorithm = { rsa: 1, ecdsa: 3 } as const;

export interface DigitallySigned {
  hashAlgorithm: number;
  signatureAlgorithm: number;
  signature: Uint8Array;
}

export function parseDigitallySigned(bytes: Uint8Array): DigitallySigned {
  const r = new TlsReader(bytes, "DigitallySigned");
  const ds = readDigitallySigned(r);
  r.end();
  return ds;
}

export function readDigitallySigned(r: TlsReader): DigitallySigned {
  return { hashAlgorithm: r.u8("hash"), signatureAlgorithm: r.u8("signature"), signature: r.vector(2, "signature") };
}

export function serializeDigitallySigned(ds: DigitallySigned): Uint8Array {
  return new TlsWriter().uint(1, ds.hashAlgorithm).uint(1, ds.signatureAlgorithm).vector(2, ds.signature).finish();
}

/** The values a log signs in a tree head (get-sth or checkpoint). */
export interface TreeHeadValues {
  timestamp: number;
  treeSize: number;
  rootHash: Uint8Array;
}

/** The exact bytes signed for a tree head: TreeHeadSignature v1. */
export function treeHeadSignatureInput(th: TreeHeadValues): Uint8Array {
  if (th.rootHash.length !== 32) throw new CtWireError("TreeHeadSignature", "root hash must be 32 bytes");
  return new TlsWriter().uint(1, 0).uint(1, 1).uint(8, th.timestamp).uint(8, th.treeSize).bytes(th.rootHash).finish();
}

// --- log public keys -----------------------------------------------------------

/** A CT log's public key, ready for verification. */
export interface LogPublicKey {
  algorithm: "ecdsa-p256" | "rsa";
  key: CryptoKey;
  /** DER SubjectPublicKeyInfo as published in the log list. */
  spki: Uint8Array;
  /** RFC 6962 LogID = SHA-256(SPKI). */
  logId: Uint8Array;
}

/** Thrown when a key cannot be used or a signature does not verify. */
export class CtSignatureError extends Error {
  override readonly name = "CtSignatureError";
}

// Minimal DER reading, enough to find the SPKI algorithm and an ECDSA signature's integers.
function derRead(b: Uint8Array, pos: number, tag: number, what: string): { start: number; end: number } {
  if (b[pos] !== tag) throw new CtWireError("DER", `${what}: expected tag 0x${tag.toString(16)} at ${pos}`);
  let len = b[pos + 1];
  let start = pos + 2;
  if (len === undefined) throw new CtWireError("DER", `${what}: truncated`);
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 3) throw new CtWireError("DER", `${what}: unsupported length form`);
    len = 0;
    for (let i = 0; i < n; i++) {
      const v = b[start + i];
      if (v === undefined) throw new CtWireError("DER", `${what}: truncated length`);
      len = len * 256 + v;
    }
    start += n;
  }
  const end = start + len;
  if (end > b.length) throw new CtWireError("DER", `${what}: truncated`);
  return { start, end };
}

const OID_EC_PUBLIC_KEY = new Uint8Array([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]);
const OID_RSA_ENCRYPTION = new Uint8Array([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]);
const OID_P256 = new Uint8Array([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]);

/** The algorithm named by a SubjectPublicKeyInfo, or a typed error for anything CT does not use. */
export function spkiAlgorithm(spki: Uint8Array): "ecdsa-p256" | "rsa" {
  const outer = derRead(spki, 0, 0x30, "SubjectPublicKeyInfo");
  const algId = derRead(spki, outer.start, 0x30, "AlgorithmIdentifier");
  const oid = derRead(spki, algId.start, 0x06, "algorithm");
  const oidBytes = spki.subarray(oid.start, oid.end);
  if (bytesEqual(oidBytes, OID_RSA_ENCRYPTION)) return "rsa";
  if (bytesEqual(oidBytes, OID_EC_PUBLIC_KEY)) {
    const curve = derRead(spki, oid.end, 0x06, "namedCurve");
    if (bytesEqual(spki.subarray(curve.start, curve.end), OID_P256)) return "ecdsa-p256";
    throw new CtSignatureError("EC key on a curve other than P-256");
  }
  throw new CtSignatureError("public key algorithm is neither EC nor RSA");
}

/** Imports a log key from DER SPKI (or the base64 `key` field of the log list). */
export async function importLogPublicKey(spkiOrBase64: Uint8Array | string): Promise<LogPublicKey> {
  const spki = typeof spkiOrBase64 === "string" ? fromBase64(spkiOrBase64, "log key") : spkiOrBase64;
  const algorithm = spkiAlgorithm(spki);
  let key: CryptoKey;
  try {
    key =
      algorithm === "ecdsa-p256"
        ? await crypto.subtle.importKey("spki", spki, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"])
        : await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"]);
  } catch (err) {
    throw new CtSignatureError(`cannot import ${algorithm} key: ${(err as Error).message}`);
  }
  return { algorithm, key, spki, logId: await sha256(spki) };
}

/** ECDSA DER `SEQUENCE { INTEGER r, INTEGER s }` -> raw r||s of `size` bytes each. */
export function ecdsaDerToRaw(der: Uint8Array, size = 32): Uint8Array {
  const seq = derRead(der, 0, 0x30, "ECDSA-Sig-Value");
  if (seq.end !== der.length) throw new CtWireError("DER", "ECDSA-Sig-Value: trailing bytes");
  const out = new Uint8Array(2 * size);
  let pos = seq.start;
  for (let k = 0; k < 2; k++) {
    const int = derRead(der, pos, 0x02, k === 0 ? "r" : "s");
    let v = der.subarray(int.start, int.end);
    while (v.length > 0 && v[0] === 0) v = v.subarray(1);
    if (v.length > size) throw new CtWireError("DER", "ECDSA integer too large");
    out.set(v, (k + 1) * size - v.length);
    pos = int.end;
  }
  if (pos !== seq.end) throw new CtWireError("DER", "ECDSA-Sig-Value: extra fields");
  return out;
}

/**
 * Verifies a DigitallySigned over `message` with the log key. Returns false for a
 * wrong signature; throws CtSignatureError when the algorithms do not fit the key
 * (a log must sign with its own key type and SHA-256).
 */
export async function verifyDigitallySigned(key: LogPublicKey, message: Uint8Array, ds: DigitallySigned): Promise<boolean> {
  if (ds.hashAlgorithm !== HashAlgorithm.sha256) throw new CtSignatureError(`hash algorithm ${ds.hashAlgorithm} is not SHA-256`);
  const want = key.algorithm === "rsa" ? SignatureAlgorithm.rsa : SignatureAlgorithm.ecdsa;
  if (ds.signatureAlgorithm !== want) {
    throw new CtSignatureError(`signature algorithm ${ds.signatureAlgorithm} does not match the ${key.algorithm} log key`);
  }
  if (key.algorithm === "rsa") {
    return crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, key.key, ds.signature, message);
  }
  let raw: Uint8Array;
  try {
    raw = ecdsaDerToRaw(ds.signature);
  } catch {
    return false; // malformed signature bytes: simply not a valid signature
  }
  return crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key.key, raw, message);
}

/** Verifies a tree head signature (get-sth `tree_head_signature`, or a checkpoint's note signature). */
export async function verifyTreeHeadSignature(key: LogPublicKey, th: TreeHeadValues, ds: DigitallySigned): Promise<boolean> {
  return verifyDigitallySigned(key, treeHeadSignatureInput(th), ds);
}
