/**
 * Collection state of CT logs (platform/collection): could the service read each log it
 * monitors, and what that means for the organizations that rely on it?
 *
 * An attempt is one run of the log's cursor that reads (runs that find the log backing
 * off do not count). A success is a verified read: a batch verified against a signed tree
 * head and published, or a run that ends verified up to the head. A failure is classified
 * here, where the cursor records it (cursor/run.ts), so the runtime's opaque text never
 * reaches ct_log_states, the API or an alert:
 *
 *   a name that does not resolve      dns_resolution  "DNS lookup of ct.example failed"
 *   refused / reset / unreachable     connect
 *   no answer in time                 timeout
 *   HTTP 5xx / 4xx                    http_status     "HTTP 503 from https://..."
 *   429, or a long Retry-After        rate_limited    (a pause the log asked for is not counted as a failure)
 *   a tile, entry, tree head or proof that does not parse or verify
 *                                     protocol        (TreeMismatchError, LogDataError, TreeHeadVerificationError)
 *
 * Every organization with an enabled CT filter relies on every monitored log: a
 * certificate may be logged in any of them. When logs enter `failing` (their second
 * failed run in a row) or recover, each scheduled run announces the changes once
 * (`announceLogTransitions`): per organization with filters, one event for the logs that
 * entered failing since the last run and one for those that recovered. One log: the
 * event names it. Several at once (the network down, a firewall change): one event names
 * them all, so an outage of all 71 logs is one alert per organization and direction,
 * not 71, and no log's change goes unsaid.
 */
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { ctFilters, ctLogStates } from "../../db/schema";
import type { Bindings } from "../../env";
import {
  classifyFailure,
  collectionView,
  COLLECTION_ERROR_CLASSES,
  FAILING_AFTER_CONSECUTIVE,
  httpStatusFailure,
  isOpaqueRuntimeError,
  logUnexpected,
  nextScheduledRun,
  sanitizeFailureMessage,
  type CollectionError,
  type CollectionErrorClass,
  type CollectionRecord,
} from "../../platform/collection";
import type { CollectionView } from "../../platform/collection/schema";
import { emitEvent, organizationsWithRules } from "../alerting/contract";
import { buildCtLogCollectionEvent } from "./events";
import type { LogRef } from "./ingest";
import { LogHttpError } from "./log-client/types";
import type { CtLogDescriptor } from "./loglist";

const what = (log: Pick<LogRef, "logName">) => `reading CT log "${log.logName}"`;

/** The failure of a cursor run, classified, in words naming the log and the host or step. */
export function classifyLogFailure(err: unknown, log: Pick<LogRef, "logName">): CollectionError {
  if (err instanceof LogHttpError) {
    // status 0: the log could not be reached at all; the runtime's failure says why (maybe opaquely).
    if (err.status === 0) return classifyFailure(err.cause ?? err, { url: err.url, what: what(log) });
    return httpStatusFailure(err.status, err.url, what(log));
  }
  return classifyFailure(err, { what: what(log) });
}

/**
 * A failure stored before failures were classified (its text may be the runtime's opaque
 * reference): classified again from the text, so what was stored reads like what is new.
 */
export function classifyStoredLogError(text: string, log: Pick<CtLogDescriptor, "description" | "readUrl">): CollectionError {
  const ref = { logName: log.description };
  const url = /\bhttps?:\/\/\S+/.exec(text)?.[0].replace(/[.,;:)]+$/, "");
  const status = /\bHTTP (\d{3})\b/.exec(text);
  if (status && url) return httpStatusFailure(Number(status[1]), url, what(ref));
  if (/^(TreeMismatchError|LogDataError|TreeHeadVerificationError|EntryRangeError|StartTreeMismatchError|CtWireError)\b/.test(text)) {
    return { class: "protocol", message: sanitizeFailureMessage(`${what(ref)}: ${text.replace(/^\w+Error: /, "")}`) };
  }
  if (/^LogPausedError\b/.test(text)) return { class: "rate_limited", message: sanitizeFailureMessage(`${what(ref)}: ${text.replace(/^\w+Error: /, "")}`) };
  // What the runtime threw, wrapped by the log client: "LogHttpError: <runtime text> from <url> after N attempts".
  const runtime = text.replace(/^LogHttpError: /, "").replace(/ from \S+ after \d+ attempts?$/, "");
  const classified = classifyFailure(new Error(runtime), { url: url ?? log.readUrl, what: what(ref) });
  return isOpaqueRuntimeError(text) || classified.class !== "internal" ? classified : { class: "internal", message: sanitizeFailureMessage(`${what(ref)}: ${runtime}`) };
}

type LogStateRow = typeof ctLogStates.$inferSelect;

/**
 * The failure a log's published state records (ct_log_states last_error and
 * last_error_class), null when its last run did not fail: what the cursor classified, or
 * a row stored before, classified from its text. Every reader of ct_log_states takes the
 * error from here (the API, the reports).
 */
export function storedLogFailure(text: string | null, errorClass: string | null, log: Pick<CtLogDescriptor, "description" | "readUrl">): CollectionError | null {
  if (!text) return null;
  const known = (COLLECTION_ERROR_CLASSES as readonly string[]).includes(errorClass ?? "");
  return known ? { class: errorClass as CollectionErrorClass, message: text } : classifyStoredLogError(text, log);
}

/** A log's collection record, from its published state (and its descriptor, to classify what was stored before). */
export function logRecord(s: LogStateRow | undefined, log: Pick<CtLogDescriptor, "description" | "readUrl">): CollectionRecord {
  if (!s) return { lastAttemptAt: null, lastSuccessAt: null, failingSince: null, consecutiveFailures: 0, nextAttemptAt: null, errorClass: null, errorMessage: null };
  const error = storedLogFailure(s.lastError, s.lastErrorClass, log);
  return {
    lastAttemptAt: s.lastRunAt,
    // Stored before verified reads were recorded: the last run that ended without a failure stands for one.
    lastSuccessAt: s.lastSuccessAt ?? (s.lastError === null && s.verifiedPosition !== null ? s.lastRunAt : null),
    failingSince: s.failingSince ?? (s.consecutiveFailures > 0 ? s.lastRunAt : null),
    consecutiveFailures: s.consecutiveFailures,
    nextAttemptAt: s.backoffUntil,
    errorClass: error?.class ?? null,
    errorMessage: error?.message ?? null,
  };
}

/** A log's `collection`: its next attempt is the end of its backoff, or the next scheduled run. */
export function logCollection(record: CollectionRecord, now: Date): CollectionView {
  const backingOff = record.nextAttemptAt !== null && Date.parse(record.nextAttemptAt) > now.getTime();
  return collectionView({ ...record, nextAttemptAt: backingOff ? record.nextAttemptAt : nextScheduledRun(now) });
}

// ---------------------------------------------------------------------------
// Announcing transitions to the organizations that rely on the logs

const isFailing = sql`${ctLogStates.consecutiveFailures} >= ${FAILING_AFTER_CONSECUTIVE}`;
/** A log whose state differs from what was last announced (never announced counts as ok). */
const changed = or(
  and(isFailing, or(isNull(ctLogStates.announcedState), sql`${ctLogStates.announcedState} <> 'failing'`)),
  and(sql`NOT (${isFailing})`, eq(ctLogStates.announcedState, "failing")),
);

interface LogTransition {
  log: CtLogDescriptor;
  /** The log's record now, and as it was before (its failing_since: when the announced run of failures began). */
  record: CollectionRecord;
  previous: CollectionRecord;
}

export interface LogTransitions {
  failing: LogTransition[];
  recovered: LogTransition[];
}

/**
 * Finds the monitored logs whose failing state changed since it was last announced and
 * claims them (a concurrent run announces each change once), then raises the collection
 * events for every organization with an enabled filter and a rule of the module.
 */
export async function announceLogTransitions(env: Bindings, db: Db, logs: readonly CtLogDescriptor[], now: Date): Promise<LogTransitions> {
  const byId = new Map(logs.map((l) => [l.logId, l]));
  const out: LogTransitions = { failing: [], recovered: [] };
  if (!byId.size) return out;
  const ids = [...byId.keys()];
  const claimed = await db
    .update(ctLogStates)
    .set({
      announcedState: sql`CASE WHEN ${isFailing} THEN 'failing' ELSE 'ok' END`,
      // Kept through the recovery, so its event says when the run of failures began.
      announcedFailingSince: sql`CASE WHEN ${isFailing} THEN ${ctLogStates.failingSince} ELSE ${ctLogStates.announcedFailingSince} END`,
    })
    .where(and(inArray(ctLogStates.logId, ids), changed))
    .returning()
    .all();
  for (const row of claimed) {
    const log = byId.get(row.logId)!;
    const record = logRecord(row, log);
    const entry = { log, record, previous: { ...record, failingSince: row.announcedFailingSince } };
    if (row.announcedState === "failing") out.failing.push(entry);
    else out.recovered.push(entry);
  }
  if (!out.failing.length && !out.recovered.length) return out;
  const relying = await db.selectDistinct({ id: ctFilters.organizationId }).from(ctFilters).where(and(eq(ctFilters.enabled, true), isNull(ctFilters.deletedAt))).all();
  const organizations = await organizationsWithRules(db, "ct-log", relying.map((r) => r.id));
  const failingNow = (await db.select({ n: sql<number>`count(*)` }).from(ctLogStates).where(and(inArray(ctLogStates.logId, ids), isFailing)).get())?.n ?? 0;
  const events = [
    out.failing.length ? buildCtLogCollectionEvent({ transition: "failing", ...eventSubject(out.failing, "entered failing", failingNow, ids.length), attemptedAt: now.toISOString() }) : null,
    out.recovered.length
      ? buildCtLogCollectionEvent({ transition: "recovered", ...eventSubject(out.recovered, "are read again", failingNow, ids.length), attemptedAt: now.toISOString() })
      : null,
  ].filter((e) => e !== null);
  for (const organizationId of organizations) {
    for (const event of events) {
      try {
        await emitEvent(env, "ct-log", organizationId, event);
      } catch (err) {
        logUnexpected(`ct-log: collection event for organization ${organizationId}`, err);
      }
    }
  }
  return out;
}

/** The `log` and records of an event about one log, or a summary of several (`log.name` lists them). */
function eventSubject(changes: LogTransition[], verb: string, failingNow: number, monitored: number) {
  if (changes.length === 1) {
    const { log, record, previous } = changes[0];
    return { log: { name: log.description, url: log.readUrl, log_id: log.logId }, record, previous };
  }
  const entering = verb === "entered failing";
  const classes = new Map<CollectionErrorClass, number>();
  for (const c of changes) if (c.record.errorClass) classes.set(c.record.errorClass, (classes.get(c.record.errorClass) ?? 0) + 1);
  const commonest = [...classes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const list = (names: string[]) => (names.length > 8 ? `${names.slice(0, 8).join(", ")} and ${names.length - 8} more` : names.join(", "));
  const shown = list(changes.map((c) => `${c.log.description}${entering && c.record.errorClass ? ` (${c.record.errorClass})` : ""}`));
  const earliest = (records: CollectionRecord[]) => records.map((r) => r.failingSince).filter((x): x is string => x !== null).sort()[0] ?? null;
  const summary = sanitizeFailureMessage(`${changes.length} CT logs ${verb}: ${shown}; ${failingNow} of ${monitored} monitored logs are failing`);
  const record: CollectionRecord = {
    ...changes[0].record,
    consecutiveFailures: entering ? FAILING_AFTER_CONSECUTIVE : 0,
    failingSince: entering ? earliest(changes.map((c) => c.record)) : null,
    errorClass: entering ? commonest : null,
    errorMessage: entering ? summary : null,
  };
  const name = sanitizeFailureMessage(`${changes.length} CT logs: ${list(changes.map((c) => c.log.description))}`);
  return { log: { name, url: "", log_id: "" }, record, previous: { ...record, failingSince: earliest(changes.map((c) => c.previous)) } };
}
