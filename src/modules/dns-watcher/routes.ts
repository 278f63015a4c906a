/**
 * DNS watcher endpoints (docs/modules/dns-watcher.md). GET /api/dns-watcher/introspection and the
 * alerting endpoints of the module are served by the alerting module.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { tenantOf, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import * as s from "./schema";
import * as domains from "./domain-service";
import * as changes from "./history-service";
import * as recordSets from "./record-set-service";

const tags = ["DNS watcher"];
const view = { permission: "dns-watcher:view_monitoring" } as const;

export const listDomains = defineRoute({
  method: "get", path: "/api/dns-watcher/domains", tags, summary: "Watched domains",
  description: "Sorted by `sort_by` then id (stable pages).",
  access: view, request: { query: s.DomainListQuery }, responses: { 200: json(s.DomainList) },
});
export const createDomain = defineRoute({
  method: "post", path: "/api/dns-watcher/domains", tags, summary: "Watch a domain",
  description:
    "The name is stored as a lowercase A-label without trailing dot (UTS #46, like RDAP monitors); internal zones such as `corp.test` are valid. " +
    "Watches apex A, AAAA, MX, NS, TXT, CAA and `_dmarc` TXT by default; with `email_checks` also `_mta-sts`, `_smtp._tls` and `default._bimi` TXT, the MX hosts' `_25._tcp` TLSA and the MTA-STS policy, and `<selector>._domainkey` TXT for each of `dkim_selectors` (a bad selector is 400, nothing saved). One per domain per organization (409). Quota `dns_domains`: free 10, pro 100, enterprise 1000 (403 `quota_exceeded`). " +
    "The first resolution happens at the next scheduled run (then every `DNS_CHECK_INTERVAL_SECONDS`); it sets the baseline and raises no change.",
  access: { permission: "dns-watcher:create_monitoring" }, audit: { action: "dns_domain.create", targetType: "dns_domain" },
  request: { body: body(s.CreateDomain) }, responses: { 201: json(s.DomainCreated, "Created") },
});
export const getDomain = defineRoute({
  method: "get", path: "/api/dns-watcher/domains/{domain_id}", tags, summary: "A domain with its current state",
  description:
    "Record sets with their current canonical values, the parsed SPF policy (terms, DNS lookup count over includes, effective `all`, allows-all), the parsed DMARC policy, the DNSSEC status, " +
    "and `email_security`: MTA-STS, TLS-RPT, DANE, DKIM and BIMI, each with a status (ok, missing, invalid, unknown until observed) and findings in words.",
  access: view, request: { params: s.DomainIdParam }, responses: { 200: json(s.DomainDetail) },
});
export const updateDomain = defineRoute({
  method: "patch", path: "/api/dns-watcher/domains/{domain_id}", tags, summary: "Update notes, enabled state, email checks and DKIM selectors",
  description:
    "A disabled domain is not resolved and raises no events; on re-enabling, the next resolution is compared with the values last seen. " +
    "`email_checks` true watches the mail transport security records, false stops watching them and clears what the checks kept; `dkim_selectors` replaces the declared selectors. " +
    `All in one batch: a bad selector (400) or the record set cap (403) changes nothing.`,
  access: { permission: "dns-watcher:update_monitoring" }, audit: { action: "dns_domain.update", targetType: "dns_domain", idParam: "domain_id" },
  request: { params: s.DomainIdParam, body: body(s.UpdateDomain) }, responses: { 200: json(s.Message) },
});
export const deleteDomain = defineRoute({
  method: "delete", path: "/api/dns-watcher/domains/{domain_id}", tags, summary: "Stop watching a domain (its record sets and history are deleted)",
  access: { permission: "dns-watcher:delete_monitoring" }, audit: { action: "dns_domain.delete", targetType: "dns_domain", idParam: "domain_id" },
  request: { params: s.DomainIdParam }, responses: { 200: json(s.Message) },
});
export const listRecords = defineRoute({
  method: "get", path: "/api/dns-watcher/domains/{domain_id}/records", tags, summary: "Record sets watched for a domain",
  access: view, request: { params: s.DomainIdParam }, responses: { 200: json(s.RecordSetList) },
});
export const addRecord = defineRoute({
  method: "post", path: "/api/dns-watcher/domains/{domain_id}/records", tags, summary: "Watch a record set",
  description:
    "`name` is the domain (or `@`), a full name below it, or a name relative to it: a single label (`www`) or a name with underscore labels (`_mta-sts`, `s1._domainkey`, `default._bimi`, `_25._tcp.mail`). " +
    `A wildcard, a name outside the domain or an unknown type is 400 naming the field; an already watched (name, type) is 409; a domain watches at most ${recordSets.MAX_RECORD_SETS_PER_DOMAIN} record sets (403 \`quota_exceeded\`).`,
  access: { permission: "dns-watcher:update_monitoring" }, audit: { action: "dns_record_set.create", targetType: "dns_record_set" },
  request: { params: s.DomainIdParam, body: body(s.CreateRecordSet) }, responses: { 201: json(s.RecordSetCreated, "Created") },
});
export const deleteRecord = defineRoute({
  method: "delete", path: "/api/dns-watcher/domains/{domain_id}/records/{record_id}", tags, summary: "Stop watching a record set",
  description: "Deleting the apex TXT or `_dmarc` TXT record set clears the parsed SPF or DMARC policy (the domain view then shows `watched: false`).",
  access: { permission: "dns-watcher:update_monitoring" }, audit: { action: "dns_record_set.delete", targetType: "dns_record_set", idParam: "record_id" },
  request: { params: s.RecordIdParam }, responses: { 200: json(s.Message) },
});
export const domainHistory = defineRoute({
  method: "get", path: "/api/dns-watcher/domains/{domain_id}/history", tags, summary: "Confirmed changes, newest first",
  description:
    "One item per record set whose values changed (confirmed by a second query), per DNSSEC status change, per SPF verdict change and per email transport security regression (kind `email`: MTA-STS, TLS-RPT, DANE, DKIM, BIMI). Reordering, name case and TTL changes are not changes; lookup errors (SERVFAIL, REFUSED, timeouts, garbage) are never changes. `detail` is the verdict in words; `analysis` holds the previous and current parsed SPF/DMARC policy and the DMARC regressions. `limit` default 30, at most 100.",
  access: view, request: { params: s.DomainIdParam, query: s.HistoryQuery }, responses: { 200: json(s.History) },
});

export const createMailServerMonitor = defineRoute({
  method: "post", path: "/api/dns-watcher/domains/{domain_id}/mail-server-monitors", tags, summary: "Accept a mail-server offer: a certificate monitor of an MX host on port 25 with STARTTLS",
  description:
    "`host` must be an MX host of the domain as last resolved, with the email checks on (400 otherwise, nothing saved). Creates the certificate monitor (`cert_monitors` quota: 403; an existing monitor of the host on port 25: 409). " +
    "Its scans then show on the domain's `email_security.dane.hosts[].served`: the chain served matched against the host's TLSA records.",
  access: { permission: "cert-watcher:create_monitoring" }, audit: { action: "cert_monitor.create", targetType: "cert_monitor" },
  request: { params: s.DomainIdParam, body: body(s.CreateMailServerMonitor) }, responses: { 201: json(s.MailServerMonitorCreated, "Created") },
});

export function registerDnsWatcherRoutes(app: OpenAPIHono<AppEnv>) {
  const t = tenantOf;
  app.openapi(createMailServerMonitor, async (c) => c.json(await domains.createMailServerMonitorOf(t(c), c.req.valid("param").domain_id, c.req.valid("json"), c.get("now")), 201));
  app.openapi(listDomains, async (c) => c.json(await domains.listDomains(t(c), c.req.valid("query")), 200));
  app.openapi(createDomain, async (c) => c.json(await domains.createDomain(t(c), c.req.valid("json"), c.get("now")), 201));
  app.openapi(getDomain, async (c) => c.json((await domains.getDomain(t(c), c.req.valid("param").domain_id)) as never, 200));
  app.openapi(updateDomain, async (c) => c.json(await domains.updateDomain(t(c), c.req.valid("param").domain_id, c.req.valid("json"), c.get("now")), 200));
  app.openapi(deleteDomain, async (c) => c.json(await domains.deleteDomain(t(c), c.req.valid("param").domain_id), 200));
  app.openapi(listRecords, async (c) => c.json((await recordSets.listRecordSets(t(c), c.req.valid("param").domain_id)) as never, 200));
  app.openapi(addRecord, async (c) => c.json(await recordSets.addRecordSet(t(c), c.req.valid("param").domain_id, c.req.valid("json"), c.get("now")), 201));
  app.openapi(deleteRecord, async (c) => c.json(await recordSets.deleteRecordSet(t(c), c.req.valid("param").domain_id, c.req.valid("param").record_id), 200));
  app.openapi(domainHistory, async (c) => c.json((await changes.history(t(c), c.req.valid("param").domain_id, c.req.valid("query"))) as never, 200));
}
