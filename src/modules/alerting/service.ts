/**
 * Alert rules, templates and history of one module (docs/decisions.md#alerting). A rule's CEL
 * expression is compiled and type-checked against the module's variable schema on
 * save (400 with the position), list references are recorded so a referenced list
 * cannot be deleted, and the organization's AlertState is told to recompile.
 */
import { and, count, desc, eq, gte, inArray, sql } from "drizzle-orm";
import { alertDeliveries, alertHistory, alertRuleLists, alertRules, alertTemplates, notificationChannels } from "../../db/schema";
import { badRequest, conflict, notFound, type ErrorDetail } from "../../platform/errors";
import { readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { listNames, loadListsForRules } from "../lists/contract";
import { compileRule, evaluate, type CelError } from "./cel/engine";
import { compileListData } from "./cel/list-data";
import { validateTemplate } from "./cel/template";
import type { ModuleName } from "./cel/variables";
import type { SuppressionPreview } from "./alert-state-contract";
import { DEDUP_TTL_MS } from "./processor";
import { transitionStatements, type AlertState } from "./lifecycle";

export const SEVERITIES = ["info", "low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface RuleInput {
  name: string;
  expression: string;
  enabled?: boolean;
  severity?: Severity;
  template_id?: number | null;
  channel_ids?: number[];
  throttle_seconds?: number;
}

/** Matches of a rule in the last 24 h: sent, and not sent (duplicate or throttled). */
interface RuleActivity {
  fired: number;
  suppressed: number;
}
const NO_ACTIVITY: RuleActivity = { fired: 0, suppressed: 0 };

function ruleView(r: typeof alertRules.$inferSelect, activity: RuleActivity = NO_ACTIVITY) {
  return {
    id: r.id,
    name: r.name,
    expression: r.expression,
    enabled: r.enabled,
    severity: r.severity,
    template_id: r.templateId,
    channel_ids: r.channelIds,
    throttle_seconds: r.throttleSeconds,
    alerts_last_24h: activity,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Per rule of the module, how many matches were sent and suppressed in the 24 h before `now`. */
async function ruleActivity(t: Tenant, module: ModuleName, now: Date, ruleId?: number): Promise<Map<number, RuleActivity>> {
  const since = new Date(now.getTime() - 24 * 3_600_000).toISOString();
  const rows = await t.db
    .select({ ruleId: alertHistory.ruleId, status: alertHistory.status, n: count() })
    .from(alertHistory)
    .where(t.where(alertHistory, eq(alertHistory.module, module), gte(alertHistory.firedAt, since), ruleId === undefined ? undefined : eq(alertHistory.ruleId, ruleId)))
    .groupBy(alertHistory.ruleId, alertHistory.status)
    .all();
  const out = new Map<number, RuleActivity>();
  for (const r of rows) {
    if (r.ruleId === null) continue;
    const a = out.get(r.ruleId) ?? { ...NO_ACTIVITY };
    a[r.status] += r.n;
    out.set(r.ruleId, a);
  }
  return out;
}

const whereIn = (e: CelError) => (e.position ? ` at line ${e.position.line}, column ${e.position.column}` : "");
/** `syntax_error at line 1, column 16: Unexpected token: EOF` */
const describeCelError = (e: CelError) => `${e.code}${whereIn(e)}: ${e.message}`;

/** Compiles against the organization's current lists; a failure is a 400 naming the position. */
async function compileOrThrow(t: Tenant, module: ModuleName, expression: string) {
  const compiled = compileRule(module, expression, await listNames(t));
  if (!compiled.ok) {
    throw badRequest(`Invalid rule expression${whereIn(compiled)}: ${compiled.message}`, [
      { path: "expression", message: describeCelError(compiled) },
    ]);
  }
  return compiled;
}

async function checkReferences(t: Tenant, module: ModuleName, input: RuleInput) {
  const details: ErrorDetail[] = [];
  if (input.template_id != null) {
    const template = await t.first(alertTemplates, eq(alertTemplates.id, input.template_id), eq(alertTemplates.module, module));
    if (!template) details.push({ path: "template_id", message: `no ${module} template ${input.template_id}` });
  }
  const ids = [...new Set(input.channel_ids ?? [])];
  if (ids.length) {
    const found = new Set((await t.all(notificationChannels, inArray(notificationChannels.id, ids))).map((r) => r.id));
    ids.forEach((id) => {
      if (!found.has(id)) details.push({ path: "channel_ids", message: `no notification channel ${id}` });
    });
  }
  if (details.length) throw badRequest("Invalid rule", details);
  return ids;
}

export async function listRules(t: Tenant, module: ModuleName, now: Date) {
  const [rules, activity] = await Promise.all([t.select(alertRules, eq(alertRules.module, module)).orderBy(alertRules.id).all(), ruleActivity(t, module, now)]);
  return rules.map((r) => ruleView(r, activity.get(r.id)));
}

/** A rule of this module and organization, or 404. */
async function ruleOf(t: Tenant, module: ModuleName, id: number) {
  const r = await t.get(alertRules, id);
  if (!r || r.module !== module) throw notFound("Alert rule");
  return r;
}

export async function getRule(t: Tenant, module: ModuleName, id: number, now: Date) {
  const [rule, activity] = await Promise.all([ruleOf(t, module, id), ruleActivity(t, module, now, id)]);
  return ruleView(rule, activity.get(rule.id));
}

export async function createRule(t: Tenant, module: ModuleName, input: RuleInput, now: Date) {
  const compiled = await compileOrThrow(t, module, input.expression);
  const channelIds = await checkReferences(t, module, input);
  const nowIso = now.toISOString();
  const [inserted] = await t.db.batch([
    t
      .insert(alertRules, {
        module,
        name: input.name,
        expression: input.expression,
        enabled: input.enabled ?? true,
        severity: input.severity ?? "medium",
        templateId: input.template_id ?? null,
        channelIds,
        throttleSeconds: input.throttle_seconds ?? 0,
        createdAt: nowIso,
        updatedAt: nowIso,
      })
      .returning({ id: alertRules.id }),
    ...compiled.listNames.map((listName) =>
      t.db.insert(alertRuleLists).values({ ruleId: sqlNewestRule(t.organizationId), organizationId: t.organizationId, listName }),
    ),
  ]);
  return { id: inserted[0].id, message: "Alert rule created" };
}

/** In a batch (one transaction) the newest rule of the organization is the one just inserted. */
const sqlNewestRule = (organizationId: number) => sql`(SELECT max(id) FROM alert_rules WHERE organization_id = ${organizationId})`;

export async function replaceRule(t: Tenant, module: ModuleName, id: number, input: RuleInput, now: Date) {
  const current = await ruleOf(t, module, id);
  const compiled = await compileOrThrow(t, module, input.expression);
  const channelIds = await checkReferences(t, module, input);
  await t.db.batch([
    t.update(
      alertRules,
      {
        name: input.name,
        expression: input.expression,
        enabled: input.enabled ?? true,
        severity: input.severity ?? "medium",
        templateId: input.template_id ?? null,
        channelIds,
        throttleSeconds: input.throttle_seconds ?? 0,
        version: current.version + 1,
        updatedAt: now.toISOString(),
      },
      eq(alertRules.id, current.id),
    ),
    t.delete(alertRuleLists, eq(alertRuleLists.ruleId, current.id)),
    ...compiled.listNames.map((listName) => t.db.insert(alertRuleLists).values({ ruleId: current.id, organizationId: t.organizationId, listName })),
  ]);
  return { message: "Alert rule updated" };
}

export async function setRuleEnabled(t: Tenant, module: ModuleName, id: number, enabled: boolean, now: Date) {
  const current = await ruleOf(t, module, id);
  await t.update(alertRules, { enabled, version: current.version + 1, updatedAt: now.toISOString() }, eq(alertRules.id, current.id)).run();
  return { message: enabled ? "Alert rule enabled" : "Alert rule disabled" };
}

export async function deleteRule(t: Tenant, module: ModuleName, id: number) {
  const current = await ruleOf(t, module, id);
  // Its list links (alert_rule_lists) go with it: ON DELETE CASCADE.
  await t.delete(alertRules, eq(alertRules.id, current.id)).run();
  return { message: "Alert rule deleted" };
}

/** Asks the organization's alert state what would become of a match now (a port: the service does not know the Durable Object). */
export type PreviewSuppression = (rule: { id: number; throttleSeconds: number }, event: Record<string, unknown>) => Promise<SuppressionPreview>;

const minutes = (ms: number) => (ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} h` : ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

/**
 * Evaluates an expression against an example event with the organization's current lists;
 * saves nothing. With `ruleId`, also says what a real event like this one would become
 * now under that saved rule: sent, suppressed (duplicate or throttled, repeating which
 * alert, until when), or not evaluated at all (the rule is disabled).
 */
export async function testRule(t: Tenant, module: ModuleName, expression: string, event: Record<string, unknown>, opts: { ruleId?: number; preview?: PreviewSuppression } = {}) {
  const rule = opts.ruleId === undefined ? null : await ruleOf(t, module, opts.ruleId);
  const lists = await loadListsForRules(t);
  const compiled = compileRule(module, expression, lists.map((l) => l.name));
  if (!compiled.ok) {
    const error = describeCelError(compiled);
    return { matched: false, error, outcome: "error" as const, explanation: `The expression does not compile: ${error}`, suppression: null };
  }
  const r = evaluate(compiled, event, compileListData(lists));
  const base = { matched: r.matched, error: r.error ?? null };
  if (r.error && !r.matched) return { ...base, outcome: "error" as const, explanation: `Evaluating the expression on this event failed: ${r.error}`, suppression: null };
  if (!r.matched) return { ...base, outcome: "no_match" as const, explanation: "The expression is false for this event: no alert.", suppression: null };
  if (!rule || !opts.preview) return { ...base, outcome: "would_fire" as const, explanation: "The expression is true for this event: an alert would be sent.", suppression: null };
  if (!rule.enabled) return { ...base, outcome: "rule_disabled" as const, explanation: `The rule "${rule.name}" is disabled: a real event is not evaluated against it.`, suppression: null };
  const p = await opts.preview({ id: rule.id, throttleSeconds: rule.throttleSeconds }, event);
  if (!p.suppression) return { ...base, outcome: "would_fire" as const, explanation: `The rule "${rule.name}" would send an alert for ${p.asset} now.`, suppression: null };
  const s = p.suppression;
  const repeats = s.repeats_alert_id === null ? "an earlier alert" : `alert #${s.repeats_alert_id}`;
  const explanation =
    s.reason === "duplicate"
      ? `Suppressed as a duplicate: the rule "${rule.name}" already alerted on this same event for ${p.asset} (${repeats}); the same content for the same asset is sent once per ${minutes(DEDUP_TTL_MS)}, until ${s.until}. It would be recorded in the history as suppressed.`
      : `Throttled: the rule "${rule.name}" sent ${repeats} for the subject ${p.subject} less than ${minutes(rule.throttleSeconds * 1000)} ago (its throttle); matches are suppressed until ${s.until}. It would be recorded in the history as suppressed.`;
  return { ...base, outcome: "would_be_suppressed" as const, explanation, suppression: { reason: s.reason, repeats_alert_id: s.repeats_alert_id, until: s.until, asset: p.asset, subject: p.subject } };
}

// ---- templates ----------------------------------------------------------------------

export interface TemplateInput {
  name: string;
  subject: string;
  body: string;
}

function templateView(t: typeof alertTemplates.$inferSelect) {
  return { id: t.id, name: t.name, subject: t.subject, body: t.body, created_at: t.createdAt, updated_at: t.updatedAt };
}

function checkTemplate(module: ModuleName, input: TemplateInput) {
  const details: ErrorDetail[] = [
    ...validateTemplate(module, input.subject).map((e) => ({ path: "subject", message: `${e.placeholder}: ${e.message}` })),
    ...validateTemplate(module, input.body).map((e) => ({ path: "body", message: `${e.placeholder}: ${e.message}` })),
  ];
  if (details.length) throw badRequest("Template references unknown fields", details);
}

async function templateOf(t: Tenant, module: ModuleName, id: number) {
  const template = await t.get(alertTemplates, id);
  if (!template || template.module !== module) throw notFound("Alert template");
  return template;
}

export async function listTemplates(t: Tenant, module: ModuleName) {
  return (await t.select(alertTemplates, eq(alertTemplates.module, module)).orderBy(alertTemplates.id).all()).map(templateView);
}

export async function getTemplate(t: Tenant, module: ModuleName, id: number) {
  return templateView(await templateOf(t, module, id));
}

export async function createTemplate(t: Tenant, module: ModuleName, input: TemplateInput, now: Date) {
  checkTemplate(module, input);
  const nowIso = now.toISOString();
  const [row] = await t.insert(alertTemplates, { module, ...input, createdAt: nowIso, updatedAt: nowIso }).returning();
  return { id: row.id, message: "Alert template created" };
}

export async function replaceTemplate(t: Tenant, module: ModuleName, id: number, input: TemplateInput, now: Date) {
  const template = await templateOf(t, module, id);
  checkTemplate(module, input);
  await t.update(alertTemplates, { ...input, updatedAt: now.toISOString() }, eq(alertTemplates.id, template.id)).run();
  return { message: "Alert template updated" };
}

export async function deleteTemplate(t: Tenant, module: ModuleName, id: number) {
  const template = await templateOf(t, module, id);
  // Rules that used it fall back to the default message.
  await t.db.batch([
    t.update(alertRules, { templateId: null }, eq(alertRules.templateId, template.id)),
    t.delete(alertTemplates, eq(alertTemplates.id, template.id)),
  ]);
  return { message: "Alert template deleted" };
}

// ---- history ------------------------------------------------------------------------

export interface HistoryQuery {
  limit: number;
  offset: number;
  status?: "fired" | "suppressed";
  state?: AlertState;
  rule_id?: number;
  alert_id?: number;
}

export async function listHistory(t: Tenant, module: ModuleName, q: HistoryQuery) {
  const { limit, offset } = q;
  const ofModule = and(
    eq(alertHistory.module, module),
    q.status ? eq(alertHistory.status, q.status) : undefined,
    q.state ? eq(alertHistory.state, q.state) : undefined,
    q.rule_id !== undefined ? eq(alertHistory.ruleId, q.rule_id) : undefined,
    q.alert_id !== undefined ? eq(alertHistory.id, q.alert_id) : undefined,
  );
  const { rows, total } = await readPage(
    t.select(alertHistory, ofModule).orderBy(desc(alertHistory.firedAt), desc(alertHistory.id)).limit(limit).offset(offset),
    t.countQuery(alertHistory, ofModule),
  );
  const deliveries = rows.length
    ? await t.db
        .select({ d: alertDeliveries, name: notificationChannels.name, kind: notificationChannels.kind })
        .from(alertDeliveries)
        .leftJoin(notificationChannels, t.where(notificationChannels, eq(notificationChannels.id, alertDeliveries.channelId)))
        .where(t.where(alertDeliveries, inArray(alertDeliveries.historyId, rows.map((r) => r.id))))
        .all()
    : [];
  return {
    alerts: rows.map((h) => ({
      id: h.id,
      rule_id: h.ruleId,
      rule_name: h.ruleName,
      severity: h.severity,
      subject: h.subject,
      asset: h.asset,
      event_id: h.eventId,
      event_summary: h.eventSummary,
      message: h.message,
      fired_at: h.firedAt,
      status: h.status,
      suppressed_reason: h.suppressedReason,
      repeats_alert_id: h.repeatsAlertId,
      suppressed_until: h.suppressedUntil,
      alert_key: h.alertKey,
      state: h.state,
      occurrences: h.occurrences,
      last_matched_at: h.lastMatchedAt,
      acknowledged_at: h.acknowledgedAt,
      acknowledged_by: h.acknowledgedBy,
      resolved_at: h.resolvedAt,
      resolved_by: h.resolvedBy,
      resolution: h.resolution,
      deliveries: deliveries
        .filter((x) => x.d.historyId === h.id)
        .sort((a, b) => a.d.id - b.d.id)
        .map(({ d, name, kind }) => ({
          channel_id: d.channelId,
          channel_name: name,
          channel_kind: kind,
          action: d.action,
          status: d.status,
          attempts: d.attempts,
          last_error: d.lastError,
          response_status: d.responseStatus,
          next_attempt_at: d.nextAttemptAt,
          delivered_at: d.deliveredAt,
          attempt_log: d.attemptLog,
        })),
    })),
    total,
    limit,
    offset,
  };
}

// ---- acknowledging and resolving ------------------------------------------------------

/**
 * A person acknowledges or resolves a sent alert: recorded with who and when, and told
 * to every channel that was told of the alert (PagerDuty and Opsgenie under the same
 * key). From `open` only to acknowledge, from `open` or `acknowledged` to resolve; a
 * change made meanwhile by someone else (or automatically) is a 409, nothing sent twice.
 */
export async function changeAlertState(t: Tenant, module: ModuleName, id: number, to: "acknowledged" | "resolved", by: string, now: Date) {
  const alert = await t.get(alertHistory, id);
  if (!alert || alert.module !== module || alert.status !== "fired") throw notFound("Alert");
  if (alert.state === "resolved") throw conflict(`Alert ${id} is already resolved (${alert.resolvedAt}, ${alert.resolvedBy})`);
  if (to === "acknowledged" && alert.state === "acknowledged") throw conflict(`Alert ${id} is already acknowledged (${alert.acknowledgedAt}, ${alert.acknowledgedBy})`);
  const nowIso = now.toISOString();
  const statements = transitionStatements(t.db, t.organizationId, id, to === "acknowledged" ? { state: to, by } : { state: to, by, resolution: `Resolved by ${by}.` }, nowIso);
  const [changed] = (await t.db.batch(statements as [never, ...never[]])) as unknown as { meta?: { changes?: number } }[];
  if ((changed?.meta?.changes ?? 0) !== 1) throw conflict(`Alert ${id} changed meanwhile; reload it`);
  return { message: to === "acknowledged" ? "Alert acknowledged" : "Alert resolved", state: to };
}
