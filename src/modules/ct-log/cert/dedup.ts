/**
 * Fingerprints and the certificate <-> precertificate dedup key.
 *
 * A final certificate and its precertificate are one observation: the precert's
 * TBS (RFC 6962 §3.2) is the final TBS without the SCT-list extension, and the
 * precert DER itself is that TBS plus the poison extension. Removing both
 * extensions from whichever form we see gives identical bytes; their SHA-256 is
 * the dedup key. (A precert issued through a Precertificate Signing Certificate
 * also has a rewritten issuer; such precerts do not dedup with this key.)
 */
import { DerError, TAG, encodeHeader, expectElement, oidEquals, readElement, toHex } from "./der";
import { OID_BYTES } from "./oids";

/**
 * The TBSCertificate of `der` (a Certificate or a bare TBS) with the SCT-list
 * and poison extensions removed. Returns a view into `der` when nothing had to
 * be removed, a new buffer otherwise.
 */
export function tbsWithoutCtExtensions(der: Uint8Array): Uint8Array {
  const outer = expectElement(der, 0, der.length, TAG.SEQUENCE, "Certificate or TBSCertificate");
  const first = readElement(der, outer.valueStart, outer.end);
  const tbs = first.tag === TAG.SEQUENCE ? first : outer;

  // Find the [3] extensions wrapper, the last element of the TBS.
  let p = tbs.valueStart;
  let extWrapper = null;
  while (p < tbs.end) {
    const el = readElement(der, p, tbs.end);
    if (el.tag === 0xa3) extWrapper = el;
    p = el.end;
  }
  if (!extWrapper) return der.subarray(tbs.start, tbs.end);

  const seq = expectElement(der, extWrapper.valueStart, extWrapper.end, TAG.SEQUENCE, "Extensions");
  const kept: [number, number][] = [];
  let keptLen = 0;
  let removed = false;
  p = seq.valueStart;
  while (p < seq.end) {
    const ext = expectElement(der, p, seq.end, TAG.SEQUENCE, "Extension");
    const id = expectElement(der, ext.valueStart, ext.end, TAG.OID, "extnID");
    if (oidEquals(der, id, OID_BYTES.ctSctList) || oidEquals(der, id, OID_BYTES.ctPoison)) {
      removed = true;
    } else {
      kept.push([ext.start, ext.end]);
      keptLen += ext.end - ext.start;
    }
    p = ext.end;
  }
  if (!removed) return der.subarray(tbs.start, tbs.end);
  if (extWrapper.end !== tbs.end) throw new DerError("extensions are not the last TBS field", extWrapper.start);

  // Re-encode bottom-up: Extensions SEQUENCE, [3] wrapper (dropped when empty: RFC 5280 needs SIZE 1..MAX), TBS.
  const parts: Uint8Array[] = [der.subarray(tbs.valueStart, extWrapper.start)];
  if (kept.length > 0) {
    const seqHeader = encodeHeader(TAG.SEQUENCE, keptLen);
    parts.push(encodeHeader(0xa3, seqHeader.length + keptLen), seqHeader);
    for (const [s, e] of kept) parts.push(der.subarray(s, e));
  }
  let bodyLen = 0;
  for (const part of parts) bodyLen += part.length;
  const header = encodeHeader(TAG.SEQUENCE, bodyLen);
  const out = new Uint8Array(header.length + bodyLen);
  out.set(header, 0);
  let o = header.length;
  for (const part of parts) {
    out.set(part, o);
    o += part.length;
  }
  return out;
}

/** Lowercase hex SHA-256 of the bytes (crypto.subtle: available in workerd and Node 20). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return toHex(new Uint8Array(digest));
}

/** SHA-256 fingerprint of a certificate's DER (cert.sha256 of the CT event). */
export function certificateFingerprint(der: Uint8Array): Promise<string> {
  return sha256Hex(der);
}

/** The key shared by a final certificate and its precertificate (hex SHA-256 of the stripped TBS). */
export function certificateDedupKey(der: Uint8Array): Promise<string> {
  return sha256Hex(tbsWithoutCtExtensions(der));
}
