/**
 * CT log endpoints (filters, matches, lookalikes) plus the filter-feed proposals, the
 * monitored logs with their ingestion state, and the CT log list (served under
 * /api/cert-watcher/ct-log-list, where the API has always had it).
 *
 * Not implemented here: the alerting endpoints
 * (/api/ct-log/alert-rules..., /introspection), which the alerting module serves
 * for every module.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { auditInsert } from "../../platform/audit";
import { principalOf, tenantOf, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import { currentLogList, describeLogList } from "./loglist-service";
import { discoverySettings } from "./lookalikes/discovery";
import * as ls from "./lookalikes/schema";
import * as lookalikes from "./lookalikes/service";
import * as s from "./schema";
import * as policy from "./issuance-policy";
import * as filters from "./filter-service";
import * as logs from "./log-service";
import * as matches from "./match-service";
import * as proposals from "./proposal-service";
import * as typosquat from "./typosquat-match-service";

const tags = ["CT log"];
const view = { permission: "ct-log:view_monitoring" } as const;

export const listFilters = defineRoute({
  method: "get", path: "/api/ct-log/filters", tags, summary: "The organization's CT filters (deleted ones excluded)", access: view,
  request: { query: s.FiltersQuery }, responses: { 200: json(s.FiltersResponse) },
});
export const getFilter = defineRoute({
  method: "get", path: "/api/ct-log/filters/{filter_id}", tags, summary: "One CT filter", access: view,
  request: { params: s.FilterIdParam }, responses: { 200: json(s.CtFilter) },
});
export const createFilter = defineRoute({
  method: "post", path: "/api/ct-log/filters", tags, summary: "Create a CT filter",
  description:
    "The pattern is stored canonical (lowercase A-labels, no trailing dot). `(pattern, match_type)` is unique among the organization's " +
    "filters that are not deleted (409 `conflict`). The tier's `ct_filters` quota counts filters that are not deleted (403 `quota_exceeded`). " +
    "`typosquat_enabled` on a pattern that is not one registrable domain: 400 `typosquat_ineligible`. The filter matches from the next batch of every log.",
  access: { permission: "ct-log:create_monitoring" }, audit: { action: "ct_filter.create", targetType: "ct_filter" },
  request: { body: body(s.CreateFilterRequest) }, responses: { 201: json(s.CreateFilterResponse, "Created") },
});
export const updateFilter = defineRoute({
  method: "put", path: "/api/ct-log/filters/{filter_id}", tags, summary: "Change a CT filter (every field optional)",
  description: "Same rules as create; the result must still be unique and typosquatting may only stay enabled on an eligible pattern.",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_filter.update", targetType: "ct_filter", idParam: "filter_id" },
  request: { params: s.FilterIdParam, body: body(s.UpdateFilterRequest) }, responses: { 200: json(s.Message) },
});
export const deleteFilter = defineRoute({
  method: "delete", path: "/api/ct-log/filters/{filter_id}", tags, summary: "Soft-delete a CT filter",
  description: "The filter stops matching from the next batch of every log; its past matches stay; it no longer counts toward the quota.",
  access: { permission: "ct-log:delete_monitoring" }, audit: { action: "ct_filter.delete", targetType: "ct_filter", idParam: "filter_id" },
  request: { params: s.FilterIdParam }, responses: { 200: json(s.Message) },
});
const VISIBILITY =
  "Times are those at which a match became visible: entries are published only after their batch is verified against the log's signed tree head, " +
  "and each publication is stamped by the database with a time strictly later than every earlier publication's. ";
export const listMatches = defineRoute({
  method: "get", path: "/api/ct-log/matches", tags, summary: "Certificates that matched a filter in the past 30 days",
  description:
    "One row per certificate: a precertificate and its final certificate are one match (same TBS without the SCT list and poison), " +
    "seen in `log_count` logs. `matched_at` is when the match became visible (its first publication); the 30-day window counts from `last_seen_at`. " +
    VISIBILITY +
    "So a client paging by `matched_at` (newest first) never finds an older match appearing below what it has already seen.",
  access: view, request: { query: s.MatchesQuery }, responses: { 200: json(s.MatchesResponse) },
});
export const checkNew = defineRoute({
  method: "get", path: "/api/ct-log/matches/check-new", tags, summary: "Whether matches appeared since a time",
  description:
    "`count`: matches (30-day window) that became visible strictly after `since`; `as_of`: the server's visibility clock when the answer was computed; " +
    "`latest_timestamp`: when the newest match of the window became visible (null when there is none). " +
    "`count` splits into `routine` (judged `authorized` for every filter: a known key from an authorized issuer), `unexpected` (any other verdict, " +
    "by verdict in `unexpected_by_verdict`) and `not_judged` (the verdict is set when the match's event is processed, seconds later). " +
    VISIBILITY +
    "**How to poll**: start with any `since` (e.g. the time you start watching), then pass the previous answer's `as_of` as the next `since`. " +
    "Every match counted has `matched_at` <= `as_of` and every match that becomes visible afterwards has `matched_at` > `as_of`, so each match is " +
    "counted exactly once and no match is ever missed, however long its certificate waited in a log's backlog. Do not pass your own clock: " +
    "the visibility clock is the database's, and a client clock ahead of it (or equal to it to the millisecond) would skip matches published " +
    "in between. `latest_timestamp` is informational (it is <= `as_of`).",
  access: view, request: { query: s.CheckNewQuery }, responses: { 200: json(s.CheckNewResponse) },
});
export const matchDetail = defineRoute({
  method: "get", path: "/api/ct-log/matches/{sha256}", tags, summary: "One match by the SHA-256 fingerprint of its precertificate or certificate",
  description: "`cert` and `caa` are those of the entry with this fingerprint (the first one, or the one in `log_name`); `occurrences` lists every log entry of the match.",
  access: view, request: { params: s.Sha256Param, query: s.MatchDetailQuery }, responses: { 200: json(s.MatchDetailResponse) },
});
export const typosquatFilters = defineRoute({
  method: "get", path: "/api/ct-log/typosquatting/filters", tags, summary: "Enabled CT filters with their typosquatting status and eligibility",
  access: view, request: { query: s.TyposquatFiltersQuery }, responses: { 200: json(s.TyposquatFiltersResponse) },
});
export const typosquatMatches = defineRoute({
  method: "get", path: "/api/ct-log/typosquatting/matches", tags, summary: "Lookalike domains of protected filters seen in the past 30 days",
  description:
    "One row per (protected filter, candidate domain, certificate): a precertificate and its final certificate are one match, seen in `log_count` logs. " +
    "A filter is protected when `typosquat_enabled`, enabled, not deleted and eligible; detection starts with the next batch of every log. " +
    "`candidate_domain`: registrable domain (A-labels) of `certificate_name`, the observed lookalike name; never the protected domain or a name below it. " +
    "`evidence`: categories, in a fixed order: `tld_change`, `confusable` (UTS #39 skeletons, lowercase, accents dropped), `affix`, `hyphenation` " +
    "(also a label split by dots), `omission`, `repetition`, `transposition` (protected labels of 3+ characters), `edit_distance` (Damerau–Levenshtein " +
    "<= 1 for protected labels of 3-7 characters, <= 2 for 8+); non-ASCII candidates may add `script_mixing`, `mixed_numbers`, " +
    "`unsafe_characters`, `whole_script`; `brand_keyword` (another name of the certificate carries the protected label) corroborates. " +
    "`edit_distance` (field): the distance when an edit category applies, else null. `confidence`: `low` for an edit of a protected label " +
    "shorter than 5 characters with nothing corroborating it, `high` otherwise (docs/lookalikes.md). " +
    "`subject`, `issuer`, `not_before`, `not_after`: of the first entry seen. `detected_at`: first observation; the 30-day window counts from `last_seen_at`. " +
    "Sort `evidence` orders by the comma-joined evidence list. A name that carries the whole protected domain as labels of another domain " +
    "(`paypal.com.evil.net`) is an `affix` (combosquat) of that domain's registrable domain (`evil.net`). " +
    "Each new typosquatting match raises a CT-Log event of kind `typosquat` (rules: `kind == \"typosquat\" && typosquat.evidence.exists(e, e == \"confusable\")`).",
  access: view, request: { query: s.TyposquatMatchesQuery }, responses: { 200: json(s.TyposquatMatchesResponse) },
});
export const typosquatMatchDetail = defineRoute({
  method: "get", path: "/api/ct-log/typosquatting/matches/{sha256}", tags, summary: "One typosquatting match with its certificate and CT log occurrences",
  description:
    "Keyed by the SHA-256 fingerprint of the precertificate or certificate (any entry of the match), `filter_id` and `candidate_domain`; " +
    "404 `not_found` when the organization has no such match in the 30-day window. Fields of the list row, plus `cert` (the cert.* fields of the " +
    "first entry seen) and `occurrences` (every log entry of the match, oldest first).",
  access: view, request: { params: s.Sha256Param, query: s.TyposquatDetailQuery }, responses: { 200: json(s.TyposquatMatchDetailResponse) },
});
const LOOKALIKE =
  "A lookalike is one registrable domain imitating a protected one, found in a certificate (`source` ct) or by the registered-permutation " +
  "discovery (`source` permutation), then checked on a schedule (DNS NS/A/AAAA/MX, a connection to the HTTPS port, RDAP registration). ";
export const listLookalikes = defineRoute({
  method: "get", path: "/api/ct-log/lookalikes", tags, summary: "The organization's lookalike domains, with their state",
  description:
    LOOKALIKE +
    "`state`: new (not checked yet), registered (NS, no address), resolving (A/AAAA), mail_capable (MX), serving (accepts connections on the HTTPS port), " +
    "gone (NXDOMAIN), dismissed. Filters `state` (or `open`), `confidence`, `source`; paged and sorted like the other lists.",
  access: view, request: { query: ls.LookalikesQuery }, responses: { 200: json(ls.LookalikesResponse) },
});
export const exportLookalikes = defineRoute({
  method: "get", path: "/api/ct-log/lookalikes/export", tags, summary: "The organization's open lookalikes as CSV, JSON, a blocklist or an RPZ zone",
  description:
    "Open lookalikes (not gone, not dismissed), as an attachment: `csv` (a formula-like cell is prefixed with an apostrophe), `json`, `txt` " +
    "(one A-label domain a line, for blocklists and mail filters) or `rpz` (a DNS response-policy zone answering NXDOMAIN for each domain and everything " +
    "below it, for BIND or Unbound). Names that are not letters, digits, hyphens and dots are left out of `txt` and `rpz`, and counted in a comment.",
  access: view, request: { query: ls.ExportQuery },
  responses: {
    200: {
      description: "The export",
      content: {
        "text/csv": { schema: { type: "string" } },
        "application/json": { schema: { type: "object" } },
        "text/plain": { schema: { type: "string" } },
        "text/dns": { schema: { type: "string" } },
      },
    },
  },
});
export const discoverLookalikes = defineRoute({
  method: "post", path: "/api/ct-log/lookalikes/discover", tags, summary: "Look for registered permutations of protected domains now",
  description:
    "Generates the permutations the detection policy covers (dnstwist's families) of one protected filter (`filter_id`) or all, and asks DNS (NS, through " +
    "DOH_RESOLVER_URLS) which are registered, most likely first, at most 200 queries per request and within what is left of the organization's daily " +
    "budget (LOOKALIKE_DISCOVERY_QUERIES_PER_DAY, shared with the scheduled discovery). Registered ones the organization does not know yet become " +
    "lookalikes (`source` permutation) and are checked within a minute. 400 when the filter does not protect a domain; 404 for another organization's filter.",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_lookalike.discover", targetType: "ct_filter" },
  request: { body: body(ls.DiscoverRequest) }, responses: { 200: json(ls.DiscoverResponse) },
});
export const getLookalike = defineRoute({
  method: "get", path: "/api/ct-log/lookalikes/{lookalike_id}", tags, summary: "One lookalike with its evidence, certificates, DNS, RDAP and timeline",
  description:
    LOOKALIKE +
    "`comparison` sets the lookalike's label against the protected label character by character (same, confusable, changed, added, swapped; the script of " +
    "each), `certificates` lists the certificates naming it (30 days), `timeline` what happened to it, `collection` whether its checks can be made.",
  access: view, request: { params: ls.LookalikeIdParam }, responses: { 200: json(ls.LookalikeDetailResponse) },
});
export const dismissLookalike = defineRoute({
  method: "post", path: "/api/ct-log/lookalikes/{lookalike_id}/dismiss", tags, summary: "Dismiss a lookalike for good (with a reason)",
  description:
    "A dismissed lookalike (e.g. the organization's own defensive registration) is no longer checked and never alerts again: neither its lifecycle events " +
    "nor the CT-Log events of new certificates naming it. 409 `conflict` when it is already dismissed.",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_lookalike.dismiss", targetType: "ct_lookalike", idParam: "lookalike_id" },
  request: { params: ls.LookalikeIdParam, body: body(ls.DismissRequest) }, responses: { 200: json(ls.LookalikeSchema) },
});
export const listProposals = defineRoute({
  method: "get", path: "/api/ct-log/proposals", tags, summary: "Names proposed by filter feeds",
  description:
    "A filter with `feed_dns_enabled` proposes each new matched name for DNS monitoring (`kind` dns; a wildcard name proposes its base); " +
    "with `feed_certs_enabled`, each new matched hostname for certificate deployment monitoring (`kind` certs; wildcards are skipped). " +
    "A name is proposed once per organization and kind. Newest first.",
  access: view, request: { query: s.ProposalsQuery }, responses: { 200: json(s.ProposalsResponse) },
});
export const acceptProposal = defineRoute({
  method: "post", path: "/api/ct-log/proposals/{proposal_id}/accept", tags, summary: "Accept a proposal",
  description:
    "A `certs` proposal becomes a certificate monitor (cert-watcher) of the hostname on port 443, with no IP targets yet (add them, or let an agent scan it); " +
    "when the organization already monitors that hostname on 443, that monitor is linked instead. The tier's certificate-monitor quota applies " +
    "(403 `quota_exceeded`, the proposal stays proposed). The response and the proposal carry `cert_monitor_id`. " +
    "A `dns` proposal becomes a watched record set of the DNS watcher: A and AAAA of the name in the watched domain that contains it, or a new watched domain " +
    "(quota `dns_domains`, 403 `quota_exceeded` when exhausted). Accepting a `dns` proposal also requires `dns-watcher:create_monitoring` (403 `forbidden` " +
    "otherwise, nothing changes); a domain it creates is recorded in the audit log as `dns_domain.create`, as if created through the DNS watcher. " +
    "The response carries `dns_domain_id`: the domain created, or the watched domain the name was added to.",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_proposal.accept", targetType: "ct_proposal", idParam: "proposal_id" },
  request: { params: s.ProposalIdParam }, responses: { 200: json(s.AcceptProposalResponse) },
});
export const dismissProposal = defineRoute({
  method: "post", path: "/api/ct-log/proposals/{proposal_id}/dismiss", tags, summary: "Dismiss a proposal (the name is not proposed again)",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_proposal.dismiss", targetType: "ct_proposal", idParam: "proposal_id" },
  request: { params: s.ProposalIdParam }, responses: { 200: json(s.Message) },
});
export const listLogs = defineRoute({
  method: "get", path: "/api/ct-log/logs", tags, summary: "The monitored CT logs and how far each one is read",
  description:
    "Every log of the log list in use that is monitored (qualified, usable or readonly), with its operator, protocol and list state, and the state of its ingestion: " +
    "`tree_size` (newest signed tree head seen), `verified_position` (entries below it are verified against a signed tree head and published), " +
    "`lag_entries` (`tree_size - verified_position`), `lag_seconds` (between the newest tree head and the last verified entry, as the log timestamped them; 0 when caught up), " +
    "`verified_tree_head_at`, `last_error` and `next_retry_at` (set while the log is backing off after a failure). `ingestion`: `not_started`, `up_to_date`, `catching_up` or `backing_off`. " +
    "`collection`: could the log be read (state, last verified read, failing since, the classified error, next attempt). " +
    "`log_list`: the list in use is a source too: `fetched` (signed, verified) or `bundled` (the shipped copy, because the signed list could not be had: `error` says why). " +
    "`summary`: how many monitored logs are ok, failing, pending, and whether the organization relies on them (has an enabled filter). " +
    "A log is read as fast as its politeness settings allow (CT_REQUESTS_PER_SECOND, CT_CONCURRENCY, CT_LOG_POLITENESS).",
  access: view, responses: { 200: json(s.CtLogsResponse) },
});
export const getIssuancePolicy = defineRoute({
  method: "get", path: "/api/ct-log/issuance-policy", tags, summary: "The organization's issuance policy: authorized issuers and declared keys",
  description:
    "Every certificate match is judged (`authorization`: `authorized`, `unexpected_issuer`, `unknown_key`, `caa_violation`, with the reason): a known key from an authorized issuer is routine. " +
    "Authorized issuers: a filter's own `authorized_issuers`, else these, else the CAs each name's CAA records permit. " +
    "Known keys: the keys (SHA-256 of the SubjectPublicKeyInfo) of certificates seen deployed on the organization's monitored endpoints, plus the entries of these rule lists (type spki).",
  access: view, responses: { 200: json(s.IssuancePolicyResponse) },
});
export const putIssuancePolicy = defineRoute({
  method: "put", path: "/api/ct-log/issuance-policy", tags, summary: "Replace the issuance policy",
  description:
    "`authorized_issuers`: CAs by name (`{\"name\": \"Let's Encrypt\"}`: the issuer's O or CN, a CA name or a CAA identifier such as `letsencrypt.org`) or by key " +
    "(`{\"spki_sha256\": \"...\"}`: the CA's key hash). `known_key_list_ids`: rule lists of type spki (400 for any other list, naming it). " +
    "Applies to matches judged from now on; earlier verdicts stay as judged.",
  access: { permission: "ct-log:update_monitoring" }, audit: { action: "ct_issuance_policy.update", targetType: "ct_issuance_policy" },
  request: { body: body(s.IssuancePolicyRequest) }, responses: { 200: json(s.IssuancePolicyResponse) },
});
export const ctLogList = defineRoute({
  method: "get", path: "/api/cert-watcher/ct-log-list", tags: ["Certificate deployment"], summary: "The CT log list in use (cached 24 hours)",
  description:
    "Fetched from CT_LOG_LIST_URL and verified against CT_LOG_LIST_PUBLIC_KEY (signature at the same URL with .json replaced by .sig); " +
    "when that fails the bundled copy is used (`source` bundled, `remote_error` says why). `monitored`: logs in the qualified, usable or readonly state, which the CT log module reads.",
  access: { permission: "cert-watcher:view_monitoring" }, responses: { 200: json(s.CtLogListResponse) },
});

export function registerCtLogRoutes(app: OpenAPIHono<AppEnv>) {
  const t = tenantOf;
  app.openapi(listFilters, async (c) => c.json(await filters.listFilters(t(c), c.req.valid("query")), 200));
  app.openapi(getFilter, async (c) => c.json(await filters.getFilter(t(c), c.req.valid("param").filter_id), 200));
  app.openapi(createFilter, async (c) => c.json(await filters.createFilter(t(c), c.req.valid("json"), c.get("now")), 201));
  app.openapi(updateFilter, async (c) => c.json(await filters.updateFilter(t(c), c.req.valid("param").filter_id, c.req.valid("json"), c.get("now")), 200));
  app.openapi(deleteFilter, async (c) => c.json(await filters.deleteFilter(t(c), c.req.valid("param").filter_id, c.get("now")), 200));
  app.openapi(listMatches, async (c) => c.json(await matches.listMatches(t(c), c.req.valid("query"), c.get("now")), 200));
  // Before {sha256}, which would otherwise see "check-new" as a (bad) fingerprint.
  app.openapi(checkNew, async (c) => c.json(await matches.checkNewMatches(t(c), c.req.valid("query").since, c.get("now")), 200));
  app.openapi(matchDetail, async (c) => c.json(await matches.matchDetail(t(c), c.req.valid("param").sha256, c.req.valid("query").log_name, c.get("now")), 200));
  app.openapi(typosquatFilters, async (c) => c.json(await filters.listTyposquatFilters(t(c), c.req.valid("query")), 200));
  app.openapi(typosquatMatches, async (c) => c.json(await typosquat.listTyposquatMatches(t(c), c.req.valid("query"), c.get("now")), 200));
  app.openapi(typosquatMatchDetail, async (c) => {
    const q = c.req.valid("query");
    return c.json(await typosquat.typosquatMatchDetail(t(c), c.req.valid("param").sha256, q.filter_id, q.candidate_domain, c.get("now")), 200);
  });
  app.openapi(listLookalikes, async (c) => c.json(await lookalikes.listLookalikes(t(c), c.req.valid("query")), 200));
  // Before {lookalike_id}, which would otherwise see "export" as a (bad) id.
  app.openapi(exportLookalikes, async (c) => {
    const file = await lookalikes.exportLookalikes(t(c), c.req.valid("query").format, c.get("now"));
    return c.body(file.body, 200, {
      "content-type": file.contentType,
      "content-disposition": `attachment; filename=${file.filename}`,
      "cache-control": "private, no-store",
    });
  });
  app.openapi(discoverLookalikes, async (c) =>
    c.json(await lookalikes.discoverLookalikes(t(c), discoverySettings(c.get("config")), c.req.valid("json").filter_id, c.get("now")), 200),
  );
  app.openapi(getLookalike, async (c) => c.json(await lookalikes.lookalikeDetail(t(c), c.req.valid("param").lookalike_id), 200));
  app.openapi(dismissLookalike, async (c) =>
    c.json(await lookalikes.dismissLookalike(t(c), c.req.valid("param").lookalike_id, c.req.valid("json").reason, principalOf(c).userId ?? null, c.get("now")), 200),
  );
  app.openapi(listProposals, async (c) => c.json(await proposals.listProposals(t(c), c.req.valid("query")), 200));
  app.openapi(acceptProposal, async (c) => {
    const principal = principalOf(c);
    const grants = { createDnsDomains: principal.permissions.has("dns-watcher:create_monitoring") };
    const accepted = await proposals.acceptProposal(t(c), c.req.valid("param").proposal_id, c.get("now"), grants);
    if (accepted.createdDnsDomainId !== null) {
      // The same entry as POST /api/dns-watcher/domains writes (the route layer adds ct_proposal.accept).
      await auditInsert(c.get("db"), {
        organizationId: principal.organizationId,
        userId: principal.userId,
        tokenId: principal.tokenId,
        action: "dns_domain.create",
        targetType: "dns_domain",
        targetId: String(accepted.createdDnsDomainId),
        clientIp: c.get("clientIp"),
        at: c.get("now"),
      }).run();
    }
    return c.json(accepted.body, 200);
  });
  app.openapi(dismissProposal, async (c) => c.json(await proposals.dismissProposal(t(c), c.req.valid("param").proposal_id, c.get("now")), 200));
  app.openapi(getIssuancePolicy, async (c) => c.json(await policy.getIssuancePolicy(t(c)), 200));
  app.openapi(putIssuancePolicy, async (c) => c.json(await policy.putIssuancePolicy(t(c), c.req.valid("json"), c.get("now")), 200));
  app.openapi(listLogs, async (c) => c.json(await logs.listLogs(t(c), c.get("config"), c.get("now")), 200));
  app.openapi(ctLogList, async (c) => c.json(describeLogList(await currentLogList(c.get("db"), c.get("config"), c.get("now"))), 200));
}
