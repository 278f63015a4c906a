/**
 * Writing what a CtLogCursor observed into D1, idempotently, and raising the
 * alert events of what is new.
 *
 * Idempotency: an occurrence is unique per (organization, log, index); a match
 * per (organization, dedup key); a (match, filter) pair once; a proposal per
 * (organization, kind, hostname). Every statement is an upsert or INSERT OR
 * IGNORE, so replaying a range after a crash (the cursor commits its position
 * only after this) inserts nothing new.
 *
 * Events are at-least-once: a (match, filter) row carries event_emitted_at, set
 * after emitEvent returned; the replay of a range emits the rows still unset.
 * One event per (certificate, filter): the precertificate and the final
 * certificate, and the same certificate in several logs, are one match and raise
 * one event (the later entries only add occurrences).
 */
import { and, eq, gte, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { ctFilters, ctMatchFilters, ctMatchOccurrences, ctMatches, ctProposals, ctTyposquatMatches, ctTyposquatOccurrences } from "../../db/schema";
import { isWildcardName } from "./cert/names";
import { buildCtLogEvent, type CtEventRate, type CtLogEvent, type LogRef, type ObservedEntry } from "./ingest";

/** D1 accepts large batches, but we keep each under this many statements. */
const STATEMENTS_PER_BATCH = 90;

export const RATE_WINDOW = "1h";
const RATE_WINDOW_MS = 3600_000;

function matchIdOf(organizationId: number, dedupKey: string) {
  return sql`(SELECT id FROM ct_matches WHERE organization_id = ${organizationId} AND dedup_key = ${dedupKey})`;
}
function occurrenceIdOf(organizationId: number, logId: string, logIndex: number) {
  return sql`(SELECT id FROM ct_match_occurrences WHERE organization_id = ${organizationId} AND log_id = ${logId} AND log_index = ${logIndex})`;
}

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

/** Writes observations (idempotently). Returns the number of statements executed. */
export async function commitObservations(db: Db, log: LogRef, observed: readonly ObservedEntry[]): Promise<number> {
  if (observed.length === 0) return 0;
  const hitFilterIds = [...new Set(observed.flatMap((o) => o.hits.map((h) => h.filterId)))];
  const feeds = new Map<number, { dns: boolean; certs: boolean }>();
  for (let i = 0; i < hitFilterIds.length; i += 90) {
    const rows = await db
      .select({ id: ctFilters.id, dns: ctFilters.feedDnsEnabled, certs: ctFilters.feedCertsEnabled })
      .from(ctFilters)
      .where(inArray(ctFilters.id, hitFilterIds.slice(i, i + 90)))
      .all();
    for (const r of rows) feeds.set(r.id, { dns: r.dns, certs: r.certs });
  }

  const statements: any[] = [];
  for (const o of observed) {
    const byOrg = new Map<number, typeof o.hits>();
    for (const h of o.hits) byOrg.set(h.organizationId, [...(byOrg.get(h.organizationId) ?? []), h]);
    for (const [organizationId, hits] of byOrg) {
      const names = [...new Set(hits.flatMap((h) => h.names))];
      statements.push(
        db
          .insert(ctMatches)
          .values({
            organizationId,
            dedupKey: o.dedupKey,
            sha256: o.sha256,
            certificateDomain: names[0] ?? o.cert.subject,
            matchedNames: names,
            firstMatchedAt: o.observedAt,
            lastMatchedAt: o.observedAt,
          })
          .onConflictDoUpdate({
            target: [ctMatches.organizationId, ctMatches.dedupKey],
            set: { lastMatchedAt: sql`max(${ctMatches.lastMatchedAt}, excluded.last_matched_at)` },
          }),
        db
          .insert(ctMatchOccurrences)
          .values({
            organizationId,
            matchId: matchIdOf(organizationId, o.dedupKey),
            logId: log.logId,
            logName: log.logName,
            logIndex: o.logIndex,
            sha256: o.sha256,
            isPrecert: o.isPrecert,
            observedAt: o.observedAt,
            cert: o.cert as unknown as Record<string, unknown>,
            caa: o.caa as unknown as Record<string, unknown>,
          })
          .onConflictDoNothing(),
      );
      for (const h of hits) {
        statements.push(
          db
            .insert(ctMatchFilters)
            .values({
              matchId: matchIdOf(organizationId, o.dedupKey),
              filterId: h.filterId,
              organizationId,
              matchedNames: h.names,
              occurrenceId: occurrenceIdOf(organizationId, log.logId, o.logIndex),
              createdAt: o.observedAt,
            })
            .onConflictDoNothing(),
        );
        const feed = feeds.get(h.filterId);
        for (const kind of ["dns", "certs"] as const) {
          if (!feed?.[kind]) continue;
          for (const hostname of feedNames(h.names, kind)) {
            statements.push(
              db
                .insert(ctProposals)
                .values({ organizationId, kind, hostname, filterId: h.filterId, sourceSha256: o.sha256, createdAt: o.observedAt })
                .onConflictDoNothing(),
            );
          }
        }
      }
    }
  }
  statements.push(...typosquatStatements(db, log, observed));
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    await db.batch(statements.slice(i, i + STATEMENTS_PER_BATCH) as [any, ...any[]]);
  }
  return statements.length;
}

function typosquatMatchIdOf(organizationId: number, filterId: number, candidateDomain: string, dedupKey: string) {
  return sql`(SELECT id FROM ct_typosquat_matches WHERE organization_id = ${organizationId} AND filter_id = ${filterId} AND candidate_domain = ${candidateDomain} AND dedup_key = ${dedupKey})`;
}

/**
 * Typosquatting matches: one row per (organization, filter, candidate domain, certificate dedup key),
 * one occurrence per log entry. Upserts only, like the filter matches: a replayed range adds nothing.
 */
function typosquatStatements(db: Db, log: LogRef, observed: readonly ObservedEntry[]): any[] {
  const statements: any[] = [];
  for (const o of observed) {
    for (const t of o.typosquats ?? []) {
      statements.push(
        db
          .insert(ctTyposquatMatches)
          .values({
            organizationId: t.organizationId,
            filterId: t.filterId,
            candidateDomain: t.candidateDomain,
            dedupKey: o.dedupKey,
            sha256: o.sha256,
            certificateName: t.name,
            evidence: t.evidence,
            evidenceKey: t.evidence.join(","),
            editDistance: t.editDistance,
            cert: o.cert as unknown as Record<string, unknown>,
            detectedAt: o.observedAt,
            lastSeenAt: o.observedAt,
          })
          .onConflictDoUpdate({
            target: [ctTyposquatMatches.organizationId, ctTyposquatMatches.filterId, ctTyposquatMatches.candidateDomain, ctTyposquatMatches.dedupKey],
            set: { lastSeenAt: sql`max(${ctTyposquatMatches.lastSeenAt}, excluded.last_seen_at)` },
          }),
        db
          .insert(ctTyposquatOccurrences)
          .values({
            organizationId: t.organizationId,
            matchId: typosquatMatchIdOf(t.organizationId, t.filterId, t.candidateDomain, o.dedupKey),
            logId: log.logId,
            logName: log.logName,
            logIndex: o.logIndex,
            sha256: o.sha256,
            isPrecert: o.isPrecert,
            observedAt: o.observedAt,
          })
          .onConflictDoNothing(),
      );
    }
  }
  return statements;
}

/** rate.* for a filter at `at`: certificates and entries matched in the hour up to `at` (all logs). */
export async function filterRate(db: Db, filterId: number, at: string): Promise<CtEventRate> {
  const from = new Date(Date.parse(at) - RATE_WINDOW_MS).toISOString();
  const row = await db
    .select({
      count: sql<number>`count(DISTINCT ${ctMatchOccurrences.matchId})`,
      precert: sql<number>`coalesce(sum(${ctMatchOccurrences.isPrecert}), 0)`,
      total: sql<number>`count(*)`,
    })
    .from(ctMatchOccurrences)
    .innerJoin(ctMatchFilters, eq(ctMatchFilters.matchId, ctMatchOccurrences.matchId))
    .where(and(eq(ctMatchFilters.filterId, filterId), gte(ctMatchOccurrences.observedAt, from), sql`${ctMatchOccurrences.observedAt} <= ${at}`))
    .get();
  const total = Number(row?.total ?? 0);
  const precert = Number(row?.precert ?? 0);
  return { count: Number(row?.count ?? 0), window: RATE_WINDOW, precert_count: precert, final_count: total - precert, total_count: total };
}

export type EmitFn = (organizationId: number, event: CtLogEvent) => Promise<unknown>;

/**
 * Emits the events of (match, filter) rows first observed in this log's range
 * [fromIndex, toIndex) that have not been emitted yet, then marks them.
 */
export async function emitPendingEvents(db: Db, log: LogRef, fromIndex: number, toIndex: number, emit: EmitFn): Promise<number> {
  const rows = await db
    .select({
      matchId: ctMatchFilters.matchId,
      filterId: ctMatchFilters.filterId,
      organizationId: ctMatchFilters.organizationId,
      createdAt: ctMatchFilters.createdAt,
      cert: ctMatchOccurrences.cert,
      caa: ctMatchOccurrences.caa,
    })
    .from(ctMatchFilters)
    .innerJoin(ctMatchOccurrences, eq(ctMatchOccurrences.id, ctMatchFilters.occurrenceId))
    .where(
      and(
        isNull(ctMatchFilters.eventEmittedAt),
        eq(ctMatchOccurrences.logId, log.logId),
        gte(ctMatchOccurrences.logIndex, fromIndex),
        lt(ctMatchOccurrences.logIndex, toIndex),
      ),
    )
    .all();
  for (const r of rows) {
    const rate = await filterRate(db, r.filterId, r.createdAt);
    await emit(r.organizationId, buildCtLogEvent({ cert: r.cert as any, caa: r.caa as any }, r.filterId, r.createdAt, rate));
    await db
      .update(ctMatchFilters)
      .set({ eventEmittedAt: new Date().toISOString() })
      .where(and(eq(ctMatchFilters.matchId, r.matchId), eq(ctMatchFilters.filterId, r.filterId)))
      .run();
  }
  return rows.length;
}
