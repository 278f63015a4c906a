/**
 * D1 side of CT ingestion: publishing what a cursor observed in verified entries,
 * and reading back, for the event fan-out, what became visible.
 *
 * Publication is ONE D1 batch (one transaction) per slice of a verified batch (at most
 * 64 hits, fanout.ts publicationSlices, so no transaction holds the database long), with a
 * constant number of statements whatever the number of matches: the rows travel as
 * one JSON parameter each and are inserted with `json_each` (D1 binds at most 100
 * parameters per statement and counts every statement against the invocation's
 * query limit). Idempotency: an occurrence is unique per (organization, log, index),
 * a match per (organization, dedup key), a (match, filter) pair once, a proposal per
 * (organization, kind, hostname), a typosquatting match per (organization, filter,
 * candidate, dedup key); every statement is an upsert or INSERT OR IGNORE, so
 * replaying a range after a crash inserts nothing new.
 *
 * Visibility time: the batch first advances `ct_publication_clock` (the database's
 * clock, strictly increasing across publications) and every row it writes carries
 * that time as its matched/observed/detected time. Rows of a later transaction are
 * therefore always later than the clock read before it: check-new answers that clock
 * as `as_of`, and a client that polls with the last answer's `as_of` never misses a
 * match nor counts one twice (match-service.ts checkNewMatches).
 *
 * Events: at-least-once. `ct_match_filters.event_emitted_at` and
 * `ct_typosquat_matches.event_emitted_at` are set after the organization's
 * AlertState evaluated them (see fanout.ts); a replay emits only rows still unset,
 * and AlertState drops an event id it has seen.
 */
import { and, eq, gte, isNull, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { rawStatement } from "../../db/raw";
import { jsonArrayChunks } from "../../platform/groups";
import { ctFilters, ctLogStates, ctMatchFilters, ctMatches, ctMatchOccurrences, ctTyposquatMatches, ctTyposquatOccurrences } from "../../db/schema";
import type { Authorization } from "./authorization";
import type { CursorStatus } from "./cursor-contract";
import { isWildcardName } from "./cert/names";
import type { CtEventRate } from "./events";
import type { LogRef, ObservedEntry } from "./ingest";

export const RATE_WINDOW = "1h";
const RATE_WINDOW_MS = 3600_000;
/** Each JSON parameter stays well under D1's 2 MB value limit. */
const MAX_JSON_CHARS = 900_000;

/** Names a filter feed proposes: DNS gets the name (wildcards as their base), cert monitoring only literal hostnames. */
export function feedNames(names: readonly string[], kind: "dns" | "certs"): string[] {
  const out = new Set<string>();
  for (const n of names) {
    if (isWildcardName(n)) {
      if (kind === "dns") out.add(n.slice(2));
    } else out.add(n);
  }
  return [...out];
}

// ---- the publication clock ------------------------------------------------------------

const NOW_MS = sql`CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)`;
const isoOf = (ms: SQL) => sql`strftime('%Y-%m-%dT%H:%M:%S', (${ms}) / 1000, 'unixepoch') || '.' || substr('00' || ((${ms}) % 1000), -3) || 'Z'`;
const NEXT_MS = sql`max(excluded.at_ms, ct_publication_clock.at_ms + 1)`;

/** Advances the publication clock (first statement of every publishing transaction). */
const ADVANCE_CLOCK = sql`INSERT INTO ct_publication_clock (id, at_ms, at) VALUES (1, ${NOW_MS}, ${isoOf(NOW_MS)})
    ON CONFLICT(id) DO UPDATE SET at_ms = ${NEXT_MS}, at = ${isoOf(NEXT_MS)}`;
/** The visibility time of the transaction in progress. */
const VISIBLE_AT = sql`(SELECT at FROM ct_publication_clock WHERE id = 1)`;

// ---- publication ------------------------------------------------------------------------

/** Raw statements for D1's own batch (db/raw.ts). */
export const statement = rawStatement;

/** Splits rows into JSON arrays of bounded size. */
const jsonChunks = (rows: unknown[]) => jsonArrayChunks(rows, MAX_JSON_CHARS);

const v = (field: string) => sql.raw(`json_extract(j.value, '$.${field}')`);
const matchIdOf = sql`(SELECT m.id FROM ct_matches m WHERE m.organization_id = ${v("o")} AND m.dedup_key = ${v("d")})`;

/**
 * Writes the observations of verified entries of one log in one transaction.
 * Returns the organizations that got something (their events are fanned out).
 */
export async function publishObservations(db: Db, log: LogRef, observed: readonly ObservedEntry[]): Promise<number[]> {
  const matches: unknown[] = [];
  const occurrences: unknown[] = [];
  const links: unknown[] = [];
  const proposals: unknown[] = [];
  const lookalikes: unknown[] = [];
  const lookalikeOccurrences: unknown[] = [];
  /** One lookalike asset per (organization, candidate domain): the high-confidence sighting wins. */
  const assets = new Map<string, { o: number; cd: string; p: string; f: number; e: string[]; ed: number | null; cf: string }>();
  const orgs = new Set<number>();
  for (const o of observed) {
    // The certificate and CAA columns travel as JSON text inside the row (json_extract then
    // returns that string as it is): as nested objects, SQLite parsed and re-rendered them
    // for every field it extracted from the row, half of the statement's time (measured on
    // 450 rows of ~1 KB certificates: 40 ms against 18 ms).
    const cert = JSON.stringify(o.cert);
    const caa = JSON.stringify(o.caa);
    const byOrg = new Map<number, typeof o.hits>();
    for (const h of o.hits) byOrg.set(h.organizationId, [...(byOrg.get(h.organizationId) ?? []), h]);
    for (const [org, hits] of byOrg) {
      orgs.add(org);
      const names = [...new Set(hits.flatMap((h) => h.names))];
      matches.push({ o: org, d: o.dedupKey, s: o.sha256, c: names[0] ?? o.cert.subject, n: names });
      occurrences.push({ o: org, d: o.dedupKey, i: o.logIndex, s: o.sha256, p: o.isPrecert ? 1 : 0, c: cert, a: caa });
      for (const h of hits) {
        links.push({ o: org, d: o.dedupKey, f: h.filterId, n: h.names, i: o.logIndex });
        for (const kind of ["dns", "certs"] as const) {
          for (const hostname of feedNames(h.names, kind)) proposals.push({ o: org, k: kind, h: hostname, f: h.filterId, s: o.sha256 });
        }
      }
    }
    for (const t of o.typosquats) {
      orgs.add(t.organizationId);
      const key = { o: t.organizationId, f: t.filterId, cd: t.candidateDomain, d: o.dedupKey };
      lookalikes.push({ ...key, s: o.sha256, n: t.name, e: t.evidence, ek: t.evidence.join(","), ed: t.editDistance, cf: t.confidence, c: cert });
      lookalikeOccurrences.push({ ...key, i: o.logIndex, s: o.sha256, p: o.isPrecert ? 1 : 0 });
      const assetKey = `${t.organizationId} ${t.candidateDomain}`;
      const known = assets.get(assetKey);
      if (!known || (known.cf === "low" && t.confidence === "high")) {
        assets.set(assetKey, { o: t.organizationId, cd: t.candidateDomain, p: t.protectedDomain, f: t.filterId, e: t.evidence, ed: t.editDistance, cf: t.confidence });
      }
    }
  }
  if (orgs.size === 0) return [];

  const statements = [statement(db, ADVANCE_CLOCK)];
  for (const rows of jsonChunks(matches)) {
    statements.push(
      statement(db, sql`INSERT INTO ct_matches (organization_id, dedup_key, sha256, certificate_domain, matched_names, first_matched_at, last_matched_at)
        SELECT ${v("o")}, ${v("d")}, ${v("s")}, ${v("c")}, ${v("n")}, ${VISIBLE_AT}, ${VISIBLE_AT} FROM json_each(${rows}) j WHERE true
        ON CONFLICT (organization_id, dedup_key) DO UPDATE SET last_matched_at = max(last_matched_at, excluded.last_matched_at)`),
    );
  }
  for (const rows of jsonChunks(occurrences)) {
    statements.push(
      statement(db, sql`INSERT OR IGNORE INTO ct_match_occurrences (organization_id, match_id, log_id, log_name, log_index, sha256, is_precert, observed_at, cert, caa)
        SELECT ${v("o")}, ${matchIdOf}, ${log.logId}, ${log.logName}, ${v("i")}, ${v("s")}, ${v("p")}, ${VISIBLE_AT}, ${v("c")}, ${v("a")} FROM json_each(${rows}) j`),
    );
  }
  for (const rows of jsonChunks(links)) {
    statements.push(
      statement(db, sql`INSERT OR IGNORE INTO ct_match_filters (match_id, filter_id, organization_id, matched_names, occurrence_id, created_at)
        SELECT ${matchIdOf}, ${v("f")}, ${v("o")}, ${v("n")},
          (SELECT oc.id FROM ct_match_occurrences oc WHERE oc.organization_id = ${v("o")} AND oc.log_id = ${log.logId} AND oc.log_index = ${v("i")}),
          ${VISIBLE_AT}
        FROM json_each(${rows}) j`),
    );
  }
  // Proposed only by filters whose feed of that kind is on (read in the same transaction).
  for (const rows of jsonChunks(proposals)) {
    statements.push(
      statement(db, sql`INSERT OR IGNORE INTO ct_proposals (organization_id, kind, hostname, filter_id, source_sha256, created_at)
        SELECT ${v("o")}, ${v("k")}, ${v("h")}, ${v("f")}, ${v("s")}, ${VISIBLE_AT}
        FROM json_each(${rows}) j JOIN ct_filters f ON f.id = ${v("f")} AND f.organization_id = ${v("o")}
        WHERE (${v("k")} = 'dns' AND f.feed_dns_enabled) OR (${v("k")} = 'certs' AND f.feed_certs_enabled)`),
    );
  }
  for (const rows of jsonChunks(lookalikes)) {
    statements.push(
      statement(db, sql`INSERT INTO ct_typosquat_matches (organization_id, filter_id, candidate_domain, dedup_key, sha256, certificate_name, evidence, evidence_key, edit_distance, confidence, cert, detected_at, last_seen_at)
        SELECT ${v("o")}, ${v("f")}, ${v("cd")}, ${v("d")}, ${v("s")}, ${v("n")}, ${v("e")}, ${v("ek")}, ${v("ed")}, ${v("cf")}, ${v("c")}, ${VISIBLE_AT}, ${VISIBLE_AT}
        FROM json_each(${rows}) j WHERE true
        ON CONFLICT (organization_id, filter_id, candidate_domain, dedup_key) DO UPDATE SET last_seen_at = max(last_seen_at, excluded.last_seen_at)`),
    );
  }
  for (const rows of jsonChunks(lookalikeOccurrences)) {
    statements.push(
      statement(db, sql`INSERT OR IGNORE INTO ct_typosquat_occurrences (organization_id, match_id, log_id, log_name, log_index, sha256, is_precert, observed_at)
        SELECT ${v("o")},
          (SELECT t.id FROM ct_typosquat_matches t WHERE t.organization_id = ${v("o")} AND t.filter_id = ${v("f")} AND t.candidate_domain = ${v("cd")} AND t.dedup_key = ${v("d")}),
          ${log.logId}, ${log.logName}, ${v("i")}, ${v("s")}, ${v("p")}, ${VISIBLE_AT}
        FROM json_each(${rows}) j`),
    );
  }
  // The lookalike assets (lookalikes/): a new one is due for its first check at once; a sighting
  // of a known one moves its certificate time, raises a low confidence the certificate
  // corroborates, and has a `gone` one checked again.
  for (const rows of jsonChunks([...assets.values()])) {
    statements.push(
      statement(db, sql`INSERT INTO ct_lookalikes (organization_id, domain, protected_domain, filter_id, source, evidence, edit_distance, confidence, state, state_changed_at, first_seen_at, certificate_seen_at, collection_next_attempt_at)
        SELECT ${v("o")}, ${v("cd")}, ${v("p")}, ${v("f")}, 'ct', ${v("e")}, ${v("ed")}, ${v("cf")}, 'new', ${VISIBLE_AT}, ${VISIBLE_AT}, ${VISIBLE_AT}, ${VISIBLE_AT}
        FROM json_each(${rows}) j WHERE true
        ON CONFLICT (organization_id, domain) DO UPDATE SET
          certificate_seen_at = excluded.certificate_seen_at,
          evidence = CASE WHEN ct_lookalikes.confidence = 'low' AND excluded.confidence = 'high' THEN excluded.evidence ELSE ct_lookalikes.evidence END,
          confidence = CASE WHEN excluded.confidence = 'high' THEN 'high' ELSE ct_lookalikes.confidence END,
          collection_next_attempt_at = CASE WHEN ct_lookalikes.state = 'gone' THEN excluded.collection_next_attempt_at ELSE ct_lookalikes.collection_next_attempt_at END`),
    );
  }
  await db.$client.batch(statements);
  return [...orgs].sort((a, b) => a - b);
}

// ---- reading back for the event fan-out ------------------------------------------------
// System reads across organizations (the fan-out of one log range serves every organization
// that got something in it): one query per range, not per organization.

/**
 * (match, filter) pairs first observed in the log range, of these organizations, whose
 * event is not yet emitted: with the match's identity and names and the filter's pattern
 * and authorized issuers (the fan-out judges the authorization with them).
 */
export async function unemittedMatches(db: Db, logId: string, from: number, to: number, organizationIds: readonly number[]) {
  return db
    .select({
      organizationId: ctMatchFilters.organizationId,
      matchId: ctMatchFilters.matchId,
      filterId: ctMatchFilters.filterId,
      filterNames: ctMatchFilters.matchedNames,
      createdAt: ctMatchFilters.createdAt,
      cert: ctMatchOccurrences.cert,
      caa: ctMatchOccurrences.caa,
      dedupKey: ctMatches.dedupKey,
      matchedNames: ctMatches.matchedNames,
      firstMatchedAt: ctMatches.firstMatchedAt,
      pattern: ctFilters.pattern,
      filterIssuers: ctFilters.authorizedIssuers,
    })
    .from(ctMatchOccurrences)
    .innerJoin(ctMatchFilters, eq(ctMatchFilters.occurrenceId, ctMatchOccurrences.id))
    .innerJoin(ctMatches, eq(ctMatches.id, ctMatchFilters.matchId))
    .innerJoin(ctFilters, eq(ctFilters.id, ctMatchFilters.filterId))
    .where(
      and(
        eq(ctMatchOccurrences.logId, logId),
        gte(ctMatchOccurrences.logIndex, from),
        lt(ctMatchOccurrences.logIndex, to),
        inJsonArray(ctMatchOccurrences.organizationId, organizationIds),
        isNull(ctMatchFilters.eventEmittedAt),
      ),
    )
    .all();
}

/** Typosquatting matches of these organizations seen in the log range whose event is not yet emitted. */
export async function unemittedTyposquats(db: Db, logId: string, from: number, to: number, organizationIds: readonly number[]) {
  return db
    .selectDistinct({
      organizationId: ctTyposquatMatches.organizationId,
      id: ctTyposquatMatches.id,
      filterId: ctTyposquatMatches.filterId,
      candidateDomain: ctTyposquatMatches.candidateDomain,
      certificateName: ctTyposquatMatches.certificateName,
      evidence: ctTyposquatMatches.evidence,
      editDistance: ctTyposquatMatches.editDistance,
      confidence: ctTyposquatMatches.confidence,
      cert: ctTyposquatMatches.cert,
      detectedAt: ctTyposquatMatches.detectedAt,
      /** Eligible patterns are exactly the protected registrable domain. */
      protectedDomain: ctFilters.pattern,
    })
    .from(ctTyposquatOccurrences)
    .innerJoin(ctTyposquatMatches, eq(ctTyposquatMatches.id, ctTyposquatOccurrences.matchId))
    .innerJoin(ctFilters, eq(ctFilters.id, ctTyposquatMatches.filterId))
    .where(
      and(
        eq(ctTyposquatOccurrences.logId, logId),
        gte(ctTyposquatOccurrences.logIndex, from),
        lt(ctTyposquatOccurrences.logIndex, to),
        inJsonArray(ctTyposquatOccurrences.organizationId, organizationIds),
        isNull(ctTyposquatMatches.eventEmittedAt),
      ),
    )
    .all();
}

/** Marks (match, filter) pairs emitted, each with the authorization verdict its event carried: one statement. */
export async function markMatchesEmitted(db: Db, pairs: readonly { matchId: number; filterId: number; authorization: Authorization }[], at: string) {
  if (!pairs.length) return;
  const rows = JSON.stringify(pairs.map((p) => [p.matchId, p.filterId, p.authorization]));
  await db.run(sql`UPDATE ct_match_filters SET event_emitted_at = ${at}, authorization = j.a
    FROM (SELECT json_extract(value, '$[0]') AS m, json_extract(value, '$[1]') AS f, json_extract(value, '$[2]') AS a FROM json_each(${rows})) AS j
    WHERE ct_match_filters.match_id = j.m AND ct_match_filters.filter_id = j.f`);
}

export async function markTyposquatsEmitted(db: Db, ids: readonly number[], at: string) {
  if (!ids.length) return;
  await db.update(ctTyposquatMatches).set({ eventEmittedAt: at }).where(inJsonArray(ctTyposquatMatches.id, ids)).run();
}

const rateOf = (row: { certs: number; precerts: number; total: number } | undefined): CtEventRate => {
  const total = Number(row?.total ?? 0);
  const precert = Number(row?.precerts ?? 0);
  return { count: Number(row?.certs ?? 0), window: RATE_WINDOW, precert_count: precert, final_count: total - precert, total_count: total };
};

/**
 * rate.* per filter at `at`: distinct certificates and entries matched by the filter in
 * the hour up to `at` (all logs). One query for every filter of a batch (filter ids are
 * unique across organizations).
 */
export function filterRates(db: Db, filterIds: readonly number[], at: string): Promise<Map<number, CtEventRate>> {
  return ratesPerFilter(filterIds, at, (ids, from) =>
    db
      .select({
        filterId: ctMatchFilters.filterId,
        certs: sql<number>`count(DISTINCT ${ctMatchOccurrences.matchId})`,
        precerts: sql<number>`coalesce(sum(${ctMatchOccurrences.isPrecert}), 0)`,
        total: sql<number>`count(*)`,
      })
      .from(ctMatchOccurrences)
      .innerJoin(ctMatchFilters, eq(ctMatchFilters.matchId, ctMatchOccurrences.matchId))
      .where(and(inJsonArray(ctMatchFilters.filterId, ids), gte(ctMatchOccurrences.observedAt, from), sql`${ctMatchOccurrences.observedAt} <= ${at}`))
      .groupBy(ctMatchFilters.filterId)
      .all(),
  );
}

/** rate.* of typosquat events: lookalike certificates and entries of the protected filter in the hour up to `at`. */
export function typosquatRates(db: Db, filterIds: readonly number[], at: string): Promise<Map<number, CtEventRate>> {
  return ratesPerFilter(filterIds, at, (ids, from) =>
    db
      .select({
        filterId: ctTyposquatMatches.filterId,
        certs: sql<number>`count(DISTINCT ${ctTyposquatOccurrences.matchId})`,
        precerts: sql<number>`coalesce(sum(${ctTyposquatOccurrences.isPrecert}), 0)`,
        total: sql<number>`count(*)`,
      })
      .from(ctTyposquatOccurrences)
      .innerJoin(ctTyposquatMatches, eq(ctTyposquatMatches.id, ctTyposquatOccurrences.matchId))
      .where(and(inJsonArray(ctTyposquatMatches.filterId, ids), gte(ctTyposquatOccurrences.observedAt, from), sql`${ctTyposquatOccurrences.observedAt} <= ${at}`))
      .groupBy(ctTyposquatMatches.filterId)
      .all(),
  );
}

type RateRow = { filterId: number; certs: number; precerts: number; total: number };

/**
 * The part both rate readers share: the hour up to `at`, each filter id once, no query
 * for no filters, and a rate (zero when nothing matched) for every id asked about.
 */
async function ratesPerFilter(
  filterIds: readonly number[],
  at: string,
  count: (ids: number[], from: string) => Promise<RateRow[]>,
): Promise<Map<number, CtEventRate>> {
  const from = new Date(Date.parse(at) - RATE_WINDOW_MS).toISOString();
  const ids = [...new Set(filterIds)];
  const rows = ids.length ? await count(ids, from) : [];
  const byFilter = new Map(rows.map((r) => [r.filterId, r]));
  return new Map(ids.map((id) => [id, rateOf(byFilter.get(id))]));
}

// ---- each log's ingestion state, as its cursor last recorded it ------------------------

/** Upserts the published view of a cursor's state (GET /api/ct-log/logs reads it). */
export async function saveLogState(db: Db, s: Omit<CursorStatus, "inProgress">, updatedAt: string): Promise<void> {
  const values = {
    logName: s.logName,
    verifiedPosition: s.verifiedPosition,
    treeSize: s.treeSize,
    treeHeadAt: s.treeHeadAt,
    verifiedTreeHeadAt: s.verifiedTreeHeadAt,
    lastEntryAt: s.lastEntryAt,
    lastRunAt: s.lastRunAt,
    lastSuccessAt: s.lastSuccessAt ?? null,
    lastError: s.lastError,
    lastErrorClass: s.lastErrorClass ?? null,
    consecutiveFailures: s.consecutiveFailures,
    failingSince: s.failingSince ?? null,
    backoffUntil: s.backoffUntil,
    entriesProcessed: s.entriesProcessed,
    matchesFound: s.matchesFound,
    updatedAt,
  };
  await db
    .insert(ctLogStates)
    .values({ logId: s.logId, ...values })
    .onConflictDoUpdate({ target: ctLogStates.logId, set: values })
    .run();
}
