/**
 * Alerts open and resolve. A sent alert is `open`; a person acknowledges or resolves it
 * (API, console), or its condition ends by itself and it resolves automatically. Each
 * change is told to the channels that were told of the alert (PagerDuty and Opsgenie
 * close their incident under the same key).
 *
 * Conditions that end by themselves, judged from a later event about the same asset
 * that the alert's rule no longer matches:
 *   - any module: collection recovered (`collection_recovered` after the alert's
 *     `collection_failing`);
 *   - cert-watcher: a successful scan (the certificate renewed or redeployed, the
 *     configuration fixed);
 *   - dns-watcher: DNSSEC validation back to `validated`, a DMARC policy restored (no
 *     regression left, a policy at least as strong as before the alert's regression),
 *     SPF no longer allowing every sender.
 * A CT sighting or an RDAP change is an event, not a condition: a person resolves it.
 */
import { and, eq, getTableColumns, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, type ALERT_STATES } from "../../db/schema";
import type { DeliveryAction } from "./channels/provider";
import type { ModuleName } from "./cel/variables";

type Ev = Record<string, any>;
export type AlertState = (typeof ALERT_STATES)[number];

const get = (e: Ev, path: string): any => path.split(".").reduce<any>((o, k) => (o == null ? undefined : o[k]), e);

/** Whether the event can end a condition at all (else no open alert is looked up for it). */
export function mayEndConditions(module: ModuleName, e: Ev): boolean {
  if (e.event_type === "collection_recovered") return true;
  if (module === "cert-watcher") return (e.event_type ?? "scan_completed") === "scan_completed" && !e.has_error;
  if (module === "dns-watcher") return (e.event_type ?? "dns_changed") === "dns_changed";
  return false;
}

const DMARC_STRENGTH: Record<string, number> = { "": 0, none: 1, quarantine: 2, reject: 3 };

/**
 * Why `event` ends the condition of an alert raised on `alertEvent` (about the same
 * asset, and the alert's rule does not match `event`), in words; null when it does not.
 */
export function conditionEnded(module: ModuleName, alertEvent: Ev, e: Ev): string | null {
  const at = (e.resolved_at ?? e.fetched_at ?? e.matched_at ?? "") as string;
  const when = at ? ` (${at})` : "";
  if (e.event_type === "collection_recovered") {
    return alertEvent.event_type === "collection_failing" ? `Collection recovered${when}: the asset is collected again.` : null;
  }
  if (alertEvent.event_type === "collection_failing") return null;
  if (module === "cert-watcher") {
    if (e.has_error) return null;
    const before = get(alertEvent, "certificate.sha256");
    const now = get(e, "certificate.sha256");
    if (before && now && before !== now) return `The certificate was renewed or redeployed: ${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"} now serves another certificate (${String(now).slice(0, 16)}…, ${e.validity_days ?? "?"} days left), which the rule no longer matches.`;
    return `A new scan of ${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"} no longer matches the rule.`;
  }
  if (module === "dns-watcher") {
    const reasons: string[] = [];
    if (get(alertEvent, "dnssec.status") !== "validated" && get(e, "dnssec.status") === "validated") reasons.push("DNSSEC validation is back to validated");
    const regressed = (get(alertEvent, "dmarc.regressions") as string[] | undefined)?.length;
    const restored = !(get(e, "dmarc.regressions") as string[] | undefined)?.length && (DMARC_STRENGTH[get(e, "dmarc.current.p") ?? ""] ?? 0) >= (DMARC_STRENGTH[get(alertEvent, "dmarc.previous.p") ?? ""] ?? 0);
    if (regressed && restored) reasons.push(`the DMARC policy is restored (p=${get(e, "dmarc.current.p") || "?"})`);
    if (get(alertEvent, "spf.allows_all") && get(e, "spf.allows_all") === false) reasons.push("SPF no longer allows every sender");
    return reasons.length ? `${e.domain ?? "The domain"}: ${reasons.join("; ")}${when}.` : null;
  }
  return null;
}

/**
 * The statements of one change of state, for one D1 batch: the alert's row (only from
 * the states it may leave, so a concurrent change makes it change nothing) and, only if
 * that changed a row (`changes()` of the statement before, in the same transaction),
 * one delivery of the action per channel that was told of the alert.
 */
export function transitionStatements(db: Db, organizationId: number, historyId: number, to: { state: "acknowledged"; by: string } | { state: "resolved"; by: string; resolution: string }, nowIso: string) {
  const from: AlertState[] = to.state === "acknowledged" ? ["open"] : ["open", "acknowledged"];
  const set = to.state === "acknowledged" ? { state: to.state, acknowledgedAt: nowIso, acknowledgedBy: to.by } : { state: to.state, resolvedAt: nowIso, resolvedBy: to.by, resolution: to.resolution };
  const action: DeliveryAction = to.state === "acknowledged" ? "acknowledge" : "resolve";
  // One delivery per channel told of the alert, as every column of the table in its order (Drizzle's insert-select).
  const value: Record<keyof typeof alertDeliveries.$inferSelect, SQL> = {
    id: sql`NULL`,
    organizationId: sql`${organizationId}`,
    historyId: sql`${historyId}`,
    channelId: sql`channel_id`,
    action: sql`${action}`,
    status: sql`'pending'`,
    attempts: sql`0`,
    nextAttemptAt: sql`${nowIso}`,
    lastError: sql`NULL`,
    responseStatus: sql`NULL`,
    attemptLog: sql`'[]'`,
    deliveredAt: sql`NULL`,
    updatedAt: sql`${nowIso}`,
  };
  const selected = Object.keys(getTableColumns(alertDeliveries)).map((k) => value[k as keyof typeof value]);
  return [
    db
      .update(alertHistory)
      .set(set)
      .where(and(eq(alertHistory.id, historyId), eq(alertHistory.organizationId, organizationId), inArray(alertHistory.state, from))),
    db.insert(alertDeliveries).select(
      sql`SELECT ${sql.join(selected, sql`, `)} FROM (SELECT DISTINCT channel_id FROM ${alertDeliveries}
        WHERE history_id = ${historyId} AND organization_id = ${organizationId} AND action = 'trigger') WHERE changes() = 1`,
    ),
  ];
}
