/** Request and response schemas of the reports and dashboard endpoints. */
import { z } from "@hono/zod-openapi";
import { orNull } from "../../platform/openapi-document";
import { pathId } from "../../platform/paging";
import { MONITORING_MODULES } from "../../platform/permissions";
import { CATEGORY_STATUSES } from "./category-status";
import { CATEGORY_IDS, FRAMEWORKS, GRADES, SEVERITIES } from "./rules";
import { mailAddress } from "../../platform/mail-header";
import { OVERVIEW_EVIDENCE_LIMIT } from "./overview-service";
import { MAX_REPORT_RECIPIENTS } from "./recipient-service";

const Grade = z.enum(GRADES.map((g) => g.grade) as ["A", "B", "C", "D", "F"]);
const score = z.number().int().min(0).max(100);

export const CategoryScores = z
  .object(Object.fromEntries(CATEGORY_IDS.map((c) => [c, score])) as Record<(typeof CATEGORY_IDS)[number], typeof score>)
  .openapi("CategoryScores", { description: "Each category starts at 100; every fired rule of it subtracts its impact (floor 0)." });

export const CategoryAssessment = z
  .object({
    status: z.enum(CATEGORY_STATUSES).openapi({
      description:
        "assessed: every enabled asset of the category was collected within its module's expected window; partial: some were; " +
        "blind: it has assets and none was (its score counts what was not looked at as clean: shown as 'not assessed'); no_assets: nothing to assess. " +
        "CT is assessed on the monitored CT logs the filters rely on; coverage is always assessed (configuration and collection times are always known).",
    }),
    expected: z.number().int().openapi({ description: "What must be collected for the category to be assessed: its enabled assets (CT: the monitored logs); 0 when there is nothing to assess" }),
    collected: z.number().int().openapi({ description: "Of them, collected within the window" }),
    reason: z.string().openapi({ example: "0 of 12 domains resolved since 2026-11-22 23:25 UTC: DNS lookup failed for 12 domains (DNS lookup of dns.example failed)" }),
    last_collected_at: z.string().nullable().openapi({
      description:
        "blind only: when any of the category's assets (CT: the monitored logs) was last collected, so nothing was collected since then; null when none ever was. " +
        "Null for every other status (and in reports generated before this was recorded)",
      example: "2026-11-22T20:40:00.000Z",
    }),
  })
  .openapi("CategoryAssessment");

export const CategoryStatus = z
  .object(Object.fromEntries(CATEGORY_IDS.map((c) => [c, CategoryAssessment])) as Record<(typeof CATEGORY_IDS)[number], typeof CategoryAssessment>)
  .openapi("CategoryStatus", { description: "What each category's score rests on: whether its assets were collected within their expected windows, and why not." });

const provisional = z.boolean().openapi({
  description: "A category with assets is partial or blind: the score counts what could not be looked at as clean, so the grade is provisional (category_status says which and why).",
});

const graded = z.boolean().openapi({
  description:
    "False when a category with assets is blind (nothing of it collected within its window): the result gets no grade, and the console, " +
    "the PDF and the mail say 'Not graded' and why, with the score only as provisional. `grade` stays the letter of the score's formula.",
});

export const Evidence = z
  .object({
    asset: z.string().openapi({ example: "shop.example.com:443 (192.0.2.20)", description: "Domain, `hostname:port (IP)`, CT names or module" }),
    detail: z.string(),
    observed_at: z.string().nullable(),
    fingerprint: z.string().nullable().openapi({ description: "SHA-256 of the certificate involved" }),
    old_value: z.string().nullable(),
    new_value: z.string().nullable(),
  })
  .openapi("FindingEvidence");

export const Finding = z
  .object({
    id: z.string().openapi({ example: "certificates.expired", description: "The audit rule that fired" }),
    title: z.string(),
    severity: z.enum(SEVERITIES),
    score_impact: z.number().int(),
    category: z.enum(CATEGORY_IDS),
    condition: z.string(),
    references: z.array(z.object({ id: z.string().openapi({ example: "A.8.20" }), framework: z.enum(FRAMEWORKS.map((f) => f.id) as ["soc2", "iso27001", "national"]), title: z.string() })),
    affected_assets: z.number().int(),
    evidence: z.array(Evidence).openapi({ description: `Newest first, at most ${OVERVIEW_EVIDENCE_LIMIT} items` }),
    evidence_total: z.number().int(),
  })
  .openapi("Finding");

export const SecurityOverview = z
  .object({
    success: z.literal(true),
    data: z.object({
      overall_score: score,
      grade: Grade,
      provisional,
      graded,
      category_scores: CategoryScores,
      category_status: CategoryStatus,
      findings: z.array(Finding),
      generated_at: z.string(),
      window: z.object({ start: z.string(), end: z.string() }).openapi({ description: "Changes observed in this window count (the last 7 days)" }),
      coverage: z.array(
        z.object({
          module: z.enum(MONITORING_MODULES),
          configured_assets: z.number().int().openapi({ description: "Assets configured, paused ones included" }),
          enabled_assets: z.number().int().openapi({ description: "Of them, enabled: 0 makes 'Modules without assets' fire (all paused watches nothing)" }),
          stale_assets: z.number().int(),
          expected_window_seconds: z.number().int(),
        }),
      ),
    }),
  })
  .openapi("SecurityOverview");

export const ReportMailDelivery = z
  .object({
    to: z.string(),
    status: z.enum(["stored", "pending", "sent", "failed"]).openapi({
      description:
        "stored: no SMTP_URL, the outbox is the mailbox; pending: not delivered yet (retried with backoff, see next_attempt_at); sent; failed: given up after 6 attempts",
    }),
    attempts: z.number().int(),
    last_attempt_at: z.string().nullable(),
    next_attempt_at: z.string().nullable().openapi({ description: "When a pending mail is tried again" }),
    sent_at: z.string().nullable(),
    error_class: z.string().nullable().openapi({ description: "The collection error class of the latest failure (connect, timeout, tls, dns_resolution, ...); null once sent" }),
    error: z.string().nullable().openapi({ example: "mail delivery: connection to mail.example.com:587 failed: refused or closed before an answer" }),
  })
  .openapi("ReportMailDelivery");

export const ReportMail = z
  .object({
    recipients: z.number().int(),
    sent: z.number().int().openapi({ description: "Delivered (or stored in the outbox when no SMTP server is configured)" }),
    pending: z.number().int(),
    failed: z.number().int(),
    deliveries: z.array(ReportMailDelivery),
  })
  .openapi("ReportMail", { description: "The report's mail: one delivery per recipient, with the cause of each failure" });

export const Report = z
  .object({
    id: z.number().int(),
    report_type: z.literal("weekly"),
    period_start: z.string().openapi({ example: "2026-11-16T00:00:00.000Z" }),
    period_end: z.string().openapi({ example: "2026-11-23T00:00:00.000Z" }),
    overall_score: score,
    grade: Grade,
    generated_at: z.string(),
    pdf_filename: z.string().openapi({ example: "trust-plane-weekly-report-example-corp-2026-W47.pdf" }),
    category_scores: CategoryScores,
    category_status: orNull(CategoryStatus).openapi({ description: "What each category could assess at the period's end; null for a report generated before this was recorded" }),
    provisional: provisional.nullable().openapi({ description: "Whether a category with assets was partial or blind; null when the report did not record it" }),
    graded: graded.nullable().openapi({ description: "Whether the report has a grade (no category with assets was blind); null when the report did not record category status" }),
    findings_count: z.number().int(),
    mail: ReportMail,
  })
  .openapi("Report");

export const ReportListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(54).default(10).openapi({ description: "Reports to return (1-54)", example: 10 }),
});

export const ReportList = z.object({ success: z.literal(true), data: z.array(Report) }).openapi("ReportList");

export const ReportIdParam = z.object({ report_id: pathId("report_id") });

export const ReportRecipients = z
  .object({
    emails: z.array(mailAddress).max(MAX_REPORT_RECIPIENTS).openapi({
      description: `Addresses mailed each weekly report beside the members whose weekly-report flag is on (at most ${MAX_REPORT_RECIPIENTS}; stored lower-case, duplicates once)`,
      example: ["soc@example.com", "ciso@example.com"],
    }),
  })
  .strict()
  .openapi("ReportRecipients");
