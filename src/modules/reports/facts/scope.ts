/**
 * What one audit reads, and the shape every module's reader returns.
 *
 *  - Live overview (`live`): changes observed in the last 7 days (the length of a
 *    report window) up to now; each TLS endpoint by its latest scan; state (domain
 *    expiry, DNSSEC failing, coverage, freshness) judged now.
 *  - Weekly report (`period`): changes observed inside [period_start, period_end);
 *    each TLS endpoint by every scan inside the period; state judged AT THE PERIOD'S
 *    END from what is stored, so a week generated late (caught up after downtime) does
 *    not take on today's state:
 *      - domain expiry: the expiry published in the newest snapshot observed before the
 *        end, against the end;
 *      - DNSSEC: only the failures observed in the week (no "failing now");
 *      - an asset counts when it existed at the end (created before it, a CT filter not
 *        yet deleted) and was enabled then; pausing keeps no history, so the current
 *        flag is used unless the asset was changed after the end (then it counts as
 *        enabled: nothing stored says it was not);
 *      - freshness (and so each category's status): an asset is collected when its
 *        newest successful collection at or before the end is within its module's
 *        window. Certificate scans are all stored, so that is exact; RDAP, DNS and CT
 *        store only their newest collection: when it is after the end, the newest one
 *        before it is not known and the asset counts as collected (a report states
 *        staleness only where what is stored proves it).
 *
 * Each module's reader is a plan: the statements it needs (all independent of each
 * other, so facts/index.ts sends every module's statements in ONE D1 batch) and the
 * function that turns their results into its facts.
 */
import { sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../../db/client";
import type { Config } from "../../../env";
import type { MonitoringModule } from "../../../platform/permissions";
import type { Tenant } from "../../../platform/tenant";
import type { MonitoredAsset } from "../document";
import { expectedCollectionWindowSeconds } from "../freshness";
import {
  classifyFailure,
  collectedWithin,
  collectionState,
  NEVER_COLLECTED,
  sanitizeFailureMessage,
  type CollectionErrorClass,
  type CollectionRecord,
  type FailureTarget,
} from "../../../platform/collection";
import type { AuditFacts, CollectionSources, ModuleCoverage, UncollectedAsset } from "./types";

export type ScheduleConfig = Pick<Config, "rdapCheckIntervalSeconds" | "dnsCheckIntervalSeconds" | "scanIntervalSeconds">;

export interface AuditScope {
  t: Tenant;
  /** live: the overview, state judged now; period: a weekly report, state judged at the period's end. */
  mode: "live" | "period";
  /** Change facts observed in [start, end) count. */
  window: { start: Date; end: Date };
  /** When state is judged (expiry horizon, coverage, freshness): now (live), the period's end (period). */
  asOf: Date;
  /** The clock: the appendix's state is the state at generation. */
  now: Date;
  config: ScheduleConfig;
  /** Also list every monitored asset with its state (the report's appendix). */
  withAssets: boolean;
  /** Evidence items a reader needs to return per rule at most (it reports the true counts beyond). */
  evidenceLimit: number;
}

export interface ModuleReading<F> {
  facts: F;
  /** True counts of rules whose evidence the reader cut at `evidenceLimit`. */
  counts?: AuditFacts["counts"];
  coverage: ModuleCoverage;
  /** Empty unless the scope asks for assets. */
  assets: MonitoredAsset[];
  /** Sources shared with other organizations that the module's assets rely on (CT logs), when the scope asks for assets. */
  sources?: MonitoredAsset[];
}

/** A module's reader: its statements (sent in the audit's one batch) and what it makes of their results. */
export interface ReaderPlan<F> {
  statements: BatchItem<"sqlite">[];
  read(results: unknown[]): ModuleReading<F>;
}

/**
 * A hand-written SELECT as a drizzle query that `db.batch` accepts (on D1 a raw
 * `db.all(sql)` cannot be batched): its result columns named in `columns`, values as
 * SQLite returns them.
 */
export function rawSelect<R extends object>(db: Db, columns: readonly (keyof R & string)[], query: SQL) {
  const fields = Object.fromEntries(columns.map((c) => [c, sql.raw(`"${c}"`)]));
  return db.select(fields).from(sql`(${query})`);
}

/** An asset as the coverage rules and the category status see it. */
export interface CoverageItem {
  asset: string;
  /** Enabled at `asOf` (enabledAt). */
  enabled: boolean;
  createdAt: string;
  /**
   * Its collection record (platform/collection): `lastSuccessAt` is the newest data
   * actually collected (a failed attempt does not count); in a report it may be after
   * `asOf` (see the header).
   */
  collection: CollectionRecord;
}

/**
 * Whether an asset counts as enabled at the scope's `asOf`: live, its flag; in a report,
 * it must have existed at the period's end, and an asset changed since then counts as
 * enabled (its flag at the end is not stored).
 */
export function enabledAt(scope: Pick<AuditScope, "mode" | "asOf">, a: { enabled: boolean; createdAt: string; updatedAt?: string | null }): boolean {
  if (scope.mode === "live") return a.enabled;
  const end = iso(scope.asOf);
  if (a.createdAt >= end) return false;
  return a.enabled || (a.updatedAt != null && a.updatedAt >= end);
}

/**
 * How a module's enabled assets stand at the scope's `asOf`: how many were collected
 * within the module's window, and each of the others with its collection state. An
 * asset never collected is stale once it has existed for a whole window (a newer one is
 * pending: it keeps the category from being assessed, but "Monitoring data stale" does
 * not count it). In a report, an asset collected again after the period's end counts as
 * collected (what it had at the end is not stored: nothing proves it was not), and a
 * failure is shown only if it began by the end.
 */
export function coverageOf(
  module: MonitoringModule,
  scope: Pick<AuditScope, "config" | "asOf" | "mode">,
  items: CoverageItem[],
  sources: CollectionSources = "own",
): ModuleCoverage {
  const window = expectedCollectionWindowSeconds(module, scope.config);
  const asOf = iso(scope.asOf);
  const staleBefore = new Date(scope.asOf.getTime() - window * 1000).toISOString();
  const enabled = items.filter((i) => i.enabled);
  const uncollected: UncollectedAsset[] = [];
  for (const i of enabled) {
    const c = i.collection;
    if (c.lastSuccessAt !== null && (c.lastSuccessAt > asOf || collectedWithin(c, scope.asOf, window))) continue;
    const failedByEnd = c.errorClass !== null && c.errorMessage !== null && (scope.mode === "live" || (c.failingSince ?? c.lastAttemptAt ?? "") <= asOf);
    uncollected.push({
      asset: i.asset,
      state: collectionState(c),
      last_collected_at: c.lastSuccessAt,
      failing_since: failedByEnd ? c.failingSince : null,
      error: failedByEnd ? { class: c.errorClass!, message: sanitizeFailureMessage(c.errorMessage!) } : null,
      stale: (c.lastSuccessAt ?? i.createdAt) < staleBefore,
    });
  }
  uncollected.sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0));
  const configured = items.filter((i) => i.createdAt <= asOf).length;
  return {
    module,
    configured_assets: configured,
    enabled_assets: enabled.length,
    expected_window_seconds: window,
    sources,
    expected: enabled.length,
    collected: enabled.length - uncollected.length,
    uncollected,
  };
}

/**
 * A collection record from the columns a module kept before it recorded collection
 * state: the last attempt, the last success and the last failure's stored text, which
 * is classified here (the runtime's opaque text never goes further). A failure run's
 * start and length are not known from them: one failure is assumed, since when is not said.
 */
export function recordFromLastCheck(c: {
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  /** The latest attempt failed (its stored text below). */
  failed: boolean;
  failure: string | null;
  /** Where the attempt went, for the classifier's message. */
  target: FailureTarget;
  /** The class the stored status says, for a text the classifier does not recognise. */
  knownClass?: CollectionErrorClass;
}): CollectionRecord {
  if (!c.failed) return { ...NEVER_COLLECTED, lastAttemptAt: c.lastAttemptAt, lastSuccessAt: c.lastSuccessAt };
  const classified = classifyFailure(new Error(c.failure || "failed"), c.target);
  const error = classified.class === "internal" && c.knownClass ? { ...classified, class: c.knownClass } : classified;
  return {
    ...NEVER_COLLECTED,
    lastAttemptAt: c.lastAttemptAt,
    lastSuccessAt: c.lastSuccessAt,
    consecutiveFailures: 1,
    errorClass: error.class,
    errorMessage: error.message,
  };
}

export const iso = (d: Date) => d.toISOString();

/** Parses a JSON column that drizzle returns raw (text) from `sql` selections. */
export function jsonArray<T = string>(value: unknown): T[] {
  if (Array.isArray(value)) return value as T[];
  if (typeof value !== "string" || value === "") return [];
  try {
    const v = JSON.parse(value);
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

/** A count column as a number (D1 returns integers; a SUM over no rows is null). */
export const num = (v: unknown): number => (typeof v === "number" ? v : v == null ? 0 : Number(v));
