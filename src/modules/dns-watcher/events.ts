/**
 * The DNS watcher's events, declared ONCE: their TypeScript type, the runtime shape and
 * the CEL variable schema (alerting/cel/variables/dns-watcher.ts) all come from this zod
 * object, and the builders below are the only places an event is made.
 *
 *   event_type "dns_changed"           confirmed changes of a domain (record sets, DNSSEC
 *                                      status, SPF verdict, email transport security
 *                                      regressions): `buildDnsChangeEvent`
 *   event_type "collection_failing"    the domain's DNS could not be collected twice in a
 *              "collection_recovered"  row / is collected again: `buildDnsCollectionEvent`
 *
 * `spf` and `dmarc` carry the parsed policy now and before the change; a side without a
 * record has `record` "" and empty fields, so rules compare without has() checks (e.g.
 * `spf.previous.all == "-all" && spf.current.all != "-all"`). A collection event carries
 * the last observed DNSSEC status and policies (previous = current: nothing changed),
 * no changed records, and names the record sets whose lookups failed.
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which the API schemas call
// on these (the ingest Worker's bundle evaluates this file first).
import { z } from "@hono/zod-openapi";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { COLLECTION_ERROR_CLASSES, type CollectionError } from "../../platform/collection/vocabulary";
import { variablesOf } from "../../platform/event-variables";
import { dmarcVerdict, NO_DMARC, type DmarcRecord, type DmarcRegression } from "./dmarc";
import { EMPTY_SPF, type SpfAnalysis } from "./spf";
import { unread } from "./unread";
import { EMAIL_REGRESSIONS, MECHANISM_STATUSES, SERVED_STATUSES, type EmailMechanism, type EmailRegression, type EmailSecurityView } from "./email/view";

/** Said of every policy field: what a rule reads while the policy was never read. */
const NEVER_READ = "null (absent to a rule, has() is false) while the policy was never read";

const spfSide = (when: string) =>
  z
    .object({
      record: z.string().nullable().describe(`The v=spf1 TXT record, empty if none; ${NEVER_READ}`),
      all: z.string().nullable().describe(`The effective "all" with its qualifier (-all, ~all, +all, ?all), following redirect=; empty if absent; ${NEVER_READ}`),
      mechanisms: z.array(z.string()).nullable().describe(`Mechanisms and modifiers in order, e.g. include:_spf.example.net, ip4:192.0.2.0/24; ${NEVER_READ}`),
      includes: z.array(z.string()).nullable().describe(`Domains of include: mechanisms; ${NEVER_READ}`),
      lookup_count: z.number().int().nullable().describe(`DNS-querying terms over the whole include/redirect tree (RFC 7208 limit 10); ${NEVER_READ}`),
      allows_all: z.boolean().nullable().describe(`The policy lets every sender pass (+all directly, through an include or redirect=); ${NEVER_READ}`),
    })
    .describe(`SPF policy ${when}`);

const dmarcSide = (when: string) =>
  z
    .object({
      record: z.string().nullable().describe(`The v=DMARC1 TXT record at _dmarc, empty if none; ${NEVER_READ}`),
      p: z.string().nullable().describe(`Policy: none, quarantine or reject; empty if no valid record; ${NEVER_READ}`),
      sp: z.string().nullable().describe(`Subdomain policy, empty if not given; ${NEVER_READ}`),
      np: z.string().nullable().describe(`Non-existent subdomain policy (RFC 9989), empty if not given; ${NEVER_READ}`),
      pct: z.number().int().nullable().describe(`Percentage of mail the policy applies to (default 100 when the record omits it); ${NEVER_READ}`),
      t: z.boolean().nullable().describe(`Testing mode (RFC 9989 t=y); ${NEVER_READ}`),
      adkim: z.string().nullable().describe(`DKIM alignment: r or s; ${NEVER_READ}`),
      aspf: z.string().nullable().describe(`SPF alignment: r or s; ${NEVER_READ}`),
      rua: z.array(z.string()).nullable().describe(`Aggregate report URIs; ${NEVER_READ}`),
      ruf: z.array(z.string()).nullable().describe(`Failure report URIs; ${NEVER_READ}`),
    })
    .describe(`DMARC policy ${when}`);

const status = (what: string) =>
  z.enum(MECHANISM_STATUSES).describe(`${what}: ok, missing (looked up, not published), invalid (published but unusable), unknown (not observed yet, or the email checks are off)`);
const regressions = (m: EmailMechanism) =>
  z.array(z.enum(EMAIL_REGRESSIONS[m])).describe(`What got worse in this change: ${EMAIL_REGRESSIONS[m].join(", ")}; empty if nothing`);
const verdict = z.string().describe("The regressions in words, empty if none");

/** The event's email fields from the view (null: checks off, everything unknown) and this change's regressions. */
function emailEventFields(view: EmailSecurityView | null, regressed: readonly EmailRegression[]) {
  const of = <M extends EmailMechanism>(m: M) => {
    const rs = regressed.filter((r) => r.mechanism === m);
    // Each kind once (the history item lists every regression); the kinds are EMAIL_REGRESSIONS[m] by construction (email/view.ts).
    return { regressions: [...new Set(rs.map((r) => r.kind))] as (typeof EMAIL_REGRESSIONS)[M][number][], verdict: rs.map((r) => r.text).join("; ") };
  };
  return {
    email_checks: view !== null,
    mta_sts: {
      status: view?.mta_sts.status ?? "unknown", id: view?.mta_sts.id ?? "", mode: view?.mta_sts.policy.mode ?? "", max_age: view?.mta_sts.policy.max_age ?? 0,
      mx: view?.mta_sts.policy.mx ?? [], uncovered_mx: view?.mta_sts.uncovered_mx ?? [], ...of("mta_sts"),
    },
    tls_rpt: { status: view?.tls_rpt.status ?? "unknown", rua: view?.tls_rpt.rua ?? [], ...of("tls_rpt") },
    dane: {
      status: view?.dane.status ?? "unknown",
      hosts: (view?.dane.hosts ?? []).map((h) => ({ host: h.host, status: h.status, validated: h.validated, usable: h.usable, served: h.served.status })),
      mismatched_hosts: (view?.dane.hosts ?? []).filter((h) => h.served.status === "mismatch").map((h) => h.host),
      ...of("dane"),
    },
    dkim: {
      status: view?.dkim.status ?? "unknown",
      selectors: (view?.dkim.selectors ?? []).map((k) => ({ selector: k.selector, status: k.status, key_type: k.key_type, bits: k.bits, strength: k.strength, revoked: k.revoked, testing: k.testing })),
      ...of("dkim"),
    },
    bimi: { status: view?.bimi.status ?? "unknown", location: view?.bimi.location ?? "", authority: view?.bimi.authority ?? "", dmarc_enforced: view?.bimi.dmarc_enforced ?? false, ...of("bimi") },
  };
}

/** The fields of a domain without email checks (also what an event written before the checks existed reads as). */
const NO_EMAIL_FIELDS = emailEventFields(null, []);

/** The email transport security fields (email/view.ts), the same on every dns-watcher event. */
const emailFields = {
  mta_sts: z
    .object({
      status: status("MTA-STS (the _mta-sts TXT record, the policy it advertises, the MX hosts it covers)"),
      id: z.string().describe("The policy id of the _mta-sts TXT record, empty if none"),
      mode: z.string().describe("The policy's mode: enforce, testing or none; empty when no policy was read"),
      max_age: z.number().int().describe("The policy's max_age in seconds, 0 when unknown"),
      mx: z.array(z.string()).describe("The policy's mx patterns"),
      uncovered_mx: z.array(z.string()).describe("MX hosts no mx pattern of the policy allows"),
      regressions: regressions("mta_sts"),
      verdict,
    })
    .default(NO_EMAIL_FIELDS.mta_sts)
    .describe("MTA-STS (RFC 8461)"),
  tls_rpt: z
    .object({ status: status("TLS reporting (the _smtp._tls TXT record)"), rua: z.array(z.string()).describe("Report URIs"), regressions: regressions("tls_rpt"), verdict })
    .default(NO_EMAIL_FIELDS.tls_rpt)
    .describe("SMTP TLS reporting (RFC 8460)"),
  dane: z
    .object({
      status: status("DANE for the MX hosts (their _25._tcp TLSA records, DNSSEC-validated)"),
      hosts: z
        .array(z.object({ host: z.string().describe("MX host"), status: z.enum(MECHANISM_STATUSES).describe("ok, missing, invalid or unknown"), validated: z.boolean().describe("The TLSA answer was DNSSEC-validated"), usable: z.number().int().describe("TLSA records usable for SMTP"),
            served: z
              .enum(SERVED_STATUSES)
              .default("not_scanned")
              .describe("What the host serves on port 25 against its TLSA records: matched, mismatch (no record matches: DANE-enforcing senders stop delivering), not_scanned (no port-25 certificate monitor scan yet), not_checked (nothing to compare)"),
          }),
        )
        .describe("Each MX host's TLSA state"),
      mismatched_hosts: z.array(z.string()).default([]).describe("MX hosts whose served certificate chain matches none of their TLSA records"),
      regressions: regressions("dane"),
      verdict,
    })
    .default(NO_EMAIL_FIELDS.dane)
    .describe("DANE for SMTP (RFC 7672)"),
  dkim: z
    .object({
      status: status("DKIM keys of the declared selectors"),
      selectors: z
        .array(
          z.object({
            selector: z.string().describe("The selector"),
            status: z.enum(MECHANISM_STATUSES).describe("ok, missing (no key or revoked), invalid (unreadable or weak key), unknown"),
            key_type: z.string().describe("rsa or ed25519"),
            bits: z.number().int().describe("RSA modulus length (Ed25519: 256), 0 when unreadable"),
            strength: z.string().describe("strong, legacy (RSA 1024-2047), weak (RSA < 1024), empty without a usable key"),
            revoked: z.boolean().describe("p= is empty"),
            testing: z.boolean().describe("t=y"),
          }),
        )
        .describe("Each declared selector's key"),
      regressions: regressions("dkim"),
      verdict,
    })
    .default(NO_EMAIL_FIELDS.dkim)
    .describe("DKIM public keys (RFC 6376)"),
  bimi: z
    .object({
      status: status("BIMI (the default._bimi TXT record)"),
      location: z.string().describe("Logo location (l=), empty if none"),
      authority: z.string().describe("Evidence document location (a=), empty if none"),
      dmarc_enforced: z.boolean().describe("DMARC is at enforcement (p=quarantine or reject, pct 100): required for a logo to show"),
      regressions: regressions("bimi"),
      verdict,
    })
    .default(NO_EMAIL_FIELDS.bimi)
    .describe("BIMI"),
};

export const DnsWatcherEventSchema = z.object({
  event_type: eventTypeSchema(["dns_changed"], '"dns_changed" for confirmed changes of the domain\'s records, DNSSEC status or SPF verdict'),
  collection: CollectionEventFieldsSchema,
  domain: z.string().describe("The watched domain"),
  changed_records: z
    .array(
      z.object({
        name: z.string().describe("Owner name of the record set"),
        type: z.string().describe("Record type: A, AAAA, CNAME, MX, NS, TXT, CAA, SOA, DS, DNSKEY"),
        old_values: z.array(z.string()).describe("Values before the change (presentation format)"),
        new_values: z.array(z.string()).describe("Values after the change (presentation format); empty when the set was removed (confirmed NXDOMAIN/NODATA)"),
      }),
    )
    .describe("Record sets whose change was confirmed by a second query"),
  dnssec: z
    .object({
      validated: z.boolean().describe("The resolver validated the answers (AD bit)"),
      status: z.string().describe("validated, insecure, bogus or unknown"),
      previous_status: z.string().describe("The status before this resolution"),
      error: z.string().describe("Validation error (SERVFAIL with its Extended DNS Errors), empty if none"),
      ede_codes: z.array(z.number().int()).describe("Extended DNS Error codes (RFC 8914) of the failing answer"),
    })
    .describe("DNSSEC validation of the domain's answers"),
  spf: z
    .object({
      current: spfSide("now"),
      previous: spfSide("before the change"),
      allows_all: z.boolean().nullable().describe(`The current policy allows every sender; ${NEVER_READ}`),
      became_permissive: z.boolean().describe("The policy allows every sender now and did not before (also when first seen allowing every sender)"),
      changed_targets: z
        .array(z.string())
        .default([])
        .describe("include/redirect targets whose own SPF record changed (confirmed by a second query) and made the policy read again; empty otherwise"),
    })
    .describe("Parsed SPF policy of the domain"),
  dmarc: z
    .object({
      current: dmarcSide("now"),
      previous: dmarcSide("before the change"),
      regressions: z.array(z.string()).describe("What got worse: removed, policy_lowered, pct_lowered, testing_enabled, alignment_relaxed, reporting_removed"),
      verdict: z.string().describe('The regressions in words ("DMARC weakened: policy lowered from reject to none"), empty if none'),
    })
    .describe("Parsed DMARC policy of the domain"),
  failing_record_sets: z
    .array(
      z.object({
        name: z.string().describe("Owner name of the record set"),
        type: z.string().describe("Record type"),
        error_class: z.enum(COLLECTION_ERROR_CLASSES).describe("Why its lookup failed (collection.error_class vocabulary)"),
        error_message: z.string().describe("What failed, in words"),
      }),
    )
    .describe("Record sets whose lookup failed in the attempt (collection_failing events); empty on other events"),
  email_checks: z.boolean().default(false).describe("The email transport security checks run for the domain (mta_sts, tls_rpt, dane, dkim and bimi are all unknown when they do not)"),
  ...emailFields,
  resolved_at: z.string().describe("Resolution time (for a collection event: the attempt), ISO 8601"),
});

export type DnsWatcherEvent = z.infer<typeof DnsWatcherEventSchema>;

/** The CEL variable schema of dns-watcher events (introspection, type checking). */
export const dnsWatcherVariables = variablesOf(DnsWatcherEventSchema);

/** What an event is made of: the domain's confirmed changes this run and its policies before and after. */
export interface DnsChangeEventInput {
  domain: string;
  changedRecords: { name: string; type: string; oldValues: string[]; newValues: string[] }[];
  dnssec: { status: string; previousStatus: string; error: string; edeCodes: number[] };
  /** `changed`: the policy was read again this run (else `previous` is shown as the current one). */
  spf: { current: SpfAnalysis | null; previous: SpfAnalysis | null; changed: boolean; becamePermissive: boolean; changedTargets: string[] };
  dmarc: { current: DmarcRecord | null; previous: DmarcRecord | null; changed: boolean; regressions: DmarcRegression[] };
  /** The email view after the run (null: the email checks are off) and what regressed. */
  email?: { view: EmailSecurityView | null; regressions: EmailRegression[] };
  resolvedAt: string;
}

/** One side of the event's SPF: the policy as read, or every field null when it never was (unread.ts). */
function spfSideOf(policy: SpfAnalysis | null) {
  const a = policy ?? EMPTY_SPF;
  const side = { record: a.record, all: a.all, mechanisms: a.mechanisms, includes: a.includes, lookup_count: a.lookup_count, allows_all: a.allows_all };
  return policy ? side : unread(side);
}
function dmarcSideOf(policy: DmarcRecord | null) {
  const d = policy ?? NO_DMARC;
  const side = { record: d.record, p: d.p, sp: d.sp, np: d.np, pct: d.pct, t: d.t, adkim: d.adkim, aspf: d.aspf, rua: d.rua, ruf: d.ruf };
  return policy ? side : unread(side);
}

/** The event, parsed so that it always matches its declared shape. */
export function buildDnsChangeEvent(input: DnsChangeEventInput): DnsWatcherEvent {
  const spf = input.spf.current;
  const dmarc = input.dmarc.current;
  return DnsWatcherEventSchema.parse({
    event_type: "dns_changed",
    collection: NOT_A_COLLECTION_EVENT,
    domain: input.domain,
    changed_records: input.changedRecords.map((c) => ({ name: c.name, type: c.type, old_values: c.oldValues, new_values: c.newValues })),
    dnssec: { validated: input.dnssec.status === "validated", status: input.dnssec.status, previous_status: input.dnssec.previousStatus, error: input.dnssec.error, ede_codes: input.dnssec.edeCodes },
    spf: {
      current: spfSideOf(spf),
      previous: spfSideOf(input.spf.changed ? input.spf.previous : spf),
      allows_all: spf?.allows_all ?? null,
      became_permissive: input.spf.becamePermissive,
      changed_targets: input.spf.changedTargets,
    },
    dmarc: {
      current: dmarcSideOf(dmarc),
      previous: dmarcSideOf(input.dmarc.changed ? input.dmarc.previous : dmarc),
      // What got worse, each kind once (the history item lists every tag).
      regressions: [...new Set(input.dmarc.regressions.map((r) => r.kind))],
      verdict: dmarcVerdict(input.dmarc.regressions),
    },
    failing_record_sets: [],
    ...emailEventFields(input.email?.view ?? null, input.email?.regressions ?? []),
    resolved_at: input.resolvedAt,
  });
}

/** A domain whose DNS collection entered `failing` or recovered: its identity and what was last observed of it. */
export interface DnsCollectionEventInput extends CollectionEventInput {
  domain: string;
  /** The last observed DNSSEC status and policies (null: never observed). */
  dnssec: { status: string; error: string };
  spf: SpfAnalysis | null;
  dmarc: DmarcRecord | null;
  /** The record sets whose lookup failed in the attempt. */
  failingRecordSets: { name: string; type: string; error: CollectionError }[];
  /** The email view as last observed (null: the email checks are off). */
  email?: EmailSecurityView | null;
  attemptedAt: string;
}

export function buildDnsCollectionEvent(input: DnsCollectionEventInput): DnsWatcherEvent {
  const spf = spfSideOf(input.spf);
  const dmarc = dmarcSideOf(input.dmarc);
  return DnsWatcherEventSchema.parse({
    ...collectionEventHead(input),
    domain: input.domain,
    changed_records: [],
    dnssec: { validated: input.dnssec.status === "validated", status: input.dnssec.status, previous_status: input.dnssec.status, error: input.dnssec.error, ede_codes: [] },
    spf: { current: spf, previous: spf, allows_all: spf.allows_all, became_permissive: false, changed_targets: [] },
    dmarc: { current: dmarc, previous: dmarc, regressions: [], verdict: "" },
    failing_record_sets: input.transition === "failing" ? input.failingRecordSets.map((s) => ({ name: s.name, type: s.type, error_class: s.error.class, error_message: s.error.message })) : [],
    ...emailEventFields(input.email ?? null, []),
    resolved_at: input.attemptedAt,
  });
}
