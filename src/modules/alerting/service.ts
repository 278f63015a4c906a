/**
 * Alert rules, templates and history of one module (docs/decisions.md#alerting). A rule's CEL
 * expression is compiled and type-checked against the module's variable schema on
 * save (400 with the position), list references are recorded so a referenced list
 * cannot be deleted, and the organization's AlertState is told to recompile.
 */
import { desc, eq, inArray, sql } from "drizzle-orm";
import { alertDeliveries, alertHistory, alertRuleLists, alertRules, alertTemplates, notificationChannels } from "../../db/schema";
import { badRequest, notFound, type ErrorDetail } from "../../platform/errors";
import { readPage } from "../../platform/paging";
import type { Tenant } from "../../platform/tenant";
import { listNames, loadListsForRules } from "../lists/service";
import { compileRule, evaluate, type CelError } from "./cel/engine";
import { compileListData } from "./cel/list-data";
import { validateTemplate } from "./cel/template";
import type { ModuleName } from "./cel/variables";

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

function ruleView(r: typeof alertRules.$inferSelect) {
  return {
    id: r.id,
    name: r.name,
    expression: r.expression,
    enabled: r.enabled,
    severity: r.severity,
    template_id: r.templateId,
    channel_ids: r.channelIds,
    throttle_seconds: r.throttleSeconds,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
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

export async function listRules(t: Tenant, module: ModuleName) {
  return (await t.select(alertRules, eq(alertRules.module, module)).orderBy(alertRules.id).all()).map(ruleView);
}

/** A rule of this module and organization, or 404. */
async function ruleOf(t: Tenant, module: ModuleName, id: number) {
  const r = await t.get(alertRules, id);
  if (!r || r.module !== module) throw notFound("Alert rule");
  return r;
}

export async function getRule(t: Tenant, module: ModuleName, id: number) {
  return ruleView(await ruleOf(t, module, id));
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

/** Evaluates an expression against an example event with the organization's current lists; saves nothing. */
export async function testRule(t: Tenant, module: ModuleName, expression: string, event: Record<string, unknown>) {
  const lists = await loadListsForRules(t);
  const compiled = compileRule(module, expression, lists.map((l) => l.name));
  if (!compiled.ok) {
    return { matched: false, error: describeCelError(compiled) };
  }
  const r = evaluate(compiled, event, compileListData(lists));
  return { matched: r.matched, error: r.error ?? null };
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

export async function listHistory(t: Tenant, module: ModuleName, limit: number, offset: number) {
  const ofModule = eq(alertHistory.module, module);
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
      event_id: h.eventId,
      event_summary: h.eventSummary,
      message: h.message,
      fired_at: h.firedAt,
      deliveries: deliveries
        .filter((x) => x.d.historyId === h.id)
        .map(({ d, name, kind }) => ({
          channel_id: d.channelId,
          channel_name: name,
          channel_kind: kind,
          status: d.status,
          attempts: d.attempts,
          last_error: d.lastError,
          response_status: d.responseStatus,
          next_attempt_at: d.nextAttemptAt,
          delivered_at: d.deliveredAt,
        })),
    })),
    total,
    limit,
    offset,
  };
}
