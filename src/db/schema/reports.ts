/**
 * Weekly security audit reports (docs/modules/reports.md).
 *
 *   reports          one row per (organization, report type, period): the API's
 *                    fields, the category scores and status, and the appendix (every monitored
 *                    asset with its state at generation) as gzip+base64 JSON. UNIQUE
 *                    (organization_id, report_type, period_start) makes generation
 *                    idempotent: a second run's insert fails and its whole batch
 *                    (findings, mail) with it.
 *   report_findings  the fired audit rules of a report, worst first, with their
 *                    evidence (at most REPORT_EVIDENCE_LIMIT items stored per finding;
 *                    `evidence_total` counts them all).
 *
 *   report_recipients  addresses an administrator added to the weekly report's mail
 *                    (PUT /api/reports/recipients), beside the members whose
 *                    weekly-report flag is on. Stored lower-case, UNIQUE per organization.
 *
 * The PDF is not stored: it is rendered from these rows on download, byte for byte
 * the same each time (src/modules/reports/pdf/render.ts is deterministic).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id, organizationId } from "./columns";

export const reports = sqliteTable(
  "reports",
  {
    id: id(),
    organizationId: organizationId(),
    reportType: text("report_type", { enum: ["weekly"] }).notNull(),
    periodStart: text("period_start").notNull(),
    periodEnd: text("period_end").notNull(),
    overallScore: integer("overall_score").notNull(),
    grade: text("grade", { enum: ["A", "B", "C", "D", "F"] }).notNull(),
    /** {dns, ct, certificates, rdap, coverage}: ints 0-100. */
    categoryScores: text("category_scores", { mode: "json" }).$type<Record<string, number>>().notNull(),
    /**
     * {dns, ct, ...}: {status: assessed|partial|blind|no_assets, expected, collected, reason,
     * last_collected_at (absent in reports stored before it was recorded)}:
     * what each category could assess (modules/reports/category-status.ts). Null for a
     * report generated before this was recorded: what it could assess is not known.
     */
    categoryStatus: text("category_status", { mode: "json" }).$type<Record<string, { status: string; expected: number; collected: number; reason: string; last_collected_at?: string | null }>>(),
    /** The organization's name when the report was generated (printed on the PDF). */
    organizationName: text("organization_name").notNull(),
    generatedAt: text("generated_at").notNull(),
    pdfFilename: text("pdf_filename").notNull(),
    /** gzip+base64 of {collection_windows, assets, shared_sources}: the PDF's methodology windows and appendix. */
    appendix: text("appendix").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("reports_org_type_period_unique").on(t.organizationId, t.reportType, t.periodStart),
    index("reports_org_period_end_idx").on(t.organizationId, t.periodEnd),
  ],
);

export const reportFindings = sqliteTable(
  "report_findings",
  {
    id: id(),
    organizationId: organizationId(),
    reportId: integer("report_id")
      .notNull()
      .references(() => reports.id, { onDelete: "cascade" }),
    /** Order in the report (worst first). */
    position: integer("position").notNull(),
    ruleId: text("rule_id").notNull(),
    title: text("title").notNull(),
    severity: text("severity").notNull(),
    scoreImpact: integer("score_impact").notNull(),
    category: text("category").notNull(),
    affectedAssets: integer("affected_assets").notNull(),
    /** Evidence items as the scoring engine produced them (newest first, capped). */
    evidence: text("evidence", { mode: "json" }).$type<unknown[]>().notNull(),
    evidenceTotal: integer("evidence_total").notNull(),
  },
  (t) => [index("report_findings_report_idx").on(t.reportId, t.position), index("report_findings_org_rule_idx").on(t.organizationId, t.ruleId)],
);

export const reportRecipients = sqliteTable(
  "report_recipients",
  {
    id: id(),
    organizationId: organizationId(),
    /** A plain address, lower-case. */
    email: text("email").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("report_recipients_org_email_unique").on(t.organizationId, t.email)],
);
