/**
 * Validation of a monitor's `root_ca` on save: one or more PEM certificates, each a
 * well-formed X.509 certificate able to act as a trust anchor (a CA). A malformed or
 * non-CA certificate would make every later scan report "untrusted" for a reason the
 * user cannot see, so it is refused at the API instead (400).
 *
 * Pure (no Workers APIs): @peculiar/asn1-x509 parses the DER.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { BasicConstraints, Certificate, id_ce_basicConstraints, id_ce_keyUsage, KeyUsage, KeyUsageFlags } from "@peculiar/asn1-x509";

/** Largest accepted root_ca text (a bundle of a few CA certificates). */
export const MAX_ROOT_CA_LENGTH = 64 * 1024;
export const MAX_ROOT_CA_CERTIFICATES = 10;

export class RootCaError extends Error {
  override name = "RootCaError";
}

export interface RootCaSummary {
  /** Number of certificates in the PEM text. */
  certificates: number;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

function base64ToBytes(b64: string): Uint8Array {
  const clean = b64.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0 || clean.length === 0) {
    throw new RootCaError("PEM body is not valid base64");
  }
  const bin = atob(clean);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Parses one DER certificate and checks that it may act as a CA. */
export function checkCaCertificate(der: Uint8Array): void {
  let cert: Certificate;
  try {
    cert = AsnConvert.parse(der, Certificate);
  } catch (err) {
    throw new RootCaError(`not an X.509 certificate (${err instanceof Error ? err.message : String(err)})`);
  }
  const exts = cert.tbsCertificate.extensions ?? [];
  const bc = exts.find((e) => e.extnID === id_ce_basicConstraints);
  if (bc) {
    let parsed: BasicConstraints;
    try {
      parsed = AsnConvert.parse(bc.extnValue.buffer, BasicConstraints);
    } catch {
      throw new RootCaError("unreadable basicConstraints extension");
    }
    if (!parsed.cA) throw new RootCaError("certificate is not a CA (basicConstraints cA is false)");
  } else {
    // X.509 v1 roots have no extensions; accept them only when self-issued.
    const subject = AsnConvert.serialize(cert.tbsCertificate.subject);
    const issuer = AsnConvert.serialize(cert.tbsCertificate.issuer);
    if (!sameBytes(new Uint8Array(subject), new Uint8Array(issuer))) {
      throw new RootCaError("certificate is not a CA (no basicConstraints and not self-issued)");
    }
  }
  const ku = exts.find((e) => e.extnID === id_ce_keyUsage);
  if (ku) {
    let usage: KeyUsage;
    try {
      usage = AsnConvert.parse(ku.extnValue.buffer, KeyUsage);
    } catch {
      throw new RootCaError("unreadable keyUsage extension");
    }
    if (!(usage.toNumber() & KeyUsageFlags.keyCertSign)) throw new RootCaError("certificate key usage does not allow keyCertSign");
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Validates a root_ca PEM text; throws RootCaError with a reason on anything wrong. */
export function validateRootCaPem(pem: string): RootCaSummary {
  if (pem.length > MAX_ROOT_CA_LENGTH) throw new RootCaError(`root_ca exceeds ${MAX_ROOT_CA_LENGTH} characters`);
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new RootCaError("no PEM certificate block (-----BEGIN CERTIFICATE-----) found");
  if (blocks.length > MAX_ROOT_CA_CERTIFICATES) throw new RootCaError(`at most ${MAX_ROOT_CA_CERTIFICATES} certificates`);
  // Nothing but whitespace may surround the blocks (a truncated block is otherwise ignored).
  if (pem.replace(PEM_BLOCK, "").trim() !== "") throw new RootCaError("unexpected text outside the PEM certificate blocks");
  blocks.forEach((b, i) => {
    if (b[1] !== "CERTIFICATE") throw new RootCaError(`block ${i + 1} is a ${b[1]}, not a CERTIFICATE`);
    try {
      checkCaCertificate(base64ToBytes(b[2]));
    } catch (err) {
      throw new RootCaError(blocks.length > 1 ? `certificate ${i + 1}: ${(err as Error).message}` : (err as Error).message);
    }
  });
  return { certificates: blocks.length };
}
