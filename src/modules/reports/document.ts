/**
 * A report as a document: everything its PDF shows, and nothing the renderer has to
 * look up. A weekly report stores this (reports table) and its PDF is rendered from
 * it, byte for byte the same on every download (pdf/render.ts is deterministic).
 */
import type { MonitoringModule } from "../../platform/permissions";
import type { CategoryStatus } from "./category-status";
import type { AuditResult } from "./scoring";

/** How an asset looks at generation time, for the appendix. */
export const ASSET_STATUSES = ["problem", "attention", "ok", "pending", "paused"] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

export interface MonitoredAsset {
  module: MonitoringModule;
  /** `example.com`, `www.example.com:443 (192.0.2.10)`, `*.example.com (wide)`. */
  asset: string;
  status: AssetStatus;
  /** Short state: "Valid", "Expired", "Scan failed", "Paused", "Not yet checked". */
  state: string;
  last_collected_at: string | null;
  /** One line of detail: expiry, protocols, registrar, DNSSEC, last error. */
  detail: string;
  /**
   * A DNS domain with the email checks on: its mail transport security at generation, one
   * entry per mechanism (the appendix's "Mail transport security" table). Absent for other
   * assets and from reports stored before it was kept.
   */
  email?: MailMechanismState[];
}

/** One mail transport security mechanism of a domain as the report shows it. */
export interface MailMechanismState {
  /** "MTA-STS", "TLS reporting", "DANE", "DKIM", "BIMI". */
  label: string;
  /** unknown: not observed (the detail says why): never a pass, never "not published". */
  status: "ok" | "missing" | "invalid" | "unknown";
  detail: string;
}

/** A result as a document carries it: what each category could assess is not known (null) for a report generated before it was recorded. */
export type DocumentResult = Omit<AuditResult, "category_status" | "provisional" | "graded"> & {
  category_status: CategoryStatus | null;
  provisional: boolean | null;
  /** Null with category_status: such a report shows its grade as it was. */
  graded: boolean | null;
};

export interface ReportDocument {
  report_type: "weekly";
  /**
   * The current week to date, rendered on demand and not stored: every page says
   * "Preview", and `period_end` is when it was rendered.
   */
  preview?: boolean;
  organization: string;
  period_start: string;
  period_end: string;
  generated_at: string;
  result: DocumentResult;
  /** Expected collection window per enabled module (seconds), as configured when generated. */
  collection_windows: { module: MonitoringModule; seconds: number }[];
  assets: MonitoredAsset[];
  /** The shared sources the assets rely on (the CT logs) with their state; absent from reports stored before they were kept. */
  shared_sources?: MonitoredAsset[];
}

/** ISO 8601 week of a date: "2026-W47". */
export function isoWeek(iso: string): string {
  const d = new Date(iso);
  const day = (d.getUTCDay() + 6) % 7; // Monday = 0
  const thursday = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3));
  const firstThursday = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round(((thursday.getTime() - firstThursday.getTime()) / 86_400_000 - 3 + ((firstThursday.getUTCDay() + 6) % 7)) / 7);
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, "0")}`;
}

/**
 * `trust-plane-weekly-report-<organization>-<ISO week>.pdf` (`…-preview.pdf` for the
 * week to date): ASCII only (it is sent
 * in Content-Disposition and as a mail attachment name), the organization slugged.
 */
export function pdfFilename(organization: string, organizationId: number, periodStart: string, preview = false): string {
  const slug = organization
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return `trust-plane-weekly-report-${slug || `org-${organizationId}`}-${isoWeek(periodStart)}${preview ? "-preview" : ""}.pdf`;
}
