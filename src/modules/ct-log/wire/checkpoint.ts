/**
 * static-ct-api checkpoints: a signed note (c2sp.org/signed-note) whose body is a
 * tlog checkpoint (c2sp.org/tlog-checkpoint), signed by the log with an
 * RFC6962NoteSignature (c2sp.org/static-ct-api):
 *
 *   <origin>\n<tree size>\n<base64 root hash>\n[extension lines\n]
 *   \n
 *   — <key name> <base64(key id[4] || signature)>\n      (one line per signer)
 *
 * For the log's own signature: key name = origin, key id = SHA-256(origin ||
 * 0x0A || 0x05 || LogID)[:4], signature = uint64 timestamp || DigitallySigned over
 * the RFC 6962 TreeHeadSignature(timestamp, tree size, root). The note text itself
 * is not what is signed, so the body values must be read from the note and fed
 * into the TreeHeadSignature.
 */
import { CtWireError, TlsReader, TlsWriter, bytesEqual, concatBytes, fromBase64, sha256, toBase64 } from "./bytes";
import {
  readDigitallySigned,
  serializeDigitallySigned,
  verifyTreeHeadSignature,
  type DigitallySigned,
  type LogPublicKey,
} from "./digitally-signed";

export interface NoteSignature {
  keyName: string;
  keyId: Uint8Array;
  /** The signature bytes after the 4-byte key id. */
  signature: Uint8Array;
}

export interface SignedNote {
  /** The signed text, including its final newline. */
  text: string;
  signatures: NoteSignature[];
}

const SIG_PREFIX = "\u2014 "; // em dash + space

/** Splits a signed note into text and signature lines. */
export function parseSignedNote(note: string): SignedNote {
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw new CtWireError("signed note", "no blank line between text and signatures");
  const text = note.slice(0, split + 1);
  const sigBlock = note.slice(split + 2);
  if (!sigBlock.endsWith("\n")) throw new CtWireError("signed note", "signature block must end with a newline");
  const signatures: NoteSignature[] = [];
  for (const line of sigBlock.slice(0, -1).split("\n")) {
    if (!line.startsWith(SIG_PREFIX)) throw new CtWireError("signed note", `malformed signature line "${line.slice(0, 40)}"`);
    const rest = line.slice(SIG_PREFIX.length);
    const sp = rest.lastIndexOf(" ");
    if (sp <= 0) throw new CtWireError("signed note", "signature line lacks a key name");
    const blob = fromBase64(rest.slice(sp + 1), "note signature");
    if (blob.length < 5) throw new CtWireError("signed note", "signature shorter than a key id");
    signatures.push({ keyName: rest.slice(0, sp), keyId: blob.subarray(0, 4), signature: blob.subarray(4) });
  }
  if (signatures.length === 0) throw new CtWireError("signed note", "no signatures");
  return { text, signatures };
}

/** The checkpoint body of a note. */
export interface CheckpointBody {
  origin: string;
  treeSize: number;
  rootHash: Uint8Array;
  extensions: string[];
}

export function parseCheckpointBody(text: string): CheckpointBody {
  if (!text.endsWith("\n")) throw new CtWireError("checkpoint", "text must end with a newline");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw new CtWireError("checkpoint", "needs origin, size and root hash lines");
  const [origin, sizeLine, rootLine, ...extensions] = lines;
  if (!origin) throw new CtWireError("checkpoint", "empty origin");
  if (!/^(0|[1-9]\d*)$/.test(sizeLine)) throw new CtWireError("checkpoint", `bad tree size "${sizeLine}"`);
  const treeSize = Number(sizeLine);
  if (!Number.isSafeInteger(treeSize)) throw new CtWireError("checkpoint", "tree size exceeds 2^53");
  const rootHash = fromBase64(rootLine, "checkpoint root hash");
  if (rootHash.length !== 32) throw new CtWireError("checkpoint", "root hash is not 32 bytes");
  return { origin, treeSize, rootHash, extensions };
}

/** RFC6962NoteSignature: uint64 timestamp || DigitallySigned. */
export interface Rfc6962NoteSignature {
  timestamp: number;
  treeHeadSignature: DigitallySigned;
}

export function parseRfc6962NoteSignature(sig: Uint8Array): Rfc6962NoteSignature {
  const r = new TlsReader(sig, "RFC6962NoteSignature");
  const timestamp = r.u64("timestamp");
  const treeHeadSignature = readDigitallySigned(r);
  r.end();
  return { timestamp, treeHeadSignature };
}

/** Key id of an RFC 6962 log's note signature: SHA-256(name || 0x0A || 0x05 || LogID)[:4]. */
export async function rfc6962NoteKeyId(keyName: string, logId: Uint8Array): Promise<Uint8Array> {
  const h = await sha256(concatBytes(new TextEncoder().encode(keyName), new Uint8Array([0x0a, 0x05]), logId));
  return h.subarray(0, 4);
}

/** A checkpoint with the log's signature located and decoded, not yet verified. */
export interface Checkpoint extends CheckpointBody {
  /** STH timestamp (ms) from the RFC6962NoteSignature. */
  timestamp: number;
  keyId: Uint8Array;
  treeHeadSignature: DigitallySigned;
  note: SignedNote;
}

/**
 * Parses a checkpoint and picks the log's signature: the line whose key name is
 * the origin and whose key id matches the log's. Without a log id the first
 * line named after the origin is taken (useful for inspecting a checkpoint when
 * the key is unknown).
 */
export async function parseCheckpoint(note: string, logId?: Uint8Array): Promise<Checkpoint> {
  const parsed = parseSignedNote(note);
  const body = parseCheckpointBody(parsed.text);
  const wantId = logId ? await rfc6962NoteKeyId(body.origin, logId) : undefined;
  const sig = parsed.signatures.find((s) => s.keyName === body.origin && (!wantId || bytesEqual(s.keyId, wantId)));
  if (!sig) {
    throw new CtWireError("checkpoint", wantId ? "no signature with the log's key id" : `no signature named "${body.origin}"`);
  }
  const { timestamp, treeHeadSignature } = parseRfc6962NoteSignature(sig.signature);
  return { ...body, timestamp, keyId: sig.keyId, treeHeadSignature, note: parsed };
}

/** Verifies the log's signature over a parsed checkpoint (key id must match too). */
export async function verifyCheckpoint(cp: Checkpoint, key: LogPublicKey): Promise<boolean> {
  const wantId = await rfc6962NoteKeyId(cp.origin, key.logId);
  if (!bytesEqual(wantId, cp.keyId)) return false;
  return verifyTreeHeadSignature(key, cp, cp.treeHeadSignature);
}

/** Formats a checkpoint note (the fixture log server signs with this). */
export async function formatCheckpoint(
  body: CheckpointBody,
  logId: Uint8Array,
  timestamp: number,
  treeHeadSignature: DigitallySigned,
): Promise<string> {
  const text = [body.origin, String(body.treeSize), toBase64(body.rootHash), ...body.extensions].join("\n") + "\n";
  const keyId = await rfc6962NoteKeyId(body.origin, logId);
  const sig = concatBytes(keyId, new TlsWriter().uint(8, timestamp).finish(), serializeDigitallySigned(treeHeadSignature));
  return `${text}\n${SIG_PREFIX}${body.origin} ${toBase64(sig)}\n`;
}
