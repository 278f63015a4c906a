/**
 * The weekly audit report as a PDF (pdf-lib, fonts embedded), pure: a
 * ReportDocument in, bytes out, the same bytes for the same document (dates come
 * from the document, font subsets carry fixed names), so a stored report renders
 * identically on every download.
 *
 * Layout (A4 portrait):
 *   1. Cover: organization, period, overall score and grade, the five category
 *      scores as a bar chart, the findings at a glance.
 *   2. Findings: one block per fired rule: severity, score impact, condition,
 *      evidence per asset (fingerprints and before/after values in monospace,
 *      wrapped), framework references.
 *   3. Methodology: weights, grades, rounding, collection windows, every rule
 *      evaluated and whether it fired.
 *   4. Appendix A: every monitored asset with its state at generation time (its RDAP
 *      expiry as the findings judged it, at the period's end); Appendix B: the CT logs
 *      the filters rely on, each with its state.
 * A provisional result (a category partly or not assessed: category-status.ts) says so
 * on the cover beside a muted grade, draws no bar for a category not assessed, and
 * lists what each score rests on in the methodology. A preview (the week so far, not
 * stored) is marked on every page.
 * Every page after the cover has a running header; every page a footer with
 * "Page n of N". Blocks that must stay together (an evidence item, a table row,
 * a heading with its first line) move to the next page whole.
 */
import { Buffer } from "node:buffer";
import fontkit from "@pdf-lib/fontkit";
import { PDFDocument, PDFHexString, rgb, type PDFFont, type PDFPage, type RGB } from "pdf-lib";
import { CATEGORIES, FRAMEWORKS, AUDIT_RULES, GRADES, MODULE_LABELS, REFERENCES, SEVERITIES, type Grade, type Severity } from "../rules";
import type { AssetStatus, MailMechanismState, MonitoredAsset, ReportDocument } from "../document";
import { provisionalNote, scoreHeadline, unassessedCategories, type CategoryStatus, type CategoryStatusValue } from "../category-status";
import { gradeOf, limitEvidence, type Evidence, type Finding } from "../scoring";
import { formatDuration } from "../freshness";
import type { MonitoringModule } from "../../../platform/permissions";
import * as fontData from "./fonts/fonts.generated";
import { formatDate, formatUtc, truncateText, visibleText, wrapText } from "./text";

// ---------------------------------------------------------------------------
// Page geometry, palette, type scale

const PAGE_W = 595.28;
const PAGE_H = 841.89;
const MARGIN = { left: 54, right: 54, top: 64, bottom: 64 };
const CONTENT_W = PAGE_W - MARGIN.left - MARGIN.right;

const hex = (h: string): RGB => rgb(parseInt(h.slice(0, 2), 16) / 255, parseInt(h.slice(2, 4), 16) / 255, parseInt(h.slice(4, 6), 16) / 255);
const COLOR = {
  ink: hex("1D2433"),
  navy: hex("14284B"),
  navySoft: hex("A9B8D4"),
  muted: hex("5A6474"),
  faint: hex("8B95A5"),
  rule: hex("D9DEE6"),
  panel: hex("F3F5F9"),
  zebra: hex("F7F8FA"),
  track: hex("E6EAF0"),
  white: rgb(1, 1, 1),
};
const SEVERITY_COLOR: Record<Severity, { fg: RGB; bg: RGB }> = {
  critical: { fg: hex("B42318"), bg: hex("FDF0EF") },
  high: { fg: hex("C2410C"), bg: hex("FFF4EC") },
  medium: { fg: hex("9A6700"), bg: hex("FFF9E6") },
};
const GRADE_COLOR: Record<Grade, RGB> = { A: hex("17803D"), B: hex("4D7C0F"), C: hex("9A6700"), D: hex("C2410C"), F: hex("B42318") };
/** Preview and provisional marks: what is shown is not the final word. */
const PREVIEW_COLOR = hex("B54708");
const STATUS_COLOR: Record<AssetStatus, RGB> = {
  problem: SEVERITY_COLOR.critical.fg,
  attention: SEVERITY_COLOR.high.fg,
  ok: GRADE_COLOR.A,
  pending: COLOR.muted,
  paused: COLOR.faint,
};

/** Evidence items printed per finding; the rest are counted (the appendix lists every asset). */
export const PDF_EVIDENCE_LIMIT = 40;

// ---------------------------------------------------------------------------
// Fonts

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
  mono: PDFFont;
}

/**
 * pdf-lib shapes every string it draws with fontkit (a full layout pass per call),
 * which dominated the time of a 1,000-asset report. The fonts are embedded without
 * layout features (no ligatures, no kerning: see fonts/generate.mjs), so a string's
 * glyphs are exactly its characters' glyphs: encode each distinct character once
 * (which also adds it to the subset) and concatenate.
 */
function encodeByCharacter(font: PDFFont): void {
  const encodeOne = font.encodeText.bind(font);
  const glyphHex = new Map<string, string>();
  font.encodeText = (text: string) => {
    let hex = "";
    for (const ch of text) {
      let h = glyphHex.get(ch);
      if (h === undefined) {
        h = encodeOne(ch).asString();
        glyphHex.set(ch, h);
      }
      hex += h;
    }
    return PDFHexString.of(hex);
  };
}

let decoded: { regular: Uint8Array; bold: Uint8Array; mono: Uint8Array } | null = null;
function fontBytes() {
  const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));
  decoded ??= { regular: bytes(fontData.regular), bold: bytes(fontData.bold), mono: bytes(fontData.mono) };
  return decoded;
}

const STAND_INS: Record<string, string> = {
  "\u2212": "-", "\u2192": "->", "\u2190": "<-", "\u2194": "<->", "\u21d2": "=>", "\u2022": "*", "\u25cf": "*", "\u2713": "v", "\u2717": "x",
};

// ---------------------------------------------------------------------------
// The page writer: a cursor `y` measured from the top of the page, page breaks,
// cached glyph widths, text sanitized to what the fonts can draw.

type Align = "left" | "right" | "center";

interface TextStyle {
  font: PDFFont;
  size: number;
  color?: RGB;
  lineHeight?: number;
}

class Writer {
  readonly pages: PDFPage[] = [];
  page!: PDFPage;
  /** Distance from the top edge of the page. */
  y = 0;
  private readonly widths = new Map<PDFFont, Map<string, number>>();
  private readonly charsets = new Map<PDFFont, Set<number>>();

  constructor(
    readonly doc: PDFDocument,
    readonly f: Fonts,
    private readonly header: (w: Writer) => void,
  ) {}

  addPage(withHeader = true): void {
    this.page = this.doc.addPage([PAGE_W, PAGE_H]);
    this.pages.push(this.page);
    this.y = MARGIN.top;
    if (withHeader) this.header(this);
  }

  /** Starts a new page unless `height` more points fit above the bottom margin. */
  ensure(height: number): void {
    if (this.y + height > PAGE_H - MARGIN.bottom) this.addPage();
  }

  get remaining(): number {
    return PAGE_H - MARGIN.bottom - this.y;
  }

  /**
   * Characters the font lacks get an ASCII stand-in (Noto Sans has no minus sign or
   * arrows), else "?": a missing glyph would print as an empty box.
   */
  clean(text: string, font: PDFFont): string {
    let set = this.charsets.get(font);
    if (!set) this.charsets.set(font, (set = new Set(font.getCharacterSet())));
    let out = "";
    for (const ch of text.replace(/\t/g, " ")) {
      const cp = ch.codePointAt(0)!;
      out += cp === 10 || set.has(cp) ? ch : (STAND_INS[ch] ?? "?");
    }
    return out;
  }

  width(text: string, font: PDFFont, size: number): number {
    let cache = this.widths.get(font);
    if (!cache) this.widths.set(font, (cache = new Map()));
    let w = 0;
    for (const ch of text) {
      let cw = cache.get(ch);
      if (cw === undefined) {
        cw = font.widthOfTextAtSize(ch, 1);
        cache.set(ch, cw);
      }
      w += cw;
    }
    return w * size;
  }

  lines(text: string, style: TextStyle, width: number): string[] {
    return wrapText(this.clean(text, style.font), width, (s) => this.width(s, style.font, style.size));
  }

  lineHeight(style: TextStyle): number {
    return style.lineHeight ?? style.size * 1.38;
  }

  /** Draws one line with its top at `top` (page coordinates from the top edge). */
  text(text: string, x: number, top: number, style: TextStyle, align: Align = "left", boxWidth = 0): void {
    const clean = this.clean(text, style.font);
    let dx = 0;
    if (align !== "left") {
      const w = this.width(clean, style.font, style.size);
      dx = align === "right" ? boxWidth - w : (boxWidth - w) / 2;
    }
    this.page.drawText(clean, {
      x: x + dx,
      y: PAGE_H - top - style.size * 0.93,
      size: style.size,
      font: style.font,
      color: style.color ?? COLOR.ink,
    });
  }

  /** A wrapped paragraph at the cursor; breaks pages between lines. */
  paragraph(text: string, style: TextStyle, opts: { x?: number; width?: number; after?: number } = {}): void {
    const x = opts.x ?? MARGIN.left;
    const width = opts.width ?? CONTENT_W - (x - MARGIN.left);
    const lh = this.lineHeight(style);
    for (const line of this.lines(text, style, width)) {
      this.ensure(lh);
      this.text(line, x, this.y, style);
      this.y += lh;
    }
    this.y += opts.after ?? 0;
  }

  rect(x: number, top: number, width: number, height: number, color: RGB, radius = 0): void {
    if (radius <= 0) {
      this.page.drawRectangle({ x, y: PAGE_H - top - height, width, height, color });
      return;
    }
    const r = Math.min(radius, width / 2, height / 2);
    const w = width;
    const h = height;
    const path = `M ${r} 0 H ${w - r} Q ${w} 0 ${w} ${r} V ${h - r} Q ${w} ${h} ${w - r} ${h} H ${r} Q 0 ${h} 0 ${h - r} V ${r} Q 0 0 ${r} 0 Z`;
    this.page.drawSvgPath(path, { x, y: PAGE_H - top, color });
  }

  hline(x1: number, x2: number, top: number, color = COLOR.rule, thickness = 0.6): void {
    this.page.drawLine({ start: { x: x1, y: PAGE_H - top }, end: { x: x2, y: PAGE_H - top }, thickness, color });
  }

  vline(x: number, top: number, bottom: number, color = COLOR.rule, thickness = 0.6): void {
    this.page.drawLine({ start: { x, y: PAGE_H - top }, end: { x, y: PAGE_H - bottom }, thickness, color });
  }

  circle(cx: number, cyTop: number, radius: number, color: RGB): void {
    this.page.drawCircle({ x: cx, y: PAGE_H - cyTop, size: radius, color });
  }

  /** A pill with uppercase white text; returns its width. */
  badge(label: string, x: number, top: number, color: RGB, size = 7.5): number {
    const text = label.toUpperCase();
    const w = this.width(text, this.f.bold, size) + 12;
    const h = size + 8;
    this.rect(x, top, w, h, color, h / 2);
    this.text(text, x + 6, top + 4.2, { font: this.f.bold, size, color: COLOR.white });
    return w;
  }
}

// ---------------------------------------------------------------------------
// Tables: wrapped cells, zebra rows, a header repeated after each page break.

interface Column {
  title: string;
  /** Fraction of the table width. */
  width: number;
  align?: Align;
}

interface Cell {
  text: string;
  font?: "regular" | "bold" | "mono";
  color?: RGB;
  size?: number;
}

function table(
  w: Writer,
  columns: Column[],
  rows: Cell[][],
  opts: { size?: number; x?: number; width?: number; zebra?: boolean; continued?: string } = {},
): void {
  const x0 = opts.x ?? MARGIN.left;
  const tableW = opts.width ?? CONTENT_W;
  const size = opts.size ?? 8.5;
  const pad = 5;
  const widths = columns.map((c) => c.width * tableW);
  const headStyle: TextStyle = { font: w.f.bold, size: size - 0.5, color: COLOR.muted };
  const headH = w.lineHeight(headStyle) + 2 * pad - 2;

  const drawHeader = () => {
    w.rect(x0, w.y, tableW, headH, COLOR.panel);
    let x = x0;
    columns.forEach((c, i) => {
      w.text(c.title.toUpperCase(), x + pad, w.y + pad - 1, headStyle, c.align ?? "left", widths[i] - 2 * pad);
      x += widths[i];
    });
    w.y += headH;
    w.hline(x0, x0 + tableW, w.y, COLOR.rule, 0.8);
  };

  w.ensure(headH + 24);
  drawHeader();
  rows.forEach((row, r) => {
    const laid = row.map((cell, i) => {
      const style: TextStyle = { font: w.f[cell.font ?? "regular"], size: cell.size ?? size, color: cell.color ?? COLOR.ink };
      // Cells hold monitored values (asset names, details): their control characters are shown, never obeyed.
      return { style, lines: w.lines(visibleText(cell.text), style, widths[i] - 2 * pad) };
    });
    const rowH = Math.max(...laid.map((l) => l.lines.length * w.lineHeight(l.style))) + 2 * pad - 2;
    if (w.y + rowH > PAGE_H - MARGIN.bottom) {
      w.addPage();
      if (opts.continued) {
        w.text(`${opts.continued} (continued)`, x0, w.y, { font: w.f.bold, size: 9, color: COLOR.muted });
        w.y += 16;
      }
      drawHeader();
    }
    if (opts.zebra !== false && r % 2 === 1) w.rect(x0, w.y, tableW, rowH, COLOR.zebra);
    let x = x0;
    laid.forEach((l, i) => {
      let top = w.y + pad - 1;
      for (const line of l.lines) {
        w.text(line, x + pad, top, l.style, columns[i].align ?? "left", widths[i] - 2 * pad);
        top += w.lineHeight(l.style);
      }
      x += widths[i];
    });
    w.y += rowH;
    w.hline(x0, x0 + tableW, w.y, COLOR.rule, 0.4);
  });
}

// ---------------------------------------------------------------------------
// Sections

function sectionHeading(w: Writer, title: string, intro?: string): void {
  w.ensure(60);
  w.text(title, MARGIN.left, w.y, { font: w.f.bold, size: 17, color: COLOR.navy });
  w.y += 27;
  if (intro) w.paragraph(intro, { font: w.f.regular, size: 9, color: COLOR.muted }, { after: 10 });
}

function subHeading(w: Writer, title: string, note?: string): void {
  w.ensure(46);
  w.text(title, MARGIN.left, w.y, { font: w.f.bold, size: 11.5, color: COLOR.navy });
  if (note) {
    const tw = w.width(title, w.f.bold, 11.5);
    w.text(note, MARGIN.left + tw + 8, w.y + 2.6, { font: w.f.regular, size: 8.5, color: COLOR.muted });
  }
  w.y += 20;
}

const severityCounts = (findings: Finding[]) => SEVERITIES.map((s) => ({ severity: s, count: findings.filter((f) => f.severity === s).length }));
const categoryLabel = (id: string) => CATEGORIES.find((c) => c.id === id)?.label ?? id;

const STATUS_WORDS: Record<CategoryStatusValue, string> = { assessed: "Assessed", partial: "Partly assessed", blind: "Not assessed", no_assets: "No assets" };

/**
 * The cover's warning that the grade rests on less than every category: which
 * categories could not (fully) be assessed and why.
 */
function provisionalNotice(w: Writer, status: CategoryStatus, graded: boolean): void {
  const f = w.f;
  const x = MARGIN.left + 14;
  const width = CONTENT_W - 28;
  const body = { font: f.regular, size: 8.5, color: COLOR.ink };
  const lines = unassessedCategories(status).flatMap((id) =>
    w.lines(`${CATEGORIES.find((c) => c.id === id)!.label} ${status[id].status === "blind" ? "not assessed" : "partly assessed"}: ${status[id].reason}`, body, width),
  );
  const shown = lines.slice(0, 8);
  const height = 34 + shown.length * w.lineHeight(body) + 8;
  const top = w.y;
  w.rect(MARGIN.left, top, CONTENT_W, height, SEVERITY_COLOR.high.bg, 5);
  w.rect(MARGIN.left, top, 4, height, PREVIEW_COLOR);
  w.text(`${graded ? "Provisional grade" : "Not graded"}: ${provisionalNote(status)}`, x, top + 9, { font: f.bold, size: 10, color: PREVIEW_COLOR });
  const why = graded
    ? "The score counts what could not be looked at as clean; the methodology lists what each category rests on."
    : "No grade while a category could not be looked at at all: its score of 100 would be counted as clean, not observed.";
  w.text(why, x, top + 23, { font: f.regular, size: 7.8, color: COLOR.muted });
  let y = top + 36;
  for (const line of shown) {
    w.text(line, x, y, body);
    y += w.lineHeight(body);
  }
  w.y = top + height + 14;
}

function cover(w: Writer, d: ReportDocument): void {
  w.addPage(false);
  const f = w.f;
  const { result } = d;

  // Title band.
  const bandH = 228;
  w.rect(0, 0, PAGE_W, bandH, COLOR.navy);
  w.text("TRUST-PLANE", MARGIN.left, 50, { font: f.bold, size: 9.5, color: COLOR.navySoft });
  if (d.preview) w.badge("Preview: this week so far, not a stored report", MARGIN.left + 84, 47.5, PREVIEW_COLOR, 7.5);
  w.text("Weekly Security Audit Report", MARGIN.left, 72, { font: f.bold, size: 25, color: COLOR.white });
  let y = 116;
  for (const line of w.lines(d.organization, { font: f.regular, size: 16 }, CONTENT_W).slice(0, 2)) {
    w.text(line, MARGIN.left, y, { font: f.regular, size: 16, color: COLOR.white });
    y += 22;
  }
  const meta = { font: f.regular, size: 9.5, color: COLOR.navySoft };
  w.text(`Reporting period   ${formatUtc(d.period_start)}  –  ${formatUtc(d.period_end)}`, MARGIN.left, bandH - 56, meta);
  w.text(`Generated   ${formatUtc(d.generated_at)}`, MARGIN.left, bandH - 38, meta);

  // Score card.
  const cardTop = bandH + 30;
  const cardH = 118;
  w.rect(MARGIN.left, cardTop, CONTENT_W, cardH, COLOR.panel, 8);
  const label = { font: f.bold, size: 8, color: COLOR.muted };
  // Not graded (a blind category): the score is only provisional, drawn small and muted,
  // and the grade's place says so: an organization nobody could look at never shows an A.
  const graded = result.graded !== false;
  w.text(graded ? "OVERALL SCORE" : "PROVISIONAL SCORE", MARGIN.left + 22, cardTop + 20, label);
  const scoreText = String(result.overall_score);
  const scoreSize = graded ? 50 : 30;
  w.text(scoreText, MARGIN.left + 20, cardTop + 36, { font: f.bold, size: scoreSize, color: graded ? COLOR.navy : COLOR.muted });
  w.text("/ 100", MARGIN.left + 24 + w.width(scoreText, f.bold, scoreSize), cardTop + 36 + scoreSize * 0.6, { font: f.regular, size: 14, color: COLOR.muted });
  if (!graded) {
    for (const [i, line] of w.lines("counts what could not be looked at as clean", { font: f.regular, size: 8, color: COLOR.muted }, 150).entries()) {
      w.text(line, MARGIN.left + 22, cardTop + 76 + i * 11, { font: f.regular, size: 8, color: COLOR.muted });
    }
  }

  const gx = MARGIN.left + 222;
  w.text("GRADE", gx - 36, cardTop + 20, label, "center", 72);
  // A provisional grade is drawn muted, never in the colour of a confirmed A.
  w.circle(gx, cardTop + 68, 30, result.provisional ? COLOR.muted : GRADE_COLOR[result.grade]);
  w.text(graded ? result.grade : "–", gx - 30, cardTop + 49, { font: f.bold, size: 32, color: COLOR.white }, "center", 60);
  if (result.provisional) w.text(graded ? "PROVISIONAL" : "NOT GRADED", gx - 40, cardTop + 101, { font: f.bold, size: 7.5, color: PREVIEW_COLOR }, "center", 80);

  const sx = MARGIN.left + 300;
  w.vline(sx - 18, cardTop + 18, cardTop + cardH - 18);
  w.text("FINDINGS", sx, cardTop + 20, label);
  const n = result.findings.length;
  w.text(n === 0 ? "None" : `${n} audit rule${n === 1 ? "" : "s"} fired`, sx, cardTop + 36, { font: f.bold, size: 14, color: COLOR.ink });
  let sy = cardTop + 60;
  for (const { severity, count } of severityCounts(result.findings)) {
    w.circle(sx + 4, sy + 5.5, 3.5, count ? SEVERITY_COLOR[severity].fg : COLOR.rule);
    w.text(`${count} ${severity}`, sx + 14, sy, { font: f.regular, size: 9.5, color: count ? COLOR.ink : COLOR.faint });
    sy += 15;
  }

  w.y = cardTop + cardH + 22;
  if (result.provisional && result.category_status) provisionalNotice(w, result.category_status, graded);
  else w.y += 12;

  // Category scores as a bar chart; a category that could not be assessed gets no bar.
  subHeading(w, "Category scores", "each category starts at 100; fired rules subtract their impact");
  const labelW = 118;
  const valueW = 34;
  const trackX = MARGIN.left + labelW;
  const trackW = CONTENT_W - labelW - valueW;
  const rowH = 30;
  const chartTop = w.y + 4;
  for (const t of [0, 25, 50, 75, 100]) {
    const x = trackX + (trackW * t) / 100;
    w.vline(x, chartTop - 4, chartTop + rowH * CATEGORIES.length, COLOR.rule, 0.5);
    w.text(String(t), x - 10, chartTop + rowH * CATEGORIES.length + 4, { font: f.regular, size: 7.5, color: COLOR.faint }, "center", 20);
  }
  const note = { font: f.regular, size: 7.3, color: COLOR.muted };
  CATEGORIES.forEach((c, i) => {
    const top = chartTop + i * rowH;
    const score = result.category_scores[c.id];
    const status = result.category_status?.[c.id];
    w.text(c.label, MARGIN.left, top + 1, { font: f.bold, size: 10, color: COLOR.ink });
    w.text(`weight ${c.weight}%`, MARGIN.left, top + 14, { font: f.regular, size: 7.5, color: COLOR.muted });
    w.rect(trackX, top + 4, trackW, 13, COLOR.track, 2);
    // Nothing to assess, but findings of it (a report's period saw scans of a target since removed): its score stands.
    const plain = !status || status.status === "assessed" || status.status === "partial" || (status.status === "no_assets" && score < 100);
    if (plain) {
      if (score > 0) w.rect(trackX, top + 4, (trackW * score) / 100, 13, status?.status === "partial" ? COLOR.muted : GRADE_COLOR[gradeOf(score)], 2);
      w.text(String(score), trackX + trackW + 4, top + 3, { font: f.bold, size: 10.5, color: COLOR.ink }, "right", valueW - 4);
    } else {
      const label = status.status === "blind" ? "NOT ASSESSED" : "NO ASSETS";
      w.text(label, trackX + 6, top + 6.5, { font: f.bold, size: 7.5, color: status.status === "blind" ? PREVIEW_COLOR : COLOR.muted });
      w.text("n/a", trackX + trackW + 4, top + 4, { font: f.regular, size: 9, color: COLOR.muted }, "right", valueW - 4);
    }
    if (status && status.status !== "assessed") {
      const prefix = status.status === "partial" ? "Partly assessed: " : "";
      const line = truncateText(w.clean(prefix + status.reason, note.font), trackW, (t) => w.width(t, note.font, note.size));
      // On white, so the chart's grid lines do not run through the words.
      w.rect(trackX, top + 18.5, w.width(line, note.font, note.size) + 2, 9.5, COLOR.white);
      w.text(line, trackX, top + 19.5, note);
    }
  });
  w.y = chartTop + rowH * CATEGORIES.length + 30;

  // Findings at a glance.
  subHeading(w, "Findings at a glance");
  if (n === 0) {
    w.paragraph(
      result.provisional
        ? "No audit rule fired for this period on what could be assessed: see above for what could not."
        : "No audit rule fired for this period: every category scores 100.",
      { font: f.regular, size: 9.5, color: COLOR.muted },
    );
    return;
  }
  table(
    w,
    [
      { title: "Severity", width: 0.14 },
      { title: "Finding", width: 0.42 },
      { title: "Category", width: 0.18 },
      { title: "Assets", width: 0.11, align: "right" },
      { title: "Impact", width: 0.15, align: "right" },
    ],
    result.findings.map((x) => [
      { text: x.severity.toUpperCase(), font: "bold", color: SEVERITY_COLOR[x.severity].fg, size: 7.5 },
      { text: x.title, font: "bold" },
      { text: categoryLabel(x.category) },
      { text: String(x.affected_assets) },
      { text: `–${x.score_impact} points`, color: SEVERITY_COLOR[x.severity].fg },
    ]),
  );
}

/** The height an evidence item needs (so it is never split across pages). */
function evidenceLayout(w: Writer, e: Evidence, width: number) {
  const asset = { font: w.f.bold, size: 9.2, color: COLOR.ink };
  const detail = { font: w.f.regular, size: 8.8, color: COLOR.ink };
  const labelStyle = { font: w.f.regular, size: 7.8, color: COLOR.muted };
  const mono = { font: w.f.mono, size: 7.8, color: COLOR.ink };
  const labelW = 58;
  const meta: { label: string; value: string; style: TextStyle; lines: string[] }[] = [];
  // Evidence quotes monitored data (record values, subjects, remarks): its control characters are shown, never obeyed.
  const add = (label: string, value: string | null, style: TextStyle) => {
    if (value === null || value === "") return;
    meta.push({ label, value, style, lines: w.lines(visibleText(value), style, width - labelW) });
  };
  add("Observed", e.observed_at ? formatUtc(e.observed_at) : null, labelStyle);
  add("SHA-256", e.fingerprint, mono);
  add("Before", e.old_value, mono);
  add("After", e.new_value, mono);
  const assetLines = w.lines(visibleText(e.asset), asset, width);
  const detailLines = w.lines(visibleText(e.detail), detail, width);
  const height =
    assetLines.length * w.lineHeight(asset) +
    detailLines.length * w.lineHeight(detail) +
    meta.reduce((h, m) => h + m.lines.length * w.lineHeight(m.style) + 1, 0) +
    8;
  return { asset, detail, labelStyle, labelW, meta, assetLines, detailLines, height };
}

function drawEvidence(w: Writer, e: Evidence, x: number, width: number): void {
  const l = evidenceLayout(w, e, width);
  w.ensure(l.height);
  w.circle(x - 8, w.y + 6.2, 1.8, COLOR.muted);
  for (const line of l.assetLines) {
    w.text(line, x, w.y, l.asset);
    w.y += w.lineHeight(l.asset);
  }
  for (const line of l.detailLines) {
    w.text(line, x, w.y, l.detail);
    w.y += w.lineHeight(l.detail);
  }
  for (const m of l.meta) {
    w.text(m.label, x, w.y + 0.5, l.labelStyle);
    for (const line of m.lines) {
      w.text(line, x + l.labelW, w.y + 0.5, m.style);
      w.y += w.lineHeight(m.style);
    }
    w.y += 1;
  }
  w.y += 8;
}

function findingBlock(w: Writer, x: Finding): void {
  const f = w.f;
  const sev = SEVERITY_COLOR[x.severity];
  const headH = 46;
  // Keep the header with its condition and first evidence item.
  const first = x.evidence[0] ? evidenceLayout(w, x.evidence[0], CONTENT_W - 30).height : 0;
  w.ensure(headH + 40 + first);

  const top = w.y;
  w.rect(MARGIN.left, top, CONTENT_W, headH, sev.bg, 5);
  w.rect(MARGIN.left, top, 4, headH, sev.fg);
  const bw = w.badge(x.severity, MARGIN.left + 14, top + 9, sev.fg);
  const impact = `–${x.score_impact} points`;
  const impactW = w.width(impact, f.bold, 11.5);
  w.text(impact, PAGE_W - MARGIN.right - 12 - impactW, top + 8, { font: f.bold, size: 11.5, color: sev.fg });
  const titleX = MARGIN.left + 14 + bw + 8;
  w.text(truncateText(w.clean(x.title, f.bold), PAGE_W - MARGIN.right - 24 - impactW - titleX, (s) => w.width(s, f.bold, 12.5)), titleX, top + 7, {
    font: f.bold,
    size: 12.5,
    color: COLOR.ink,
  });
  const assets = `${x.affected_assets} asset${x.affected_assets === 1 ? "" : "s"} affected`;
  w.text(`${x.id}   ·   ${categoryLabel(x.category)}   ·   ${assets}`, MARGIN.left + 14, top + 28, { font: f.regular, size: 8, color: COLOR.muted });
  w.y = top + headH + 9;

  w.paragraph(`Fires when ${x.condition}.`, { font: f.regular, size: 9, color: COLOR.ink }, { x: MARGIN.left + 14, after: 7 });

  w.ensure(16 + first);
  w.text("EVIDENCE", MARGIN.left + 14, w.y, { font: f.bold, size: 7.5, color: COLOR.muted });
  w.y += 14;
  const shown = limitEvidence(x.evidence, PDF_EVIDENCE_LIMIT);
  for (const e of shown) drawEvidence(w, e, MARGIN.left + 30, CONTENT_W - 30);
  const more = Math.max(x.evidence_total, x.evidence.length) - shown.length;
  if (more > 0) {
    w.paragraph(`… and ${more} more item(s) of evidence; Appendix A lists every monitored asset with its state.`, {
      font: f.regular,
      size: 8.5,
      color: COLOR.muted,
    }, { x: MARGIN.left + 30, after: 6 });
  }

  // Framework references.
  const groups = FRAMEWORKS.map((fw) => ({ label: fw.label, refs: x.references.filter((r) => r.framework === fw.id) })).filter((g) => g.refs.length);
  const refStyle = { font: f.regular, size: 8, color: COLOR.ink };
  const labelW = 108;
  const laid = groups.map((g) => ({ label: g.label, lines: w.lines(g.refs.map((r) => `${r.id} ${r.title}`).join("  ·  "), refStyle, CONTENT_W - 14 - labelW - 8) }));
  const refsH = 18 + laid.reduce((h, g) => h + g.lines.length * w.lineHeight(refStyle) + 2, 0);
  w.ensure(refsH);
  w.hline(MARGIN.left + 14, PAGE_W - MARGIN.right, w.y);
  w.y += 6;
  w.text("REFERENCES", MARGIN.left + 14, w.y, { font: f.bold, size: 7.5, color: COLOR.muted });
  w.y += 12;
  for (const g of laid) {
    w.text(g.label, MARGIN.left + 14, w.y, { font: f.bold, size: 8, color: COLOR.muted });
    for (const line of g.lines) {
      w.text(line, MARGIN.left + 14 + labelW, w.y, refStyle);
      w.y += w.lineHeight(refStyle);
    }
    w.y += 2;
  }
  w.y += 20;
}

function findings(w: Writer, d: ReportDocument): void {
  if (d.result.findings.length === 0) return;
  // A cover that ran onto a second page (a provisional notice) is followed on that page.
  if (w.pages.length > 1) w.y += 28;
  else w.addPage();
  sectionHeading(
    w,
    "Findings",
    "Each finding is an audit rule that fired for the reporting period, worst first. The evidence names every asset involved, newest observation first (for stale data: the organization's own assets by module, then the shared CT logs in one line); references map the finding to SOC 2, ISO 27001 Annex A and the national framework (informational).",
  );
  for (const x of d.result.findings) findingBlock(w, x);
}

function methodology(w: Writer, d: ReportDocument): void {
  const f = w.f;
  const body = { font: f.regular, size: 9, color: COLOR.ink };
  w.addPage();
  sectionHeading(w, "Methodology");
  w.paragraph(
    `${d.preview ? `This is a preview: the week so far, up to ${formatUtc(d.period_end)}, audited as the stored report will be at the end of the week; it is not stored. ` : ""}Every audit rule below is evaluated against what the monitoring modules recorded. Changes (DNS records, registration data, certificates in CT logs) count when observed within the reporting period ${formatUtc(d.period_start)} – ${formatUtc(d.period_end)}; a TLS endpoint counts when a scan in the period showed the condition. Domain expiry, module coverage and data freshness are judged at the end of the period from what was recorded by then, however late the report was generated: an asset counts when it existed and was enabled at the end; its data is stale when its newest collection by the end is older than the module's window (certificate scans are all kept; registration, DNS and CT data keep only their newest collection, so an asset collected again since the end is not counted stale). A DNSSEC failure counts when it was observed within the period.`,
    body,
    { after: 6 },
  );
  w.paragraph(
    "Each category starts at 100 and loses the impact of every rule of it that fired (never below 0). The overall score is the weighted average of the five categories, rounded half up to an integer (89.5 becomes 90). The grade follows the overall score.",
    body,
    { after: 6 },
  );
  w.paragraph(
    "A score says nothing is wrong only about what was looked at. A category is assessed when every enabled asset of it was collected within its module's expected window before the end of the period (CT: every monitored CT log the filters rely on was read); partly assessed when some were; not assessed when none was. A category not assessed still scores by the same formula (100 without findings), so the grade is then provisional; when a category with assets was not assessed at all, the report gives no grade and the score only as provisional.",
    body,
    { after: 12 },
  );

  const half = (CONTENT_W - 20) / 2;
  const top = w.y;
  subHeading(w, "Weights and scores");
  table(
    w,
    [
      { title: "Category", width: 0.4 },
      { title: "Weight", width: 0.2, align: "right" },
      { title: "Score", width: 0.4, align: "right" },
    ],
    [
      ...CATEGORIES.map((c) => {
        const status = d.result.category_status?.[c.id].status;
        const score = String(d.result.category_scores[c.id]);
        return [
          { text: c.label },
          { text: `${c.weight}%` },
          // A blind category's 100 is the formula's starting point, not a finding: no number.
          status === "blind"
            ? { text: "n/a (not assessed)", font: "bold" as const, color: PREVIEW_COLOR }
            : status === "partial"
              ? { text: `${score} (${STATUS_WORDS[status].toLowerCase()})`, font: "bold" as const, color: PREVIEW_COLOR }
              : { text: score, font: "bold" as const },
        ];
      }),
      [{ text: "Overall", font: "bold" as const }, { text: "100%" }, { text: d.result.graded === false ? `${d.result.overall_score} (not graded)` : `${d.result.overall_score} (${d.result.grade}${d.result.provisional ? ", provisional" : ""})`, font: "bold" as const }],
    ],
    { width: half },
  );
  const leftBottom = w.y;
  w.y = top;
  const gx = MARGIN.left + half + 20;
  w.text("Grades", gx, w.y, { font: f.bold, size: 11.5, color: COLOR.navy });
  w.y += 20;
  table(
    w,
    [
      { title: "Grade", width: 0.3 },
      { title: "Overall score", width: 0.7 },
    ],
    GRADES.map((g, i) => [
      { text: g.grade, font: "bold" as const, color: GRADE_COLOR[g.grade] },
      { text: i === 0 ? `${g.min} – 100` : g.min === 0 ? `below ${GRADES[i - 1].min}` : `${g.min} – ${GRADES[i - 1].min - 1}` },
    ]),
    { x: gx, width: half },
  );
  w.y = Math.max(w.y, leftBottom) + 18;

  subHeading(w, "What the scores rest on", d.preview ? "judged now" : "judged at the end of the period");
  const status = d.result.category_status;
  if (status) {
    table(
      w,
      [
        { title: "Category", width: 0.17 },
        { title: "Status", width: 0.17 },
        { title: "Collected within the window", width: 0.66 },
      ],
      CATEGORIES.map((c) => [
        { text: c.label, font: "bold" as const },
        { text: STATUS_WORDS[status[c.id].status], font: "bold" as const, color: CATEGORY_STATUS_COLOR[status[c.id].status] },
        { text: status[c.id].reason },
      ]),
      { continued: "What the scores rest on" },
    );
    w.y += 16;
  } else {
    w.paragraph("This report was generated before what each category could assess was recorded: whether its data was collected in time is not known.", body, { after: 16 });
  }

  subHeading(w, "Expected collection windows", "older data makes “Monitoring data stale” fire");
  table(
    w,
    [
      { title: "Module", width: 0.4 },
      { title: "Window", width: 0.25 },
      { title: "Derived from", width: 0.35 },
    ],
    d.collection_windows.map((cw) => [{ text: MODULE_LABELS[cw.module] }, { text: formatDuration(cw.seconds), font: "bold" as const }, { text: WINDOW_SOURCE[cw.module] }]),
  );
  w.y += 5;
  w.paragraph("Window = 2 × the collection interval (at least the Cron Trigger's minute) + 5 minutes: one missed collection is normal operation, two are not.", {
    font: f.regular,
    size: 8,
    color: COLOR.muted,
  }, { after: 16 });

  subHeading(w, "Audit rules evaluated");
  const fired = new Set(d.result.findings.map((x) => x.id));
  table(
    w,
    [
      { title: "Category", width: 0.15 },
      { title: "Rule", width: 0.45 },
      { title: "Severity", width: 0.13 },
      { title: "Impact", width: 0.12, align: "right" },
      { title: "Result", width: 0.15 },
    ],
    AUDIT_RULES.map((r) => [
      { text: categoryLabel(r.category) },
      { text: r.title, font: "bold" as const },
      { text: r.severity, color: SEVERITY_COLOR[r.severity].fg },
      { text: String(r.impact) },
      fired.has(r.id) ? { text: "Fired", font: "bold" as const, color: SEVERITY_COLOR.critical.fg } : { text: "Passed", color: GRADE_COLOR.A },
    ]),
    { continued: "Audit rules evaluated" },
  );
  w.y += 18;

  subHeading(w, "Framework references", "informational; each finding lists those it maps to");
  table(
    w,
    [
      { title: "Framework", width: 0.3 },
      { title: "Reference", width: 0.15 },
      { title: "Control", width: 0.55 },
    ],
    FRAMEWORKS.flatMap((fw) =>
      Object.entries(REFERENCES)
        .filter(([, r]) => r.framework === fw.id)
        .map(([id, r], i) => [{ text: i === 0 ? fw.label : "", font: "bold" as const }, { text: id, font: "bold" as const }, { text: r.title }]),
    ),
    { zebra: false, continued: "Framework references" },
  );
}

const WINDOW_SOURCE: Record<MonitoringModule, string> = {
  "ct-log": "Cron Trigger, every minute",
  "dns-watcher": "DNS_CHECK_INTERVAL_SECONDS",
  rdap: "RDAP_CHECK_INTERVAL_SECONDS",
  "cert-watcher": "SCAN_INTERVAL_SECONDS",
};

/** Appendix order: as the categories (DNS, CT, certificates, RDAP). */
const APPENDIX_ORDER: MonitoringModule[] = ["dns-watcher", "ct-log", "cert-watcher", "rdap"];
const ASSET_NOUN: Record<MonitoringModule, [string, string]> = {
  "dns-watcher": ["domain", "domains"],
  "ct-log": ["filter", "filters"],
  "cert-watcher": ["endpoint", "endpoints"],
  rdap: ["domain", "domains"],
};

const CATEGORY_STATUS_COLOR: Record<CategoryStatusValue, RGB> = {
  assessed: GRADE_COLOR.A,
  partial: SEVERITY_COLOR.high.fg,
  blind: SEVERITY_COLOR.critical.fg,
  no_assets: COLOR.muted,
};

/** The CT logs read for every organization, each with its state: the full list behind the one line of "Monitoring data stale". */
function sharedSourcesAppendix(w: Writer, d: ReportDocument): void {
  const logs = d.shared_sources ?? [];
  if (logs.length === 0 || !d.assets.some((a) => a.module === "ct-log" && a.status !== "paused")) return;
  w.addPage();
  sectionHeading(
    w,
    "Appendix B — CT logs read for your filters",
    `New certificates for the CT filters are found in these logs, read once for every organization. Their state at generation (${formatUtc(d.generated_at)}); a log not read cannot show a certificate logged in it.`,
  );
  table(
    w,
    [
      { title: "Log", width: 0.33 },
      { title: "State", width: 0.15 },
      { title: "Read through", width: 0.19 },
      { title: "Details", width: 0.33 },
    ],
    logs.map((a) => [
      { text: a.asset, font: "bold" as const },
      { text: a.state, font: "bold" as const, color: STATUS_COLOR[a.status] },
      { text: formatUtc(a.last_collected_at) },
      { text: a.detail, color: COLOR.muted },
    ]),
    { size: 8, continued: "CT logs" },
  );
}

/** How a mechanism's status reads in the report: `unknown` is "Not observed", never a pass and never "not published". */
const MAIL_STATUS: Record<MailMechanismState["status"], { words: string; color: RGB }> = {
  ok: { words: "OK", color: STATUS_COLOR.ok },
  missing: { words: "Not published", color: STATUS_COLOR.attention },
  invalid: { words: "Invalid", color: STATUS_COLOR.problem },
  unknown: { words: "Not observed", color: STATUS_COLOR.pending },
};

/** The DNS domains with the email checks on: each mail transport security mechanism at generation, with what was seen or why not. */
function mailAppendix(w: Writer, assets: readonly MonitoredAsset[]): void {
  const domains = assets.filter((a) => a.email && a.email.length > 0);
  if (domains.length === 0) return;
  w.y += 6;
  subHeading(w, "Mail transport security", `${domains.length} ${domains.length === 1 ? "domain" : "domains"} with the email checks on`);
  w.paragraph(
    "Each mechanism as last observed by the DNS watcher at generation. Not observed means the record was not resolved or the policy not fetched (the reason is given): it is not a pass. Record text is quoted as published.",
    { font: w.f.regular, size: 8.5, color: COLOR.muted },
    { after: 8 },
  );
  table(
    w,
    [
      { title: "Domain", width: 0.24 },
      { title: "Mechanism", width: 0.14 },
      { title: "State", width: 0.14 },
      { title: "Details", width: 0.48 },
    ],
    domains.flatMap((a) =>
      a.email!.map((m, i) => [
        { text: i === 0 ? a.asset : "", font: "bold" as const },
        { text: m.label },
        { text: MAIL_STATUS[m.status].words, font: "bold" as const, color: MAIL_STATUS[m.status].color },
        { text: m.detail, color: COLOR.muted },
      ]),
    ),
    { size: 8, continued: "Mail transport security" },
  );
  w.y += 16;
}

function appendix(w: Writer, d: ReportDocument): void {
  w.addPage();
  sectionHeading(
    w,
    "Appendix A — Monitored assets",
    `Every asset configured in the monitoring modules and its latest state at generation (${formatUtc(d.generated_at)}).`,
  );
  const enabled = new Set(d.collection_windows.map((c) => c.module));
  for (const module of APPENDIX_ORDER.filter((m) => enabled.has(m))) {
    const assets = d.assets.filter((a) => a.module === module);
    const [one, many] = ASSET_NOUN[module];
    subHeading(w, MODULE_LABELS[module], `${assets.length} ${assets.length === 1 ? one : many}`);
    if (assets.length === 0) {
      w.paragraph("No assets configured.", { font: w.f.regular, size: 9, color: COLOR.muted }, { after: 14 });
      continue;
    }
    table(
      w,
      [
        { title: "Asset", width: 0.33 },
        { title: "State", width: 0.15 },
        { title: "Last collected", width: 0.19 },
        { title: "Details", width: 0.33 },
      ],
      assets.map((a: MonitoredAsset) => [
        { text: a.asset, font: "bold" as const },
        { text: a.state, font: "bold" as const, color: STATUS_COLOR[a.status] },
        { text: formatUtc(a.last_collected_at) },
        { text: a.detail, color: COLOR.muted },
      ]),
      { size: 8, continued: MODULE_LABELS[module] },
    );
    w.y += 16;
    if (module === "dns-watcher") mailAppendix(w, assets);
  }
}

function runningHeader(d: ReportDocument) {
  return (w: Writer) => {
    const style = { font: w.f.regular, size: 7.8, color: COLOR.muted };
    w.text(`Trust-Plane  ·  Weekly security audit report${d.preview ? "  ·  PREVIEW" : ""}`, MARGIN.left, 30, { ...style, font: w.f.bold, color: d.preview ? PREVIEW_COLOR : COLOR.muted });
    w.text(truncateText(w.clean(d.organization, w.f.regular), CONTENT_W / 2, (s) => w.width(s, w.f.regular, 7.8)), MARGIN.left, 30, style, "right", CONTENT_W);
    w.hline(MARGIN.left, PAGE_W - MARGIN.right, 44);
    w.y = MARGIN.top;
  };
}

function footers(w: Writer, d: ReportDocument): void {
  const total = w.pages.length;
  w.pages.forEach((page, i) => {
    w.page = page;
    const top = PAGE_H - 40;
    const style = { font: w.f.regular, size: 7.5, color: COLOR.faint };
    w.hline(MARGIN.left, PAGE_W - MARGIN.right, top - 8);
    const period = `Reporting period ${formatDate(d.period_start)} – ${formatDate(d.period_end)} (UTC)  ·  Generated ${formatUtc(d.generated_at)}`;
    if (d.preview) {
      const mark = "PREVIEW, NOT STORED  ·  ";
      w.text(mark, MARGIN.left, top, { ...style, font: w.f.bold, color: PREVIEW_COLOR });
      w.text(period, MARGIN.left + w.width(mark, w.f.bold, 7.5), top, style);
    } else w.text(period, MARGIN.left, top, style);
    w.text(`Page ${i + 1} of ${total}`, MARGIN.left, top, { ...style, font: w.f.bold, color: COLOR.muted }, "right", CONTENT_W);
  });
}

export async function renderReportPdf(d: ReportDocument): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.registerFontkit(fontkit);
  const bytes = fontBytes();
  // Fixed subset names: pdf-lib would otherwise add a random suffix, and the same
  // report would not render to the same bytes twice.
  const f: Fonts = {
    regular: await doc.embedFont(bytes.regular, { subset: true, customName: "TPAAAA+NotoSans-Regular" }),
    bold: await doc.embedFont(bytes.bold, { subset: true, customName: "TPAAAB+NotoSans-Bold" }),
    mono: await doc.embedFont(bytes.mono, { subset: true, customName: "TPAAAC+NotoSansMono-Regular" }),
  };
  for (const font of Object.values(f)) encodeByCharacter(font);
  const at = new Date(d.generated_at);
  doc.setTitle(`${d.preview ? "Preview of the weekly" : "Weekly"} security audit report: ${d.organization}, ${formatDate(d.period_start)} – ${formatDate(d.period_end)}`);
  doc.setAuthor("Trust-Plane");
  doc.setSubject(`Overall score ${scoreHeadline(d.result.overall_score, d.result.grade, d.result.category_status)}`);
  doc.setCreator("Trust-Plane");
  doc.setProducer("Trust-Plane (pdf-lib)");
  doc.setLanguage("en");
  doc.setCreationDate(at);
  doc.setModificationDate(at);

  const w = new Writer(doc, f, runningHeader(d));
  cover(w, d);
  findings(w, d);
  methodology(w, d);
  appendix(w, d);
  sharedSourcesAppendix(w, d);
  footers(w, d);
  return doc.save({ useObjectStreams: true });
}
