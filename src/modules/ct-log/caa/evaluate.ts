/**
 * CAA check of an observed certificate (RFC 8659), at observation time against current DNS.
 *
 * For each certificate name:
 *  - the Relevant RRset is the first non-empty CAA RRset found climbing from
 *    the name towards the root (name, parent, ..., TLD); aliases are followed
 *    (the resolver's answer chain, then our own queries, at most 8 hops);
 *  - a wildcard name "*.P" starts the climb at P and uses `issuewild`
 *    properties when the set has any, otherwise `issue` (RFC 8659 §4.3);
 *  - a non-wildcard name uses `issue` only; no `issue` property means no restriction;
 *  - a value's issuer-domain-name is compared, parameters after ';' are ignored
 *    (accounturi/validationmethods cannot be checked from a certificate);
 *    an empty domain (`issue ";"`) authorises nobody;
 *  - a critical-flagged (128) unknown tag forbids issuance (RFC 8659 §4.1).
 *
 * `authorized` is false only on positive evidence: a name whose relevant set
 * does not authorise any CA the issuer maps to. An issuer we cannot map
 * (issuer_candidates empty) is only unauthorised by a set that forbids every CA.
 * Lookup failures fill `error` (and never throw); names that failed do not make
 * the certificate unauthorised.
 */
import type { DnsResolver, DnsResponse } from "../../../platform/dns/doh";
import { classifyCertificateName } from "../cert/names";
import type { CaaEvaluation } from "../events";
import { issuerCaaMapping, normalizeIssuerDomain } from "./issuers";

/** The `caa.*` fields of the CT-Log event, declared with the event (../events.ts). */
export type { CaaEvaluation };

export interface CaaRecord {
  flags: number;
  tag: string;
  value: string;
}

export interface EvaluateCaaOptions {
  /** Clock for evaluated_at. */
  now?: () => Date;
  /** Maximum CNAME hops followed per lookup. Default 8. */
  maxAliasHops?: number;
}

/** Tags RFC 8659 and its extensions define; any other tag with the critical flag forbids issuance. */
const KNOWN_TAGS = new Set(["issue", "issuewild", "iodef", "issuemail", "issuevmc", "contactemail", "contactphone"]);

type Lookup = { ok: true; records: CaaRecord[] } | { ok: false; error: string };

export async function evaluateCaa(
  names: readonly string[],
  issuerDn: string,
  resolver: DnsResolver,
  options: EvaluateCaaOptions = {},
): Promise<CaaEvaluation> {
  const now = options.now ?? (() => new Date());
  const mapping = issuerCaaMapping(issuerDn);
  const allowed = new Set(mapping.identifiers);
  const memo = new Map<string, Promise<Lookup>>();
  const lookup = (domain: string) => {
    let p = memo.get(domain);
    if (!p) {
      p = lookupCaa(resolver, domain, options.maxAliasHops ?? 8);
      memo.set(domain, p);
    }
    return p;
  };

  // One entry per distinct normalized name; unmatchable names were never matched, so never checked.
  const targets = new Map<string, { base: string; wildcard: boolean }>();
  for (const raw of names) {
    const n = classifyCertificateName(raw).name;
    if (n === null || targets.has(n)) continue;
    const wildcard = n.startsWith("*.");
    targets.set(n, { base: wildcard ? n.slice(2) : n, wildcard });
  }

  const perName = await Promise.all(
    [...targets.values()].map(async ({ base, wildcard }) => {
      const checked: string[] = [];
      let domain: string | null = base;
      while (domain) {
        checked.push(domain);
        const r = await lookup(domain);
        if (!r.ok) return { checked, error: r.error, set: null as CaaRecord[] | null, wildcard };
        if (r.records.length > 0) return { checked, error: "", set: r.records, wildcard };
        const dot: number = domain.indexOf(".");
        domain = dot < 0 ? null : domain.slice(dot + 1);
      }
      return { checked, error: "", set: null, wildcard };
    }),
  );

  const checkedNames: string[] = [];
  const records: string[] = [];
  const errors: string[] = [];
  let hasRecords = false;
  let authorized = true;
  for (const r of perName) {
    for (const c of r.checked) if (!checkedNames.includes(c)) checkedNames.push(c);
    if (r.error) {
      if (!errors.includes(r.error)) errors.push(r.error);
      continue;
    }
    if (!r.set) continue;
    hasRecords = true;
    for (const rec of r.set) {
      if ((rec.tag === "issue" || rec.tag === "issuewild") && !records.includes(rec.value)) records.push(rec.value);
    }
    if (!relevantSetAuthorizes(r.set, r.wildcard, allowed, mapping.cas.length > 0)) authorized = false;
  }

  return {
    has_records: hasRecords,
    authorized,
    records,
    error: errors.join("; "),
    checked_names: checkedNames,
    issuer_candidates: [...mapping.cas],
    evaluated_at: now().toISOString(),
  };
}

/**
 * Does a relevant RRset let the issuer's CA issue for a (wildcard) name?
 * @param issuerKnown false when the issuer DN mapped to no CA: then only a set
 *   that authorises nobody counts as unauthorised.
 */
export function relevantSetAuthorizes(set: readonly CaaRecord[], wildcard: boolean, allowed: ReadonlySet<string>, issuerKnown: boolean): boolean {
  for (const r of set) if (r.flags & 0x80 && !KNOWN_TAGS.has(r.tag)) return false;
  const issue = set.filter((r) => r.tag === "issue");
  const issueWild = set.filter((r) => r.tag === "issuewild");
  const props = wildcard && issueWild.length > 0 ? issueWild : issue;
  if (props.length === 0) return true;
  const domains = props.map((r) => normalizeIssuerDomain(r.value));
  if (!issuerKnown) return domains.some((d) => d !== "");
  return domains.some((d) => d !== "" && allowed.has(d));
}

/** The CAA RRset at `domain` after following aliases; empty for NXDOMAIN / NODATA. */
async function lookupCaa(resolver: DnsResolver, domain: string, maxHops: number): Promise<Lookup> {
  let current = domain;
  for (let hop = 0; hop <= maxHops; hop++) {
    let res: DnsResponse;
    try {
      res = await resolver.query(current, "CAA");
    } catch (err) {
      return { ok: false, error: `CAA lookup for ${current} failed: ${(err as Error).message}` };
    }
    if (res.rcode === "NXDOMAIN") return { ok: true, records: [] };
    if (res.rcode !== "NOERROR") return { ok: false, error: `CAA lookup for ${current} failed: ${res.rcode}` };
    // Follow the alias chain inside the answer as far as it goes.
    let owner = current;
    for (let i = 0; i <= maxHops; i++) {
      const cname = res.answers.find((a) => a.type === "CNAME" && a.name === owner);
      if (!cname) break;
      owner = String(cname.data).toLowerCase().replace(/\.$/, "");
    }
    const caa = res.answers.filter((a) => a.type === "CAA" && a.name === owner);
    if (caa.length > 0) {
      return {
        ok: true,
        records: caa.map((a) => {
          const d = a.data as { flags?: number; tag?: string; value?: string };
          return { flags: d.flags ?? 0, tag: String(d.tag ?? "").toLowerCase(), value: String(d.value ?? "") };
        }),
      };
    }
    if (owner === current) return { ok: true, records: [] }; // NODATA at the name itself
    current = owner; // the resolver stopped at an alias: ask for its target ourselves
  }
  return { ok: false, error: `CAA lookup for ${domain} failed: alias chain longer than ${maxHops}` };
}
