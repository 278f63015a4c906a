/**
 * The `tag=value; tag=value` syntax the mail-security TXT records share (DKIM RFC 6376
 * §3.2, MTA-STS RFC 8461 §3.1, TLS-RPT RFC 8460 §3, BIMI): whitespace around tags and
 * values is folding, not data; a tag given twice makes the record unusable (RFC 6376
 * §3.2 says so for DKIM; the others inherit the syntax), which the caller reports.
 *
 * The records are written by whoever controls the zone and read by people: values are
 * kept as text and never interpreted beyond what each parser checks.
 */
export interface TagList {
  /** Tags in order of appearance, names lowercased, values trimmed (first occurrence kept). */
  tags: Map<string, string>;
  /** The order the tags were written in (the version tag must come first). */
  order: string[];
  /** Problems of the syntax itself, in words. */
  errors: string[];
}

/** Longest text of a value quoted in an error message: hostile records stay readable. */
const QUOTE_MAX = 80;
export const quoted = (s: string) => `'${s.length > QUOTE_MAX ? `${s.slice(0, QUOTE_MAX)}…` : s}'`;

export function parseTagList(record: string): TagList {
  const out: TagList = { tags: new Map(), order: [], errors: [] };
  const parts = record.split(";");
  // A trailing ";" is allowed (RFC 6376 §3.2), so is an empty part left by "; ;".
  for (const part of parts) {
    if (part.trim() === "") continue;
    const m = /^\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*([\s\S]*?)\s*$/.exec(part);
    if (!m) {
      out.errors.push(`unreadable tag ${quoted(part.trim())}`);
      continue;
    }
    const name = m[1].toLowerCase();
    if (out.tags.has(name)) {
      out.errors.push(`tag ${name} given twice`);
      continue;
    }
    out.tags.set(name, m[2]);
    out.order.push(name);
  }
  return out;
}

/** Records of a TXT set that start with `v=<version>` (case as the RFC writes it; whitespace before ";" tolerated). */
export function recordsOfVersion(txts: readonly string[], version: string): string[] {
  const re = new RegExp(`^\\s*v\\s*=\\s*${version}\\s*(;|$)`);
  return txts.filter((t) => re.test(t));
}
