/** Request and response schemas of /api/ct-log/lookalikes (the same zod objects validate and document). */
import { z } from "@hono/zod-openapi";
import { pageQuery, pathId, sortOrder } from "../../../platform/paging";
import { CollectionSchema } from "../../../platform/collection/schema";
import { CONFIDENCE, EVIDENCE } from "../typosquat/detect";
import { EXPORT_FORMATS, LOOKALIKE_SOURCES, LOOKALIKE_STATES, LOOKALIKE_TIMELINE_KINDS } from "./vocabulary";

export const LOOKALIKE_SORTS = ["first_seen_at", "domain", "state", "confidence", "last_checked_at"] as const;

export const LookalikesQuery = pageQuery({ defaultPageSize: 20 }).extend({
  state: z
    .enum(["open", ...LOOKALIKE_STATES])
    .optional()
    .openapi({ description: "Only lookalikes in this state; `open`: new, registered, resolving, mail_capable or serving (not gone, not dismissed)" }),
  confidence: z.enum(CONFIDENCE).optional().openapi({ description: "Only lookalikes of this confidence" }),
  source: z.enum(LOOKALIKE_SOURCES).optional().openapi({ description: "Only lookalikes found this way first: `ct` (a certificate), `permutation` (the discovery)" }),
  sort_by: z.enum(LOOKALIKE_SORTS).default("first_seen_at"),
  sort_order: sortOrder("desc"),
});

export const LookalikeIdParam = z.object({ lookalike_id: pathId("lookalike_id") });

const DnsSchema = z
  .object({
    registered: z.boolean().openapi({ description: "NS at the name (NXDOMAIN: false)" }),
    ns: z.array(z.string()),
    a: z.array(z.string()),
    aaaa: z.array(z.string()),
    mx: z.array(z.string()).openapi({ description: 'As "preference host"' }),
  })
  .openapi("LookalikeDns");

const lookalikeFields = {
  id: z.number().int(),
  domain: z.string().openapi({ description: "Registrable domain of the lookalike, A-labels", example: "xn--l1a5a3a.com" }),
  domain_unicode: z.string().openapi({ description: "The same as a browser shows it", example: "іьм.com" }),
  protected_domain: z.string().openapi({ description: "The protected registrable domain it imitates", example: "ibm.com" }),
  filter_id: z.number().int().nullable().openapi({ description: "The protecting filter (null once deleted)" }),
  source: z.enum(LOOKALIKE_SOURCES).openapi({ description: "How it was found first: `ct` (a certificate named it), `permutation` (the discovery found it registered)" }),
  state: z.enum(LOOKALIKE_STATES).openapi({ description: "new, registered, resolving, mail_capable (has MX), serving (accepts connections on the HTTPS port), gone (no longer registered), dismissed" }),
  state_changed_at: z.string(),
  confidence: z.enum(CONFIDENCE),
  evidence: z.array(z.enum(EVIDENCE)).openapi({ description: "Why it is a lookalike; brand_keyword, foreign_hosting and recently_registered corroborate (docs/lookalikes.md)" }),
  edit_distance: z.number().int().nullable(),
  first_seen_at: z.string(),
  certificate_seen_at: z.string().nullable().openapi({ description: "The latest certificate naming it; null when none was seen" }),
  dns: DnsSchema.nullable().openapi({ description: "DNS at the last successful check; null before the first" }),
  serving: z.boolean().nullable().openapi({ description: "Accepted a connection on the HTTPS port at the last check; null when not checked (serving_detail says why)" }),
  serving_detail: z.string().nullable(),
  registered_at: z.string().nullable().openapi({ description: "RDAP registration date; null when not known (rdap_error says why)" }),
  registrar: z.string().nullable(),
  rdap_checked_at: z.string().nullable(),
  rdap_error: z.string().nullable(),
  dismissed: z
    .object({ reason: z.string(), at: z.string(), by_user_id: z.number().int().nullable() })
    .nullable()
    .openapi({ description: "Who dismissed it, when and why; null unless dismissed" }),
  collection: CollectionSchema.openapi({ description: "The DNS and HTTPS checks: could they be made (paused when dismissed)" }),
};

export const LookalikeSchema = z.object(lookalikeFields).openapi("Lookalike");

export const LookalikesResponse = z
  .object({
    lookalikes: z.array(LookalikeSchema),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(LOOKALIKE_SORTS),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("LookalikeList");

const ComparedCharacterSchema = z.object({
  char: z.string(),
  code_point: z.string().openapi({ example: "U+0456" }),
  script: z.string().openapi({ example: "Cyrillic" }),
  status: z.enum(["same", "confusable", "changed", "added", "swapped"]),
  stands_for: z.string().openapi({ description: "The protected label's character it stands for (empty when added)" }),
});

export const LookalikeDetailResponse = z
  .object({
    ...lookalikeFields,
    comparison: z
      .object({
        protected_label: z.string(),
        lookalike_label: z.string(),
        characters: z.array(ComparedCharacterSchema),
        missing: z.array(z.string()).openapi({ description: "Characters of the protected label the lookalike leaves out" }),
        scripts: z.array(z.string()).openapi({ description: "Scripts of the lookalike label's characters" }),
      })
      .openapi({ description: "The lookalike label against the protected label, character by character" }),
    certificates: z
      .array(
        z.object({
          sha256: z.string(),
          certificate_name: z.string(),
          issuer: z.string(),
          not_before: z.string(),
          not_after: z.string(),
          detected_at: z.string(),
          log_count: z.number().int(),
        }),
      )
      .openapi({ description: "Certificates naming it (CT, the past 30 days), newest first" }),
    timeline: z
      .array(
        z.object({
          at: z.string(),
          kind: z.enum(LOOKALIKE_TIMELINE_KINDS),
          from_state: z.enum(LOOKALIKE_STATES).nullable(),
          to_state: z.enum(LOOKALIKE_STATES).nullable(),
          detail: z.string(),
        }),
      )
      .openapi({ description: "What happened to it, oldest first: detected, certificates, state changes, confidence raised, RDAP registration, dismissal" }),
  })
  .openapi("LookalikeDetail");

export const DismissRequest = z
  .object({
    reason: z.string().trim().min(1).max(500).openapi({ description: "Why (e.g. our own defensive registration)", example: "Our defensive registration" }),
  })
  .openapi("LookalikeDismissRequest");

export const DiscoverRequest = z
  .object({ filter_id: z.number().int().positive().optional().openapi({ description: "One protected filter; all of the organization's when absent" }) })
  .openapi("LookalikeDiscoverRequest");

export const DiscoverResponse = z
  .object({
    permutations: z.number().int().openapi({ description: "Permutations of the protected domain(s) the policy covers" }),
    queries: z.number().int().openapi({ description: "DNS queries this request made (the most likely permutations first)" }),
    registered: z.number().int().openapi({ description: "Permutations found registered" }),
    new_lookalikes: z.array(z.string()).openapi({ description: "Registered permutations that were not lookalikes yet (checked within a minute)" }),
    failed: z.number().int().openapi({ description: "Queries without a usable answer" }),
    error: z.object({ class: z.string(), message: z.string() }).nullable().openapi({ description: "The first failure, in words" }),
    budget: z.object({ per_day: z.number().int(), spent_today: z.number().int(), remaining_today: z.number().int() }),
  })
  .openapi("LookalikeDiscovery");

export const ExportQuery = z.object({
  format: z.enum(EXPORT_FORMATS).default("csv").openapi({ description: "csv, json, txt (one domain a line) or rpz (a DNS response-policy zone)" }),
});
