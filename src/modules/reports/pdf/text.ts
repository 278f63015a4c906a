/**
 * Line breaking for the report PDF, pure (a width function in, lines out), so the
 * renderer's wrapping of long evidence is testable without a PDF.
 *
 * Breaks at spaces; a single token wider than the line (a certificate fingerprint,
 * a DMARC record, a long list of names joined without spaces) is broken after the
 * last separator that fits ("/", ".", ",", ";", ":", "=", "-", "|"), else between
 * characters, so nothing ever runs past the margin.
 */

export type Measure = (text: string) => number;

const SEPARATORS = new Set(["/", ".", ",", ";", ":", "=", "-", "|", "_"]);

/** Splits one over-long token into pieces that each fit `width`. */
function breakToken(token: string, width: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = token;
  while (rest.length > 0 && measure(rest) > width) {
    // Longest prefix that fits (at least one character, so we always progress).
    let lo = 1;
    let hi = rest.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (measure(rest.slice(0, mid)) <= width) lo = mid;
      else hi = mid - 1;
    }
    let cut = lo;
    for (let i = lo; i > Math.floor(lo / 2); i--) {
      if (SEPARATORS.has(rest[i - 1])) {
        cut = i;
        break;
      }
    }
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** The lines `text` occupies in `width`; explicit newlines are kept. Never returns an empty array. */
export function wrapText(text: string, width: number, measure: Measure): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    const words = paragraph.split(/ +/).filter((w) => w !== "");
    let line = "";
    for (const word of words) {
      const candidate = line ? `${line} ${word}` : word;
      if (measure(candidate) <= width) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      if (measure(word) <= width) {
        line = word;
        continue;
      }
      const pieces = breakToken(word, width, measure);
      lines.push(...pieces.slice(0, -1));
      line = pieces[pieces.length - 1];
    }
    lines.push(line);
  }
  return lines.length ? lines : [""];
}

/** `text` shortened with an ellipsis to fit `width` on one line. */
export function truncateText(text: string, width: number, measure: Measure): string {
  if (measure(text) <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(text.slice(0, mid) + "…") <= width) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo) + "…";
}

/** "2026-11-23 00:00 UTC" (reports speak UTC, to the minute). */
export function formatUtc(iso: string | null): string {
  if (!iso) return "never";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** "2026-11-23" */
export function formatDate(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().slice(0, 10);
}

/**
 * `text` with the characters that would change how it reads made visible, for values that
 * come from monitored data (TXT records, policies, certificate subjects, registry remarks,
 * all written by whoever controls them): a line break would start a line of its own inside
 * an evidence item (a forged "Observed" line), a bidirectional override would reorder what
 * follows it. Each becomes its escape (`\n`, `\r`, `\u202E`), a tab a space.
 */
export function visibleText(text: string): string {
  // C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (ch) => {
    if (ch === "\t") return " ";
    if (ch === "\n") return "\\n";
    if (ch === "\r") return "\\r";
    return `\\u${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
  });
}
