/** The monitored CT logs and their ingestion state, as an organization sees them. */
import { eq, isNull } from "drizzle-orm";
import { ctFilters, ctLogStates } from "../../db/schema";
import type { Config } from "../../env";
import type { Tenant } from "../../platform/tenant";
import { logCollection, logRecord } from "./collection";
import { currentLogList } from "./loglist-service";
import { monitoredLogs } from "./loglist";

type IngestionState = "not_started" | "up_to_date" | "catching_up" | "backing_off";

/**
 * Every monitored log of the log list in use, with the state its cursor last recorded
 * (ct_log_states, written at every verified batch) and its collection state, and the log
 * list itself as a source (fetched or bundled, and why). Lag in seconds: between the
 * newest tree head and the last verified entry, as the log timestamped them (0 when
 * caught up). As the organization sees it: `relied_upon` when it has an enabled filter.
 */
export async function listLogs(t: Tenant, config: Pick<Config, "ctLogListUrl" | "ctLogListPublicKey">, now: Date) {
  const cached = await currentLogList(t.db, config, now);
  const logs = monitoredLogs(cached.list);
  const [stateRows, filters] = await Promise.all([t.db.select().from(ctLogStates).all(), t.count(ctFilters, eq(ctFilters.enabled, true), isNull(ctFilters.deletedAt))]);
  const states = new Map(stateRows.map((s) => [s.logId, s]));
  const rows = logs.map((log) => {
    const s = states.get(log.logId);
    const lagEntries = s?.treeSize != null && s.verifiedPosition != null ? Math.max(0, s.treeSize - s.verifiedPosition) : null;
    const lagSeconds =
      lagEntries === null ? null : lagEntries === 0 || !s?.treeHeadAt || !s.lastEntryAt ? 0 : Math.max(0, Math.round((Date.parse(s.treeHeadAt) - Date.parse(s.lastEntryAt)) / 1000));
    const backingOff = s?.backoffUntil != null && Date.parse(s.backoffUntil) > now.getTime();
    const collection = logCollection(logRecord(s, log), now);
    return {
      log_id: log.logId,
      description: log.description,
      operator: log.operator,
      protocol: log.protocol,
      url: log.readUrl,
      state: log.state?.name ?? "unknown",
      ingestion: (!s || s.verifiedPosition === null ? "not_started" : backingOff ? "backing_off" : lagEntries ? "catching_up" : "up_to_date") as IngestionState,
      tree_size: s?.treeSize ?? null,
      verified_position: s?.verifiedPosition ?? null,
      lag_entries: lagEntries,
      lag_seconds: lagSeconds,
      tree_head_at: s?.treeHeadAt ?? null,
      verified_tree_head_at: s?.verifiedTreeHeadAt ?? null,
      last_entry_at: s?.lastEntryAt ?? null,
      last_run_at: s?.lastRunAt ?? null,
      last_error: collection.error?.message ?? null,
      consecutive_failures: s?.consecutiveFailures ?? 0,
      next_retry_at: backingOff ? s!.backoffUntil : null,
      entries_processed: s?.entriesProcessed ?? 0,
      matches_found: s?.matchesFound ?? 0,
      collection,
    };
  });
  const count = (state: string) => rows.filter((r) => r.collection.state === state).length;
  return {
    log_list: {
      source: cached.source === "remote" ? ("fetched" as const) : ("bundled" as const),
      url: cached.url,
      fetched_at: cached.fetchedAt,
      version: cached.list.version,
      log_list_timestamp: cached.list.logListTimestamp,
      error: cached.remoteError && cached.remoteErrorClass ? { class: cached.remoteErrorClass, message: cached.remoteError } : null,
    },
    summary: {
      monitored: rows.length,
      ok: count("ok"),
      failing: count("failing"),
      pending: count("pending"),
      relied_upon: filters > 0,
      last_success_at: rows.map((r) => r.collection.last_success_at).reduce<string | null>((m, x) => (x !== null && (m === null || x > m) ? x : m), null),
    },
    logs: rows,
  };
}
