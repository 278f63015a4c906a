/**
 * The scoring engine, pure: facts of a window in, findings, category scores, overall
 * score and grade out (docs/decisions.md#reports).
 *
 *  - Each rule of rules.ts fires at most once; a fired rule is one finding whose
 *    evidence names every asset involved (domain, hostname:port (IP), certificate
 *    fingerprint, old and new values), newest first.
 *  - Category score = 100 − the impacts of its fired rules, floor 0.
 *  - Overall = Σ(category score × weight) / 100 with the weights 30/20/20/15/15,
 *    ROUNDED HALF UP to an integer: computed in integers as ⌊(Σ + 50) / 100⌋, so
 *    89.5 is 90 (an A) and 89.49 is 89, with no floating-point drift.
 *  - Grade by the table (A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, F below).
 *  - Beside the score, what each category could assess (category-status.ts): a result
 *    with a partial or blind category is provisional, one with a blind category is
 *    not graded.
 */
import {
  AUDIT_RULES,
  CATEGORIES,
  GRADES,
  MODULE_LABELS,
  REFERENCES,
  SEVERITIES,
  type AuditRule,
  type Category,
  type FrameworkId,
  type Grade,
  type ReferenceId,
  type RuleId,
  type Severity,
} from "./rules";
import type { AuditFacts, DnsChangeFact, DnsChangeKind, EndpointScan, ModuleCoverage, UncollectedAsset } from "./facts/types";
import { assessCategories, CATEGORY_MODULE, isGraded, isProvisional, uncollectedCauses, type CategoryStatus } from "./category-status";
import { formatDuration } from "./freshness";
import { formatUtc } from "./pdf/text";

export interface Evidence {
  /** The asset: a domain, `hostname:port (IP)`, a module... */
  asset: string;
  /** What was observed, in a sentence. */
  detail: string;
  observed_at: string | null;
  /** SHA-256 of the certificate involved. */
  fingerprint: string | null;
  old_value: string | null;
  new_value: string | null;
}

export interface FindingReference {
  id: ReferenceId;
  framework: FrameworkId;
  title: string;
}

export interface Finding {
  id: RuleId;
  title: string;
  severity: Severity;
  score_impact: number;
  category: Category;
  condition: string;
  references: FindingReference[];
  /** Distinct assets in the evidence. */
  affected_assets: number;
  evidence: Evidence[];
  /** Items of evidence found (`evidence` may be a shortened list of them where stored). */
  evidence_total: number;
}

export type CategoryScores = Record<Category, number>;

export interface AuditResult {
  overall_score: number;
  grade: Grade;
  category_scores: CategoryScores;
  /** What each category's score rests on (category-status.ts). */
  category_status: CategoryStatus;
  /** A category with assets is partial or blind: the score counts what was not looked at as clean. */
  provisional: boolean;
  /** No category with assets is blind: a grade is shown (category-status.ts isGraded). */
  graded: boolean;
  findings: Finding[];
}

const DAY_MS = 86_400_000;

function ev(asset: string, detail: string, extra: Partial<Omit<Evidence, "asset" | "detail">> = {}): Evidence {
  return { asset, detail, observed_at: null, fingerprint: null, old_value: null, new_value: null, ...extra };
}

const listOrNone = (values: readonly string[]) => (values.length ? values.join(" | ") : "(none)");

/** Which rule each kind of the DNS watcher's change facts feeds. */
export const DNS_KIND_RULES: Record<DnsChangeKind, RuleId> = {
  dmarc_weakened: "dns.dmarc_weakened",
  dmarc_removed: "dns.dmarc_weakened",
  spf_allows_all: "dns.spf_overly_permissive",
  apex_changed: "dns.apex_records_changed",
  mx_changed: "dns.mail_or_nameserver_changed",
  ns_changed: "dns.mail_or_nameserver_changed",
  dnssec_failed: "dns.dnssec_regression",
  dane_mismatch: "dns.dane_mismatch",
  email_weakened: "dns.email_transport_weakened",
};
const kindsOf = (rule: RuleId) => (Object.keys(DNS_KIND_RULES) as DnsChangeKind[]).filter((k) => DNS_KIND_RULES[k] === rule);

/** The watcher's verdict in words when it gave one ("DMARC weakened: policy lowered from reject to none"), else `describe`. */
function dnsEvidence(kinds: readonly DnsChangeKind[], describe: (c: DnsChangeFact) => string) {
  return (f: AuditFacts) =>
    f.dns.changes
      .filter((c) => kinds.includes(c.kind))
      .map((c) =>
        ev(c.domain, c.detail ? `${c.detail} (${recordLabel(c)})` : describe(c), {
          observed_at: c.observed_at,
          old_value: listOrNone(c.old_values),
          new_value: listOrNone(c.new_values),
        }),
      );
}

const recordLabel = (c: DnsChangeFact) => `${c.record_name}${c.record_type ? ` ${c.record_type}` : ""}`;
const endpoint = (s: EndpointScan) => `${s.hostname}:${s.port} (${s.ip_address})`;

/** For each endpoint, its newest scan that shows `condition` (a window may hold several scans of one endpoint). */
function endpointEvidence(condition: (s: EndpointScan) => boolean, describe: (s: EndpointScan) => string, withFingerprint: boolean) {
  return (f: AuditFacts) => {
    const newest = new Map<string, EndpointScan>();
    for (const s of f.endpoint_scans) {
      if (!condition(s)) continue;
      const prev = newest.get(endpoint(s));
      if (!prev || prev.scanned_at < s.scanned_at) newest.set(endpoint(s), s);
    }
    return [...newest.values()].map((s) =>
      ev(endpoint(s), describe(s), { observed_at: s.scanned_at, fingerprint: withFingerprint ? s.sha256 : null }),
    );
  };
}

function daysBetween(fromIso: string, toIso: string): number {
  return Math.floor((Date.parse(toIso) - Date.parse(fromIso)) / DAY_MS);
}

/** One evaluator per rule: the evidence it finds in the facts (empty = the rule does not fire). */
const EVALUATORS: Record<RuleId, (f: AuditFacts) => Evidence[]> = {
  "dns.dmarc_weakened": dnsEvidence(kindsOf("dns.dmarc_weakened"), (c) =>
    c.kind === "dmarc_removed" ? `DMARC record removed at ${c.record_name}` : `DMARC policy weakened at ${c.record_name}`,
  ),
  "dns.spf_overly_permissive": dnsEvidence(kindsOf("dns.spf_overly_permissive"), (c) => `SPF record at ${c.record_name} allows all senders`),
  "dns.apex_records_changed": dnsEvidence(kindsOf("dns.apex_records_changed"), (c) => `Apex record ${recordLabel(c)} changed`),
  "dns.mail_or_nameserver_changed": dnsEvidence(kindsOf("dns.mail_or_nameserver_changed"), (c) =>
    `${c.kind === "mx_changed" ? "Mail exchanger" : "Nameserver"} records ${recordLabel(c)} changed`,
  ),
  "dns.dnssec_regression": (f) => {
    const out = dnsEvidence(kindsOf("dns.dnssec_regression"), (c) => `DNSSEC validation failed for ${c.record_name}`)(f);
    const seen = new Set(out.map((e) => e.asset));
    for (const d of f.dns.dnssec_failing) {
      if (!seen.has(d.domain)) out.push(ev(d.domain, "DNSSEC validation fails (bogus) at the latest resolution", { observed_at: d.checked_at }));
    }
    return out;
  },
  // The watcher's verdict names the mechanism and what regressed; before/after are the subject's state (record, policy mode, TLSA records, key size).
  "dns.dane_mismatch": dnsEvidence(kindsOf("dns.dane_mismatch"), (c) => `The chain served by the MX host of ${c.record_name} matches none of its TLSA records`),
  "dns.email_transport_weakened": dnsEvidence(kindsOf("dns.email_transport_weakened"), (c) => `Mail transport security weakened at ${recordLabel(c)}`),
  "ct.caa_violations": (f) =>
    f.caa_violations.map((v) =>
      ev(
        v.names.join(", "),
        `Certificate issued by ${v.issuer} (logged in ${v.log_name}) although CAA authorizes ${
          v.caa_records.some((r) => r.trim() !== ";") ? v.caa_records.filter((r) => r.trim() !== ";").join(", ") : "no CA"
        }`,
        { observed_at: v.observed_at, fingerprint: v.sha256 },
      ),
    ),
  "certificates.expired": endpointEvidence(
    (s) => s.expired,
    (s) => `Presented an expired certificate (${s.subject ?? "no subject"}, not after ${s.not_after ?? "unknown"})`,
    true,
  ),
  "certificates.scan_failures": endpointEvidence((s) => s.has_error, (s) => `Scan failed: ${s.error || "no TLS handshake"}`, false),
  "certificates.deprecated_tls": endpointEvidence(
    (s) => s.legacy_protocols.length > 0,
    (s) => `Accepts ${s.legacy_protocols.join(", ")}`,
    false,
  ),
  "certificates.weak_ciphers": endpointEvidence(
    (s) => s.weak_suites.length > 0,
    (s) => `Offers ${s.weak_suites.join(", ")}`,
    false,
  ),
  "certificates.self_signed": endpointEvidence(
    (s) => s.self_signed,
    (s) => `Presented a self-signed certificate (${s.subject ?? "no subject"})`,
    true,
  ),
  "rdap.ownership_or_registrar_change": (f) =>
    f.rdap_changes.flatMap((c) => [
      ...(c.registrar_changed
        ? [ev(c.domain, "Registrar changed", { observed_at: c.observed_at, old_value: c.registrar.old, new_value: c.registrar.new })]
        : []),
      ...(c.registrant_changed
        ? [ev(c.domain, "Registrant changed", { observed_at: c.observed_at, old_value: c.registrant.old, new_value: c.registrant.new })]
        : []),
    ]),
  "rdap.expiry_approaching": (f) =>
    f.expiring_domains.map((d) => {
      const days = daysBetween(f.as_of, d.expires_at);
      return ev(
        d.domain,
        days < 0 ? `Registration expired ${-days} day(s) ago (${d.expires_at})` : `Registration expires in ${days} day(s) (${d.expires_at})`,
        { new_value: d.expires_at },
      );
    }),
  "rdap.nameserver_or_status_change": (f) =>
    f.rdap_changes.flatMap((c) => [
      ...(c.nameservers_changed
        ? [ev(c.domain, "Nameservers changed", { observed_at: c.observed_at, old_value: listOrNone(c.nameservers.old), new_value: listOrNone(c.nameservers.new) })]
        : []),
      ...(c.status_changed
        ? [ev(c.domain, "Registration status changed", { observed_at: c.observed_at, old_value: listOrNone(c.status.old), new_value: listOrNone(c.status.new) })]
        : []),
    ]),
  "coverage.modules_without_assets": (f) =>
    f.coverage
      .filter((m) => m.enabled_assets === 0)
      .map((m) =>
        ev(
          MODULE_LABELS[m.module],
          m.configured_assets === 0
            ? "No asset configured"
            : `All ${m.configured_assets} configured asset(s) paused: the module watches nothing`,
        ),
      ),
  "coverage.monitoring_data_stale": staleEvidence,
};

/** Modules in the order of their categories (DNS, CT, certificates, RDAP). */
const MODULE_ORDER = Object.values(CATEGORY_MODULE);

/** "3 h", "2 d 4 h", "25 min": how long something has not happened, to the unit that matters. */
export function roughDuration(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h`;
  return `${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ""}`;
}

/** The evidence line of an organization's own stale asset: its state, error class and since when. */
function staleAssetDetail(u: UncollectedAsset, windowSeconds: number): string {
  const state =
    u.state === "failing"
      ? `Failing${u.failing_since ? ` since ${formatUtc(u.failing_since)}` : ""}`
      : u.state === "pending"
        ? "Not collected yet"
        : `Not collected since ${formatUtc(u.last_collected_at)}`;
  const error = u.error ? ` (${u.error.class}): ${u.error.message}` : u.state === "ok" ? ": no attempt within the window" : "";
  const newest = u.state !== "failing" ? "" : u.last_collected_at ? `; newest data ${formatUtc(u.last_collected_at)}` : "; no data collected yet";
  return `${state}${error}${newest}; expected within ${formatDuration(windowSeconds)}`;
}

/** The asset of the one evidence line that sums up the shared CT logs. */
export const CT_LOGS_EVIDENCE_ASSET = `${MODULE_LABELS["ct-log"]}: monitored logs`;

/**
 * The shared CT logs in one line: "CT: 71 of 71 logs not read for 3 h; new certificates
 * for your filters cannot be seen" (each log is listed in the report's appendix).
 */
function sharedLogsEvidence(m: ModuleCoverage, asOf: string): Evidence {
  const stale = m.uncollected.filter((u) => u.stale);
  if (m.expected === 0) {
    return ev(CT_LOGS_EVIDENCE_ASSET, "CT: no log monitored (the log list in use has none); new certificates for your filters cannot be seen");
  }
  const read = stale.map((u) => u.last_collected_at).filter((t): t is string => t !== null).sort();
  const newest = read[read.length - 1] ?? null;
  const never = stale.length - read.length;
  const age = newest
    ? `not read for ${roughDuration(Date.parse(asOf) - Date.parse(newest))}${never ? ` (${never} never read)` : ""}`
    : "never read";
  const consequence = stale.length === m.expected ? "new certificates for your filters cannot be seen" : "certificates logged only in those logs cannot be seen";
  const causes = uncollectedCauses("ct-log", stale.filter((u) => u.error));
  return ev(CT_LOGS_EVIDENCE_ASSET, `CT: ${stale.length} of ${m.expected} logs ${age}; ${consequence}.${causes.length ? ` ${causes.join("; ")}.` : ""}`, { observed_at: newest });
}

/**
 * "Monitoring data stale" is about the organization: its own stale assets first, per
 * module in category order, each with its state, error class and since when; then the
 * shared CT logs as one line.
 */
function staleEvidence(f: AuditFacts): Evidence[] {
  const modules = [...f.coverage].sort((a, b) => MODULE_ORDER.indexOf(a.module) - MODULE_ORDER.indexOf(b.module));
  const own = modules
    .filter((m) => m.sources === "own")
    .flatMap((m) => m.uncollected.filter((u) => u.stale).map((u) => ev(`${MODULE_LABELS[m.module]}: ${u.asset}`, staleAssetDetail(u, m.expected_window_seconds), { observed_at: u.last_collected_at })));
  const shared = modules.filter((m) => m.sources === "shared" && m.uncollected.some((u) => u.stale)).map((m) => sharedLogsEvidence(m, f.as_of));
  return [...own, ...shared];
}

/** Rules whose evaluator orders the evidence itself (the others list it newest first). */
const ORDERED_EVIDENCE: ReadonlySet<RuleId> = new Set(["coverage.monitoring_data_stale"]);

/**
 * The first `limit` items of a finding's evidence, keeping the shared CT logs' summary
 * line (the last one of "Monitoring data stale") however many own assets precede it.
 */
export function limitEvidence(evidence: readonly Evidence[], limit: number): Evidence[] {
  if (evidence.length <= limit) return [...evidence];
  const last = evidence[evidence.length - 1];
  if (last.asset === CT_LOGS_EVIDENCE_ASSET) return [...evidence.slice(0, Math.max(0, limit - 1)), last];
  return evidence.slice(0, limit);
}

/** Newest first (undated last), then by asset: a stable, readable order. */
function byRecency(a: Evidence, b: Evidence): number {
  if (a.observed_at !== b.observed_at) {
    if (a.observed_at === null) return 1;
    if (b.observed_at === null) return -1;
    return a.observed_at < b.observed_at ? 1 : -1;
  }
  return a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0;
}

/** `counts`: the true totals when a reader returned only the newest items of the evidence. */
export function findingOf(rule: AuditRule, evidence: Evidence[], counts?: { evidence: number; assets: number }): Finding {
  return {
    id: rule.id as RuleId,
    title: rule.title,
    severity: rule.severity,
    score_impact: rule.impact,
    category: rule.category,
    condition: rule.condition,
    references: rule.references.map((id) => ({ id, framework: REFERENCES[id].framework, title: REFERENCES[id].title })),
    affected_assets: Math.max(counts?.assets ?? 0, new Set(evidence.map((e) => e.asset)).size),
    evidence: ORDERED_EVIDENCE.has(rule.id as RuleId) ? [...evidence] : [...evidence].sort(byRecency),
    evidence_total: Math.max(counts?.evidence ?? 0, evidence.length),
  };
}

/** Worst first: severity, then impact, then catalogue order. */
function findingOrder(a: Finding, b: Finding): number {
  const sev = SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity);
  if (sev !== 0) return sev;
  if (a.score_impact !== b.score_impact) return b.score_impact - a.score_impact;
  return AUDIT_RULES.findIndex((r) => r.id === a.id) - AUDIT_RULES.findIndex((r) => r.id === b.id);
}

export function evaluateFindings(facts: AuditFacts): Finding[] {
  const findings: Finding[] = [];
  for (const rule of AUDIT_RULES) {
    const evidence = EVALUATORS[rule.id](facts);
    if (evidence.length > 0) findings.push(findingOf(rule, evidence, facts.counts?.[rule.id]));
  }
  return findings.sort(findingOrder);
}

export function categoryScores(findings: readonly Pick<Finding, "category" | "score_impact">[]): CategoryScores {
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c.id, 100])) as CategoryScores;
  for (const f of findings) scores[f.category] = Math.max(0, scores[f.category] - f.score_impact);
  return scores;
}

/** Weighted average of the category scores, rounded half up (see the header). */
export function overallScore(scores: CategoryScores): number {
  const weighted = CATEGORIES.reduce((sum, c) => sum + scores[c.id] * c.weight, 0);
  return Math.floor((weighted + 50) / 100);
}

export function gradeOf(score: number): Grade {
  return GRADES.find((g) => score >= g.min)!.grade;
}

export function scoreAudit(facts: AuditFacts): AuditResult {
  const findings = evaluateFindings(facts);
  const category_scores = categoryScores(findings);
  const overall_score = overallScore(category_scores);
  const category_status = assessCategories(facts);
  return {
    overall_score,
    grade: gradeOf(overall_score),
    category_scores,
    category_status,
    provisional: isProvisional(category_status),
    graded: isGraded(category_status),
    findings,
  };
}
