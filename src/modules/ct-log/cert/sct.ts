/**
 * RFC 6962 §3.3 SignedCertificateTimestampList (the TLS-encoded content of the
 * 1.3.6.1.4.1.11129.2.4.2 extension's inner OCTET STRING).
 *
 *   opaque SerializedSCT<1..2^16-1>;
 *   struct { SerializedSCT sct_list<1..2^16-1>; } SignedCertificateTimestampList;
 *   struct { Version sct_version(1); LogID id(32); uint64 timestamp;
 *            CtExtensions extensions<0..2^16-1>; digitally-signed struct {...} } SCT;
 */
import { DerError } from "./der";
import { TLS_HASH_ALGORITHMS, TLS_SIGNATURE_ALGORITHMS } from "./oids";

export interface SignedCertificateTimestamp {
  /** 0 for v1. */
  version: number;
  /** The log's ID (SHA-256 of its public key), standard base64. */
  log_id: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
  /** TLS HashAlgorithm name, e.g. "sha256". */
  hash_algorithm: string;
  /** TLS SignatureAlgorithm name, e.g. "ecdsa", "rsa". */
  signature_algorithm: string;
}

export function parseSctList(data: Uint8Array): SignedCertificateTimestamp[] {
  if (data.length < 2) throw new DerError("truncated SCT list", 0);
  const total = (data[0] << 8) | data[1];
  if (2 + total > data.length) throw new DerError("SCT list length runs past its extension", 0);
  const out: SignedCertificateTimestamp[] = [];
  let p = 2;
  const end = 2 + total;
  while (p < end) {
    if (p + 2 > end) throw new DerError("truncated SCT length", p);
    const len = (data[p] << 8) | data[p + 1];
    const s = p + 2;
    const e = s + len;
    if (e > end) throw new DerError("SCT runs past the list", p);
    // version(1) + log id(32) + timestamp(8) + extensions length(2) is the fixed prefix.
    if (len < 43) throw new DerError("SCT too short", p);
    const version = data[s];
    const logId = data.subarray(s + 1, s + 33);
    const hi = ((data[s + 33] << 24) | (data[s + 34] << 16) | (data[s + 35] << 8) | data[s + 36]) >>> 0;
    const lo = ((data[s + 37] << 24) | (data[s + 38] << 16) | (data[s + 39] << 8) | data[s + 40]) >>> 0;
    const extLen = (data[s + 41] << 8) | data[s + 42];
    const q = s + 43 + extLen;
    if (q + 4 > e) throw new DerError("truncated SCT signature", p);
    const hash = data[q];
    const sig = data[q + 1];
    out.push({
      version,
      log_id: base64(logId),
      timestamp: hi * 0x100000000 + lo,
      hash_algorithm: TLS_HASH_ALGORITHMS[hash] ?? String(hash),
      signature_algorithm: TLS_SIGNATURE_ALGORITHMS[sig] ?? String(sig),
    });
    p = e;
  }
  return out;
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}
