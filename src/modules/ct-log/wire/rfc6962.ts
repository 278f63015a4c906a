/**
 * RFC 6962 log entry structures (§3.1, §3.4, §4.6):
 *
 *   struct { Version version; MerkleLeafType leaf_type; TimestampedEntry timestamped_entry; } MerkleTreeLeaf;
 *   struct { uint64 timestamp; LogEntryType entry_type;
 *            select(entry_type) { case x509_entry: ASN.1Cert; case precert_entry: PreCert; } signed_entry;
 *            CtExtensions extensions; } TimestampedEntry;
 *   struct { opaque issuer_key_hash[32]; TBSCertificate tbs_certificate; } PreCert;
 *
 * and the `extra_data` of get-entries: the certificate chain for x509_entry, the
 * PrecertChainEntry (pre_certificate + chain) for precert_entry.
 *
 * The same TimestampedEntry appears in static-ct-api data tiles (see static-ct.ts).
 */
import { CtWireError, TlsReader, TlsWriter, fromBase64, sha256Sync } from "./bytes";

export const LogEntryType = { x509: 0, precert: 1 } as const;
export type LogEntryTypeName = "x509_entry" | "precert_entry";

/** One CtExtension as carried in TimestampedEntry.extensions (static-ct-api defines leaf_index). */
export interface CtExtension {
  type: number;
  data: Uint8Array;
}

/** The signed part of a log entry, common to both read protocols. */
export type TimestampedEntry =
  | {
      timestamp: number;
      entryType: "x509_entry";
      /** DER of the end-entity certificate. */
      certificate: Uint8Array;
      /** Raw CtExtensions bytes (empty in RFC 6962 logs). */
      extensions: Uint8Array;
    }
  | {
      timestamp: number;
      entryType: "precert_entry";
      /** SHA-256 of the issuing CA's SubjectPublicKeyInfo. */
      issuerKeyHash: Uint8Array;
      /** DER TBSCertificate with the poison extension removed. */
      tbsCertificate: Uint8Array;
      extensions: Uint8Array;
    };

/** Reads a TimestampedEntry from the reader's current position. */
export function readTimestampedEntry(r: TlsReader): TimestampedEntry {
  const timestamp = r.u64("timestamp");
  const entryType = r.u16("entry_type");
  if (entryType === LogEntryType.x509) {
    const certificate = r.vector(3, "ASN.1Cert");
    if (certificate.length === 0) throw new CtWireError(r.structure, "empty certificate");
    const extensions = r.vector(2, "extensions");
    return { timestamp, entryType: "x509_entry", certificate, extensions };
  }
  if (entryType === LogEntryType.precert) {
    const issuerKeyHash = r.fixed(32, "issuer_key_hash");
    const tbsCertificate = r.vector(3, "tbs_certificate");
    if (tbsCertificate.length === 0) throw new CtWireError(r.structure, "empty tbs_certificate");
    const extensions = r.vector(2, "extensions");
    return { timestamp, entryType: "precert_entry", issuerKeyHash, tbsCertificate, extensions };
  }
  throw new CtWireError(r.structure, `unknown entry_type ${entryType}`);
}

export function writeTimestampedEntry(w: TlsWriter, e: TimestampedEntry): TlsWriter {
  w.uint(8, e.timestamp);
  if (e.entryType === "x509_entry") {
    w.uint(2, LogEntryType.x509).vector(3, e.certificate);
  } else {
    if (e.issuerKeyHash.length !== 32) throw new CtWireError("TimestampedEntry", "issuer_key_hash must be 32 bytes");
    w.uint(2, LogEntryType.precert).bytes(e.issuerKeyHash).vector(3, e.tbsCertificate);
  }
  return w.vector(2, e.extensions);
}

/** Parses the CtExtensions vector body: `struct { uint8 type; opaque data<0..2^16-1>; }` repeated. */
export function parseCtExtensions(extensions: Uint8Array): CtExtension[] {
  const r = new TlsReader(extensions, "CtExtensions");
  const out: CtExtension[] = [];
  while (!r.done) out.push({ type: r.u8("extension_type"), data: r.vector(2, "extension_data") });
  return out;
}

/** Decodes a MerkleTreeLeaf (the `leaf_input` of get-entries). Version and leaf type must be 0. */
export function parseMerkleTreeLeaf(leafInput: Uint8Array): TimestampedEntry {
  const r = new TlsReader(leafInput, "MerkleTreeLeaf");
  const version = r.u8("version");
  if (version !== 0) throw new CtWireError(r.structure, `unsupported version ${version}`);
  const leafType = r.u8("leaf_type");
  if (leafType !== 0) throw new CtWireError(r.structure, `unsupported leaf_type ${leafType}`);
  const entry = readTimestampedEntry(r);
  r.end();
  return entry;
}

/** Serializes a MerkleTreeLeaf (v1, timestamped_entry). */
export function serializeMerkleTreeLeaf(e: TimestampedEntry): Uint8Array {
  const w = new TlsWriter().uint(1, 0).uint(1, 0);
  return writeTimestampedEntry(w, e).finish();
}

/** RFC 6962 §2.1 leaf hash: SHA-256(0x00 || MerkleTreeLeaf). */
const LEAF_PREFIX = new Uint8Array([0]);

export function merkleLeafHash(merkleTreeLeaf: Uint8Array): Uint8Array {
  return sha256Sync(LEAF_PREFIX, merkleTreeLeaf);
}

/** The extra_data of a get-entries entry, decoded according to the leaf's entry type. */
export type ExtraData =
  | { entryType: "x509_entry"; chain: Uint8Array[] }
  | { entryType: "precert_entry"; preCertificate: Uint8Array; chain: Uint8Array[] };

function readCertChain(r: TlsReader): Uint8Array[] {
  const body = new TlsReader(r.vector(3, "certificate_chain"), r.structure);
  const chain: Uint8Array[] = [];
  while (!body.done) chain.push(body.vector(3, "ASN.1Cert"));
  return chain;
}

export function parseExtraData(entryType: LogEntryTypeName, extraData: Uint8Array): ExtraData {
  const r = new TlsReader(extraData, "extra_data");
  if (entryType === "x509_entry") {
    const chain = readCertChain(r);
    r.end();
    return { entryType, chain };
  }
  const preCertificate = r.vector(3, "pre_certificate");
  const chain = readCertChain(r);
  r.end();
  return { entryType, preCertificate, chain };
}

/** One element of the get-entries response, both fields base64 as served. */
export interface GetEntriesItem {
  leaf_input: string;
  extra_data: string;
}

/** A decoded get-entries entry. */
export interface Rfc6962Entry {
  leafInput: Uint8Array;
  entry: TimestampedEntry;
  extra: ExtraData;
}

export function decodeGetEntriesItem(item: unknown): Rfc6962Entry {
  if (!item || typeof item !== "object") throw new CtWireError("get-entries", "entry is not an object");
  const { leaf_input, extra_data } = item as Partial<GetEntriesItem>;
  if (typeof leaf_input !== "string" || typeof extra_data !== "string") {
    throw new CtWireError("get-entries", "entry lacks leaf_input/extra_data strings");
  }
  const leafInput = fromBase64(leaf_input, "leaf_input");
  const entry = parseMerkleTreeLeaf(leafInput);
  const extra = parseExtraData(entry.entryType, fromBase64(extra_data, "extra_data"));
  return { leafInput, entry, extra };
}

/** Parses a whole get-entries JSON body (`{entries: [...]}`). */
export function parseGetEntriesResponse(body: unknown): Rfc6962Entry[] {
  const entries = (body as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries)) throw new CtWireError("get-entries", "body has no entries array");
  return entries.map(decodeGetEntriesItem);
}
