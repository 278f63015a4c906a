/**
 * Reference data for the certificate parser tests, fetched from the fixture hub,
 * and a deliberately tiny static-ct-api data-tile reader (independent of
 * src/modules/ct-log/wire so the parser tests do not depend on it).
 */
import { env } from "cloudflare:workers";

export const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

export async function ctBytes(path: string): Promise<Uint8Array> {
  const res = await fetch(`${base}/data/ct/${path}`);
  if (!res.ok) throw new Error(`fixture data ${path}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
export async function ctJson<T = any>(path: string): Promise<T> {
  return JSON.parse(new TextDecoder().decode(await ctBytes(path))) as T;
}

/** DER certificates of a PEM bundle. */
export function pemCertificates(pem: string): Uint8Array[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) => fromBase64(m[1].replace(/\s+/g, "")));
}

export function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

export interface NavigliPrecert {
  index: number;
  timestamp: number;
  /** TimestampedEntry.signed_entry.tbs_certificate (poison already removed by the log). */
  tbs: Uint8Array;
  /** PreCertExtraData.pre_certificate: the full signed precertificate. */
  preCertificate: Uint8Array;
}

/**
 * static-ct-api TileLeaf, precert_entry only:
 *   uint64 timestamp; uint16 entry_type(=1); opaque issuer_key_hash[32]; opaque tbs<1..2^24-1>;
 *   opaque extensions<0..2^16-1>; opaque pre_certificate<1..2^24-1>; Fingerprint chain<0..2^16-1>
 */
export async function navigliPrecerts(): Promise<NavigliPrecert[]> {
  const out: NavigliPrecert[] = [];
  for (const t of ["000", "001", "002", "003"]) {
    const b = await ctBytes(`static-ct/navigli2025h2/tile/data/${t}`);
    const u16 = (o: number) => (b[o] << 8) | b[o + 1];
    const u24 = (o: number) => (b[o] << 16) | (b[o + 1] << 8) | b[o + 2];
    let p = 0;
    while (p < b.length) {
      const timestamp = Number(new DataView(b.buffer, b.byteOffset + p, 8).getBigUint64(0));
      if (u16(p + 8) !== 1) throw new Error("navigli tiles hold precert entries only");
      p += 10 + 32;
      const tbs = b.subarray(p + 3, p + 3 + u24(p));
      p += 3 + tbs.length;
      p += 2 + u16(p);
      const preCertificate = b.subarray(p + 3, p + 3 + u24(p));
      p += 3 + preCertificate.length;
      p += 2 + u16(p);
      out.push({ index: out.length, timestamp, tbs, preCertificate });
    }
  }
  return out;
}

/** The X.509 certificates of the RFC 6962 get-entries files (leaf from leaf_input, chain from extra_data). */
export async function rfc6962Certificates(file: string): Promise<{ leaf: Uint8Array; chain: Uint8Array[] }[]> {
  const body = await ctJson<{ entries: { leaf_input: string; extra_data: string }[] }>(`rfc6962/${file}`);
  return body.entries.map((e) => {
    const leaf = fromBase64(e.leaf_input);
    // MerkleTreeLeaf: version(1) leaf_type(1) timestamp(8) entry_type(2) ASN.1Cert<u24>
    const len = (leaf[12] << 16) | (leaf[13] << 8) | leaf[14];
    const extra = fromBase64(e.extra_data);
    const chain: Uint8Array[] = [];
    let p = 3; // certificate_chain<u24> of ASN.1Cert<u24>
    while (p < extra.length) {
      const l = (extra[p] << 16) | (extra[p + 1] << 8) | extra[p + 2];
      chain.push(extra.subarray(p + 3, p + 3 + l));
      p += 3 + l;
    }
    return { leaf: leaf.subarray(15, 15 + len), chain };
  });
}
