/**
 * CT log module (docs/modules/ct-log.md): filters, matches and
 * their per-log occurrences, filter feed proposals, and the cached log list.
 *
 * Ingestion state (position, collapsed Merkle tree, last verified tree head) is
 * NOT here: each log's CtLogCursor Durable Object owns it. What the cursor writes
 * here is idempotent, keyed by (organization, log, index), so replaying a batch
 * after a crash inserts nothing twice (see src/modules/ct-log/ingest.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

import { id, organizationId, createdAt, updatedAt } from "./columns";
import { organizations } from "./organizations";
import type { Authorization, AuthorizedIssuer } from "./ct-authorization";
import type { CaaEvaluation, CtEventCert } from "./ct-event-cert";
import type { LogList } from "./ct-log-list";


export const ctFilters = sqliteTable(
  "ct_filters",
  {
    id: id(),
    organizationId: organizationId(),
    /** Canonical pattern (parseFilterPattern): lowercase A-labels, "*." / "." prefix kept. */
    pattern: text("pattern").notNull(),
    matchType: text("match_type", { enum: ["wide", "exact"] }).notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    description: text("description").notNull().default(""),
    feedDnsEnabled: integer("feed_dns_enabled", { mode: "boolean" }).notNull().default(false),
    feedCertsEnabled: integer("feed_certs_enabled", { mode: "boolean" }).notNull().default(false),
    typosquatEnabled: integer("typosquat_enabled", { mode: "boolean" }).notNull().default(false),
    /**
     * Issuers authorized for this filter's names (ct-log/authorization.ts); null: the
     * organization's issuance policy applies.
     */
    authorizedIssuers: text("authorized_issuers", { mode: "json" }).$type<AuthorizedIssuer[]>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Soft delete: the row stays (matches keep their filter id) but never matches again. */
    deletedAt: text("deleted_at"),
  },
  (t) => [
    uniqueIndex("ct_filters_org_pattern_type_live_unique")
      .on(t.organizationId, t.pattern, t.matchType)
      .where(sql`deleted_at IS NULL`),
    index("ct_filters_org_idx").on(t.organizationId),
  ],
);

/**
 * One row (id 1): bumped in the same D1 batch as every filter change. Each
 * CtLogCursor compares it before a batch and rebuilds its FilterIndex when it
 * moved, so a change (incl. a soft delete) is effective for the next batch.
 */
export const ctFilterGeneration = sqliteTable("ct_filter_generation", {
  id: integer("id").primaryKey(),
  generation: integer("generation").notNull().default(0),
});

/** The last log list fetched (verified) or the bundled copy; refreshed every 24 h. */
export const ctLogListCache = sqliteTable("ct_log_list_cache", {
  id: integer("id").primaryKey(),
  /** CT_LOG_LIST_URL it was fetched from: a changed URL forces a refresh. */
  url: text("url").notNull(),
  source: text("source", { enum: ["remote", "bundled"] }).notNull(),
  /** Why the last fetch of the signed list failed, classified (loglist-service.ts); null when it did not. */
  remoteError: text("remote_error"),
  remoteErrorClass: text("remote_error_class"),
  /** The parsed LogList as JSON. */
  list: text("list", { mode: "json" }).$type<LogList>().notNull(),
  fetchedAt: text("fetched_at").notNull(),
});

/** A certificate (final and precertificate as one, by dedup key) that matched an organization's filters. */
export const ctMatches = sqliteTable(
  "ct_matches",
  {
    id: id(),
    organizationId: organizationId(),
    /** certificateDedupKey: SHA-256 of the TBS without SCT list / poison. */
    dedupKey: text("dedup_key").notNull(),
    /** Fingerprint of the first entry seen (precert or final). */
    sha256: text("sha256").notNull(),
    /** First matched name (sort key `certificate_domain`). */
    certificateDomain: text("certificate_domain").notNull(),
    /** Every certificate name that matched one of the organization's filters. */
    matchedNames: text("matched_names", { mode: "json" }).$type<string[]>().notNull(),
    /** When the match became visible: the publication clock of the transaction that wrote it (store.ts). */
    firstMatchedAt: text("first_matched_at").notNull(),
    lastMatchedAt: text("last_matched_at").notNull(),
  },
  (t) => [
    uniqueIndex("ct_matches_org_dedup_unique").on(t.organizationId, t.dedupKey),
    index("ct_matches_org_last_idx").on(t.organizationId, t.lastMatchedAt),
    index("ct_matches_org_first_idx").on(t.organizationId, t.firstMatchedAt),
    index("ct_matches_last_idx").on(t.lastMatchedAt),
  ],
);

/** Where and how one CT log entry of a match was seen (both kinds of occurrence). */
function logEntryColumns() {
  return {
    /** base64 LogID. */
    logId: text("log_id").notNull(),
    /** The log's description in the log list (cert.log_name). */
    logName: text("log_name").notNull(),
    logIndex: integer("log_index").notNull(),
    /** Fingerprint of this entry's certificate (precert or final). */
    sha256: text("sha256").notNull(),
    isPrecert: integer("is_precert", { mode: "boolean" }).notNull(),
    observedAt: text("observed_at").notNull(),
  };
}

/** One log entry of a match: (log, index) is the idempotency key of ingestion. */
export const ctMatchOccurrences = sqliteTable(
  "ct_match_occurrences",
  {
    id: id(),
    organizationId: organizationId(),
    matchId: integer("match_id")
      .notNull()
      .references(() => ctMatches.id, { onDelete: "cascade" }),
    ...logEntryColumns(),
    /** The cert.* fields of the CT event for this entry. */
    cert: text("cert", { mode: "json" }).$type<CtEventCert>().notNull(),
    /** The caa.* fields evaluated when this entry was observed. */
    caa: text("caa", { mode: "json" }).$type<CaaEvaluation>().notNull(),
  },
  (t) => [
    uniqueIndex("ct_occurrences_org_log_index_unique").on(t.organizationId, t.logId, t.logIndex),
    index("ct_occurrences_match_idx").on(t.matchId),
    index("ct_occurrences_org_sha_idx").on(t.organizationId, t.sha256),
    // The weekly audit's "recent CAA violations" (src/modules/reports/facts/ct.ts): only the
    // rare violating occurrences are indexed; the audit's query repeats this condition.
    index("ct_occurrences_caa_violation_idx")
      .on(t.organizationId, t.observedAt)
      .where(sql`json_extract(caa, '$.has_records') = 1 AND json_extract(caa, '$.authorized') = 0`),
  ],
);

/** Which filters a match matched; `eventEmittedAt` makes the alert event at-least-once. */
export const ctMatchFilters = sqliteTable(
  "ct_match_filters",
  {
    matchId: integer("match_id")
      .notNull()
      .references(() => ctMatches.id, { onDelete: "cascade" }),
    filterId: integer("filter_id").notNull(),
    organizationId: integer("organization_id").notNull(),
    matchedNames: text("matched_names", { mode: "json" }).$type<string[]>().notNull(),
    /** The occurrence that first matched (its cert/caa fields feed the event). */
    occurrenceId: integer("occurrence_id").notNull(),
    createdAt: text("created_at").notNull(),
    eventEmittedAt: text("event_emitted_at"),
    /** The authorization verdict of the certificate for this filter, set with event_emitted_at (fanout.ts); null until then. */
    authorization: text("authorization", { mode: "json" }).$type<Authorization>(),
  },
  (t) => [
    primaryKey({ columns: [t.matchId, t.filterId] }),
    index("ct_match_filters_filter_idx").on(t.filterId),
    // The event fan-out finds the pairs first seen in a log range through their occurrence.
    index("ct_match_filters_occurrence_idx").on(t.occurrenceId),
  ],
);

/**
 * An organization's issuance policy (GET/PUT /api/ct-log/issuance-policy): the CAs
 * authorized to issue for its names, and the rule lists (type spki) of keys it declares
 * its own beside those seen deployed. No row: nothing declared (CAA decides the issuer).
 */
export const ctIssuancePolicies = sqliteTable("ct_issuance_policies", {
  organizationId: integer("organization_id")
    .primaryKey()
    .references(() => organizations.id),
  authorizedIssuers: text("authorized_issuers", { mode: "json" }).$type<AuthorizedIssuer[]>().notNull(),
  knownKeyListIds: text("known_key_list_ids", { mode: "json" }).$type<number[]>().notNull(),
  updatedAt: updatedAt(),
});

/** Filter feeds: names proposed for DNS (`dns`) or certificate deployment (`certs`) monitoring. */
export const ctProposals = sqliteTable(
  "ct_proposals",
  {
    id: id(),
    organizationId: organizationId(),
    kind: text("kind", { enum: ["dns", "certs"] }).notNull(),
    hostname: text("hostname").notNull(),
    filterId: integer("filter_id").notNull(),
    /** The certificate (dedup key) the name was seen in. */
    sourceSha256: text("source_sha256").notNull(),
    status: text("status", { enum: ["proposed", "accepted", "dismissed"] }).notNull().default("proposed"),
    /** An accepted `certs` proposal: the certificate monitor created (or found) for it. */
    certMonitorId: integer("cert_monitor_id"),
    createdAt: text("created_at").notNull(),
    decidedAt: text("decided_at"),
  },
  (t) => [uniqueIndex("ct_proposals_org_kind_host_unique").on(t.organizationId, t.kind, t.hostname)],
);

/**
 * A typosquatting match: one candidate lookalike domain of one protected filter,
 * seen in one certificate (final and precertificate as one, by dedup key). The
 * certificate fields are those of the first entry seen.
 */
export const ctTyposquatMatches = sqliteTable(
  "ct_typosquat_matches",
  {
    id: id(),
    organizationId: organizationId(),
    filterId: integer("filter_id").notNull(),
    /** Registrable domain of the lookalike name (A-labels). */
    candidateDomain: text("candidate_domain").notNull(),
    dedupKey: text("dedup_key").notNull(),
    /** Fingerprint of the first entry seen. */
    sha256: text("sha256").notNull(),
    /** The certificate name that was a lookalike (as observed). */
    certificateName: text("certificate_name").notNull(),
    /** Evidence categories (typosquat/detect.ts EVIDENCE ids). */
    evidence: text("evidence", { mode: "json" }).$type<string[]>().notNull(),
    /** Joined evidence ids: the sort key `evidence`. */
    evidenceKey: text("evidence_key").notNull(),
    editDistance: integer("edit_distance"),
    /** "low" (an edit of a short protected label, uncorroborated) or "high" (typosquat/detect.ts confidenceOf). */
    confidence: text("confidence").$type<"low" | "high">().notNull().default("high"),
    /** The cert.* fields of the first entry seen. */
    cert: text("cert", { mode: "json" }).$type<CtEventCert>().notNull(),
    detectedAt: text("detected_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    /** Set once the organization's alert rules evaluated its CT-Log event (kind typosquat). */
    eventEmittedAt: text("event_emitted_at"),
  },
  (t) => [
    uniqueIndex("ct_typosquat_unique").on(t.organizationId, t.filterId, t.candidateDomain, t.dedupKey),
    index("ct_typosquat_org_last_idx").on(t.organizationId, t.lastSeenAt),
    index("ct_typosquat_org_detected_idx").on(t.organizationId, t.detectedAt),
    index("ct_typosquat_last_idx").on(t.lastSeenAt),
  ],
);

/** One CT log entry of a typosquatting match; (match, log, index) makes ingestion idempotent. */
export const ctTyposquatOccurrences = sqliteTable(
  "ct_typosquat_occurrences",
  {
    id: id(),
    organizationId: organizationId(),
    matchId: integer("match_id")
      .notNull()
      .references(() => ctTyposquatMatches.id, { onDelete: "cascade" }),
    ...logEntryColumns(),
  },
  (t) => [
    uniqueIndex("ct_typosquat_occ_unique").on(t.matchId, t.logId, t.logIndex),
    index("ct_typosquat_occ_org_sha_idx").on(t.organizationId, t.sha256),
    index("ct_typosquat_occ_org_log_idx").on(t.organizationId, t.logId, t.logIndex),
  ],
);

/**
 * One row (id 1): the clock of CT publications. Every transaction that publishes
 * matches advances it first (to the database's time, and at least 1 ms past its last
 * value) and stamps its rows with it, so visibility times increase with commit order
 * (src/modules/ct-log/store.ts).
 */
export const ctPublicationClock = sqliteTable("ct_publication_clock", {
  id: integer("id").primaryKey(),
  atMs: integer("at_ms").notNull(),
  /** at_ms as ISO 8601 with milliseconds. */
  at: text("at").notNull(),
});

/**
 * Each monitored log's ingestion state, as its CtLogCursor last recorded it (written
 * at every commit, so GET /api/ct-log/logs reads D1 instead of calling every cursor).
 * The cursor's own storage stays the truth; this is its published view.
 */
export const ctLogStates = sqliteTable("ct_log_states", {
  /** base64 LogID. */
  logId: text("log_id").primaryKey(),
  logName: text("log_name").notNull(),
  /** Entries below this index are verified and published. */
  verifiedPosition: integer("verified_position"),
  /** Size of the newest signed tree head seen. */
  treeSize: integer("tree_size"),
  /** Timestamp of that tree head (ISO 8601). */
  treeHeadAt: text("tree_head_at"),
  /** Timestamp of the tree head the verified position was proven against. */
  verifiedTreeHeadAt: text("verified_tree_head_at"),
  /** Timestamp of the last verified entry (as the log signed it). */
  lastEntryAt: text("last_entry_at"),
  /** The last run that read (an attempt, in collection terms: modules/ct-log/collection.ts). */
  lastRunAt: text("last_run_at"),
  /** The last verified read (a verified batch, or a run verified up to the head). */
  lastSuccessAt: text("last_success_at"),
  /** The last run's failure, classified; rows written before classification may hold the runtime's text (classified when read). */
  lastError: text("last_error"),
  /** platform/collection COLLECTION_ERROR_CLASSES; null after a success (and in rows written before). */
  lastErrorClass: text("last_error_class"),
  consecutiveFailures: integer("consecutive_failures").notNull().default(0),
  /** First failed run of the current run of failures; null after a success. */
  failingSince: text("failing_since"),
  backoffUntil: text("backoff_until"),
  /**
   * The failing state last announced to the organizations ('failing' | 'ok'; null: never):
   * each scheduled run announces what changed since (collection.ts announceLogTransitions).
   */
  announcedState: text("announced_state", { enum: ["ok", "failing"] }),
  /** failing_since of the run of failures last announced: a recovery's event says when it began. */
  announcedFailingSince: text("announced_failing_since"),
  entriesProcessed: integer("entries_processed").notNull().default(0),
  matchesFound: integer("matches_found").notNull().default(0),
  updatedAt: text("updated_at").notNull(),
});
