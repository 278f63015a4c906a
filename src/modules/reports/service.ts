/**
 * Reports (docs/modules/reports.md): the live security overview, the
 * weekly reports (generation, listing, PDF download) and their mail.
 *
 *  - Overview: the organization's facts of the last 7 days up to now, each TLS
 *    endpoint by its latest scan, state judged now, scored (scoring.ts). One D1
 *    batch of indexed statements (facts/index.ts).
 *  - Weekly report: the facts of the week that ended Monday 00:00 UTC, state judged at
 *    that end (facts/scope.ts), scored and stored with its findings and its appendix
 *    (every monitored asset with its state at generation) in ONE D1 batch together
 *    with the mail to each user whose weekly-report flag is on. The (organization,
 *    type, period) UNIQUE index fails a second generation's batch as a whole: twice
 *    is one report, one mail per recipient.
 *  - The PDF is rendered from the stored rows: on download, and for the mail when it
 *    is sent (the outbox rows name the report, `report_pdf` attachment source, rather
 *    than each carrying a copy), so the mailed PDF and every download are identical.
 */
import { Buffer } from "node:buffer";
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { mailOutbox, organizations, users } from "../../db/schema/platform";
import { reportFindings, reportRecipients, reports } from "../../db/schema/reports";
import type { Config } from "../../env";
import { isOpaqueRuntimeError, sanitizeFailureMessage } from "../../platform/collection";
import { isUniqueViolation } from "../../platform/db-errors";
import { enqueueMail, renderedAttachment } from "../../platform/mailer";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { pdfFilename, type MonitoredAsset, type ReportDocument } from "./document";
import { readAudit } from "./facts";
import type { ScheduleConfig } from "./facts/scope";
import { expectedCollectionWindowSeconds } from "./freshness";
import { renderReportPdf } from "./pdf/render";
import { CATCH_UP_WEEKS, lastWeekEnd, recentWeeks, WEEK_MS, type Period } from "./period";
import { auditRule, CATEGORIES, MODULE_LABELS, REFERENCES, type Category, type Grade, type RuleId, type Severity } from "./rules";
import { limitEvidence, scoreAudit, type AuditResult, type CategoryScores, type Evidence, type Finding } from "./scoring";
import { isGraded, isProvisional, scoreHeadline, uncollectedCauses, type CategoryStatus } from "./category-status";
import { formatUtc } from "./pdf/text";

/** Evidence items returned per finding by the overview (the total is given). */
export const OVERVIEW_EVIDENCE_LIMIT = 10;
/** Evidence items stored per finding of a report (the PDF prints at most 40). */
export const REPORT_EVIDENCE_LIMIT = 500;

// ---------------------------------------------------------------------------
// Live overview

export async function securityOverview(t: Tenant, config: ScheduleConfig, now: Date) {
  const { facts } = await readAudit({
    t,
    mode: "live",
    window: { start: new Date(now.getTime() - WEEK_MS), end: new Date(now.getTime() + 1) },
    asOf: now,
    now,
    config,
    withAssets: false,
    evidenceLimit: OVERVIEW_EVIDENCE_LIMIT,
  });
  const result = scoreAudit(facts);
  return {
    success: true as const,
    data: {
      overall_score: result.overall_score,
      grade: result.grade,
      provisional: result.provisional,
      graded: result.graded,
      category_scores: result.category_scores,
      category_status: result.category_status,
      findings: result.findings.map((f) => ({ ...f, evidence: limitEvidence(f.evidence, OVERVIEW_EVIDENCE_LIMIT) })),
      generated_at: now.toISOString(),
      window: facts.window,
      coverage: facts.coverage.map((c) => ({
        module: c.module,
        configured_assets: c.configured_assets,
        enabled_assets: c.enabled_assets,
        stale_assets: c.uncollected.filter((u) => u.stale).length,
        expected_window_seconds: c.expected_window_seconds,
      })),
    },
  };
}

/**
 * Whether the organization's monitoring collected what it should, judged now like the
 * overview's freshness: every enabled asset (and each CT log its filters rely on) that
 * has existed for a whole collection window was collected within it. A new asset not
 * collected yet does not count against it. The causes are in words, per module.
 */
export async function collectionHealth(t: Tenant, config: ScheduleConfig, now: Date): Promise<{ healthy: boolean; causes: string[] }> {
  const { facts } = await readAudit({ t, mode: "live", window: { start: new Date(now.getTime() - WEEK_MS), end: new Date(now.getTime() + 1) }, asOf: now, now, config, withAssets: false, evidenceLimit: 1 });
  const causes = facts.coverage.flatMap((c) => {
    const stale = c.uncollected.filter((u) => u.stale);
    return stale.length ? [`${MODULE_LABELS[c.module]}: ${uncollectedCauses(c.module, stale).join("; ")}`] : [];
  });
  return { healthy: causes.length === 0, causes };
}

// ---------------------------------------------------------------------------
// Stored reports

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

async function gzipBase64(text: string): Promise<string> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return Buffer.from(await new Response(stream).arrayBuffer()).toString("base64");
}

async function gunzipBase64(b64: string): Promise<string> {
  const stream = new Blob([Buffer.from(b64, "base64")]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

interface StoredAppendix {
  collection_windows: ReportDocument["collection_windows"];
  assets: MonitoredAsset[];
  /** Absent from reports stored before the shared sources were kept. */
  shared_sources?: MonitoredAsset[];
}

/** A finding as stored (evidence capped); the PDF of a report is always rendered from this form. */
function storedForm(f: Finding): Finding {
  return { ...f, evidence: limitEvidence(f.evidence, REPORT_EVIDENCE_LIMIT) };
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

// ---------------------------------------------------------------------------
// Weekly generation

export interface GenerationContext {
  db: Db;
  config: Config;
  /** The job's clock: generation time and the appendix's state (the findings judge state at the period's end). */
  now: Date;
}

/** The outbox's attachment source of a weekly report's PDF: rendered from the stored report when the mail is sent. */
export const REPORT_PDF_SOURCE = "report_pdf";

/** The source key of an organization's weekly report: its period start (UNIQUE with the organization and the type). */
const reportPdfKey = (periodStart: string) => `weekly/${periodStart}`;

/** Renders the PDF an outbox row names (mailer.ts calls it at delivery). */
export async function renderReportAttachment(db: Db, organizationId: number | null, key: string): Promise<Uint8Array> {
  const [type, periodStart] = key.split("/", 2);
  if (organizationId === null || type !== "weekly" || !periodStart) throw new Error(`no report for attachment ${key}`);
  const t = tenantDb(db, organizationId);
  const report = await t.first(reports, eq(reports.reportType, "weekly"), eq(reports.periodStart, periodStart));
  if (!report) throw new Error(`report ${key} of organization ${organizationId} not found`);
  return (await renderStored(t, report)).pdf;
}

/** Why an address receives the weekly report (the mail's last lines say so, and how to stop it). */
type RecipientWhy = "member" | "added";

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

// ---------------------------------------------------------------------------
// Recipients

/** Addresses an administrator may add (beside the members whose flag is on). */
export const MAX_REPORT_RECIPIENTS = 50;

/** The addresses an administrator added, lower-case, in the order added. */
export async function listReportRecipients(t: Tenant) {
  const rows = await t.db.select({ email: reportRecipients.email }).from(reportRecipients).where(t.where(reportRecipients)).orderBy(asc(reportRecipients.id)).all();
  return { emails: rows.map((r) => r.email) };
}

/** Replaces the added addresses at once (one D1 batch: nothing half-saved); duplicates count once. */
export async function setReportRecipients(t: Tenant, emails: string[], now: Date) {
  const unique = [...new Set(emails.map((e) => e.toLowerCase()))];
  await t.db.batch([
    t.delete(reportRecipients),
    ...(unique.length ? [t.insert(reportRecipients, unique.map((email) => ({ email, createdAt: now.toISOString() })))] : []),
  ] as [ReturnType<Tenant["delete"]>, ...ReturnType<Tenant["insert"]>[]]);
  return listReportRecipients(t);
}

/**
 * Who is mailed a report: active members whose weekly-report flag is on, then the
 * addresses an administrator added; an address on both lists is mailed once, as a member.
 */
async function reportRecipientsOf(t: Tenant): Promise<{ email: string; why: RecipientWhy }[]> {
  const [members, added] = await Promise.all([
    t.db
      .select({ email: users.email })
      .from(users)
      .where(t.where(users, eq(users.status, "active"), eq(users.weeklyAuditReportEnabled, true)))
      .orderBy(users.id)
      .all(),
    listReportRecipients(t),
  ]);
  const seen = new Set(members.map((m) => m.email.toLowerCase()));
  return [
    ...members.map((m) => ({ email: m.email, why: "member" as const })),
    ...added.emails.filter((e) => !seen.has(e)).map((email) => ({ email, why: "added" as const })),
  ];
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
