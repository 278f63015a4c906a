/**
 * The weekly report's generation (docs/modules/reports.md): the facts of the week that
 * ended Monday 00:00 UTC, state judged at that end (facts/scope.ts), scored and stored
 * with its findings and its appendix (every monitored asset with its state at generation,
 * stored-report.ts) in ONE D1 batch together with the mail to each recipient
 * (recipient-service.ts). The (organization, type, period) UNIQUE index fails a second
 * generation's batch as a whole: twice is one report, one mail per recipient. Also the
 * preview: the current week to date, audited the same way, rendered and not stored.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { organizations } from "../../db/schema/platform";
import { reportFindings, reports } from "../../db/schema/reports";
import type { Config } from "../../env";
import { isUniqueViolation } from "../../platform/db-errors";
import { enqueueMail, renderedAttachment } from "../../platform/mailer";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { pdfFilename, type ReportDocument } from "./document";
import { readAudit } from "./facts";
import { expectedCollectionWindowSeconds } from "./freshness";
import { renderReportPdf } from "./pdf/render";
import { formatUtc } from "./pdf/text";
import { CATCH_UP_WEEKS, lastWeekEnd, recentWeeks, type Period } from "./period";
import { reportRecipientsOf, type RecipientWhy } from "./recipient-service";
import { CATEGORIES } from "./rules";
import { scoreAudit, type AuditResult } from "./scoring";
import { scoreHeadline } from "./category-status";
import { gzipBase64, REPORT_EVIDENCE_LIMIT, REPORT_PDF_SOURCE, reportPdfKey, storedForm, type StoredAppendix } from "./stored-report";

export interface GenerationContext {
  db: Db;
  config: Config;
  /** The job's clock: generation time and the appendix's state (the findings judge state at the period's end). */
  now: Date;
}

function mailBody(config: Config, d: ReportDocument, why: RecipientWhy): string {
  const r = d.result;
  const lines = [
    `Weekly security audit report for ${d.organization}`,
    `Period: ${formatUtc(d.period_start)} – ${formatUtc(d.period_end)}`,
    "",
    `Overall score: ${scoreHeadline(r.overall_score, r.grade, r.category_status)}`,
    "Categories:",
    ...CATEGORIES.map((c) => {
      const status = r.category_status?.[c.id];
      if (status?.status === "blind") return `  ${c.label}: not assessed (${status.reason})`;
      if (status?.status === "partial") return `  ${c.label}: ${r.category_scores[c.id]}, partly assessed (${status.reason})`;
      return `  ${c.label}: ${r.category_scores[c.id]}${status?.status === "no_assets" ? " (nothing to assess)" : ""}`;
    }),
    "",
    r.findings.length ? `${r.findings.length} finding(s):` : "No audit rule fired this week.",
    ...r.findings.map((f) => `  - [${f.severity}] ${f.title} (-${f.score_impact}), ${f.affected_assets} asset(s)`),
    "",
    "The full report, with the evidence for each finding and every monitored asset, is attached as a PDF.",
    `All reports: ${config.publicBaseUrl}/api/reports`,
    "",
    ...(why === "member"
      ? [
          "You receive this mail because the weekly audit report is enabled in your Trust-Plane profile",
          "(PUT /api/auth/me/preferences with {\"weekly_audit_report_enabled\": false} turns it off).",
        ]
      : [
          `You receive this mail because an administrator of ${d.organization} added this address to the weekly report's recipients`,
          "(Reports page of the console, or PUT /api/reports/recipients).",
        ]),
  ];
  return lines.join("\n");
}

/**
 * A report's document for `period`, its state judged at the period's end (facts/scope.ts),
 * findings cut to what is stored.
 */
async function periodDocument(t: Tenant, config: Config, organization: string, period: Period, now: Date, preview = false): Promise<{ document: ReportDocument; result: AuditResult }> {
  const reading = await readAudit({ t, mode: "period", window: period, asOf: period.end, now, config, withAssets: true, evidenceLimit: REPORT_EVIDENCE_LIMIT });
  const scored = scoreAudit(reading.facts);
  const result: AuditResult = { ...scored, findings: scored.findings.map(storedForm) };
  const document: ReportDocument = {
    report_type: "weekly",
    ...(preview ? { preview: true } : {}),
    organization,
    period_start: period.start.toISOString(),
    period_end: period.end.toISOString(),
    generated_at: now.toISOString(),
    result,
    collection_windows: reading.facts.coverage.map((c) => ({ module: c.module, seconds: expectedCollectionWindowSeconds(c.module, config) })),
    assets: reading.assets,
    shared_sources: reading.shared_sources,
  };
  return { document, result };
}

/**
 * The PDF of the current week to date (Monday 00:00 UTC until now), rendered on demand
 * and not stored: the same audit as the weekly report, judged now, every page marked
 * "Preview". Before a first week has ended it is the only report there is.
 */
export async function previewPdf(t: Tenant, config: Config, now: Date): Promise<{ filename: string; pdf: Uint8Array }> {
  const org = await t.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, t.organizationId)).get();
  const name = org?.name ?? "";
  const start = lastWeekEnd(now);
  // The window is half-open: a change observed at this very millisecond counts.
  const { document } = await periodDocument(t, config, name, { start, end: new Date(now.getTime() + 1) }, now, true);
  document.period_end = now.toISOString();
  return { filename: pdfFilename(name, t.organizationId, document.period_start, true), pdf: await renderReportPdf(document) };
}

/**
 * Generates, stores and mails one organization's report for one week. Returns false
 * when that report already exists (another run made it first).
 */
export async function generateWeeklyReport(ctx: GenerationContext, org: { id: number; name: string }, period: Period): Promise<{ created: boolean; result: AuditResult; recipients: number }> {
  const { db, config, now } = ctx;
  const t = tenantDb(db, org.id);
  const { document, result } = await periodDocument(t, config, org.name, period, now);
  const periodStart = document.period_start;
  const filename = pdfFilename(org.name, org.id, periodStart);
  const [pdf, appendix, recipients] = await Promise.all([
    renderReportPdf(document),
    gzipBase64(JSON.stringify({ collection_windows: document.collection_windows, assets: document.assets, shared_sources: document.shared_sources } satisfies StoredAppendix)),
    reportRecipientsOf(t),
  ]);

  const reportId = sql`(SELECT ${reports.id} FROM ${reports} WHERE ${and(t.where(reports), eq(reports.reportType, "weekly"), eq(reports.periodStart, periodStart))})`;
  // Rendered now for its size (and to know the stored report renders); each mail names the report instead of carrying a copy.
  const pdfAttachment = renderedAttachment(filename, "application/pdf", pdf.length, { kind: REPORT_PDF_SOURCE, key: reportPdfKey(periodStart) });
  try {
    await db.batch([
      t.insert(reports, {
        reportType: "weekly",
        periodStart,
        periodEnd: document.period_end,
        overallScore: result.overall_score,
        grade: result.grade,
        categoryScores: result.category_scores,
        categoryStatus: result.category_status,
        organizationName: org.name,
        generatedAt: document.generated_at,
        pdfFilename: filename,
        appendix,
        createdAt: document.generated_at,
      }),
      ...result.findings.map((f, position) =>
        t.insert(reportFindings, {
          reportId: reportId as unknown as number,
          position,
          ruleId: f.id,
          title: f.title,
          severity: f.severity,
          scoreImpact: f.score_impact,
          category: f.category,
          affectedAssets: f.affected_assets,
          evidence: f.evidence,
          evidenceTotal: f.evidence_total,
        }),
      ),
      ...recipients.map((r) =>
        enqueueMail(
          db,
          config,
          {
            organizationId: org.id,
            to: r.email,
            subject: `Trust-Plane weekly security report: ${scoreHeadline(result.overall_score, result.grade, result.category_status)}, ${periodStart.slice(0, 10)} – ${document.period_end.slice(0, 10)}`,
            body: mailBody(config, document, r.why),
            kind: "weekly_report",
            attachments: [pdfAttachment],
            reference: reportPdfKey(periodStart),
          },
          now,
        ),
      ),
    ] as [ReturnType<Tenant["insert"]>, ...ReturnType<Tenant["insert"]>[]]);
  } catch (err) {
    if (isUniqueViolation(err)) return { created: false, result, recipients: 0 };
    throw err;
  }
  return { created: true, result, recipients: recipients.length };
}

/** Reports generated per Cron run at most; the rest are due at the next run (a minute later). */
export const REPORTS_PER_RUN = 10;

/**
 * The Cron job: every organization's report for each of the last CATCH_UP_WEEKS
 * weeks that it existed in and that has none yet, oldest week first.
 */
export async function generateDueReports(ctx: GenerationContext, limit = REPORTS_PER_RUN) {
  const weeks = recentWeeks(ctx.now, CATCH_UP_WEEKS);
  const values = sql.join(
    weeks.map((w) => sql`(${w.start.toISOString()}, ${w.end.toISOString()})`),
    sql`, `,
  );
  // Across organizations by design (a system job): which (organization, week) lack a report.
  const due = await ctx.db.all<{ id: number; name: string; period_start: string; period_end: string }>(sql`
    WITH weeks(period_start, period_end) AS (VALUES ${values})
    SELECT o.id, o.name, w.period_start, w.period_end
    FROM ${organizations} o CROSS JOIN weeks w
    WHERE o.created_at < w.period_end
      AND NOT EXISTS (SELECT 1 FROM ${reports} r
                      WHERE r.organization_id = o.id AND r.report_type = 'weekly' AND r.period_start = w.period_start)
    ORDER BY w.period_end, o.id
    LIMIT ${limit}`);
  const outcome = { due: due.length, generated: 0, already_generated: 0, mails: 0, errors: [] as string[] };
  for (const d of due) {
    try {
      const r = await generateWeeklyReport(ctx, { id: d.id, name: d.name }, { start: new Date(d.period_start), end: new Date(d.period_end) });
      if (r.created) {
        outcome.generated++;
        outcome.mails += r.recipients;
      } else outcome.already_generated++;
    } catch (err) {
      // One organization's failure must not stop the others; it stays due for the next run.
      const message = `organization ${d.id}, week ${d.period_start}: ${err instanceof Error ? err.message : String(err)}`;
      outcome.errors.push(message);
      console.error(`reports.weekly: ${message}`);
    }
  }
  return outcome;
}
