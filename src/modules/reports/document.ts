/**
 * A report as a document: everything its PDF shows, and nothing the renderer has to
 * look up. A weekly report stores this (reports table) and its PDF is rendered from
 * it, byte for byte the same on every download (pdf/render.ts is deterministic).
 */
import type { MonitoringModule } from "../../platform/permissions";
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
}

export interface ReportDocument {
  report_type: "weekly";
  organization: string;
  period_start: string;
  period_end: string;
  generated_at: string;
  result: AuditResult;
  /** Expected collection window per enabled module (seconds), as configured when generated. */
  collection_windows: { module: MonitoringModule; seconds: number }[];
  assets: MonitoredAsset[];
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
 * `trust-plane-weekly-report-<organization>-<ISO week>.pdf`: ASCII only (it is sent
 * in Content-Disposition and as a mail attachment name), the organization slugged.
 */
export function pdfFilename(organization: string, organizationId: number, periodStart: string): string {
  const slug = organization
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return `trust-plane-weekly-report-${slug || `org-${organizationId}`}-${isoWeek(periodStart)}.pdf`;
}
