/**
 * Authorized issuance: is a logged certificate one the organization issued itself
 * (routine) or one that stands out? Pure: the certificate, its CAA evaluation, the
 * issuance policy that applies and what is known of its key in, one verdict out.
 *
 * Verdicts, the first that applies wins:
 *   caa_violation      the names publish CAA records and they do not permit this issuer
 *                      (RFC 8659; the same evidence as `caa.has_records && !caa.authorized`)
 *   unexpected_issuer  the issuer is not one of the authorized issuers: those declared on
 *                      the matched filter, else the organization's issuance policy, else
 *                      the CAs the names' CAA records permit (positively identified: an
 *                      issuer we cannot map to a CAA identifier is not shown to be permitted)
 *   unknown_key        the certificate's key (SPKI SHA-256) was never seen deployed on the
 *                      organization's endpoints and is on none of its declared key lists
 *   authorized         a known key from an authorized issuer: a routine renewal
 *
 * With nothing declared and no CAA records, no issuer restriction exists: the issuer
 * check passes and the reason says so (the key still decides). A failed CAA lookup
 * leaves the issuer unchecked, said in the reason, never counted as a violation.
 */
import { issuerCaaMapping } from "./caa/issuers";
import { parseDnString } from "./cert/dn";
import type { CaaEvaluation } from "./events";
import { AUTHORIZATION_VERDICTS, type Authorization, type AuthorizationVerdict, type AuthorizedIssuer } from "../../db/schema/ct-authorization";

// Declared with the columns that store them (db/schema/ct-authorization.ts); the CT module's files take them from here.
export { AUTHORIZATION_VERDICTS, type Authorization, type AuthorizationVerdict, type AuthorizedIssuer };

/** Severity order (worst last): the verdict of a certificate matched by several filters is its worst. */
export const AUTHORIZATION_SEVERITY: Readonly<Record<AuthorizationVerdict, number>> = { authorized: 0, unknown_key: 1, unexpected_issuer: 2, caa_violation: 3 };
const SEVERITY = AUTHORIZATION_SEVERITY;

/** The issuers that apply to one (certificate, filter): declared on the filter, else the organization's, else none (CAA decides). */
export interface ApplicableIssuers {
  issuers: readonly AuthorizedIssuer[];
  /** Where they were declared, for the reason. */
  source: "filter" | "organization" | "caa";
}

export interface KnownKey {
  known: boolean;
  /** Where the key was seen, e.g. "deployed on www.example.com (192.0.2.10:443)" or "rule list pinned_keys". */
  source: string;
}

export interface AuthorizationInput {
  cert: { issuer: string; issuer_spki_sha256: string; spki_sha256: string };
  caa: CaaEvaluation;
  issuers: ApplicableIssuers;
  key: KnownKey;
}

/** Chooses the issuers that apply: a filter's own list (when it declares one), else the organization's, else CAA. */
export function applicableIssuers(filterIssuers: readonly AuthorizedIssuer[] | null | undefined, organizationIssuers: readonly AuthorizedIssuer[]): ApplicableIssuers {
  if (filterIssuers && filterIssuers.length) return { issuers: filterIssuers, source: "filter" };
  if (organizationIssuers.length) return { issuers: organizationIssuers, source: "organization" };
  return { issuers: [], source: "caa" };
}

const norm = (s: string) => s.trim().toLowerCase();

/** The names a CA may be declared by: the issuer's O and CN, the CA names and CAA identifiers it maps to. */
function issuerNames(issuerDn: string): Set<string> {
  const names = new Set<string>();
  for (const a of parseDnString(issuerDn)) if (a.type === "O" || a.type === "CN") names.add(norm(a.value));
  const mapping = issuerCaaMapping(issuerDn);
  for (const ca of mapping.cas) names.add(norm(ca));
  for (const id of mapping.identifiers) names.add(norm(id));
  return names;
}

const describeIssuer = (i: AuthorizedIssuer) => ("name" in i ? `"${i.name}"` : `key ${i.spki_sha256.slice(0, 16)}…`);
const issuerLabel = (dn: string) => {
  const attrs = parseDnString(dn);
  return attrs.find((a) => a.type === "O")?.value ?? attrs.find((a) => a.type === "CN")?.value ?? dn;
};

/** The issuer half of the verdict: null when the issuer passes (with the words why), or the failing verdict. */
function judgeIssuer(input: AuthorizationInput): { ok: true; why: string } | { ok: false; verdict: Authorization } {
  const { cert, caa, issuers } = input;
  const label = issuerLabel(cert.issuer);
  if (issuers.source !== "caa") {
    const names = issuerNames(cert.issuer);
    const hit = issuers.issuers.find((i) => ("name" in i ? names.has(norm(i.name)) : cert.issuer_spki_sha256 !== "" && norm(i.spki_sha256) === cert.issuer_spki_sha256));
    const where = issuers.source === "filter" ? "the filter's authorized issuers" : "the organization's issuance policy";
    if (hit) return { ok: true, why: `issued by ${label}, authorized by ${where} (${describeIssuer(hit)})` };
    const keyNote = cert.issuer_spki_sha256 ? "" : " (the log entry does not carry the issuer's key, so issuer keys could not be compared)";
    return {
      ok: false,
      verdict: { verdict: "unexpected_issuer", reason: `Issued by ${label}, which is not among ${where}: ${issuers.issuers.map(describeIssuer).join(", ")}${keyNote}` },
    };
  }
  if (caa.has_records) {
    if (caa.issuer_candidates.length) return { ok: true, why: `issued by ${label}, permitted by the CAA records (${caa.records.join(", ")})` };
    return {
      ok: false,
      verdict: {
        verdict: "unexpected_issuer",
        reason: `Issued by ${label}, which cannot be shown to be a CA the CAA records permit (${caa.records.join(", ")}): the issuer maps to no known CAA identifier, and no authorized issuers are declared`,
      },
    };
  }
  if (caa.error) return { ok: true, why: `issuer not checked: no authorized issuers are declared and the CAA lookup failed (${caa.error})` };
  return { ok: true, why: "any CA may issue: no authorized issuers are declared and the names publish no CAA records" };
}

export function authorizeIssuance(input: AuthorizationInput): Authorization {
  const { caa, cert, key } = input;
  if (caa.has_records && !caa.authorized) {
    return { verdict: "caa_violation", reason: `The CAA records of ${caa.checked_names.join(", ") || "the names"} (${caa.records.join(", ") || "none"}) do not permit ${issuerLabel(cert.issuer)}` };
  }
  const issuer = judgeIssuer(input);
  if (!issuer.ok) return issuer.verdict;
  if (!key.known) {
    const spki = cert.spki_sha256 ? `key ${cert.spki_sha256.slice(0, 16)}…` : "its key";
    return { verdict: "unknown_key", reason: `New key: ${spki} was never seen deployed on the organization's endpoints nor on its declared key lists (${issuer.why})` };
  }
  return { verdict: "authorized", reason: `Routine: ${issuer.why}; known key (${key.source})` };
}

/** The worst of several verdicts (a certificate matched by several filters). */
export function worstAuthorization(all: readonly Authorization[]): Authorization | null {
  let worst: Authorization | null = null;
  for (const a of all) if (!worst || SEVERITY[a.verdict] > SEVERITY[worst.verdict]) worst = a;
  return worst;
}
