/** Request and response schemas of the DNS watcher endpoints. */
import { z } from "@hono/zod-openapi";
import { limitOffsetQuery, pathId, sortOrder } from "../../platform/paging";
import { DNS_CHECK_STATUSES, DNS_HISTORY_KINDS, DNSSEC_STATUS_VALUES } from "../../db/schema/dns-watcher";
import { WATCHED_RECORD_TYPES } from "../../platform/dns/presentation";
import { safeMultilineText } from "../../platform/text";
import { CollectionSchema } from "../../platform/collection/schema";
import { EmailSecuritySchema } from "./email/schema";

export const MAX_DKIM_SELECTORS = 20;
const emailChecks = z.boolean().openapi({
  description:
    "Watch the domain's mail transport security: MTA-STS (record and policy), TLS-RPT, DANE/TLSA of the MX hosts, DKIM keys of dkim_selectors, BIMI. On: the _mta-sts, _smtp._tls and default._bimi TXT record sets are watched, the MX hosts' TLSA records asked and the MTA-STS policy fetched (daily, or when its id changes); off (the default: a domain that sends no mail pays nothing): they are no longer watched",
});
const dkimSelectors = z
  .array(z.string().min(1).max(200))
  .max(MAX_DKIM_SELECTORS)
  .openapi({ example: ["google", "s1"], description: `DKIM selectors whose keys are watched (<selector>._domainkey TXT), at most ${MAX_DKIM_SELECTORS}; they cannot be discovered from DNS. On update, the list replaces the current one` });

export const DOMAIN_SORT = ["domain_name", "enabled", "last_checked_at", "dnssec_status", "created_at"] as const;
export const NOTES_MAX = 2000;

const domainFields = {
  id: z.number().int(),
  domain_name: z.string().openapi({ example: "example.com", description: "Lowercase A-label, no trailing dot" }),
  enabled: z.boolean(),
  notes: z.string(),
  last_checked_at: z.string().nullable().openapi({ description: "ISO 8601; null before the first scheduled resolution" }),
  last_success_at: z.string().nullable().openapi({ description: "ISO 8601: the latest scheduled resolution that collected the domain's data (status ok or partial); null while none has" }),
  last_check_status: z.enum(DNS_CHECK_STATUSES).nullable().openapi({ description: "ok: every record set resolved; partial: some lookups failed (see last_check_detail); error: none resolved" }),
  last_check_detail: z.string().nullable().openapi({ description: "The failed lookups of the last run in words (each record set, what failed), or a note; null when every lookup resolved" }),
  dnssec_status: z.enum(DNSSEC_STATUS_VALUES).openapi({ description: "validated (AD set), insecure (no AD, not bogus), bogus (SERVFAIL that resolves with CD set), unknown" }),
  collection: CollectionSchema.openapi({
    description:
      "Whether the domain's DNS could be collected: each scheduled run is an attempt, which succeeds when at least one record set resolved (each record set has its own state); failing after two runs in a row resolved nothing",
  }),
  created_at: z.string(),
  updated_at: z.string(),
};
export const DnsDomain = z.object(domainFields).openapi("DnsDomain");

export const DomainListQuery = limitOffsetQuery({ defaultLimit: 100, maxLimit: 1000 }).extend({
  sort_by: z.enum(DOMAIN_SORT).default("domain_name"),
  sort_order: sortOrder("asc"),
  enabled: z.enum(["true", "false"]).optional().openapi({ description: "Only enabled (true) or disabled (false) domains" }),
});
export const DomainList = z
  .object({ domains: z.array(DnsDomain), total: z.number().int(), limit: z.number().int(), offset: z.number().int(), sort_by: z.enum(DOMAIN_SORT), sort_order: z.enum(["asc", "desc"]) })
  .openapi("DnsDomainList");

export const CreateDomain = z
  .object({
    domain_name: z.string().max(300).openapi({ example: "example.com", description: "Domain to watch; Unicode names are stored as A-labels; internal zones (corp.test) are fine" }),
    enabled: z.boolean().default(true),
    notes: safeMultilineText(NOTES_MAX).default(""),
    email_checks: emailChecks.default(false),
    dkim_selectors: dkimSelectors.default([]),
  })
  .openapi("CreateDnsDomain");
export const DomainCreated = z.object({ id: z.number().int(), message: z.string(), quota_remaining: z.number().int() }).openapi("DnsDomainCreated");
export const UpdateDomain = z
  .object({ notes: safeMultilineText(NOTES_MAX).optional(), enabled: z.boolean().optional(), email_checks: emailChecks.optional(), dkim_selectors: dkimSelectors.optional() })
  .refine((b) => b.notes !== undefined || b.enabled !== undefined || b.email_checks !== undefined || b.dkim_selectors !== undefined, { message: "give notes, enabled, email_checks and/or dkim_selectors" })
  .openapi("UpdateDnsDomain");
export const Message = z.object({ message: z.string() }).openapi("DnsMessage");
export const CreateMailServerMonitor = z
  .object({
    host: z.string().max(253).openapi({ example: "mx1.example.com", description: "An MX host of the domain (one of `email_security.mail_server_offers`)" }),
    ip_addresses: z.array(z.string().max(64)).max(100).default([]).openapi({ description: "Addresses to scan (the host's A/AAAA); they can be added to the monitor later" }),
  })
  .openapi("CreateDnsMailServerMonitor");
export const MailServerMonitorCreated = z
  .object({ id: z.number().int().openapi({ description: "The certificate monitor created" }), message: z.string(), quota_remaining: z.number().int() })
  .openapi("DnsMailServerMonitorCreated");

export const DomainIdParam = z.object({ domain_id: pathId("domain_id") });
export const RecordIdParam = z.object({ domain_id: pathId("domain_id"), record_id: pathId("record_id") });

export const RecordSet = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(WATCHED_RECORD_TYPES),
    values: z.array(z.string()).nullable().openapi({ description: "Canonical values (sorted, names lowercase with trailing dot, TTL left out); [] = NXDOMAIN/NODATA; null before the first resolution" }),
    rcode: z.string().nullable(),
    last_error: z.string().nullable().openapi({ description: "The last lookup's failure in words (also collection.error); the values stay those of the last successful resolution" }),
    last_changed_at: z.string().nullable(),
    collection: CollectionSchema.openapi({ description: "Whether this record set's lookups succeed: pending until it first resolves (values null: not resolved yet)" }),
    created_at: z.string(),
  })
  .openapi("DnsRecordSet");
export const RecordSetList = z.object({ domain: z.string(), records: z.array(RecordSet) }).openapi("DnsRecordSetList");
export const CreateRecordSet = z
  .object({
    name: z.string().min(1).max(300).openapi({ example: "_mta-sts.example.com", description: "The domain (or @) or a name below it" }),
    type: z.enum(WATCHED_RECORD_TYPES),
  })
  .openapi("CreateDnsRecordSet");
export const RecordSetCreated = z.object({ id: z.number().int(), message: z.string() }).openapi("DnsRecordSetCreated");

/**
 * A parsed policy's fields, each null while its `status` is unknown: nothing was read,
 * so nothing is stated (not "allows_all: false", not "pct: 100").
 */
function nullWhileUnknown<T extends Record<string, z.ZodType>>(shape: T): { [K in keyof T]: z.ZodNullable<T[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.nullable()])) as { [K in keyof T]: z.ZodNullable<T[K]> };
}
const NULL_WHILE_UNKNOWN = "Every field but status and watched is null while status is unknown: a policy never read states nothing.";

const spfView = z
  .object({
    status: z.enum(["unknown", "none", "ok", "permerror", "temperror"]).openapi({
      description:
        "unknown: never read (the apex TXT never resolved, or it is not watched); none: a successful lookup found no v=spf1 record; ok, permerror, temperror: the verdict of the record last read. While lookups fail the last read policy stays (see the apex TXT record set's collection)",
    }),
    ...nullWhileUnknown({
      record: z.string(),
      mechanisms: z.array(z.string()),
      includes: z.array(z.string()),
      redirect: z.string(),
      lookup_count: z.number().int(),
      void_lookups: z.number().int(),
      all: z.string(),
      allows_all: z.boolean(),
      allows_all_via: z.string(),
      errors: z.array(z.string()),
      target_records: z
        .record(z.string(), z.array(z.string()))
        .openapi({ description: "The v=spf1 record(s) each include/redirect target had when the policy was last read; every scheduled run compares the targets with them" }),
    }),
    watched: z.boolean().openapi({ description: "The apex TXT record set is watched; false: nothing is parsed (delete it and the policy is cleared)" }),
  })
  .openapi("SpfPolicy", { description: NULL_WHILE_UNKNOWN });
const dmarcView = z
  .object({
    status: z.enum(["unknown", "none", "ok", "invalid"]).openapi({
      description:
        "unknown: never read (the _dmarc TXT never resolved, or it is not watched); none: a successful lookup found no DMARC record; ok: a valid policy record; invalid: a record without a usable policy. While lookups fail the last read policy stays",
    }),
    ...nullWhileUnknown({
      record: z.string(),
      valid: z.boolean(),
      p: z.string(),
      sp: z.string(),
      np: z.string(),
      pct: z.number().int(),
      t: z.boolean(),
      adkim: z.string(),
      aspf: z.string(),
      rua: z.array(z.string()),
      ruf: z.array(z.string()),
      psd: z.string(),
      fo: z.string(),
      errors: z.array(z.string()),
    }),
    watched: z.boolean().openapi({ description: "The _dmarc TXT record set is watched; false: nothing is parsed" }),
  })
  .openapi("DmarcPolicy", { description: NULL_WHILE_UNKNOWN });
export const DomainDetail = z
  .object({
    ...domainFields,
    records: z.array(RecordSet),
    spf: spfView,
    dmarc: dmarcView,
    dnssec: z.object({ status: z.enum(DNSSEC_STATUS_VALUES), validated: z.boolean(), error: z.string() }),
    email_checks: z.boolean(),
    dkim_selectors: z.array(z.string()).openapi({ description: "The declared DKIM selectors (their <selector>._domainkey TXT record sets)" }),
    email_security: EmailSecuritySchema,
  })
  .openapi("DnsDomainDetail");

export const HistoryQuery = limitOffsetQuery({ defaultLimit: 30, maxLimit: 100 });
export const DnsChange = z
  .object({
    id: z.number().int(),
    observed_at: z.string(),
    kind: z.enum(DNS_HISTORY_KINDS).openapi({ description: "record: a record set's values changed; dnssec: the DNSSEC status changed; spf: the SPF verdict changed without the domain's own TXT changing (an include/redirect target changed, or the policy was first seen allowing all senders); email: a mail transport security regression (MTA-STS, TLS-RPT, DANE, DKIM, BIMI; analysis.email names the mechanism, the regressions and the state before and after)" }),
    name: z.string(),
    type: z.string().nullable(),
    old_values: z.array(z.string()),
    new_values: z.array(z.string()),
    detail: z.string().openapi({ description: "The verdict in words" }),
    analysis: z.record(z.string(), z.unknown()).nullable().openapi({ description: "For SPF/DMARC changes: previous and current parsed policy, regressions" }),
  })
  .openapi("DnsChange");
export const History = z
  .object({
    domain: z.string(),
    changes: z.array(DnsChange),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .openapi("DnsHistory");
