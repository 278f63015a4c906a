/**
 * Issuing CA -> CAA issuer domain names (RFC 8659 §4.2 "issuer-domain-name").
 *
 * The table (ca-caa-identifiers.json) is a copy of shared/data/dns/caa/ca-caa-identifiers.json,
 * compiled 2026-11-21 from the CCADB "All CAA Identifiers" report as quoted in public code,
 * CA help pages and issuer DNs of real certificates (see that folder's PROVENANCE.md;
 * medium-confidence rows are marked in the file). Refresh it from CCADB
 * AllCAAIdentifiersReportCSVV2 when a network is available.
 *
 * Matching uses the leaf's ISSUER DN only (the issuing intermediate, never the
 * root: cross-signs would name the wrong CA): issuer O exact (case-insensitive,
 * trimmed) first, issuer CN patterns second. An unknown issuer maps to nothing,
 * which the evaluation reports as "cannot tell", never as a violation.
 */
import table from "./ca-caa-identifiers.json";
import { parseDnString } from "../cert/dn";

interface CaRow {
  ca: string;
  caa: string[];
  issuerO: string[];
  issuerCN: string[];
  exclude?: { issuerO?: string[] };
  alsoAcceptedByOneSource?: string[];
}

interface CompiledRow {
  ca: string;
  identifiers: string[];
  organizations: Set<string>;
  cnPatterns: RegExp[];
  excludedOrganizations: Set<string>;
}

const ROWS: CompiledRow[] = (table.cas as CaRow[]).map((r) => ({
  ca: r.ca,
  // A CA that one source says is also authorised by another identifier (Microsoft's DigiCert
  // cross-certification) is given the benefit of the doubt: ambiguous is not a violation.
  identifiers: [...r.caa, ...(r.alsoAcceptedByOneSource ?? [])].map(normalizeIssuerDomain),
  organizations: new Set(r.issuerO.map((o) => o.trim().toLowerCase())),
  cnPatterns: r.issuerCN.map((p) => new RegExp(p)),
  excludedOrganizations: new Set((r.exclude?.issuerO ?? []).map((o) => o.trim().toLowerCase())),
}));

export interface IssuerCaaMapping {
  /** Names of the CAs the issuer DN maps to (empty when unmapped). */
  cas: string[];
  /** Lowercase CAA issuer-domain-names that authorise those CAs. */
  identifiers: string[];
}

/** Issuer DNs repeat endlessly in CT (a few hundred intermediates): their mappings are memoized. */
const mappingMemo = new Map<string, IssuerCaaMapping>();
const MAPPING_MEMO_MAX = 4096;

/** Maps a leaf's issuer DN (RFC 4514 string) to CA names and their CAA identifiers (memoized; do not mutate the result). */
export function issuerCaaMapping(issuerDn: string): IssuerCaaMapping {
  let m = mappingMemo.get(issuerDn);
  if (!m) {
    if (mappingMemo.size >= MAPPING_MEMO_MAX) mappingMemo.clear();
    m = computeIssuerCaaMapping(issuerDn);
    mappingMemo.set(issuerDn, m);
  }
  return m;
}

function computeIssuerCaaMapping(issuerDn: string): IssuerCaaMapping {
  const attrs = parseDnString(issuerDn);
  const orgs = attrs.filter((a) => a.type === "O").map((a) => a.value.trim().toLowerCase());
  const cns = attrs.filter((a) => a.type === "CN").map((a) => a.value.trim());
  const eligible = ROWS.filter((r) => !orgs.some((o) => r.excludedOrganizations.has(o)));
  let hits = eligible.filter((r) => orgs.some((o) => r.organizations.has(o)));
  if (hits.length === 0) hits = eligible.filter((r) => cns.some((cn) => r.cnPatterns.some((re) => re.test(cn))));
  const identifiers = new Set<string>();
  for (const r of hits) for (const id of r.identifiers) identifiers.add(id);
  return { cas: hits.map((r) => r.ca), identifiers: [...identifiers] };
}

/**
 * The issuer-domain-name part of an issue/issuewild value: before the first ';',
 * trimmed, lowercase, one trailing dot removed. "" means "nobody" (value ";").
 */
export function normalizeIssuerDomain(value: string): string {
  let s = value.split(";", 1)[0].trim().toLowerCase();
  if (s.endsWith(".")) s = s.slice(0, -1);
  return s;
}
