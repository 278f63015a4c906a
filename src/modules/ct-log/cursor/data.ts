/**
 * Everything a log cursor needs from the rest of the service, as one small port: the
 * filters it matches against, where verified batches are published, and the public
 * mirror of its state. The cursor never holds a D1 handle or a queue itself, so it can
 * run in a Worker of its own (the local topology of `npm start`, wrangler.ingest.toml):
 * there the port is a service binding to the API Worker's CtCursorData entrypoint
 * (src/ct-cursor-data.ts), which implements it with d1CursorData below. Deployed as one
 * Worker, the Durable Object uses the same d1CursorData port directly (serviceCursorData
 * of src/ct-cursor-data.ts builds it for both).
 *
 * Every value crossing the port is plain data (structured-clonable for RPC).
 */
import type { Db } from "../../../db/client";
import type { CursorStatus } from "../cursor-contract";
import { publishVerified, type PublishedQueue } from "../fanout";
import { filterGeneration, loadFilterRows, loadTyposquatRows } from "../filter-source";
import type { FilterRow } from "../filters/label-index";
import type { LogRef, ObservedEntry } from "../ingest";
import { saveLogState } from "../store";
import type { TyposquatFilterRow } from "../typosquat/index";

export interface CursorData {
  /** Moves whenever any organization's filters change (the cursor rebuilds its indexes then). */
  filterGeneration(): Promise<number>;
  /** Every organization's enabled filters, and those with typosquatting detection on. */
  filterRows(): Promise<{ filters: FilterRow[]; typosquats: TyposquatFilterRow[] }>;
  /** Makes the observations of verified entries [from, to) visible and announces them to the fan-out. Idempotent. */
  publish(log: LogRef, from: number, to: number, observed: ObservedEntry[]): Promise<void>;
  /** Mirrors the cursor's status for GET /api/ct-log/logs. */
  saveLogState(status: Omit<CursorStatus, "inProgress">, updatedAt: string): Promise<void>;
}

declare module "../../../env" {
  interface Bindings {
    /**
     * Only in the ingest Worker (wrangler.ingest.toml): the API Worker's CtCursorData
     * entrypoint, through which its log cursors reach D1 and the queue.
     */
    CT_CURSOR_DATA?: CursorData;
  }
}

/** The port over the service's D1 database and event queue. */
export function d1CursorData(db: Db, queue: PublishedQueue): CursorData {
  return {
    filterGeneration: () => filterGeneration(db),
    filterRows: async () => {
      const [filters, typosquats] = await Promise.all([loadFilterRows(db), loadTyposquatRows(db)]);
      return { filters, typosquats };
    },
    publish: (log, from, to, observed) => publishVerified(db, queue, log, from, to, observed),
    saveLogState: (status, updatedAt) => saveLogState(db, status, updatedAt),
  };
}
