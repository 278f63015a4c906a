/**
 * How a weekly report is stored (docs/modules/reports.md): its findings with the evidence
 * cut to what is kept, its appendix (every monitored asset with its state at generation)
 * as gzipped JSON, and the key by which the outbox names its PDF. The report's generation
 * (generation-service.ts) writes this form, its download and mail (report-service.ts)
 * read it back, so the mailed PDF and every download are rendered from the same rows.
 */
import { Buffer } from "node:buffer";
import type { MonitoredAsset, ReportDocument } from "./document";
import { limitEvidence, type Finding } from "./scoring";

/** Evidence items stored per finding of a report (the PDF prints at most 40). */
export const REPORT_EVIDENCE_LIMIT = 500;

/** The outbox's attachment source of a weekly report's PDF: rendered from the stored report when the mail is sent. */
export const REPORT_PDF_SOURCE = "report_pdf";

/** The source key of an organization's weekly report: its period start (UNIQUE with the organization and the type). */
export const reportPdfKey = (periodStart: string) => `weekly/${periodStart}`;

export interface StoredAppendix {
  collection_windows: ReportDocument["collection_windows"];
  assets: MonitoredAsset[];
  /** Absent from reports stored before the shared sources were kept. */
  shared_sources?: MonitoredAsset[];
}

/** A finding as stored (evidence capped); the PDF of a report is always rendered from this form. */
export function storedForm(f: Finding): Finding {
  return { ...f, evidence: limitEvidence(f.evidence, REPORT_EVIDENCE_LIMIT) };
}

export async function gzipBase64(text: string): Promise<string> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return Buffer.from(await new Response(stream).arrayBuffer()).toString("base64");
}

export async function gunzipBase64(b64: string): Promise<string> {
  const stream = new Blob([Buffer.from(b64, "base64")]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}
