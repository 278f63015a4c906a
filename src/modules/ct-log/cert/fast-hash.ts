/**
 * Synchronous SHA-256 for the ingest hot path. crypto.subtle.digest is async and,
 * under Node, costs ~70 us per call (thread-pool hop); node:crypto's createHash is
 * synchronous and ~2 us, and workerd provides it too (nodejs_compat). The
 * subtle-based certificateFingerprint / certificateDedupKey of dedup.ts stay the
 * reference these are tested against.
 */
import { createHash } from "node:crypto";
import { tbsWithoutCtExtensions } from "./dedup";

export function sha256HexSync(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Same value as certificateFingerprint(der). */
export function certificateFingerprintSync(der: Uint8Array): string {
  return sha256HexSync(der);
}

/** Same value as certificateDedupKey(der). */
export function certificateDedupKeySync(der: Uint8Array): string {
  return sha256HexSync(tbsWithoutCtExtensions(der));
}
