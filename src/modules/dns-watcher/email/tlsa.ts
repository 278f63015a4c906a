/**
 * DANE for SMTP (RFC 7672, TLSA records RFC 6698/7218): the `_25._tcp.<mx>` TLSA records
 * of each MX host, whether each is usable by a sending server, and whether a served
 * certificate chain matches one of them.
 *
 * Usable for SMTP (RFC 7672 §3.1): usage DANE-TA(2) or DANE-EE(3); selector Cert(0) or
 * SPKI(1); matching type Full(0), SHA2-256(1) or SHA2-512(2) with a digest of the right
 * length. PKIX-TA(0) and PKIX-EE(1) are ignored by SMTP senders (there is no PKIX trust
 * store for MX hosts). The records count only in a DNSSEC-validated answer (§2.2): an
 * answer without the AD bit is reported as unusable, whatever it holds.
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate } from "@peculiar/asn1-x509";

export const TLSA_USAGES = ["PKIX-TA", "PKIX-EE", "DANE-TA", "DANE-EE"] as const;
export const TLSA_SELECTORS = ["Cert", "SPKI"] as const;
export const TLSA_MATCHING = ["Full", "SHA2-256", "SHA2-512"] as const;
const DIGEST_BYTES: Record<number, number> = { 1: 32, 2: 64 };

export interface TlsaRecord {
  usage: number;
  selector: number;
  matching_type: number;
  /** Certificate association data, upper-case hex. */
  data: string;
  /** Why a sending server ignores the record; "" when usable. */
  problem: string;
}

/** The presentation of one TLSA record (`3 1 1 ABCD…`), or null when it is not one. */
export function parseTlsa(presentation: string): TlsaRecord | null {
  const m = /^\s*(\d{1,3})\s+(\d{1,3})\s+(\d{1,3})\s+([0-9A-Fa-f\s]*)$/.exec(presentation);
  if (!m) return null;
  const [usage, selector, matching] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const data = m[4].replace(/\s+/g, "").toUpperCase();
  const r: TlsaRecord = { usage, selector, matching_type: matching, data, problem: "" };
  if (usage === 0 || usage === 1) r.problem = `usage ${usage} (${TLSA_USAGES[usage]}) is ignored by SMTP senders (RFC 7672 §3.1.3): publish 2 (DANE-TA) or 3 (DANE-EE)`;
  else if (usage > 3) r.problem = `usage ${usage} is not defined`;
  else if (selector > 1) r.problem = `selector ${selector} is not defined (0 Cert, 1 SPKI)`;
  else if (matching > 2) r.problem = `matching type ${matching} is not defined (0 Full, 1 SHA2-256, 2 SHA2-512)`;
  else if (data.length % 2 !== 0 || data.length === 0) r.problem = "the association data is not whole bytes of hex";
  else if (DIGEST_BYTES[matching] !== undefined && data.length / 2 !== DIGEST_BYTES[matching]) {
    r.problem = `a ${TLSA_MATCHING[matching]} digest is ${DIGEST_BYTES[matching]} bytes, this one has ${data.length / 2}`;
  }
  return r;
}

/** The records of one TLSA answer, the presentations that are not TLSA at all counted as unusable. */
export function parseTlsaSet(values: readonly string[]): TlsaRecord[] {
  return values.map((v) => parseTlsa(v) ?? { usage: -1, selector: -1, matching_type: -1, data: "", problem: `unreadable TLSA record '${v.slice(0, 80)}'` });
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("").toUpperCase();

async function associationData(selected: Uint8Array, matchingType: number): Promise<string> {
  if (matchingType === 0) return hex(selected);
  return hex(new Uint8Array(await crypto.subtle.digest(matchingType === 1 ? "SHA-256" : "SHA-512", selected)));
}

/** The DER of a certificate's SubjectPublicKeyInfo. */
function spkiOf(certDer: Uint8Array): Uint8Array {
  const cert = AsnConvert.parse(certDer, Certificate);
  return new Uint8Array(AsnConvert.serialize(cert.tbsCertificate.subjectPublicKeyInfo));
}

export interface TlsaMatch {
  /** The usable record that matched, or null. */
  record: TlsaRecord | null;
  /** Which certificate of the chain it matched (0 = the server's), -1 when none. */
  chain_index: number;
}

/**
 * Whether a served chain (DER, the server's certificate first) matches one usable TLSA
 * record: DANE-EE (3) against the server's certificate, DANE-TA (2) against any
 * certificate of the chain (RFC 7671 §5.2: the trust anchor must be in the served chain
 * or be the issuer's key; a TA that is not served cannot be checked from here).
 * Certificate names and expiry are not checked for DANE-EE (RFC 7672 §3.1.1), and the
 * chain's validity for DANE-TA is the certificate monitor's business.
 */
export async function matchTlsa(records: readonly TlsaRecord[], chainDer: readonly Uint8Array[]): Promise<TlsaMatch> {
  for (const r of records) {
    if (r.problem) continue;
    const candidates = r.usage === 3 ? chainDer.slice(0, 1) : chainDer;
    for (let i = 0; i < candidates.length; i++) {
      let selected: Uint8Array;
      try {
        selected = r.selector === 0 ? candidates[i] : spkiOf(candidates[i]);
      } catch {
        continue; // a certificate we cannot read matches nothing
      }
      if ((await associationData(selected, r.matching_type)) === r.data) return { record: r, chain_index: i };
    }
  }
  return { record: null, chain_index: -1 };
}
