/**
 * The CT log list as the service uses it: fetched from CT_LOG_LIST_URL (its
 * signature from the same URL with .json -> .sig, verified with
 * CT_LOG_LIST_PUBLIC_KEY or Google's key), cached in D1 for 24 hours, with the
 * bundled copy (log_list.bundled.json, see its PROVENANCE note) as the fallback.
 *
 * A failed refresh never throws away a list that did verify: when the remote
 * list cannot be had, a previously fetched remote list of the same URL stays in
 * use; only without one does the bundled copy serve. A fallback is retried after
 * an hour rather than a day.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { ctLogListCache } from "../../db/schema";
import type { Config } from "../../env";
import bundledLogList from "./log_list.bundled.json";
import { loadLogList, LOG_LIST_STEP, monitoredLogs, type LogList } from "./loglist";
import { classifyFailure, COLLECTION_ERROR_CLASSES, httpStatusFailure, logSourceFailure, type CollectionErrorClass } from "../../platform/collection";

/** A failure stored before failures were classified (maybe the runtime's opaque text) reads like a new one. */
function storedRemoteError(text: string | null, cls: string | null, url: string): Pick<CachedLogList, "remoteError" | "remoteErrorClass"> {
  if (text === null) return { remoteError: null, remoteErrorClass: null };
  if ((COLLECTION_ERROR_CLASSES as readonly string[]).includes(cls ?? "")) return { remoteError: text, remoteErrorClass: cls as CollectionErrorClass };
  const what = LOG_LIST_STEP;
  const status = /\bHTTP (\d{3})\b/.exec(text);
  const f = status
    ? httpStatusFailure(Number(status[1]), url, what)
    : classifyFailure(Object.assign(new Error(text), /^log list\b/.test(text) ? { collectionClass: "protocol" } : {}), { url, what });
  return { remoteError: f.message, remoteErrorClass: f.class };
}

export const LOG_LIST_TTL_MS = 24 * 3600_000;
export const LOG_LIST_FALLBACK_RETRY_MS = 3600_000;

export interface CachedLogList {
  list: LogList;
  source: "remote" | "bundled";
  url: string;
  fetchedAt: string;
  remoteError: string | null;
  remoteErrorClass: CollectionErrorClass | null;
}

export async function currentLogList(
  db: Db,
  config: Pick<Config, "ctLogListUrl" | "ctLogListPublicKey">,
  now: Date,
  opts: { fetch?: typeof fetch; force?: boolean } = {},
): Promise<CachedLogList> {
  const row = await db.select().from(ctLogListCache).where(eq(ctLogListCache.id, 1)).get();
  const cached: CachedLogList | null = row
    ? { list: row.list, source: row.source, url: row.url, fetchedAt: row.fetchedAt, ...storedRemoteError(row.remoteError, row.remoteErrorClass, row.url) }
    : null;
  if (cached && !opts.force && cached.url === config.ctLogListUrl) {
    const ttl = cached.source === "remote" ? LOG_LIST_TTL_MS : LOG_LIST_FALLBACK_RETRY_MS;
    if (now.getTime() - Date.parse(cached.fetchedAt) < ttl) return cached;
  }
  const loaded = await loadLogList({ url: config.ctLogListUrl, publicKeyPem: config.ctLogListPublicKey, bundled: bundledLogList, fetch: opts.fetch });
  let next: CachedLogList = {
    list: loaded.list,
    source: loaded.source,
    url: config.ctLogListUrl,
    fetchedAt: now.toISOString(),
    remoteError: loaded.remoteError ?? null,
    remoteErrorClass: loaded.remoteErrorClass ?? null,
  };
  if (loaded.source === "bundled" && cached?.source === "remote" && cached.url === config.ctLogListUrl) {
    // Keep the verified list; try again in an hour.
    next = { ...cached, remoteError: loaded.remoteError ?? null, remoteErrorClass: loaded.remoteErrorClass ?? null, fetchedAt: new Date(now.getTime() - LOG_LIST_TTL_MS + LOG_LIST_FALLBACK_RETRY_MS).toISOString() };
  }
  if (loaded.remoteError) {
    // Expected when the source is down: one line per interval, not a stack (the response of GET /api/ct-log/logs says it too).
    logSourceFailure("CT log list", { class: loaded.remoteErrorClass ?? "internal", message: `${loaded.remoteError}; using the ${next.source === "remote" ? "list fetched before" : "bundled copy"}` }, now.getTime());
  }
  const values = { id: 1, url: next.url, source: next.source, remoteError: next.remoteError, remoteErrorClass: next.remoteErrorClass, list: next.list, fetchedAt: next.fetchedAt };
  await db.insert(ctLogListCache).values(values).onConflictDoUpdate({ target: ctLogListCache.id, set: values }).run();
  return next;
}

/** The response of GET /api/cert-watcher/ct-log-list. */
export function describeLogList(c: CachedLogList) {
  const monitored = new Set(monitoredLogs(c.list).map((l) => l.logId));
  return {
    source: c.source,
    fetched_at: c.fetchedAt,
    version: c.list.version,
    log_list_timestamp: c.list.logListTimestamp,
    remote_error: c.remoteError ?? "",
    logs: c.list.logs.map((l) => ({
      description: l.description,
      operator: l.operator,
      log_id: l.logId,
      protocol: l.protocol,
      url: l.readUrl,
      state: l.state?.name ?? "",
      state_timestamp: l.state?.timestamp ?? null,
      mmd: l.mmd,
      monitored: monitored.has(l.logId),
      final_tree_size: l.state?.finalTreeHead?.treeSize ?? null,
      temporal_interval: l.temporalInterval ? { start_inclusive: l.temporalInterval.startInclusive, end_exclusive: l.temporalInterval.endExclusive } : null,
    })),
  };
}
