/**
 * Alert rules, templates and history of one module (ADDENDUM 7). A rule's CEL
 * expression is compiled and type-checked against the module's variable schema on
 * save (400 with the position), list references are recorded so a referenced list
 * cannot be deleted, and the organization's AlertState is told to recompile.
 */
import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { alertDeliveries, alertHistory, alertRuleLists, alertRules, alertTemplates, notificationChannels } from "../../db/schema";
import { badRequest, notFound, type ErrorDetail } from "../../platform/errors";
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
async function compileOrThrow(db: Db, organizationId: number, module: ModuleName, expression: string) {
  const compiled = compileRule(module, expression, await listNames(db, organizationId));
  if (!compiled.ok) {
    throw badRequest(`Invalid rule expression${whereIn(compiled)}: ${compiled.message}`, [
      { path: "expression", message: describeCelError(compiled) },
    ]);
  }
  return compiled;
}

async function checkReferences(db: Db, organizationId: number, module: ModuleName, input: RuleInput) {
  const details: ErrorDetail[] = [];
  if (input.template_id != null) {
    const t = await db
      .select({ id: alertTemplates.id })
      .from(alertTemplates)
      .where(and(eq(alertTemplates.id, input.template_id), eq(alertTemplates.organizationId, organizationId), eq(alertTemplates.module, module)))
      .get();
    if (!t) details.push({ path: "template_id", message: `no ${module} template ${input.template_id}` });
  }
  const ids = [...new Set(input.channel_ids ?? [])];
  if (ids.length) {
    const found = new Set(
      (await db.select({ id: notificationChannels.id }).from(notificationChannels).where(and(eq(notificationChannels.organizationId, organizationId), inArray(notificationChannels.id, ids))).all()).map((r) => r.id),
    );
    ids.forEach((id) => {
      if (!found.has(id)) details.push({ path: "channel_ids", message: `no notification channel ${id}` });
    });
  }
  if (details.length) throw badRequest("Invalid rule", details);
  return ids;
}

export async function listRules(db: Db, organizationId: number, module: ModuleName) {
  const rows = await db.select().from(alertRules).where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.module, module))).orderBy(alertRules.id).all();
  return rows.map(ruleView);
}

async function ruleOf(db: Db, organizationId: number, module: ModuleName, id: number) {
  const r = await db
    .select()
    .from(alertRules)
    .where(and(eq(alertRules.id, id), eq(alertRules.organizationId, organizationId), eq(alertRules.module, module)))
    .get();
  if (!r) throw notFound("Alert rule");
  return r;
}

export async function getRule(db: Db, organizationId: number, module: ModuleName, id: number) {
  return ruleView(await ruleOf(db, organizationId, module, id));
}

export async function createRule(db: Db, organizationId: number, module: ModuleName, input: RuleInput, now: Date) {
  const compiled = await compileOrThrow(db, organizationId, module, input.expression);
  const channelIds = await checkReferences(db, organizationId, module, input);
  const nowIso = now.toISOString();
  const [inserted] = await db.batch([
    db
      .insert(alertRules)
      .values({
        organizationId,
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
      db.insert(alertRuleLists).values({ ruleId: sqlNewestRule(organizationId), organizationId, listName }),
    ),
  ]);
  return { id: inserted[0].id, message: "Alert rule created" };
}

/** In a batch (one transaction) the newest rule of the organization is the one just inserted. */
const sqlNewestRule = (organizationId: number) => sql`(SELECT max(id) FROM alert_rules WHERE organization_id = ${organizationId})`;

export async function replaceRule(db: Db, organizationId: number, module: ModuleName, id: number, input: RuleInput, now: Date) {
  const current = await ruleOf(db, organizationId, module, id);
  const compiled = await compileOrThrow(db, organizationId, module, input.expression);
  const channelIds = await checkReferences(db, organizationId, module, input);
  await db.batch([
    db
      .update(alertRules)
      .set({
        name: input.name,
        expression: input.expression,
        enabled: input.enabled ?? true,
        severity: input.severity ?? "medium",
        templateId: input.template_id ?? null,
        channelIds,
        throttleSeconds: input.throttle_seconds ?? 0,
        version: current.version + 1,
        updatedAt: now.toISOString(),
      })
      .where(eq(alertRules.id, current.id)),
    db.delete(alertRuleLists).where(eq(alertRuleLists.ruleId, current.id)),
    ...compiled.listNames.map((listName) => db.insert(alertRuleLists).values({ ruleId: current.id, organizationId, listName })),
  ]);
  return { message: "Alert rule updated" };
}

export async function setRuleEnabled(db: Db, organizationId: number, module: ModuleName, id: number, enabled: boolean, now: Date) {
  const current = await ruleOf(db, organizationId, module, id);
  await db.update(alertRules).set({ enabled, version: current.version + 1, updatedAt: now.toISOString() }).where(eq(alertRules.id, current.id)).run();
  return { message: enabled ? "Alert rule enabled" : "Alert rule disabled" };
}

export async function deleteRule(db: Db, organizationId: number, module: ModuleName, id: number) {
  const current = await ruleOf(db, organizationId, module, id);
  await db.batch([db.delete(alertRuleLists).where(eq(alertRuleLists.ruleId, current.id)), db.delete(alertRules).where(eq(alertRules.id, current.id))]);
  return { message: "Alert rule deleted" };
}

/** Evaluates an expression against an example event with the organization's current lists; saves nothing. */
export async function testRule(db: Db, organizationId: number, module: ModuleName, expression: string, event: Record<string, unknown>) {
  const lists = await loadListsForRules(db, organizationId);
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

async function templateOf(db: Db, organizationId: number, module: ModuleName, id: number) {
  const t = await db
    .select()
    .from(alertTemplates)
    .where(and(eq(alertTemplates.id, id), eq(alertTemplates.organizationId, organizationId), eq(alertTemplates.module, module)))
    .get();
  if (!t) throw notFound("Alert template");
  return t;
}

export async function listTemplates(db: Db, organizationId: number, module: ModuleName) {
  const rows = await db.select().from(alertTemplates).where(and(eq(alertTemplates.organizationId, organizationId), eq(alertTemplates.module, module))).orderBy(alertTemplates.id).all();
  return rows.map(templateView);
}

export async function getTemplate(db: Db, organizationId: number, module: ModuleName, id: number) {
  return templateView(await templateOf(db, organizationId, module, id));
}

export async function createTemplate(db: Db, organizationId: number, module: ModuleName, input: TemplateInput, now: Date) {
  checkTemplate(module, input);
  const nowIso = now.toISOString();
  const row = await db.insert(alertTemplates).values({ organizationId, module, ...input, createdAt: nowIso, updatedAt: nowIso }).returning().get();
  return { id: row.id, message: "Alert template created" };
}

export async function replaceTemplate(db: Db, organizationId: number, module: ModuleName, id: number, input: TemplateInput, now: Date) {
  checkTemplate(module, input);
  const t = await templateOf(db, organizationId, module, id);
  await db.update(alertTemplates).set({ ...input, updatedAt: now.toISOString() }).where(eq(alertTemplates.id, t.id)).run();
  return { message: "Alert template updated" };
}

export async function deleteTemplate(db: Db, organizationId: number, module: ModuleName, id: number) {
  const t = await templateOf(db, organizationId, module, id);
  // Rules that used it fall back to the default message.
  await db.batch([
    db.update(alertRules).set({ templateId: null }).where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.templateId, t.id))),
    db.delete(alertTemplates).where(eq(alertTemplates.id, t.id)),
  ]);
  return { message: "Alert template deleted" };
}

// ---- history ------------------------------------------------------------------------

export async function listHistory(db: Db, organizationId: number, module: ModuleName, limit: number, offset: number) {
  const where = and(eq(alertHistory.organizationId, organizationId), eq(alertHistory.module, module));
  const [rows, total] = await Promise.all([
    db.select().from(alertHistory).where(where).orderBy(desc(alertHistory.firedAt), desc(alertHistory.id)).limit(limit).offset(offset).all(),
    db.select({ n: count() }).from(alertHistory).where(where).get(),
  ]);
  const deliveries = rows.length
    ? await db
        .select({ d: alertDeliveries, name: notificationChannels.name, kind: notificationChannels.kind })
        .from(alertDeliveries)
        .leftJoin(notificationChannels, eq(notificationChannels.id, alertDeliveries.channelId))
        .where(inArray(alertDeliveries.historyId, rows.map((r) => r.id)))
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
    total: total?.n ?? 0,
    limit,
    offset,
  };
}
