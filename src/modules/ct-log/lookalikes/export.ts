/**
 * The organization's open lookalikes for other tools: CSV and JSON for people and SIEMs,
 * a plain blocklist and a DNS response-policy zone (RPZ) for resolvers and mail filters.
 *
 * Lookalike data is written by whoever registered the domain or got the certificate, so:
 *   - CSV cells are quoted, and a cell that a spreadsheet would take for a formula
 *     (starting with = + - @, a tab or a carriage return) is prefixed with an apostrophe;
 *   - the blocklist and the zone carry only names made of letters, digits, hyphens and
 *     dots (A-labels): anything else is left out and counted in a comment, so no value
 *     can add a line or a directive to a resolver's configuration.
 */
import type { ExportFormat } from "./vocabulary";

export interface ExportRow {
  domain: string;
  domain_unicode: string;
  protected_domain: string;
  state: string;
  confidence: string;
  source: string;
  evidence: string[];
  first_seen_at: string;
  registered_at: string | null;
  registrar: string | null;
  mx: string[];
  addresses: string[];
}

const CSV_COLUMNS: (keyof ExportRow)[] = [
  "domain",
  "domain_unicode",
  "protected_domain",
  "state",
  "confidence",
  "source",
  "evidence",
  "first_seen_at",
  "registered_at",
  "registrar",
  "mx",
  "addresses",
];

/** One CSV cell: quoted, quotes doubled, a formula-like start neutralized. */
export function csvCell(value: unknown): string {
  let text = Array.isArray(value) ? value.join(" ") : value === null || value === undefined ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replaceAll('"', '""')}"`;
}

const LDH_NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{1,63}$/;
const safeNames = (rows: readonly ExportRow[]) => {
  const names = [...new Set(rows.map((r) => r.domain.toLowerCase()))].sort();
  const ok = names.filter((n) => LDH_NAME.test(n));
  return { ok, skipped: names.length - ok.length };
};

export interface ExportFile {
  body: string;
  contentType: string;
  extension: string;
}

export function renderExport(format: ExportFormat, rows: readonly ExportRow[], meta: { organizationId: number; now: Date }): ExportFile {
  const stamp = meta.now.toISOString();
  switch (format) {
    case "csv":
      return {
        body: [CSV_COLUMNS.map(csvCell).join(","), ...rows.map((r) => CSV_COLUMNS.map((c) => csvCell(r[c])).join(","))].join("\r\n") + "\r\n",
        contentType: "text/csv; charset=utf-8",
        extension: "csv",
      };
    case "json":
      return { body: JSON.stringify({ generated_at: stamp, lookalikes: rows }, null, 2) + "\n", contentType: "application/json", extension: "json" };
    case "txt": {
      const { ok, skipped } = safeNames(rows);
      const head = [`# Trust-Plane: open lookalike domains of organization ${meta.organizationId}, ${stamp}`];
      if (skipped) head.push(`# ${skipped} name(s) left out: not letters, digits, hyphens and dots`);
      return { body: [...head, ...ok].join("\n") + "\n", contentType: "text/plain; charset=utf-8", extension: "txt" };
    }
    case "rpz": {
      const { ok, skipped } = safeNames(rows);
      // RFC 1982 serial: seconds since the epoch fit in 32 bits until 2106.
      const serial = Math.floor(meta.now.getTime() / 1000) >>> 0;
      const lines = [
        `; Trust-Plane response-policy zone: open lookalike domains of organization ${meta.organizationId}, ${stamp}`,
        "; Each name and everything below it answers NXDOMAIN (CNAME .). Load it as an RPZ zone (BIND response-policy, Unbound rpz:).",
        ...(skipped ? [`; ${skipped} name(s) left out: not letters, digits, hyphens and dots`] : []),
        "$TTL 300",
        `@ IN SOA localhost. hostmaster.localhost. ( ${serial} 3600 600 86400 300 )`,
        "  IN NS localhost.",
        ...ok.flatMap((n) => [`${n} CNAME .`, `*.${n} CNAME .`]),
      ];
      return { body: lines.join("\n") + "\n", contentType: "text/dns; charset=utf-8", extension: "rpz" };
    }
  }
}
