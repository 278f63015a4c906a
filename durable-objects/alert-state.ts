/**
 * AlertState: one Durable Object per organization holding what alert evaluation
 * needs hot, and serializing what must not race:
 *  - compiled rules per module (compiled once per rule version),
 *  - the organization's rule lists compiled for lookups; re-read when the API says
 *    they changed, and at the latest every LIST_REFRESH_MS (spec: <= 60 s),
 *  - throttle state (`throttle_seconds` per rule and subject) and de-duplication of
 *    an event delivered twice (remembered DEDUP_TTL_MS), in durable storage,
 *  - delivery of fired alerts: its alarm runs the due deliveries with backoff.
 */
import { DurableObject } from "cloudflare:workers";
import { and, eq, sql } from "drizzle-orm";
import { createDb, type Db } from "../src/db/client";
import { alertDeliveries, alertHistory, alertRules, alertTemplates } from "../src/db/schema";
import { loadConfig, type Bindings } from "../src/env";
import { compileRule, evaluate, prepareEvent, type CompiledRule } from "../src/modules/alerting/cel/engine";
import { compileListData, EMPTY_LIST_DATA, type ListData } from "../src/modules/alerting/cel/list-data";
import { renderTemplate } from "../src/modules/alerting/cel/template";
import type { ModuleName } from "../src/modules/alerting/cel/variables";
import { deliverDue } from "../src/modules/alerting/delivery";
import { eventId, eventSubject, eventSummary } from "../src/modules/alerting/subjects";
import { loadListsForRules } from "../src/modules/lists/service";

export const LIST_REFRESH_MS = 30_000;
export const RULE_REFRESH_MS = 30_000;
export const DEDUP_TTL_MS = 24 * 3_600_000;

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

export interface ProcessResult {
  event_id: string;
  duplicate: boolean;
  fired: { rule_id: number; history_id: number }[];
  throttled: number[];
  errors: { rule_id: number; error: string }[];
}

export class AlertState extends DurableObject<Bindings> {
  private lists: { data: ListData; names: string[]; loadedAt: number } | null = null;
  private rules = new Map<ModuleName, { rules: LoadedRule[]; loadedAt: number }>();
  private delivery: Promise<unknown> = Promise.resolve();

  private get db(): Db {
    return createDb(this.env.DB);
  }

  /** Called by the API after a list or rule change: the next event sees it. */
  async invalidate(what: "lists" | "rules"): Promise<void> {
    if (what === "lists") this.lists = null;
    else this.rules.clear();
  }

  private async listData(organizationId: number, nowMs: number) {
    if (!this.lists || nowMs - this.lists.loadedAt >= LIST_REFRESH_MS) {
      const lists = await loadListsForRules(this.db, organizationId);
      this.lists = { data: lists.length ? compileListData(lists) : EMPTY_LIST_DATA, names: lists.map((l) => l.name), loadedAt: nowMs };
      // Rules were compiled against the old set of list names.
      this.rules.clear();
    }
    return this.lists;
  }

  private async rulesOf(organizationId: number, module: ModuleName, listNames: string[], nowMs: number): Promise<LoadedRule[]> {
    const cached = this.rules.get(module);
    if (cached && nowMs - cached.loadedAt < RULE_REFRESH_MS) return cached.rules;
    const rows = await this.db
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
   * Evaluates an event against the organization's enabled rules of its module;
   * records each fired alert with one delivery per channel, and schedules delivery.
   */
  async process(organizationId: number, module: ModuleName, event: Record<string, unknown>, nowMs = Date.now()): Promise<ProcessResult> {
    const id = await eventId(module, event);
    const result: ProcessResult = { event_id: id, duplicate: false, fired: [], throttled: [], errors: [] };
    const seenKey = `evt:${module}:${id}`;
    const seenAt = await this.ctx.storage.get<number>(seenKey);
    if (seenAt !== undefined && nowMs - seenAt < DEDUP_TTL_MS) return { ...result, duplicate: true };

    const lists = await this.listData(organizationId, nowMs);
    const rules = await this.rulesOf(organizationId, module, lists.names, nowMs);
    const prepared = prepareEvent(module, event);
    const subject = eventSubject(module, event);
    const summary = eventSummary(module, event);
    const firedAt = new Date(nowMs).toISOString();
    const db = this.db;

    for (const rule of rules) {
      if (!rule.compiled) {
        result.errors.push({ rule_id: rule.id, error: rule.compileError ?? "does not compile" });
        continue;
      }
      const r = evaluate(rule.compiled, prepared, lists.data);
      if (r.error) result.errors.push({ rule_id: rule.id, error: r.error });
      if (!r.matched) continue;
      const throttleKey = `thr:${rule.id}:${subject}`;
      if (rule.throttleSeconds > 0) {
        const last = await this.ctx.storage.get<number>(throttleKey);
        if (last !== undefined && nowMs - last < rule.throttleSeconds * 1000) {
          result.throttled.push(rule.id);
          continue;
        }
      }
      const message = rule.template
        ? { subject: renderTemplate(rule.template.subject, event), body: renderTemplate(rule.template.body, event) }
        : { subject: `[${rule.severity}] ${rule.name}: ${summary}`, body: `${summary}\n\nRule: ${rule.name} (${rule.severity})\nModule: ${module}\nEvent:\n${JSON.stringify(event, null, 2)}` };
      const [inserted] = await db.batch([
        db
          .insert(alertHistory)
          .values({
            organizationId,
            module,
            ruleId: rule.id,
            ruleName: rule.name,
            severity: rule.severity,
            subject,
            eventId: id,
            eventSummary: summary,
            message,
            event,
            firedAt,
          })
          .returning({ id: alertHistory.id }),
        ...rule.channelIds.map((channelId) =>
          db.insert(alertDeliveries).values({
            organizationId,
            historyId: sqlLastHistoryId(),
            channelId,
            status: "pending",
            nextAttemptAt: firedAt,
            updatedAt: firedAt,
          }),
        ),
      ]);
      if (rule.throttleSeconds > 0) await this.ctx.storage.put(throttleKey, nowMs);
      result.fired.push({ rule_id: rule.id, history_id: inserted[0].id });
    }
    await this.ctx.storage.put(seenKey, nowMs);
    if (result.fired.length) {
      await this.ctx.storage.put("organizationId", organizationId);
      await this.scheduleDelivery(nowMs);
    }
    return result;
  }

  private async scheduleDelivery(atMs: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > atMs) await this.ctx.storage.setAlarm(atMs);
  }

  /**
   * Runs due deliveries for this organization. Runs are chained: D1 reads do not
   * close the object's input gate, so without the chain an alarm and an explicit
   * call could pick the same pending rows and send twice.
   */
  async deliverNow(organizationId: number, nowMs?: number) {
    const run = this.delivery.then(async () => {
      await this.ctx.storage.put("organizationId", organizationId);
      const r = await deliverDue(this.db, loadConfig(this.env), organizationId, new Date(nowMs ?? Date.now()));
      if (r.nextDueAt) await this.ctx.storage.setAlarm(Math.max(Date.parse(r.nextDueAt), Date.now() + 1000));
      return r;
    });
    this.delivery = run.catch(() => undefined);
    return run;
  }

  override async alarm() {
    const organizationId = await this.ctx.storage.get<number>("organizationId");
    if (organizationId !== undefined) await this.deliverNow(organizationId);
    await this.pruneDedup(Date.now());
  }

  private async pruneDedup(nowMs: number) {
    const seen = await this.ctx.storage.list<number>({ prefix: "evt:" });
    const stale = [...seen].filter(([, at]) => nowMs - at >= DEDUP_TTL_MS).map(([k]) => k);
    for (let i = 0; i < stale.length; i += 128) await this.ctx.storage.delete(stale.slice(i, i + 128));
  }
}

/**
 * Deliveries inserted in the same batch as their alert reference it: a D1 batch is
 * one transaction, so the newest alert_history row is the one just inserted.
 */
function sqlLastHistoryId() {
  return sql`(SELECT max(id) FROM alert_history)`;
}
