/**
 * BIMI (Brand Indicators for Message Identification, draft-brand-indicators-for-message-
 * identification): the `default._bimi.<domain>` TXT record with the logo location
 * (`l=`, an HTTPS SVG) and the evidence document (`a=`, an HTTPS mark certificate).
 * Mailbox providers show the logo only for mail that passes DMARC at enforcement
 * (p=quarantine or reject, applied to all mail): the view says whether that holds.
 */
import { parseTagList, quoted, recordsOfVersion } from "./tags";

export interface BimiRecord {
  record: string;
  /** Logo location (https), "" when none (an empty l= declines to show a logo). */
  location: string;
  /** Evidence document (mark certificate) location (https), "" when none. */
  authority: string;
  /** The record says the domain takes part in no BIMI (l= and a= empty). */
  declined: boolean;
  errors: string[];
}

const httpsProblem = (tag: string, v: string): string | null => {
  try {
    const u = new URL(v);
    return u.protocol === "https:" && u.hostname ? null : `${tag}=${quoted(v)} is not an https URL`;
  } catch {
    return `${tag}=${quoted(v)} is not a URL`;
  }
};

export function parseBimi(txts: readonly string[]): BimiRecord {
  const records = recordsOfVersion(txts, "BIMI1");
  const none: BimiRecord = { record: "", location: "", authority: "", declined: false, errors: [] };
  if (records.length === 0) return none;
  if (records.length > 1) return { ...none, record: records.join(" | "), errors: [`${records.length} v=BIMI1 records: mailbox providers use none`] };
  const record = records[0];
  const t = parseTagList(record);
  const out: BimiRecord = { ...none, record, errors: [...t.errors] };
  const l = (t.tags.get("l") ?? "").trim();
  const a = (t.tags.get("a") ?? "").trim();
  if (!t.tags.has("l")) out.errors.push("no l= tag (the logo location)");
  if (l) {
    const problem = httpsProblem("l", l);
    if (problem) out.errors.push(problem);
    else if (!/\.svg$/i.test(new URL(l).pathname)) out.errors.push(`l=${quoted(l)} does not name an SVG file`);
    else out.location = l;
  }
  if (a) {
    const problem = httpsProblem("a", a);
    if (problem) out.errors.push(problem);
    else out.authority = a;
  }
  out.declined = t.tags.has("l") && l === "" && a === "";
  return out;
}

/** DMARC at enforcement as BIMI requires it: p (and sp when given) quarantine or reject, pct 100. */
export function dmarcEnforcedForBimi(dmarc: { valid: boolean; p: string; sp: string; pct: number } | null): boolean {
  if (!dmarc?.valid) return false;
  const enforcing = (p: string) => p === "quarantine" || p === "reject";
  return enforcing(dmarc.p) && (dmarc.sp === "" || enforcing(dmarc.sp)) && dmarc.pct === 100;
}
