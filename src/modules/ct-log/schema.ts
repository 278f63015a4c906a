/** Request/response schemas of the CT log endpoints (docs/modules/ct-log.md). */
import { z } from "@hono/zod-openapi";
import { orNull } from "../../platform/openapi-document";
import { CollectionErrorSchema, CollectionSchema } from "../../platform/collection/schema";
import { pageQuery, pathId, sortOrder } from "../../platform/paging";
import { safeMultilineText } from "../../platform/text";
import { normalizeSpkiHash } from "../lists/contract";
import { AUTHORIZATION_VERDICTS } from "./authorization";
import { CaaEvaluationSchema, CtEventCertSchema } from "./events";
import { CONFIDENCE, EVIDENCE } from "./typosquat/detect";

export const FilterIdParam = z.object({ filter_id: pathId("filter_id") });
export const ProposalIdParam = z.object({ proposal_id: pathId("proposal_id") });
export const Sha256Param = z.object({
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex digits")
    .openapi({ param: { name: "sha256", in: "path" }, example: "c853d5121104135a85f8a66a9d16d62234d541473ed78424032622564baddddf" }),
});

/** One authorized issuer: a CA by name, or by its key. */
export const AuthorizedIssuerSchema = z
  .union([
    z
      .object({
        name: z.string().trim().min(1).max(200).openapi({
          description: "The issuer's organization (O) or common name (CN) as in its certificates, a CA name or a CAA identifier (\"letsencrypt.org\"); compared case-insensitively",
          example: "Let's Encrypt",
        }),
      })
      .strict(),
    z
      .object({
        spki_sha256: z
          .string()
          .max(100)
          .transform((v, ctx) => {
            const r = normalizeSpkiHash(v);
            if (r.ok) return r.value;
            ctx.addIssue({ code: "custom", message: r.message });
            return z.NEVER;
          })
          .openapi({ description: "SHA-256 of the issuing CA's SubjectPublicKeyInfo: 64 hex digits, or the base64 of a public-key pin", example: "a".repeat(64) }),
      })
      .strict(),
  ])
  .openapi("CtAuthorizedIssuer");
const authorizedIssuers = z.array(AuthorizedIssuerSchema).max(50);
/** An authorized issuer as the API shows it (stored normalized: spki_sha256 in lowercase hex). */
export const AuthorizedIssuerView = z
  .union([z.object({ name: z.string() }), z.object({ spki_sha256: z.string() })])
  .openapi("CtAuthorizedIssuerView");

export const CtFilter = z
  .object({
    id: z.number().int(),
    pattern: z.string(),
    match_type: z.enum(["wide", "exact"]),
    enabled: z.boolean(),
    description: z.string(),
    feed_dns_enabled: z.boolean(),
    feed_certs_enabled: z.boolean(),
    typosquat_enabled: z.boolean(),
    typosquat_eligible: z.boolean(),
    typosquat_ineligible_reason: z.string(),
    authorized_issuers: z.array(AuthorizedIssuerView).nullable().openapi({ description: "Issuers authorized for this filter's names; null: the organization's issuance policy applies" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("CtFilter");

export const FILTER_SORTS = ["pattern", "match_type", "enabled", "description", "created_at", "updated_at"] as const;
export const FiltersQuery = pageQuery({ defaultPageSize: 10 }).extend({
  sort_by: z.enum(FILTER_SORTS).default("pattern"),
  sort_order: sortOrder("asc"),
});
export const FiltersResponse = z
  .object({
    filters: z.array(CtFilter),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(FILTER_SORTS),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("CtFilterList");

const filterFields = {
  pattern: z.string().min(1).max(253).openapi({
    example: "example.com",
    description: "A domain (`example.com`), a wildcard (`*.example.com`) or a leading-dot pattern (`.example.com`); stored lowercase as A-labels",
  }),
  match_type: z.enum(["wide", "exact"]),
  enabled: z.boolean(),
  description: safeMultilineText(1000),
  feed_dns_enabled: z.boolean(),
  feed_certs_enabled: z.boolean(),
  typosquat_enabled: z.boolean(),
  authorized_issuers: authorizedIssuers.nullable().openapi({
    description: "Issuers authorized for this filter's names, overriding the organization's issuance policy (GET /api/ct-log/issuance-policy); null or absent: the policy applies",
  }),
};
export const CreateFilterRequest = z
  .object({
    pattern: filterFields.pattern,
    match_type: filterFields.match_type,
    enabled: filterFields.enabled.default(true),
    description: filterFields.description.default(""),
    feed_dns_enabled: filterFields.feed_dns_enabled.default(false),
    feed_certs_enabled: filterFields.feed_certs_enabled.default(false),
    typosquat_enabled: filterFields.typosquat_enabled.default(false),
    authorized_issuers: filterFields.authorized_issuers.default(null),
  })
  .openapi("CreateCtFilter");
export const UpdateFilterRequest = z
  .object({
    pattern: filterFields.pattern.optional(),
    match_type: filterFields.match_type.optional(),
    enabled: filterFields.enabled.optional(),
    description: filterFields.description.optional(),
    feed_dns_enabled: filterFields.feed_dns_enabled.optional(),
    feed_certs_enabled: filterFields.feed_certs_enabled.optional(),
    typosquat_enabled: filterFields.typosquat_enabled.optional(),
    authorized_issuers: filterFields.authorized_issuers.optional(),
  })
  .openapi("UpdateCtFilter");
export const CreateFilterResponse = z.object({ id: z.number().int(), message: z.string(), quota_remaining: z.number().int() }).openapi("CreatedCtFilter");
export const Message = z.object({ message: z.string() });

export const TYPOSQUAT_FILTER_SORTS = ["pattern", "match_type", "typosquat_enabled"] as const;
export const TyposquatFiltersQuery = pageQuery({ defaultPageSize: 10 }).extend({
  sort_by: z.enum(TYPOSQUAT_FILTER_SORTS).default("pattern"),
  sort_order: sortOrder("asc"),
});
export const TyposquatFilter = z
  .object({
    id: z.number().int(),
    pattern: z.string(),
    match_type: z.enum(["wide", "exact"]),
    typosquat_enabled: z.boolean(),
    typosquat_eligible: z.boolean(),
    typosquat_ineligible_reason: z.string(),
  })
  .openapi("CtTyposquatFilter");
export const TyposquatFiltersResponse = z
  .object({
    filters: z.array(TyposquatFilter),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(TYPOSQUAT_FILTER_SORTS),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("CtTyposquatFilterList");

// ---- matches ------------------------------------------------------------------

// The certificate and CAA fields are those of the CT-Log event, declared once (events.ts).
export const CtCertificate = CtEventCertSchema.openapi("CtCertificate", { description: "The cert.* fields of the CT-Log event, for the entry the detail is about" });
export const CaaResult = CaaEvaluationSchema.openapi("CtCaaResult", { description: "The caa.* fields of the CT-Log event: the CAA check made when the entry was read" });

export const MATCH_SORTS = ["certificate_domain", "log_count", "matched_at"] as const;
export const MatchesQuery = pageQuery({ defaultPageSize: 20 }).extend({
  sort_by: z.enum(MATCH_SORTS).default("matched_at"),
  sort_order: sortOrder("desc"),
});
export const AuthorizationSchema = z
  .object({
    verdict: z.enum(AUTHORIZATION_VERDICTS).openapi({
      description: "authorized: a known key from an authorized issuer (routine); unexpected_issuer; unknown_key: a key never seen deployed nor declared; caa_violation",
    }),
    reason: z.string().openapi({ description: "Why, in words" }),
  })
  .openapi("CtAuthorization");
const pendingAuthorization = orNull(AuthorizationSchema).openapi({
  description: "The authorization verdict; null until the match's event is processed (seconds after it becomes visible)",
});
export const MatchedFilter = z.object({ id: z.number().int(), pattern: z.string() }).openapi("CtMatchedFilter");

export const CtMatchRow = z
  .object({
    id: z.number().int(),
    sha256: z.string().openapi({ description: "Fingerprint of the first entry seen (precertificate or final certificate)" }),
    certificate_domain: z.string().openapi({ description: "First certificate name that matched a filter" }),
    matched_names: z.array(z.string()),
    filter_ids: z.array(z.number().int()),
    filters: z.array(MatchedFilter).openapi({ description: "The filters that matched, with their patterns" }),
    authorization: pendingAuthorization.openapi({ description: "The worst verdict over the filters that matched; null until the match's event is processed" }),
    subject: z.string(),
    issuer: z.string(),
    not_before: z.string(),
    not_after: z.string(),
    is_precert: z.boolean(),
    has_precert: z.boolean(),
    has_final: z.boolean(),
    log_count: z.number().int().openapi({ description: "Distinct CT logs the certificate was seen in" }),
    caa_violation: z.boolean().openapi({ description: "caa.has_records and not caa.authorized at observation" }),
    matched_at: z.string().openapi({ description: "First observation" }),
    last_seen_at: z.string(),
  })
  .openapi("CtMatch");
export const MatchesResponse = z
  .object({
    matches: z.array(CtMatchRow),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(MATCH_SORTS),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("CtMatchList");
export const MatchDetailQuery = z.object({ log_name: z.string().max(300).optional().openapi({ description: "Narrow to one CT log (its description in the log list)" }) });
export const CtOccurrence = z
  .object({ log_name: z.string(), log_id: z.string(), log_index: z.number().int(), sha256: z.string(), is_precert: z.boolean(), observed_at: z.string() })
  .openapi("CtOccurrence");
export const MatchDetailResponse = z
  .object({
    id: z.number().int(),
    sha256: z.string(),
    certificate_domain: z.string(),
    matched_names: z.array(z.string()),
    filters: z.array(
      z.object({ filter_id: z.number().int(), pattern: z.string(), match_type: z.enum(["wide", "exact"]), matched_names: z.array(z.string()), authorization: pendingAuthorization }),
    ),
    authorization: pendingAuthorization.openapi({ description: "The worst verdict over the filters; null until the match's event is processed" }),
    cert: CtCertificate,
    caa: CaaResult,
    log_count: z.number().int(),
    occurrences: z.array(CtOccurrence),
    matched_at: z.string(),
    last_seen_at: z.string(),
  })
  .openapi("CtMatchDetail");
export const CheckNewQuery = z.object({
  since: z
    .string()
    .datetime({ offset: true })
    .openapi({ example: "2026-01-01T00:00:00Z", description: "Count matches that became visible strictly after this time: pass the previous answer's `as_of`" }),
});
export const CheckNewResponse = z
  .object({
    has_new: z.boolean(),
    count: z.number().int().openapi({ description: "Matches in the 30-day window that became visible strictly after `since`" }),
    routine: z.number().int().openapi({
      description: "Of `count`, the routine issuance: judged `authorized` for every filter that matched (a known key from an authorized issuer, typically a renewal)",
    }),
    unexpected: z.number().int().openapi({ description: "Of `count`, the issuance that stands out: a worst verdict other than `authorized` (the sum of `unexpected_by_verdict`)" }),
    unexpected_by_verdict: z
      .object({ unknown_key: z.number().int(), unexpected_issuer: z.number().int(), caa_violation: z.number().int() })
      .openapi({ description: "`unexpected` by the match's worst verdict" }),
    not_judged: z.number().int().openapi({
      description: "Of `count`, the matches whose verdict is not known yet (their event is processed seconds after they become visible): neither routine nor unexpected so far",
    }),
    latest_timestamp: z
      .string()
      .nullable()
      .openapi({ description: "When the newest match of the 30-day window became visible (its `matched_at`); null when there is none. Informational: poll with `as_of`" }),
    as_of: z.string().openapi({
      description:
        "The server's visibility clock when this answer was computed: every match counted has `matched_at` <= `as_of`, every match that becomes visible later has `matched_at` > `as_of`. Pass it as the next `since`",
      example: "2026-01-01T00:00:05.123Z",
    }),
  })
  .openapi("CtCheckNew");

// ---- issuance policy ------------------------------------------------------------------

export const IssuancePolicyRequest = z
  .object({
    authorized_issuers: z.array(AuthorizedIssuerSchema).max(100).openapi({
      description: "The CAs authorized to issue for the organization's names; empty: the CAs each name's CAA records permit",
    }),
    known_key_list_ids: z.array(z.number().int().positive()).max(50).openapi({
      description: "Rule lists of type spki whose keys count as known, beside the keys seen deployed on the organization's endpoints",
    }),
  })
  .openapi("CtIssuancePolicyUpdate");
export const IssuancePolicyResponse = z
  .object({
    authorized_issuers: z.array(AuthorizedIssuerView),
    known_key_list_ids: z.array(z.number().int()),
    known_key_lists: z.array(
      z.object({
        id: z.number().int(),
        name: z.string().nullable().openapi({ description: "null: the list was deleted since (its keys no longer count)" }),
        entry_count: z.number().int(),
      }),
    ),
    default: z.string().openapi({ description: "What applies where nothing is declared, in words" }),
    updated_at: z.string().nullable().openapi({ description: "null while nothing was ever declared" }),
  })
  .openapi("CtIssuancePolicy");

// ---- typosquatting matches -------------------------------------------------------------

export const TYPOSQUAT_MATCH_SORTS = ["candidate_domain", "filter_pattern", "evidence", "log_count", "detected_at"] as const;
export const TyposquatMatchesQuery = pageQuery({ defaultPageSize: 20 }).extend({
  sort_by: z.enum(TYPOSQUAT_MATCH_SORTS).default("detected_at"),
  sort_order: sortOrder("desc"),
});
export const Evidence = z
  .array(z.enum(EVIDENCE))
  .openapi({
    description: `Evidence categories, in this order: ${EVIDENCE.join(", ")}. The last three only corroborate (docs/lookalikes.md)`,
    example: ["confusable"],
  });
export const ConfidenceSchema = z.enum(CONFIDENCE).openapi({
  description: '"low": an edit of a protected label shorter than 5 characters with nothing corroborating it ("ibn.com" for ibm.com); "high" otherwise',
  example: "high",
});
const typosquatFields = {
  id: z.number().int(),
  sha256: z.string().openapi({ description: "Fingerprint of the first entry seen (precertificate or final certificate)" }),
  filter_id: z.number().int().openapi({ description: "The protected filter" }),
  filter_pattern: z.string(),
  candidate_domain: z.string().openapi({ description: "Registrable domain of the lookalike name (A-labels)", example: "paypa1.com" }),
  certificate_name: z.string().openapi({ description: "The certificate name that is a lookalike, as observed", example: "www.paypa1.com" }),
  evidence: Evidence,
  edit_distance: z.number().int().nullable().openapi({ description: "Damerau–Levenshtein distance of the labels' skeletons when an edit category applies" }),
  confidence: ConfidenceSchema,
  log_count: z.number().int().openapi({ description: "Distinct CT logs the certificate was seen in" }),
  detected_at: z.string().openapi({ description: "First observation" }),
  last_seen_at: z.string(),
};
export const TyposquatMatchRow = z
  .object({ ...typosquatFields, subject: z.string(), issuer: z.string(), not_before: z.string(), not_after: z.string() })
  .openapi("CtTyposquatMatch");
export const TyposquatMatchesResponse = z
  .object({
    matches: z.array(TyposquatMatchRow),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(TYPOSQUAT_MATCH_SORTS),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("CtTyposquatMatchList");
export const TyposquatDetailQuery = z.object({
  filter_id: z.coerce.number().int().positive().openapi({ description: "The protected filter", example: 1 }),
  candidate_domain: z.string().min(1).max(253).openapi({ description: "Registrable domain of the lookalike (A-labels)", example: "paypa1.com" }),
});
export const TyposquatMatchDetailResponse = z
  .object({ ...typosquatFields, cert: CtCertificate, occurrences: z.array(CtOccurrence) })
  .openapi("CtTyposquatMatchDetail");

// ---- proposals ------------------------------------------------------------------

export const ProposalsQuery = pageQuery({ defaultPageSize: 20 }).extend({
  status: z.enum(["proposed", "accepted", "dismissed"]).optional(),
  kind: z.enum(["dns", "certs"]).optional(),
});
export const CtProposal = z
  .object({
    id: z.number().int(),
    kind: z.enum(["dns", "certs"]).openapi({ description: "`dns`: proposed for DNS monitoring; `certs`: for certificate deployment monitoring" }),
    hostname: z.string(),
    filter_id: z.number().int(),
    source_sha256: z.string(),
    status: z.enum(["proposed", "accepted", "dismissed"]),
    cert_monitor_id: z.number().int().nullable().openapi({ description: "An accepted `certs` proposal: the certificate monitor that watches the hostname" }),
    created_at: z.string(),
    decided_at: z.string().nullable(),
  })
  .openapi("CtProposal");
export const AcceptProposalResponse = z
  .object({
    message: z.string(),
    cert_monitor_id: z.number().int().optional().openapi({ description: "`certs` proposals: the certificate monitor created or linked" }),
    dns_domain_id: z.number().int().optional().openapi({ description: "`dns` proposals: the DNS watcher domain created, or the watched domain the name was added to" }),
  })
  .openapi("CtProposalAccepted");
export const ProposalsResponse = z
  .object({ proposals: z.array(CtProposal), total: z.number().int(), page: z.number().int(), page_size: z.number().int() })
  .openapi("CtProposalList");

// ---- monitored logs ------------------------------------------------------------------

export const CtLogListSource = z
  .object({
    source: z.enum(["fetched", "bundled"]).openapi({
      description:
        "fetched: the signed list from CT_LOG_LIST_URL, verified; bundled: the copy shipped with the service, used because the signed list could not be fetched or verified (see error)",
    }),
    url: z.string().openapi({ description: "CT_LOG_LIST_URL" }),
    fetched_at: z.string().openapi({ description: "When the list in use was fetched (or, bundled, when the fetch was last tried)" }),
    version: z.string(),
    log_list_timestamp: z.string(),
    error: orNull(CollectionErrorSchema).openapi({
      description: "Why the last fetch of the signed list failed (also when a list fetched before is still in use), null when it did not",
    }),
  })
  .openapi("CtLogListSource");

export const CtLogsResponse = z
  .object({
    log_list: CtLogListSource,
    summary: z
      .object({
        monitored: z.number().int(),
        ok: z.number().int(),
        failing: z.number().int(),
        pending: z.number().int(),
        relied_upon: z.boolean().openapi({ description: "The organization has an enabled CT filter: every monitored log may hold a certificate for it" }),
        last_success_at: z.string().nullable().openapi({ description: "The newest verified read of any monitored log" }),
      })
      .openapi("CtLogsSummary"),
    logs: z.array(
      z.object({
        log_id: z.string().openapi({ description: "base64 LogID (SHA-256 of the log's key)" }),
        description: z.string(),
        operator: z.string(),
        protocol: z.enum(["rfc6962", "static-ct"]),
        url: z.string().openapi({ description: "Where entries are read (`url` of RFC 6962 logs, `monitoring_url` of static-ct-api logs)" }),
        state: z.string().openapi({ description: "State in the log list: qualified, usable or readonly" }),
        ingestion: z.enum(["not_started", "up_to_date", "catching_up", "backing_off"]),
        tree_size: z.number().int().nullable(),
        verified_position: z.number().int().nullable(),
        lag_entries: z.number().int().nullable(),
        lag_seconds: z.number().int().nullable(),
        tree_head_at: z.string().nullable().openapi({ description: "Timestamp of the newest signed tree head seen" }),
        verified_tree_head_at: z.string().nullable().openapi({ description: "Timestamp of the tree head the verified position was proven against" }),
        last_entry_at: z.string().nullable().openapi({ description: "Timestamp of the last verified entry" }),
        last_run_at: z.string().nullable(),
        last_error: z.string().nullable().openapi({ description: "The last run's failure in words naming the log and the host or step (collection.error.message); null after a success" }),
        consecutive_failures: z.number().int(),
        next_retry_at: z.string().nullable(),
        entries_processed: z.number().int(),
        matches_found: z.number().int(),
        collection: CollectionSchema.openapi({
          description:
            "An attempt is a run of the log's cursor that reads; a success is a verified read (a batch verified against a signed tree head, or a run verified up to the head). " +
            "Failures are classified: a name that does not resolve dns_resolution, refused/reset connect, no answer timeout, HTTP 5xx http_status, 429 or a long Retry-After rate_limited, " +
            "a tile, entry, tree head or proof that does not parse or verify protocol. next_attempt_at: the end of the backoff, or the next scheduled run.",
        }),
      }),
    ),
  })
  .openapi("CtLogs");

// ---- log list ---------------------------------------------------------------------

export const CtLogListResponse = z
  .object({
    source: z.enum(["remote", "bundled"]),
    fetched_at: z.string(),
    version: z.string(),
    log_list_timestamp: z.string(),
    remote_error: z.string(),
    logs: z.array(
      z.object({
        description: z.string(),
        operator: z.string(),
        log_id: z.string(),
        protocol: z.enum(["rfc6962", "static-ct"]),
        url: z.string(),
        state: z.string(),
        state_timestamp: z.string().nullable(),
        mmd: z.number(),
        monitored: z.boolean(),
        final_tree_size: z.number().int().nullable(),
        temporal_interval: z.object({ start_inclusive: z.string(), end_exclusive: z.string() }).nullable(),
      }),
    ),
  })
  .openapi("CtLogList");
