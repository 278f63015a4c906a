/**
 * Alert evaluation: events in, fired alerts (history + one pending delivery per
 * channel) out. The rules of alerting live here; the organization's AlertState
 * Durable Object holds an AlertProcessor (its caches), provides the durable memory
 * for throttling and de-duplication, and runs deliveries from its alarm.
 *
 *   - compiled rules per module, compiled once per rule version (re-read at the
 *     latest every RULE_REFRESH_MS, or at once after `invalidate("rules")`)
 *   - the organization's rule lists compiled for lookups (re-read when the API says
 *     they changed, and at the latest every LIST_REFRESH_MS, half the minute a list change may take to reach rules)
 *   - an event seen before (same id, within DEDUP_TTL_MS) is dropped: delivery of
 *     events is at least once, alerts are not
 *   - a rule fires at most once per `throttle_seconds` for the same subject
 *
 * A batch (one call per organization per batch of a producer, e.g. the CT fan-out)
 * loads rules and lists once, reads and writes the memory in bulk and inserts every
 * fired alert in one D1 transaction: a backlog of thousands of events costs a few
 * round trips, not thousands.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, alertRules, alertTemplates } from "../../db/schema";
import { loadListsForRules } from "../lists/service";
import { tenantDb } from "../../platform/tenant";
import type { BatchProcessResult, ProcessResult } from "./alert-state-contract";
import { compileRule, evaluate, prepareEvent, type CompiledRule } from "./cel/engine";
import { compileListData, EMPTY_LIST_DATA, type ListData } from "./cel/list-data";
import { renderTemplate } from "./cel/template";
import type { ModuleName } from "./cel/variables";
import { eventId, eventSubject, eventSummary } from "./subjects";

export const LIST_REFRESH_MS = 30_000;
export const RULE_REFRESH_MS = 30_000;
export const DEDUP_TTL_MS = 24 * 3_600_000;
/** D1 statements per transaction when inserting fired alerts. */
const STATEMENTS_PER_BATCH = 90;

/** Durable memory of the processor: key -> time (ms). Keys: `evt:<module>:<id>` (seen), `thr:<rule>:<subject>` (last fired). */
export interface AlertMemory {
  getMany(keys: string[]): Promise<Map<string, number>>;
  putMany(entries: Map<string, number>): Promise<void>;
}

interface LoadedRule {
  id: number;
  name: string;
  severity: string;
  channelIds: number[];
  throttleSeconds: number;
  template: { subject: string; body: string } | null;
  compiled: CompiledRule | null;
  compileError?: string;
}

export interface IncomingEvent {
  /** Stable id for de-duplication; default: SHA-256 of the event's canonical JSON (or its `event_id`). */
  id?: string;
  event: Record<string, unknown>;
}

export class AlertProcessor {
  private lists: { data: ListData; names: string[]; loadedAt: number } | null = null;
  private rules = new Map<ModuleName, { rules: LoadedRule[]; loadedAt: number }>();

  constructor(private readonly db: () => Db) {}

  /** After a list or rule change: the next event sees it. */
  invalidate(what: "lists" | "rules"): void {
    if (what === "lists") this.lists = null;
    else this.rules.clear();
  }

  private async listData(organizationId: number, nowMs: number) {
    if (!this.lists || nowMs - this.lists.loadedAt >= LIST_REFRESH_MS) {
      const lists = await loadListsForRules(tenantDb(this.db(), organizationId));
      this.lists = { data: lists.length ? compileListData(lists) : EMPTY_LIST_DATA, names: lists.map((l) => l.name), loadedAt: nowMs };
      // Rules were compiled against the old set of list names.
      this.rules.clear();
    }
    return this.lists;
  }

  private async rulesOf(organizationId: number, module: ModuleName, listNames: string[], nowMs: number): Promise<LoadedRule[]> {
    const cached = this.rules.get(module);
    if (cached && nowMs - cached.loadedAt < RULE_REFRESH_MS) return cached.rules;
    const rows = await this.db()
      .select({ rule: alertRules, template: alertTemplates })
      .from(alertRules)
      .leftJoin(alertTemplates, and(eq(alertTemplates.id, alertRules.templateId), eq(alertTemplates.organizationId, organizationId)))
      .where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.module, module), eq(alertRules.enabled, true)))
      .all();
    const rules = rows.map(({ rule, template }): LoadedRule => {
      const c = compileRule(module, rule.expression, listNames);
      return {
        id: rule.id,
        name: rule.name,
        severity: rule.severity,
        channelIds: rule.channelIds,
        throttleSeconds: rule.throttleSeconds,
        template: template ? { subject: template.subject, body: template.body } : null,
        compiled: c.ok ? c : null,
        compileError: c.ok ? undefined : c.message,
      };
    });
    this.rules.set(module, { rules, loadedAt: nowMs });
    return rules;
  }

  /**
   * Evaluates events of one module against the organization's enabled rules, in order;
   * records each fired alert with one pending delivery per channel. Returns one result
   * per event; the caller schedules delivery when something fired.
   */
  async process(memory: AlertMemory, organizationId: number, module: ModuleName, incoming: readonly IncomingEvent[], nowMs: number): Promise<ProcessResult[]> {
    const ids = await Promise.all(incoming.map((e) => (e.id ? Promise.resolve(e.id) : eventId(module, e.event))));
    const results: ProcessResult[] = ids.map((id) => ({ event_id: id, duplicate: false, fired: [], throttled: [], errors: [] }));
    const seen = await memory.getMany(ids.map((id) => `evt:${module}:${id}`));
    const lists = await this.listData(organizationId, nowMs);
    const rules = await this.rulesOf(organizationId, module, lists.names, nowMs);
    const firedAt = new Date(nowMs).toISOString();
    const written = new Map<string, number>();

    // Evaluate everything first; throttling state is read once for every subject that fired.
    const firing: { index: number; rule: LoadedRule; subject: string }[] = [];
    const batchSeen = new Set<string>();
    incoming.forEach(({ event }, index) => {
      const key = `evt:${module}:${ids[index]}`;
      const at = seen.get(key);
      if ((at !== undefined && nowMs - at < DEDUP_TTL_MS) || batchSeen.has(key)) {
        results[index].duplicate = true;
        return;
      }
      batchSeen.add(key);
      written.set(key, nowMs);
      const prepared = prepareEvent(module, event);
      const subject = eventSubject(module, event);
      for (const rule of rules) {
        if (!rule.compiled) {
          results[index].errors.push({ rule_id: rule.id, error: rule.compileError ?? "does not compile" });
          continue;
        }
        const r = evaluate(rule.compiled, prepared, lists.data);
        if (r.error) results[index].errors.push({ rule_id: rule.id, error: r.error });
        if (r.matched) firing.push({ index, rule, subject });
      }
    });
    const throttleKeys = [...new Set(firing.filter((f) => f.rule.throttleSeconds > 0).map((f) => `thr:${f.rule.id}:${f.subject}`))];
    const lastFired = await memory.getMany(throttleKeys);

    const db = this.db();
    const statements: { index: number; rule: LoadedRule; group: unknown[] }[] = [];
    for (const f of firing) {
      const key = `thr:${f.rule.id}:${f.subject}`;
      if (f.rule.throttleSeconds > 0) {
        const last = written.get(key) ?? lastFired.get(key);
        if (last !== undefined && nowMs - last < f.rule.throttleSeconds * 1000) {
          results[f.index].throttled.push(f.rule.id);
          continue;
        }
        written.set(key, nowMs);
      }
      const event = incoming[f.index].event;
      const summary = eventSummary(module, event);
      const message = f.rule.template
        ? { subject: renderTemplate(f.rule.template.subject, event), body: renderTemplate(f.rule.template.body, event) }
        : { subject: `[${f.rule.severity}] ${f.rule.name}: ${summary}`, body: `${summary}\n\nRule: ${f.rule.name} (${f.rule.severity})\nModule: ${module}\nEvent:\n${JSON.stringify(event, null, 2)}` };
      statements.push({
        index: f.index,
        rule: f.rule,
        group: [
          db
            .insert(alertHistory)
            .values({ organizationId, module, ruleId: f.rule.id, ruleName: f.rule.name, severity: f.rule.severity, subject: f.subject, eventId: ids[f.index], eventSummary: summary, message, event, firedAt })
            .returning({ id: alertHistory.id }),
          ...f.rule.channelIds.map((channelId) =>
            db.insert(alertDeliveries).values({ organizationId, historyId: sqlLastHistoryId(), channelId, status: "pending", nextAttemptAt: firedAt, updatedAt: firedAt }),
          ),
        ],
      });
    }
    // Whole alerts (history + its deliveries) per transaction.
    for (let i = 0; i < statements.length; ) {
      const chunk: typeof statements = [];
      let size = 0;
      while (i < statements.length && (chunk.length === 0 || size + statements[i].group.length <= STATEMENTS_PER_BATCH)) {
        size += statements[i].group.length;
        chunk.push(statements[i++]);
      }
      const out = await db.batch(chunk.flatMap((c) => c.group) as [never, ...never[]]);
      let at = 0;
      for (const c of chunk) {
        const [row] = out[at] as { id: number }[];
        results[c.index].fired.push({ rule_id: c.rule.id, history_id: row.id });
        at += c.group.length;
      }
    }
    await memory.putMany(written);
    return results;
  }
}

/** One result for a batch: counts, and every fired alert with its event. */
export function summarize(results: readonly ProcessResult[]): BatchProcessResult {
  const errors = new Map<number, string>();
  for (const r of results) for (const e of r.errors) if (!errors.has(e.rule_id)) errors.set(e.rule_id, e.error);
  return {
    events: results.length,
    duplicates: results.filter((r) => r.duplicate).length,
    fired: results.flatMap((r) => r.fired.map((f) => ({ ...f, event_id: r.event_id }))),
    throttled: results.reduce((n, r) => n + r.throttled.length, 0),
    errors: [...errors].map(([rule_id, error]) => ({ rule_id, error })),
  };
}

/**
 * Deliveries inserted in the same batch as their alert reference it: a D1 batch is
 * one transaction, so the newest alert_history row is the one just inserted.
 */
function sqlLastHistoryId() {
  return sql`(SELECT max(id) FROM alert_history)`;
}
