/**
 * poppler-utils for tests running inside workerd (which cannot start processes): the
 * PDF is POSTed to the fixture hub (test/fixtures/servers/pdf.ts), which runs
 * pdfinfo, pdffonts, pdftotext and pdftoppm on it.
 */
import { env } from "cloudflare:workers";

const HUB = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

export interface PdfInspection {
  pages: number;
  info: Record<string, string>;
  fonts: { name: string; type: string; embedded: boolean; subset: boolean; unicode: boolean }[];
  text: string;
  raw: string;
  page_texts: string[];
}
export interface PdfRendering {
  pages: { page: number; width: number; height: number; png_bytes: number; ink: number }[];
}

export async function inspectPdf(pdf: Uint8Array): Promise<PdfInspection> {
  const r = await fetch(`${HUB}/pdf/inspect`, { method: "POST", body: pdf });
  if (!r.ok) throw new Error(`pdf inspect: ${r.status} ${await r.text()}`);
  return r.json();
}
export async function renderPdfPages(pdf: Uint8Array, dpi = 40): Promise<PdfRendering> {
  const r = await fetch(`${HUB}/pdf/render?dpi=${dpi}`, { method: "POST", body: pdf });
  if (!r.ok) throw new Error(`pdf render: ${r.status} ${await r.text()}`);
  return r.json();
}
/** pdftotext -layout pads columns with spaces: compare with runs of spaces collapsed. */
export const squash = (s: string) => s.replace(/[ \t]+/g, " ");
