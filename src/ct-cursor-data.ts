/**
 * The API Worker's side of the CursorData port (src/modules/ct-log/cursor/data.ts), for
 * log cursors run by the ingest Worker (wrangler.ingest.toml): they reach this
 * entrypoint through their CT_CURSOR_DATA service binding, and it does what the
 * Durable Object would do itself in a one-Worker deployment, over this Worker's D1 and
 * event queue. The ingest Worker is the only caller a service binding allows: the
 * entrypoint is not reachable over HTTP.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import { backgroundD1 } from "./db/background";
import { createDb } from "./db/client";
import type { Bindings } from "./env";
import type { CursorStatus } from "./modules/ct-log/cursor-contract";
import { d1CursorData, type CursorData } from "./modules/ct-log/cursor/data";
import type { PublishedQueue } from "./modules/ct-log/fanout";
import type { LogRef, ObservedEntry } from "./modules/ct-log/ingest";

/**
 * The port over this Worker's D1 (through the background handle: publications must not
 * hold the thread from requests) and its event queue. The one place that builds it: the
 * entrypoint below and, deployed as one Worker, the CtLogCursor object itself.
 */
export function serviceCursorData(env: Pick<Bindings, "DB" | "EVENTS_QUEUE">): CursorData {
  return d1CursorData(createDb(backgroundD1(env.DB)), env.EVENTS_QUEUE as unknown as PublishedQueue);
}

export class CtCursorData extends WorkerEntrypoint<Bindings> implements CursorData {
  private get data(): CursorData {
    return serviceCursorData(this.env);
  }
  filterGeneration() {
    return this.data.filterGeneration();
  }
  filterRows() {
    return this.data.filterRows();
  }
  publish(log: LogRef, from: number, to: number, observed: ObservedEntry[]) {
    return this.data.publish(log, from, to, observed);
  }
  saveLogState(status: Omit<CursorStatus, "inProgress">, updatedAt: string) {
    return this.data.saveLogState(status, updatedAt);
  }
}
