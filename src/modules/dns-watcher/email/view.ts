/**
 * One view of a domain's mail transport security (`email_security` on the DNS domain
 * detail, the event's `mta_sts.*`, `tls_rpt.*`, `dane.*`, `dkim.*`, `bimi.*` fields) and
 * what got worse between two views. Pure: built from what the watcher stored (the TXT
 * and MX record sets' values, the MTA-STS policy fetch and the TLSA answers kept in the
 * domain's email state), so the API, the run and the tests build it the same way.
 *
 * Each mechanism has a status: `unknown` until observed (its record set never resolved,
 * the policy never fetched), `missing` (looked up, not published), `invalid` (published,
 * but senders or receivers would not use it as meant), `ok`.
 */
import type { DnsFactKind } from "../../../db/schema/dns-watcher";
import type { DmarcRecord } from "../dmarc";
import { parseBimi, dmarcEnforcedForBimi, type BimiRecord } from "./bimi";
import { parseDkimKey, type DkimKey } from "./dkim";
import { MTA_STS_SHORT_MAX_AGE, modeRank, parseMtaStsRecord, policyFingerprint, uncoveredMxHosts, type MtaStsPolicy } from "./mta-sts";
import { matchTlsa, parseTlsaSet, type TlsaRecord } from "./tlsa";
import { parseTlsRpt } from "./tls-rpt";

export const MECHANISM_STATUSES = ["ok", "missing", "invalid", "unknown"] as const;
export type MechanismStatus = (typeof MECHANISM_STATUSES)[number];

/** The owner names of the mechanisms' TXT records (watched as record sets of the domain). */
export const emailNames = (domain: string) => ({
  mtaSts: `_mta-sts.${domain}`,
  tlsRpt: `_smtp._tls.${domain}`,
  bimi: `default._bimi.${domain}`,
  dkim: (selector: string) => `${selector}._domainkey.${domain}`,
});
export const tlsaName = (mxHost: string) => `_25._tcp.${mxHost}`;

/** The MX hosts of a canonical MX record set ("10 mx1.example.") in preference order; a null MX ("0 .") is none. */
export function mxHostsOf(values: readonly string[]): string[] {
  return values
    .map((v) => /^(\d+)\s+(\S+)$/.exec(v))
    .filter((m): m is RegExpExecArray => m !== null && m[2] !== ".")
    .sort((a, b) => Number(a[1]) - Number(b[1]) || a[2].localeCompare(b[2]))
    .map((m) => m[2].toLowerCase().replace(/\.$/, ""))
    .filter((h, i, all) => all.indexOf(h) === i);
}

// ---- what the watcher stores beside the record sets (dns_domains.email_json) ---------

/** The collection state of one fetch or lookup the email checks make (platform/collection vocabulary). */
export interface StoredCollection {
  last_attempt_at: string | null;
  last_success_at: string | null;
  failures: number;
  failing_since: string | null;
  error_class: string | null;
  error: string | null;
}
export const NEVER_ATTEMPTED: StoredCollection = { last_attempt_at: null, last_success_at: null, failures: 0, failing_since: null, error_class: null, error: null };

/** The MTA-STS policy as last fetched. */
export interface StoredPolicy {
  url: string;
  /** The TXT record's id the policy was fetched for. */
  fetched_for_id: string;
  /** When the last answer (a policy, or an answer-level failure) was read; null: never. */
  fetched_at: string | null;
  /** When it is fetched again although the id did not change (at most daily). */
  next_fetch_at: string | null;
  /** ok: a usable policy; invalid: the server answered, but not with a usable policy (`problem`). */
  outcome: "ok" | "invalid" | null;
  problem: string;
  policy: MtaStsPolicy | null;
  /** policyFingerprint() of the policy read. */
  fingerprint: string;
  collection: StoredCollection;
}

/** The TLSA answer of one MX host as last read. */
export interface StoredTlsa {
  values: string[];
  /** The answer was DNSSEC-validated (AD bit). */
  validated: boolean;
  /** NOERROR, NXDOMAIN (no TLSA), or the failing RCODE. */
  rcode: string;
  collection: StoredCollection;
}

export interface EmailState {
  policy: StoredPolicy | null;
  /** By MX host (lowercase, no trailing dot). */
  tlsa: Record<string, StoredTlsa>;
  /** A digest of the record values the view was last built from (email/assess.ts). */
  inputs?: string;
}
export const NO_EMAIL_STATE: EmailState = { policy: null, tlsa: {} };

// ---- the view ------------------------------------------------------------------------

export interface MtaStsView {
  status: MechanismStatus;
  record: string;
  id: string;
  record_errors: string[];
  policy: {
    status: MechanismStatus;
    url: string;
    mode: string;
    max_age: number | null;
    mx: string[];
    errors: string[];
    warnings: string[];
    fetched_at: string | null;
    next_fetch_at: string | null;
    fetched_for_id: string;
    fingerprint: string;
    collection: StoredCollection;
  };
  mx_hosts: string[];
  uncovered_mx: string[];
  findings: string[];
}
export interface TlsRptView { status: MechanismStatus; record: string; rua: string[]; errors: string[] }
// ---- what the MX hosts serve (their port-25 certificate monitors' latest scans) ------

/** The latest scan of one IP target of an MX host's certificate monitor (port 25, STARTTLS). */
export interface ServedTarget {
  ip_address: string;
  /** null: not scanned yet. */
  scanned_at: string | null;
  /** Why the scan obtained no chain ("" when it did). */
  error: string;
  /** The chain served, DER, the server's certificate first; null when the scan kept none. */
  chain: Uint8Array[] | null;
}
/** An MX host's certificate monitor on port 25 with STARTTLS, as the certificate watcher reports it. */
export interface ServedHost {
  monitor_id: number;
  /** Enabled targets of the enabled monitor (a paused monitor serves no evidence). */
  targets: ServedTarget[];
}

export const SERVED_STATUSES = ["matched", "mismatch", "not_scanned", "not_checked"] as const;
export type ServedStatus = (typeof SERVED_STATUSES)[number];

/** Whether what an MX host serves matches its TLSA records (RFC 7672 §3.1). */
export interface DaneServedView {
  /**
   * matched: every scanned address serves a chain a usable TLSA record matches; mismatch:
   * some address serves a chain no record matches (senders that enforce DANE stop
   * delivering there); not_scanned: no certificate monitor scanned the host on port 25 yet;
   * not_checked: scanned, but not compared (no usable validated TLSA set, or an address whose
   * latest scan failed or kept no chain; `text` and each target's `problem` say why).
   */
  status: ServedStatus;
  /** The host's certificate monitor (port 25, STARTTLS); null: none, one is offered. */
  monitor_id: number | null;
  /** The newest scan compared (null: none). */
  checked_at: string | null;
  targets: { ip_address: string; scanned_at: string | null; matched: boolean | null; record: string; problem: string }[];
  /** The result in words. */
  text: string;
}

export interface DaneHostView {
  host: string;
  status: MechanismStatus;
  validated: boolean;
  records: TlsaRecord[];
  usable: number;
  problem: string;
  collection: StoredCollection;
  served: DaneServedView;
}
export interface DaneView { status: MechanismStatus; hosts: DaneHostView[]; findings: string[] }
export interface DkimSelectorView extends DkimKey { selector: string; status: MechanismStatus }
export interface DkimView { status: MechanismStatus; selectors: DkimSelectorView[]; findings: string[] }
export interface BimiView extends BimiRecord { status: MechanismStatus; dmarc_enforced: boolean; findings: string[] }

export interface EmailSecurityView {
  mta_sts: MtaStsView;
  tls_rpt: TlsRptView;
  dane: DaneView;
  dkim: DkimView;
  bimi: BimiView;
}

export interface EmailInputs {
  domain: string;
  /** The TXT strings (glued per record) of a watched record set; null when it never resolved or is not watched. */
  txt: (name: string) => string[] | null;
  /** The MX record set's canonical values; null when it never resolved. */
  mx: string[] | null;
  dmarc: DmarcRecord | null;
  selectors: readonly string[];
  state: EmailState;
  /**
   * What the MX hosts serve, by host (only hosts with a port-25 certificate monitor); absent:
   * not looked up (the match then reads not_scanned).
   */
  served?: ReadonlyMap<string, ServedHost>;
}

const statusOf = (record: string, errors: readonly string[]): MechanismStatus => (record === "" ? "missing" : errors.length ? "invalid" : "ok");

function mtaStsView(i: EmailInputs, mxHosts: string[]): MtaStsView {
  const txt = i.txt(emailNames(i.domain).mtaSts);
  const r = parseMtaStsRecord(txt ?? []);
  const stored = i.state.policy;
  const p = stored?.policy ?? null;
  const policyStatus: MechanismStatus = stored?.outcome === "ok" ? "ok" : stored?.outcome === "invalid" ? "invalid" : "unknown";
  const uncovered = policyStatus === "ok" && p && p.mode !== "none" ? uncoveredMxHosts(p, mxHosts) : [];
  const findings: string[] = [];
  let status: MechanismStatus = txt === null ? "unknown" : statusOf(r.record, r.errors);
  if (status === "ok") {
    if (policyStatus === "invalid") {
      status = "invalid";
      findings.push(`The TXT record advertises a policy, but ${stored!.problem}: senders that cached the policy keep it until it expires, others send without MTA-STS.`);
    } else if (policyStatus === "unknown") {
      status = "unknown";
      findings.push(stored?.collection.error ? `The policy could not be fetched: ${stored.collection.error}.` : "The policy has not been fetched yet.");
    } else if (p) {
      if (stored!.collection.failures > 0) findings.push(`The last fetch of the policy failed (${stored!.collection.error}); shown is the policy read at ${stored!.fetched_at}.`);
      if (stored!.fetched_for_id !== r.id) findings.push(`The policy was last fetched for id ${stored!.fetched_for_id}; the record now says ${r.id} (it is fetched again at the next run).`);
      if (uncovered.length) {
        status = "invalid";
        findings.push(`MX host${uncovered.length > 1 ? "s" : ""} ${uncovered.join(", ")} ${uncovered.length > 1 ? "are" : "is"} not allowed by the policy's mx patterns: senders ${p.mode === "enforce" ? "refuse to deliver there" : "report a failure"}.`);
      }
      if (p.mode === "testing") findings.push("Mode testing: senders report failures but still deliver without TLS; switch to enforce once reports are clean.");
      if (p.mode === "none") findings.push("Mode none: the domain is withdrawing MTA-STS; senders stop applying it.");
      if (p.max_age !== null && p.max_age < MTA_STS_SHORT_MAX_AGE) findings.push(`max_age ${p.max_age} s is under a day: the policy lapses between senders' visits (weeks are usual).`);
    }
  }
  if (r.errors.length) findings.push(...r.errors.map((e) => `TXT record: ${e}.`));
  return {
    status,
    record: r.record,
    id: r.id,
    record_errors: r.errors,
    policy: {
      status: policyStatus,
      url: stored?.url ?? "",
      mode: p?.mode ?? "",
      max_age: p?.max_age ?? null,
      mx: p?.mx ?? [],
      errors: p?.errors ?? [],
      warnings: p?.warnings ?? [],
      fetched_at: stored?.fetched_at ?? null,
      next_fetch_at: stored?.next_fetch_at ?? null,
      fetched_for_id: stored?.fetched_for_id ?? "",
      fingerprint: stored?.fingerprint ?? "",
      collection: stored?.collection ?? NEVER_ATTEMPTED,
    },
    mx_hosts: mxHosts,
    uncovered_mx: uncovered,
    findings,
  };
}

function tlsRptView(i: EmailInputs): TlsRptView {
  const txt = i.txt(emailNames(i.domain).tlsRpt);
  const r = parseTlsRpt(txt ?? []);
  return { status: txt === null ? "unknown" : statusOf(r.record, r.errors), ...r };
}

const presentation = (r: TlsaRecord) => `${r.usage} ${r.selector} ${r.matching_type} ${r.data}`;

/** Matches what the host's monitor scanned against its usable TLSA records (only those of a validated answer). */
async function servedView(host: string, tlsa: { status: MechanismStatus; records: TlsaRecord[] }, served: ServedHost | undefined): Promise<DaneServedView> {
  const scanned = (served?.targets ?? []).filter((t) => t.scanned_at !== null);
  const checkedAt = scanned.map((t) => t.scanned_at!).sort().at(-1) ?? null;
  const base = { monitor_id: served?.monitor_id ?? null, checked_at: checkedAt };
  if (!served) return { ...base, status: "not_scanned", targets: [], text: `No certificate monitor scans ${host} on port 25 with STARTTLS: create one to compare what it serves with its TLSA records.` };
  if (scanned.length === 0) return { ...base, status: "not_scanned", targets: [], text: `${host} has not been scanned on port 25 yet.` };
  const comparable = tlsa.status === "ok";
  const targets = await Promise.all(
    scanned.map(async (t) => {
      if (!t.chain || t.chain.length === 0) return { ip_address: t.ip_address, scanned_at: t.scanned_at, matched: null, record: "", problem: t.error || "the scan kept no certificate chain (an agent older than DANE matching)" };
      if (!comparable) return { ip_address: t.ip_address, scanned_at: t.scanned_at, matched: null, record: "", problem: "" };
      const m = await matchTlsa(tlsa.records, t.chain);
      return { ip_address: t.ip_address, scanned_at: t.scanned_at, matched: m.record !== null, record: m.record ? presentation(m.record) : "", problem: "" };
    }),
  );
  if (!comparable) {
    const why = tlsa.status === "missing" ? "it publishes no TLSA records" : tlsa.status === "invalid" ? "its TLSA records are unusable" : "its TLSA records have not been read yet";
    return { ...base, status: "not_checked", targets, text: `Not compared: ${why}.` };
  }
  const mismatched = targets.filter((t) => t.matched === false);
  if (mismatched.length) {
    return {
      ...base,
      status: "mismatch",
      targets,
      text: `The certificate chain served by ${host} (${mismatched.map((t) => t.ip_address).join(", ")}) matches none of its TLSA records: senders that enforce DANE stop delivering mail to it. Publish a TLSA record for the certificate served, or serve the certificate the records name.`,
    };
  }
  // An address whose scan failed or kept no chain was not compared: "matched" would vouch for it.
  const unchecked = targets.filter((t) => t.matched === null);
  if (unchecked.length) {
    const matched = targets.filter((t) => t.matched === true).map((t) => t.ip_address);
    return {
      ...base,
      status: "not_checked",
      targets,
      text: `Not compared: ${unchecked.map((t) => `${t.ip_address}: ${t.problem}`).join("; ")}.${matched.length ? ` (${matched.join(", ")} matches its TLSA records.)` : ""}`,
    };
  }
  return { ...base, status: "matched", targets, text: `The chain served by ${host} matches ${[...new Set(targets.map((t) => t.record).filter(Boolean))].join(", ")}.` };
}

async function daneView(i: EmailInputs, mxHosts: string[]): Promise<DaneView> {
  const hosts: DaneHostView[] = await Promise.all(
    mxHosts.map(async (host): Promise<DaneHostView> => {
      const s = i.state.tlsa[host];
      if (!s || (s.collection.last_success_at === null && s.values.length === 0)) {
        const tlsa = { status: "unknown" as const, records: [] };
        return { host, ...tlsa, validated: false, usable: 0, problem: s?.collection.error ?? "", collection: s?.collection ?? NEVER_ATTEMPTED, served: await servedView(host, tlsa, i.served?.get(host)) };
      }
      const records = parseTlsaSet(s.values);
      const usable = records.filter((r) => !r.problem).length;
      let status: MechanismStatus = "ok";
      let problem = "";
      if (records.length === 0) status = "missing";
      else if (!s.validated) {
        status = "invalid";
        problem = "the TLSA answer is not DNSSEC-validated: senders ignore it (RFC 7672 §2.2)";
      } else if (usable === 0) {
        status = "invalid";
        problem = "no TLSA record is usable for SMTP";
      }
      return { host, status, validated: s.validated, records, usable, problem, collection: s.collection, served: await servedView(host, { status, records }, i.served?.get(host)) };
    }),
  );
  const findings: string[] = [];
  const published = hosts.filter((h) => h.status === "ok" || h.status === "invalid");
  for (const h of hosts) if (h.served.status === "mismatch") findings.push(h.served.text);
  for (const h of hosts) if (h.status === "invalid") findings.push(`${h.host}: ${h.problem}.`);
  if (published.length > 0 && published.length < hosts.length) {
    findings.push(`Only ${published.length} of ${hosts.length} MX hosts publish TLSA records: mail to the others is not protected by DANE.`);
  }
  let status: MechanismStatus;
  if (i.mx === null) status = "unknown";
  else if (mxHosts.length === 0) {
    status = "missing";
    findings.push("The domain has no MX host: there is nothing to protect with DANE.");
  } else if (hosts.some((h) => h.status === "invalid" || h.served.status === "mismatch")) status = "invalid";
  else if (hosts.some((h) => h.status === "unknown")) status = "unknown";
  else status = published.length === 0 ? "missing" : "ok";
  return { status, hosts, findings };
}

async function dkimView(i: EmailInputs): Promise<DkimView> {
  const selectors = await Promise.all(
    i.selectors.map(async (selector): Promise<DkimSelectorView> => {
      const txt = i.txt(emailNames(i.domain).dkim(selector));
      const k = await parseDkimKey(txt ?? []);
      let status: MechanismStatus = txt === null ? "unknown" : k.record === "" || k.revoked ? "missing" : k.errors.length || k.strength === "weak" ? "invalid" : "ok";
      if (txt !== null && k.record !== "" && !k.revoked && k.errors.length === 0 && k.strength === "") status = "invalid";
      return { selector, status, ...k };
    }),
  );
  const findings: string[] = [];
  for (const s of selectors) {
    if (s.revoked) findings.push(`Selector ${s.selector}: the key is revoked (empty p=); mail still signed with it fails DKIM.`);
    else if (s.status === "missing") findings.push(`Selector ${s.selector}: no key record; mail signed with it fails DKIM.`);
    else if (s.strength === "weak") findings.push(`Selector ${s.selector}: RSA key of ${s.bits} bits, under ${1024}: verifiers reject it (RFC 8301); publish a 2048-bit key.`);
    else if (s.strength === "legacy") findings.push(`Selector ${s.selector}: RSA key of ${s.bits} bits; 2048 bits is the recommended size.`);
    if (s.testing) findings.push(`Selector ${s.selector}: testing flag (t=y) set; verifiers may treat failures as if unsigned.`);
    for (const e of s.errors) findings.push(`Selector ${s.selector}: ${e}.`);
  }
  let status: MechanismStatus;
  if (selectors.length === 0) {
    status = "unknown";
    findings.push("No DKIM selector is declared for this domain: selectors cannot be discovered from DNS; add them (dkim_selectors) to have their keys watched.");
  } else if (selectors.some((s) => s.status === "invalid")) status = "invalid";
  else if (selectors.some((s) => s.status === "ok")) status = "ok";
  else if (selectors.some((s) => s.status === "unknown")) status = "unknown";
  else status = "missing";
  return { status, selectors, findings };
}

function bimiView(i: EmailInputs): BimiView {
  const txt = i.txt(emailNames(i.domain).bimi);
  const b = parseBimi(txt ?? []);
  const enforced = dmarcEnforcedForBimi(i.dmarc);
  const findings: string[] = [];
  const status: MechanismStatus = txt === null ? "unknown" : statusOf(b.record, b.errors);
  if (b.record && !b.declined && !enforced) findings.push("DMARC is not at enforcement (p=quarantine or reject, applied to all mail): mailbox providers show no logo.");
  if (b.location && !b.authority) findings.push("No evidence document (a=): most mailbox providers show a logo only with a mark certificate.");
  if (b.declined) findings.push("The record declines BIMI (empty l=): no logo is shown.");
  return { ...b, status, dmarc_enforced: enforced, findings };
}

export async function emailSecurityView(i: EmailInputs): Promise<EmailSecurityView> {
  const mxHosts = i.mx === null ? [] : mxHostsOf(i.mx);
  return { mta_sts: mtaStsView(i, mxHosts), tls_rpt: tlsRptView(i), dane: await daneView(i, mxHosts), dkim: await dkimView(i), bimi: bimiView(i) };
}

// ---- what got worse ------------------------------------------------------------------

export const EMAIL_MECHANISMS = ["mta_sts", "tls_rpt", "dane", "dkim", "bimi"] as const;
export type EmailMechanism = (typeof EMAIL_MECHANISMS)[number];

export const EMAIL_REGRESSIONS = {
  mta_sts: ["removed", "record_invalid", "mode_lowered", "policy_invalid", "mx_not_covered", "changed_without_id", "max_age_short"],
  tls_rpt: ["removed", "invalid", "reporting_removed"],
  dane: ["removed", "unusable", "mismatch"],
  dkim: ["removed", "revoked", "weakened", "key_changed", "testing_enabled"],
  bimi: ["removed", "invalid", "changed"],
} as const satisfies Record<EmailMechanism, readonly string[]>;

/**
 * What the weekly report counts of each regression: the kind of the `dns_change_facts` row
 * written with its history item (the DNS watcher's facts contract). `dane_mismatch`: a
 * served chain no TLSA record matches (critical: senders that enforce DANE stop delivering);
 * `email_weakened`: a mechanism protects less, is broken or gone; null: a change that
 * weakens nothing (a new DKIM key, another BIMI logo, BIMI itself, which shows a logo and
 * protects no mail in transit) stays a history item and an event only.
 */
export const EMAIL_REGRESSION_FACTS: { [M in EmailMechanism]: Record<(typeof EMAIL_REGRESSIONS)[M][number], EmailFactKind | null> } = {
  mta_sts: { removed: "email_weakened", record_invalid: "email_weakened", mode_lowered: "email_weakened", policy_invalid: "email_weakened", mx_not_covered: "email_weakened", changed_without_id: "email_weakened", max_age_short: "email_weakened" },
  tls_rpt: { removed: "email_weakened", invalid: "email_weakened", reporting_removed: "email_weakened" },
  dane: { removed: "email_weakened", unusable: "email_weakened", mismatch: "dane_mismatch" },
  dkim: { removed: "email_weakened", revoked: "email_weakened", weakened: "email_weakened", key_changed: null, testing_enabled: "email_weakened" },
  bimi: { removed: null, invalid: null, changed: null },
};
export type EmailFactKind = Extract<DnsFactKind, "email_weakened" | "dane_mismatch">;

/** The facts of a group of regressions (one mechanism and subject), each kind once. */
export function emailFactsOf(regressions: readonly EmailRegression[]): EmailFactKind[] {
  const kinds = regressions.map((r) => (EMAIL_REGRESSION_FACTS[r.mechanism] as Record<string, EmailFactKind | null>)[r.kind] ?? null);
  return [...new Set(kinds.filter((k): k is EmailFactKind => k !== null))].sort();
}

/**
 * What a regression's subject looked like in a view, as short lines (a history item's and
 * a fact's old and new values): the record, the policy's mode, the TLSA records and what
 * the host serves, the key's type and size. Empty: nothing published.
 */
export function subjectState(view: EmailSecurityView, mechanism: EmailMechanism, subject: string): string[] {
  switch (mechanism) {
    case "mta_sts": {
      const v = view.mta_sts;
      const p = v.policy;
      const policy = p.status === "ok" ? [`policy mode ${p.mode}, max_age ${p.max_age ?? "?"} s, mx ${p.mx.join(", ") || "none"}`] : p.status === "invalid" ? ["policy unusable"] : [];
      return v.record ? [v.record, ...policy] : [];
    }
    case "tls_rpt":
      return view.tls_rpt.record ? [view.tls_rpt.record] : [];
    case "bimi":
      return view.bimi.record ? [view.bimi.record] : [];
    case "dkim": {
      const k = view.dkim.selectors.find((s) => s.selector === subject);
      if (!k || k.record === "") return [];
      if (k.revoked) return ["revoked (empty p=)"];
      return [k.bits ? `${k.key_type} ${k.bits} bits${k.testing ? ", testing (t=y)" : ""}` : k.record];
    }
    case "dane": {
      const h = view.dane.hosts.find((x) => x.host === subject);
      if (!h) return [];
      const served = h.served.status === "matched" || h.served.status === "mismatch" ? [`served on port 25: ${h.served.status === "matched" ? "matches" : "matches no record"}`] : [];
      return [...h.records.map(presentation), ...served];
    }
  }
}

export interface EmailRegression {
  mechanism: EmailMechanism;
  kind: string;
  /** What it concerns: the domain, an MX host, a selector. */
  subject: string;
  text: string;
}

/** Only observed states are compared: `unknown` on either side (never read, fetch failing) is no change. */
const observed = (s: MechanismStatus) => s !== "unknown";

function mtaStsRegressions(a: MtaStsView, b: MtaStsView, subject: string): EmailRegression[] {
  const out: EmailRegression[] = [];
  const add = (kind: (typeof EMAIL_REGRESSIONS)["mta_sts"][number], text: string) => out.push({ mechanism: "mta_sts", kind, subject, text });
  if (!observed(a.status) || !observed(b.status) || a.record === "") return out;
  if (b.record === "") return add("removed", "MTA-STS removed: the _mta-sts TXT record is gone"), out;
  if (a.record_errors.length === 0 && b.record_errors.length > 0) return add("record_invalid", `MTA-STS TXT record no longer usable: ${b.record_errors.join("; ")}`), out;
  const pa = a.policy;
  const pb = b.policy;
  if (pa.status === "ok" && pb.status === "invalid") add("policy_invalid", `MTA-STS policy no longer usable while the TXT record still advertises it: ${b.findings[0] ?? "invalid policy"}`);
  if (pa.status !== "ok" || pb.status !== "ok") return out;
  if (modeRank(pb.mode as never) < modeRank(pa.mode as never)) add("mode_lowered", `MTA-STS mode lowered from ${pa.mode} to ${pb.mode}`);
  const newlyUncovered = b.uncovered_mx.filter((h) => !a.uncovered_mx.includes(h));
  if (newlyUncovered.length) add("mx_not_covered", `MX host ${newlyUncovered.join(", ")} not covered by the MTA-STS policy (mx: ${pb.mx.join(", ") || "none"})`);
  if (pa.fingerprint !== pb.fingerprint && pa.fetched_for_id === pb.fetched_for_id && b.id === a.id) {
    add("changed_without_id", `MTA-STS policy changed while the id stayed ${b.id}: senders keep the policy they cached until max_age runs out`);
  }
  const short = (v: number | null) => v !== null && v < MTA_STS_SHORT_MAX_AGE;
  if (short(pb.max_age) && !short(pa.max_age)) add("max_age_short", `MTA-STS max_age lowered to ${pb.max_age} s (under a day)`);
  return out;
}

function tlsRptRegressions(a: TlsRptView, b: TlsRptView, subject: string): EmailRegression[] {
  if (!observed(a.status) || !observed(b.status) || a.status !== "ok") return [];
  const r = (kind: (typeof EMAIL_REGRESSIONS)["tls_rpt"][number], text: string): EmailRegression[] => [{ mechanism: "tls_rpt", kind, subject, text }];
  if (b.status === "missing") return r("removed", "TLS reporting removed: the _smtp._tls TXT record is gone");
  if (b.status === "invalid") return r("invalid", `TLS reporting record broken: ${b.errors.join("; ")}`);
  const gone = a.rua.filter((u) => !b.rua.some((v) => v.toLowerCase() === u.toLowerCase()));
  return gone.length ? r("reporting_removed", `TLS report address removed: ${gone.join(", ")}`) : [];
}

function daneRegressions(a: DaneView, b: DaneView): EmailRegression[] {
  const out: EmailRegression[] = [];
  for (const hb of b.hosts) {
    const ha = a.hosts.find((h) => h.host === hb.host);
    if (ha && hb.served.status === "mismatch" && ha.served.status !== "mismatch") out.push({ mechanism: "dane", kind: "mismatch", subject: hb.host, text: `DANE for ${hb.host} fails: ${hb.served.text}` });
    if (!ha || ha.status !== "ok" || !observed(hb.status)) continue;
    if (hb.status === "missing") out.push({ mechanism: "dane", kind: "removed", subject: hb.host, text: `DANE removed for ${hb.host}: its TLSA records are gone` });
    else if (hb.status === "invalid") out.push({ mechanism: "dane", kind: "unusable", subject: hb.host, text: `DANE for ${hb.host} no longer usable: ${hb.problem}` });
  }
  return out;
}

function dkimRegressions(a: DkimView, b: DkimView): EmailRegression[] {
  const out: EmailRegression[] = [];
  const RANK = { weak: 0, legacy: 1, strong: 2, "": -1 } as const;
  for (const sb of b.selectors) {
    const sa = a.selectors.find((s) => s.selector === sb.selector);
    if (!sa || !observed(sa.status) || !observed(sb.status) || sa.record === "" || sa.revoked) continue;
    const add = (kind: (typeof EMAIL_REGRESSIONS)["dkim"][number], text: string) => out.push({ mechanism: "dkim", kind, subject: sb.selector, text });
    if (sb.record === "") add("removed", `DKIM key of selector ${sb.selector} removed`);
    else if (sb.revoked) add("revoked", `DKIM key of selector ${sb.selector} revoked (empty p=)`);
    else {
      if (sb.fingerprint !== sa.fingerprint) add("key_changed", `DKIM key of selector ${sb.selector} changed${sb.bits ? ` (${sb.key_type} ${sb.bits} bits)` : ""}`);
      if (RANK[sb.strength] < RANK[sa.strength]) add("weakened", `DKIM key of selector ${sb.selector} weakened: ${sa.key_type} ${sa.bits} bits to ${sb.key_type} ${sb.bits || "unreadable"}${sb.bits ? " bits" : ""}`);
      if (sb.testing && !sa.testing) add("testing_enabled", `DKIM selector ${sb.selector} switched to testing (t=y)`);
    }
  }
  return out;
}

function bimiRegressions(a: BimiView, b: BimiView, subject: string): EmailRegression[] {
  if (!observed(a.status) || !observed(b.status) || a.record === "") return [];
  const r = (kind: (typeof EMAIL_REGRESSIONS)["bimi"][number], text: string): EmailRegression[] => [{ mechanism: "bimi", kind, subject, text }];
  if (b.record === "") return r("removed", "BIMI record removed");
  if (a.status === "ok" && b.status === "invalid") return r("invalid", `BIMI record no longer usable: ${b.errors.join("; ")}`);
  if (a.location !== b.location || a.authority !== b.authority) return r("changed", `BIMI record changed: logo ${b.location || "none"}, evidence ${b.authority || "none"}`);
  return [];
}

/** What got worse from `before` to `after` (improvements and first observations are not listed). */
export function emailRegressions(before: EmailSecurityView, after: EmailSecurityView, domain: string): EmailRegression[] {
  return [
    ...mtaStsRegressions(before.mta_sts, after.mta_sts, domain),
    ...tlsRptRegressions(before.tls_rpt, after.tls_rpt, domain),
    ...daneRegressions(before.dane, after.dane),
    ...dkimRegressions(before.dkim, after.dkim),
    ...bimiRegressions(before.bimi, after.bimi, domain),
  ];
}

/** A fingerprint check helper for the collector: the policy read now differs from the stored one. */
export const policyChanged = (stored: StoredPolicy | null, p: MtaStsPolicy) => stored?.fingerprint !== policyFingerprint(p);
