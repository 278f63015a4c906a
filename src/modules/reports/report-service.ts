/**
 * The stored weekly reports (docs/modules/reports.md): the list, newest first, with where
 * each recipient's copy of its mail is, and the PDF of one. The PDF is rendered from the
 * stored rows (stored-report.ts): on download, and for the mail when it is sent (the
 * outbox rows name the report, `report_pdf` attachment source, rather than each carrying
 * a copy), so the mailed PDF and every download are identical.
 */
import { asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { mailOutbox } from "../../db/schema/platform";
import { reportFindings, reports } from "../../db/schema/reports";
import { isOpaqueRuntimeError, sanitizeFailureMessage } from "../../platform/collection";
import { tenantDb, type Tenant } from "../../platform/tenant";
import type { ReportDocument } from "./document";
import { renderReportPdf } from "./pdf/render";
import { auditRule, REFERENCES, type Category, type Grade, type RuleId, type Severity } from "./rules";
import type { CategoryScores, Evidence, Finding } from "./scoring";
import { isGraded, isProvisional, type CategoryStatus } from "./category-status";
import { gunzipBase64, reportPdfKey, type StoredAppendix } from "./stored-report";

/** One recipient's copy of a report's mail: where it is, and why not delivered. */
export interface ReportMailDelivery {
  to: string;
  status: "stored" | "pending" | "sent" | "failed";
  attempts: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  sent_at: string | null;
  error_class: string | null;
  error: string | null;
}

function reportView(r: typeof reports.$inferSelect, findings: number, mail: ReportMailDelivery[]) {
  return {
    id: r.id,
    report_type: r.reportType,
    period_start: r.periodStart,
    period_end: r.periodEnd,
    overall_score: r.overallScore,
    grade: r.grade,
    generated_at: r.generatedAt,
    pdf_filename: r.pdfFilename,
    category_scores: r.categoryScores as CategoryScores,
    category_status: storedCategoryStatus(r),
    provisional: provisionalOf(r),
    graded: gradedOf(r),
    findings_count: findings,
    mail: {
      recipients: mail.length,
      sent: mail.filter((m) => m.status === "sent" || m.status === "stored").length,
      pending: mail.filter((m) => m.status === "pending").length,
      failed: mail.filter((m) => m.status === "failed").length,
      deliveries: mail,
    },
  };
}

/** The mail of each listed report by its outbox reference (one indexed query). */
async function mailOf(t: Tenant, periodStarts: string[]): Promise<Map<string, ReportMailDelivery[]>> {
  const byReference = new Map<string, ReportMailDelivery[]>();
  if (!periodStarts.length) return byReference;
  const rows = await t.db
    .select()
    .from(mailOutbox)
    .where(t.where(mailOutbox, eq(mailOutbox.kind, "weekly_report"), inArray(mailOutbox.reference, periodStarts.map(reportPdfKey))))
    .orderBy(asc(mailOutbox.id))
    .all();
  for (const m of rows) {
    const list = byReference.get(m.reference!) ?? [];
    list.push({
      to: m.toAddress,
      status: m.status,
      attempts: m.attempts,
      last_attempt_at: m.lastAttemptAt,
      next_attempt_at: m.status === "pending" ? m.nextAttemptAt : null,
      sent_at: m.sentAt,
      error_class: m.status === "sent" ? null : m.lastErrorClass,
      error: m.status === "sent" ? null : m.lastError,
    });
    byReference.set(m.reference!, list);
  }
  return byReference;
}

/**
 * What a stored report could assess; null when it was generated before that was recorded.
 * A report stored before `last_collected_at` was recorded has it null (not known).
 */
const storedCategoryStatus = (r: typeof reports.$inferSelect): CategoryStatus | null => {
  const stored = r.categoryStatus as Partial<CategoryStatus> | null;
  if (!stored) return null;
  return Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, { ...v, last_collected_at: v?.last_collected_at ?? null }])) as CategoryStatus;
};
const provisionalOf = (r: typeof reports.$inferSelect) => {
  const status = storedCategoryStatus(r);
  return status ? isProvisional(status) : null;
};
const gradedOf = (r: typeof reports.$inferSelect) => {
  const status = storedCategoryStatus(r);
  return status ? isGraded(status) : null;
};

/** Newest period first. */
export async function listReports(t: Tenant, limit: number) {
  const rows = await t.db
    .select({
      report: reports,
      findings: sql<number>`(SELECT count(*) FROM report_findings f WHERE f.report_id = reports.id)`,
    })
    .from(reports)
    .where(t.where(reports))
    .orderBy(desc(reports.periodEnd), desc(reports.id))
    .limit(limit)
    .all();
  const mail = await mailOf(t, rows.map((r) => r.report.periodStart));
  return { success: true as const, data: rows.map((r) => reportView(r.report, r.findings, mail.get(reportPdfKey(r.report.periodStart)) ?? [])) };
}

/** A stored finding back in the engine's shape; condition and references come from the catalogue. */
function findingFromRow(r: typeof reportFindings.$inferSelect): Finding {
  const rule = auditRule(r.ruleId as RuleId);
  return {
    id: r.ruleId as RuleId,
    title: r.title,
    severity: r.severity as Severity,
    score_impact: r.scoreImpact,
    category: r.category as Category,
    condition: rule.condition,
    references: rule.references.map((id) => ({ id, framework: REFERENCES[id].framework, title: REFERENCES[id].title })),
    affected_assets: r.affectedAssets,
    evidence: (r.evidence as Evidence[]).map((e) => ({ ...e, detail: withoutOpaqueError(e.detail) })),
    evidence_total: r.evidenceTotal,
  };
}

/**
 * A stored text as it may be shown: reports stored before failures were classified may
 * hold the runtime's opaque "internal error; reference = …" in an error's words.
 */
function withoutOpaqueError(text: string): string {
  return isOpaqueRuntimeError(text) ? sanitizeFailureMessage(text) : text;
}

/** The PDF of one of the organization's reports (404 for another organization's id). */
export async function reportPdf(t: Tenant, reportId: number): Promise<{ filename: string; pdf: Uint8Array }> {
  return renderStored(t, await t.getOr404(reports, reportId, "Report"));
}

/** The PDF of a stored report: the same bytes every time (pdf/render.ts is deterministic). */
async function renderStored(t: Tenant, report: typeof reports.$inferSelect): Promise<{ filename: string; pdf: Uint8Array }> {
  const rows = await t.db.select().from(reportFindings).where(t.where(reportFindings, eq(reportFindings.reportId, report.id))).orderBy(asc(reportFindings.position)).all();
  const appendix = JSON.parse(await gunzipBase64(report.appendix)) as StoredAppendix;
  const document: ReportDocument = {
    report_type: report.reportType,
    organization: report.organizationName,
    period_start: report.periodStart,
    period_end: report.periodEnd,
    generated_at: report.generatedAt,
    result: {
      overall_score: report.overallScore,
      grade: report.grade as Grade,
      category_scores: report.categoryScores as CategoryScores,
      category_status: storedCategoryStatus(report),
      provisional: provisionalOf(report),
      graded: gradedOf(report),
      findings: rows.map(findingFromRow),
    },
    collection_windows: appendix.collection_windows,
    assets: appendix.assets.map((a) => ({ ...a, detail: withoutOpaqueError(a.detail) })),
    shared_sources: appendix.shared_sources,
  };
  return { filename: report.pdfFilename, pdf: await renderReportPdf(document) };
}

/** Renders the PDF an outbox row names (mailer.ts calls it at delivery). */
export async function renderReportAttachment(db: Db, organizationId: number | null, key: string): Promise<Uint8Array> {
  const [type, periodStart] = key.split("/", 2);
  if (organizationId === null || type !== "weekly" || !periodStart) throw new Error(`no report for attachment ${key}`);
  const t = tenantDb(db, organizationId);
  const report = await t.first(reports, eq(reports.reportType, "weekly"), eq(reports.periodStart, periodStart));
  if (!report) throw new Error(`report ${key} of organization ${organizationId} not found`);
  return (await renderStored(t, report)).pdf;
}
