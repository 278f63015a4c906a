/**
 * Alert evaluation: events in, alerts (history + one pending delivery per channel)
 * out. The rules of alerting live here; the organization's AlertState Durable Object
 * holds an AlertProcessor (its caches), provides the durable memory for throttling and
 * de-duplication, and runs deliveries from its alarm.
 *
 *   - compiled rules per module, compiled once per rule version (re-read at the
 *     latest every RULE_REFRESH_MS, or at once after `invalidate("rules")`)
 *   - the organization's rule lists compiled for lookups (re-read when the API says
 *     they changed, and at the latest every LIST_REFRESH_MS, half the minute a list change may take to reach rules)
 *   - an event its producer hands over again (the same `id`, a retried batch) is not
 *     evaluated again: it is the same event, already recorded
 *   - de-duplication keys on the rule, the asset and the content: a rule that already
 *     alerted on the same content for the same asset within DEDUP_TTL_MS does not send
 *     it again (delivery of events is at least once, alerts are not); the same content
 *     from another asset (a second monitor of one endpoint) alerts on its own
 *   - a rule fires at most once per `throttle_seconds` for the same subject
 *
 * Nothing matched disappears: a match that is not sent (a duplicate, throttled) is an
 * alert_history row with status "suppressed", its reason, the alert it repeats and
 * until when such matches stay suppressed.
 *
 * A batch (one call per organization per batch of a producer, e.g. the CT fan-out)
 * loads rules and lists once, reads and writes the memory in bulk and inserts the
 * alerts in few D1 transactions: a backlog of thousands of events costs a few round
 * trips, not thousands.
 */
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, alertRules, alertTemplates, type SUPPRESSED_REASONS } from "../../db/schema";
import { loadListsForRules } from "../lists/contract";
import { tenantDb } from "../../platform/tenant";
import type { BatchProcessResult, ProcessResult, SuppressionPreview } from "./alert-state-contract";
import { compileRule, evaluate, prepareEvent, type CompiledRule } from "./cel/engine";
import { compileListData, EMPTY_LIST_DATA, type ListData } from "./cel/list-data";
import { renderTemplate } from "./cel/template";
import type { ModuleName } from "./cel/variables";
import { conditionEnded, mayEndConditions, transitionStatements } from "./lifecycle";
import { alertKeyOf, eventAsset, eventId, eventSubject, eventSummary } from "./subjects";

export const LIST_REFRESH_MS = 30_000;
export const RULE_REFRESH_MS = 30_000;
export const DEDUP_TTL_MS = 24 * 3_600_000;
/** The longest throttle a rule may have (RuleBody): throttle memory older than this is forgotten. */
export const MAX_THROTTLE_MS = 604_800_000;
/** D1 statements per transaction when inserting alerts. */
const STATEMENTS_PER_BATCH = 90;
/** Values per `IN (...)` (D1 binds at most 100 parameters per statement). */
const KEYS_PER_QUERY = 90;

export type SuppressedReason = (typeof SUPPRESSED_REASONS)[number];

/** What the memory keeps of an alert that was sent: when, and which history row it is. */
export interface Remembered {
  at: number;
  /** null for entries written before alert ids were remembered. */
  alertId: number | null;
}

/**
 * Durable memory of the processor. Keys: `dup:<rule>:<asset>:<content hash>` (this rule
 * sent this content for this asset), `thr:<rule>:<subject>` (this rule last sent for this
 * subject) and `evt:<module>:<id>` (the producer handed over the event with this id).
 */
export interface AlertMemory {
  getMany(keys: string[]): Promise<Map<string, Remembered>>;
  putMany(entries: Map<string, Remembered>): Promise<void>;
}

export const dedupKey = (ruleId: number, asset: string, contentHash: string) => `dup:${ruleId}:${asset}:${contentHash}`;
export const redeliveryKey = (module: ModuleName, id: string) => `evt:${module}:${id}`;
export const throttleKey = (ruleId: number, subject: string) => `thr:${ruleId}:${subject}`;

/** Why a match is not sent, or null when it is: duplicate first (the very same content), then throttle. */
export interface Suppression {
  reason: SuppressedReason;
  /** The alert this match repeats; null when the memory predates alert ids. */
  repeats: Remembered;
  /** Until when (ms) the same match stays suppressed. */
  until: number;
}

export function suppressionOf(
  rule: { id: number; throttleSeconds: number },
  keys: { dup: string; thr: string },
  lookup: (key: string) => Remembered | undefined,
  nowMs: number,
): Suppression | null {
  const dup = lookup(keys.dup);
  if (dup && nowMs - dup.at < DEDUP_TTL_MS) return { reason: "duplicate", repeats: dup, until: dup.at + DEDUP_TTL_MS };
  if (rule.throttleSeconds > 0) {
    const last = lookup(keys.thr);
    const window = rule.throttleSeconds * 1000;
    if (last && nowMs - last.at < window) return { reason: "throttled", repeats: last, until: last.at + window };
  }
  return null;
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
  /**
   * The producer's identity of the event (e.g. the CT match): handed over again within
   * 24 h it is not evaluated again. De-duplication of alerts keys on the content instead
   * (SHA-256 of the canonical JSON, or its `event_id`), which is also the id without this.
   */
  id?: string;
  event: Record<string, unknown>;
}

/** A rule that matched an event, and what becomes of it. */
interface Match {
  /** The alert's key (sent matches): open alerts of it are updated. */
  alertKey: string;
  index: number;
  rule: LoadedRule;
  asset: string;
  subject: string;
  keys: { dup: string; thr: string };
  suppression: Suppression | null;
}

/** A match sent earlier in the same batch: its alert id is known once inserted, by its position among those sent. */
type SentInBatch = Remembered & { sentAs: number };

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
   * records each match: sent (a new alert, or an update of the open alert of the same
   * key, with one pending delivery per channel) or suppressed (with its reason and the
   * alert it repeats); resolves the open alerts whose condition an event shows ended.
   * Returns one result per event; the caller schedules delivery when something was sent.
   */
  async process(memory: AlertMemory, organizationId: number, module: ModuleName, incoming: readonly IncomingEvent[], nowMs: number): Promise<ProcessResult[]> {
    const contents = await Promise.all(incoming.map((e) => eventId(module, e.event)));
    const ids = incoming.map((e, i) => e.id ?? contents[i]);
    const results: ProcessResult[] = ids.map((id) => ({ event_id: id, redelivered: false, duplicate: false, fired: [], suppressed: [], throttled: [], resolved: [], errors: [] }));
    const lists = await this.listData(organizationId, nowMs);
    const rules = await this.rulesOf(organizationId, module, lists.names, nowMs);

    // An event its producer hands over again (same id: a retried batch) is the same
    // event, already evaluated and recorded: it is not a second match.
    const deliveryKeys = incoming.map((e, i) => (e.id ? redeliveryKey(module, ids[i]) : null));
    const delivered = await memory.getMany(deliveryKeys.filter((k): k is string => k !== null));
    const written = new Map<string, Remembered>();

    const matches: Match[] = [];
    const evaluated: { index: number; asset: string; matchedRules: Set<number> }[] = [];
    incoming.forEach(({ event }, index) => {
      const key = deliveryKeys[index];
      if (key) {
        const before = written.get(key) ?? delivered.get(key);
        if (before && nowMs - before.at < DEDUP_TTL_MS) {
          results[index].redelivered = true;
          return;
        }
        written.set(key, { at: nowMs, alertId: null });
      }
      const prepared = prepareEvent(module, event);
      const asset = eventAsset(module, event);
      const subject = eventSubject(module, event);
      const matchedRules = new Set<number>();
      for (const rule of rules) {
        if (!rule.compiled) {
          results[index].errors.push({ rule_id: rule.id, error: rule.compileError ?? "does not compile" });
          continue;
        }
        const r = evaluate(rule.compiled, prepared, lists.data);
        if (r.error) results[index].errors.push({ rule_id: rule.id, error: r.error });
        if (!r.matched) continue;
        matchedRules.add(rule.id);
        matches.push({ index, rule, asset, subject, keys: { dup: dedupKey(rule.id, asset, contents[index]), thr: throttleKey(rule.id, subject) }, suppression: null, alertKey: "" });
      }
      evaluated.push({ index, asset, matchedRules });
    });

    const db = this.db();
    const nowIso = new Date(nowMs).toISOString();
    await this.resolveEnded(organizationId, module, incoming, evaluated, rules, results, nowIso);
    if (!matches.length) {
      await memory.putMany(written);
      return results;
    }

    // Decide in event order: a match sent earlier in this batch counts like one remembered.
    const remembered = await memory.getMany([...new Set(matches.flatMap((m) => (m.rule.throttleSeconds > 0 ? [m.keys.dup, m.keys.thr] : [m.keys.dup])))]);
    const sentInBatch = new Map<string, SentInBatch>();
    const sent: Match[] = [];
    for (const m of matches) {
      m.suppression = suppressionOf(m.rule, m.keys, (k) => sentInBatch.get(k) ?? remembered.get(k), nowMs);
      if (m.suppression) continue;
      const mark: SentInBatch = { at: nowMs, alertId: null, sentAs: sent.length };
      sent.push(m);
      sentInBatch.set(m.keys.dup, mark);
      if (m.rule.throttleSeconds > 0) sentInBatch.set(m.keys.thr, mark);
    }

    const row = (m: Match) => {
      const event = incoming[m.index].event;
      const summary = eventSummary(module, event);
      const message = m.rule.template
        ? { subject: renderTemplate(m.rule.template.subject, event), body: renderTemplate(m.rule.template.body, event) }
        : { subject: `[${m.rule.severity}] ${m.rule.name}: ${summary}`, body: `${summary}\n\nRule: ${m.rule.name} (${m.rule.severity})\nModule: ${module}\nEvent:\n${JSON.stringify(event, null, 2)}` };
      return { organizationId, module, ruleId: m.rule.id, ruleName: m.rule.name, severity: m.rule.severity, subject: m.subject, asset: m.asset, alertKey: m.alertKey, eventId: ids[m.index], eventSummary: summary, message, event, firedAt: nowIso };
    };
    const deliveriesOf = (m: Match, historyId: number | SQL) =>
      m.rule.channelIds.map((channelId) => db.insert(alertDeliveries).values({ organizationId, historyId: historyId as number, channelId, action: "trigger", status: "pending", nextAttemptAt: nowIso, updatedAt: nowIso }));

    // A match whose key has an open alert updates it (sent again, same key); else it opens one.
    await Promise.all(sent.map(async (m) => (m.alertKey = await alertKeyOf(organizationId, m.rule.id, m.asset, m.subject))));
    const openByKey = await this.openAlerts(organizationId, [...new Set(sent.map((m) => m.alertKey))]);
    const opening: Match[] = [];
    const updating: { m: Match; target: number | { opens: number } }[] = [];
    const openedInBatch = new Map<string, number>();
    for (const m of sent) {
      const open = openByKey.get(m.alertKey);
      const earlier = openedInBatch.get(m.alertKey);
      if (open !== undefined) updating.push({ m, target: open });
      else if (earlier !== undefined) updating.push({ m, target: { opens: earlier } });
      else {
        openedInBatch.set(m.alertKey, opening.length);
        opening.push(m);
      }
    }

    // 1. New alerts, each with its deliveries, whole per transaction.
    const openedIds = await this.insertInBatches(
      opening.map((m) => [db.insert(alertHistory).values({ ...row(m), state: "open", lastMatchedAt: nowIso }).returning({ id: alertHistory.id }), ...deliveriesOf(m, sqlLastHistoryId())]),
    );
    // 2. Matches of open alerts: the alert updated (message, event, one more occurrence) and sent again.
    const targetOf = (t: number | { opens: number }) => (typeof t === "number" ? t : openedIds[t.opens]);
    await this.runInBatches(
      updating.map(({ m, target }) => {
        const id = targetOf(target);
        const r = row(m);
        return [
          db
            .update(alertHistory)
            .set({ occurrences: sql`${alertHistory.occurrences} + 1`, lastMatchedAt: nowIso, ruleName: r.ruleName, severity: r.severity, eventId: r.eventId, eventSummary: r.eventSummary, message: r.message, event: r.event })
            .where(and(eq(alertHistory.id, id), eq(alertHistory.organizationId, organizationId))),
          ...deliveriesOf(m, id),
        ];
      }),
    );
    const alertIdOf = new Map<Match, number>([...opening.map((m, i): [Match, number] => [m, openedIds[i]]), ...updating.map(({ m, target }): [Match, number] => [m, targetOf(target)])]);
    for (const m of sent) {
      const id = alertIdOf.get(m)!;
      results[m.index].fired.push({ rule_id: m.rule.id, history_id: id, ...(opening.includes(m) ? {} : { updated: true }) });
      written.set(m.keys.dup, { at: nowMs, alertId: id });
      if (m.rule.throttleSeconds > 0) written.set(m.keys.thr, { at: nowMs, alertId: id });
    }
    const sentIds = sent.map((m) => alertIdOf.get(m)!);

    // 3. Suppressed matches, naming the alert they repeat (sent earlier, or just now).
    const suppressed = matches.filter((m) => m.suppression);
    const repeatsOf = (s: Suppression) => ("sentAs" in s.repeats ? sentIds[(s.repeats as SentInBatch).sentAs] : s.repeats.alertId);
    const suppressedIds = await this.insertInBatches(
      suppressed.map((m) => {
        const s = m.suppression!;
        return [
          db
            .insert(alertHistory)
            .values({ ...row(m), status: "suppressed", suppressedReason: s.reason, repeatsAlertId: repeatsOf(s), suppressedUntil: new Date(s.until).toISOString() })
            .returning({ id: alertHistory.id }),
        ];
      }),
    );
    suppressed.forEach((m, i) => {
      const s = m.suppression!;
      results[m.index].suppressed.push({ rule_id: m.rule.id, history_id: suppressedIds[i], reason: s.reason, repeats_alert_id: repeatsOf(s) });
      if (s.reason === "throttled") results[m.index].throttled.push(m.rule.id);
    });
    for (const r of results) r.duplicate = r.suppressed.length > 0 && r.fired.length === 0 && r.suppressed.every((x) => x.reason === "duplicate");

    await memory.putMany(written);
    return results;
  }

  /** The open (or acknowledged) alert of each key, the newest when several. */
  private async openAlerts(organizationId: number, keys: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
      const rows = await this.db()
        .select({ id: alertHistory.id, key: alertHistory.alertKey })
        .from(alertHistory)
        .where(and(eq(alertHistory.organizationId, organizationId), inArray(alertHistory.alertKey, keys.slice(i, i + KEYS_PER_QUERY)), inArray(alertHistory.state, ["open", "acknowledged"])))
        .all();
      for (const r of rows) out.set(r.key, Math.max(out.get(r.key) ?? 0, r.id));
    }
    return out;
  }

  /**
   * Resolves the open alerts whose condition an event shows ended (lifecycle.ts): same
   * module and asset, the alert's rule (enabled, so it can be judged) not matching the
   * event. Each resolution is sent on to the channels told of the alert.
   */
  private async resolveEnded(
    organizationId: number,
    module: ModuleName,
    incoming: readonly IncomingEvent[],
    evaluated: { index: number; asset: string; matchedRules: Set<number> }[],
    rules: LoadedRule[],
    results: ProcessResult[],
    nowIso: string,
  ) {
    const candidates = evaluated.filter((e) => mayEndConditions(module, incoming[e.index].event));
    if (!candidates.length) return;
    const assets = [...new Set(candidates.map((c) => c.asset))];
    const open: { id: number; ruleId: number | null; asset: string; event: unknown }[] = [];
    for (let i = 0; i < assets.length; i += KEYS_PER_QUERY) {
      open.push(
        ...(await this.db()
          .select({ id: alertHistory.id, ruleId: alertHistory.ruleId, asset: alertHistory.asset, event: alertHistory.event })
          .from(alertHistory)
          .where(and(eq(alertHistory.organizationId, organizationId), eq(alertHistory.module, module), inArray(alertHistory.asset, assets.slice(i, i + KEYS_PER_QUERY)), inArray(alertHistory.state, ["open", "acknowledged"])))
          .all()),
      );
    }
    if (!open.length) return;
    const enabled = new Set(rules.map((r) => r.id));
    const done = new Set<number>();
    const statements: unknown[][] = [];
    for (const c of candidates) {
      for (const a of open) {
        if (done.has(a.id) || a.asset !== c.asset || a.ruleId === null || !enabled.has(a.ruleId) || c.matchedRules.has(a.ruleId)) continue;
        const reason = conditionEnded(module, a.event as Record<string, unknown>, incoming[c.index].event);
        if (!reason) continue;
        done.add(a.id);
        statements.push(transitionStatements(this.db(), organizationId, a.id, { state: "resolved", by: "automatic", resolution: reason }, nowIso));
        results[c.index].resolved.push({ rule_id: a.ruleId, history_id: a.id, reason });
      }
    }
    await this.runInBatches(statements);
  }

  /** Runs groups of statements, each group whole in one transaction. */
  private async runInBatches(groups: unknown[][]): Promise<void> {
    for (let i = 0; i < groups.length; ) {
      const chunk: unknown[] = [];
      while (i < groups.length && (chunk.length === 0 || chunk.length + groups[i].length <= STATEMENTS_PER_BATCH)) chunk.push(...groups[i++]);
      await this.db().batch(chunk as [never, ...never[]]);
    }
  }

  /** Runs groups of statements (each group whole in one transaction); the id returned by each group's first statement. */
  private async insertInBatches(groups: unknown[][]): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < groups.length; ) {
      const chunk: unknown[][] = [];
      let size = 0;
      while (i < groups.length && (chunk.length === 0 || size + groups[i].length <= STATEMENTS_PER_BATCH)) {
        size += groups[i].length;
        chunk.push(groups[i++]);
      }
      const out = await this.db().batch(chunk.flat() as [never, ...never[]]);
      let at = 0;
      for (const g of chunk) {
        ids.push((out[at] as { id: number }[])[0].id);
        at += g.length;
      }
    }
    return ids;
  }

  /**
   * What would become of a match of `rule` on `event` now: sent, or suppressed and why
   * (the rule test endpoint's answer for a real event). Reads the memory, changes nothing.
   */
  async preview(memory: AlertMemory, module: ModuleName, rule: { id: number; throttleSeconds: number }, event: Record<string, unknown>, nowMs: number): Promise<SuppressionPreview> {
    const asset = eventAsset(module, event);
    const subject = eventSubject(module, event);
    const id = await eventId(module, event);
    const keys = { dup: dedupKey(rule.id, asset, id), thr: throttleKey(rule.id, subject) };
    const remembered = await memory.getMany([keys.dup, keys.thr]);
    const s = suppressionOf(rule, keys, (k) => remembered.get(k), nowMs);
    return {
      asset,
      subject,
      event_id: id,
      suppression: s ? { reason: s.reason, repeats_alert_id: s.repeats.alertId, until: new Date(s.until).toISOString() } : null,
    };
  }
}

/** One result for a batch: counts, and every fired alert with its event. */
export function summarize(results: readonly ProcessResult[]): BatchProcessResult {
  const errors = new Map<number, string>();
  for (const r of results) for (const e of r.errors) if (!errors.has(e.rule_id)) errors.set(e.rule_id, e.error);
  return {
    events: results.length,
    redelivered: results.filter((r) => r.redelivered).length,
    duplicates: results.filter((r) => r.duplicate).length,
    fired: results.flatMap((r) => r.fired.map((f) => ({ ...f, event_id: r.event_id }))),
    suppressed: results.flatMap((r) => r.suppressed.map((x) => ({ ...x, event_id: r.event_id }))),
    resolved: results.flatMap((r) => r.resolved),
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
