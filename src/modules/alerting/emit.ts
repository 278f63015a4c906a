/**
 * The entry points every module uses to raise events:
 *   await emitEvent(env, "rdap", organizationId, event)
 *   await emitEvents(env, "ct-log", organizationId, [{ id, event }, ...])   one call per batch
 * They hand the events to the organization's AlertState Durable Object, which
 * evaluates the enabled rules of that module and dispatches notifications.
 *
 * `ModuleEvents` names each module's event type (declared once, in the module's
 * events.ts), so an event of the wrong shape does not compile.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { alertRules } from "../../db/schema";
import type { Bindings } from "../../env";
import type { ModuleName } from "./cel/variables";
import type { BatchProcessResult, ProcessResult } from "./alert-state-contract";
import type { CertScanEvent } from "../cert-watcher/events";
import type { RdapEvent } from "../rdap/events";
import type { DnsWatcherEvent } from "../dns-watcher/events";
import type { CtLogEvent } from "../ct-log/events";

type UntypedEvent = Record<string, unknown>;

/** Each module's event type. A module not yet declared here emits plain JSON objects. */
export interface ModuleEvents {
  rdap: RdapEvent;
  "ct-log": CtLogEvent;
  "cert-watcher": CertScanEvent;
  "dns-watcher": DnsWatcherEvent;
}

export function alertStateOf(env: Bindings, organizationId: number) {
  return env.ALERT_STATE.get(env.ALERT_STATE.idFromName(`org:${organizationId}`));
}

export async function emitEvent<M extends ModuleName>(env: Bindings, module: M, organizationId: number, event: ModuleEvents[M]): Promise<ProcessResult> {
  return alertStateOf(env, organizationId).process(organizationId, module, event as unknown as UntypedEvent);
}

/**
 * A batch of one module's events of one organization, in one call: producers with many
 * events (the CT fan-out) use this. `id` is the event's stable identity: the same id
 * twice (a retried batch) alerts once.
 */
export async function emitEvents<M extends ModuleName>(
  env: Bindings,
  module: M,
  organizationId: number,
  events: { id: string; event: ModuleEvents[M] }[],
  nowMs?: number,
): Promise<BatchProcessResult> {
  const untyped = events.map((e) => ({ id: e.id, event: e.event as unknown as UntypedEvent }));
  return alertStateOf(env, organizationId).processBatch(organizationId, module, untyped, nowMs);
}

/**
 * Of these organizations, those with at least one enabled rule of the module. A producer
 * of many events (the CT fan-out) skips the others: with no rule, nothing can fire, and
 * waking their AlertState (loading rules and lists) for nothing would be the costliest
 * part of the batch. (A rule created meanwhile sees the next events, as with AlertState's
 * own rule cache.)
 */
export async function organizationsWithRules(db: Db, module: ModuleName, organizationIds: readonly number[]): Promise<Set<number>> {
  if (!organizationIds.length) return new Set();
  const rows = await db
    .selectDistinct({ organizationId: alertRules.organizationId })
    .from(alertRules)
    .where(and(eq(alertRules.module, module), eq(alertRules.enabled, true), inJsonArray(alertRules.organizationId, organizationIds)))
    .all();
  return new Set(rows.map((r) => r.organizationId));
}

/** Tells the organization's alert state that lists or rules changed (best effort: it also re-reads on a timer). */
export async function notifyAlertState(env: Bindings, organizationId: number, what: "lists" | "rules"): Promise<void> {
  try {
    await alertStateOf(env, organizationId).invalidate(what);
  } catch (err) {
    console.error(`alert state invalidate(${what}) failed; it refreshes within 60 s: ${String(err)}`);
  }
}
