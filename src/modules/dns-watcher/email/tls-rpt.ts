/**
 * SMTP TLS reporting (RFC 8460): the `_smtp._tls.<domain>` TXT record naming where
 * sending servers report TLS failures (`rua`: mailto: or https: URIs).
 */
import { parseTagList, quoted, recordsOfVersion } from "./tags";

export interface TlsRptRecord {
  /** The v=TLSRPTv1 TXT record, "" when there is none. */
  record: string;
  /** The report URIs senders can use. */
  rua: string[];
  /** Why senders would ignore the record (or a URI); empty when every URI is usable. */
  errors: string[];
}

/** Why a rua URI is unusable, or null (RFC 8460 §3: mailto: with an address, or https: with a host). */
export function tlsRptUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `${quoted(uri)} is not a URI`;
  }
  if (u.protocol === "mailto:") {
    const address = decodeURIComponent(u.pathname);
    return /^[^@\s,<>]+@[^@\s,<>]+\.[^@\s,<>]+$/.test(address) ? null : `${quoted(uri)} has no usable mail address`;
  }
  if (u.protocol === "https:") return u.hostname ? null : `${quoted(uri)} has no host`;
  return `${quoted(uri)} is neither mailto: nor https:`;
}

export function parseTlsRpt(txts: readonly string[]): TlsRptRecord {
  const records = recordsOfVersion(txts, "TLSRPTv1");
  if (records.length === 0) return { record: "", rua: [], errors: [] };
  // §3: a number of records other than one means the domain does not take reports.
  if (records.length > 1) return { record: records.join(" | "), rua: [], errors: [`${records.length} v=TLSRPTv1 records: senders send no report (RFC 8460 §3)`] };
  const record = records[0];
  const t = parseTagList(record);
  const errors = [...t.errors];
  const rua: string[] = [];
  const raw = t.tags.get("rua");
  if (raw === undefined || raw.trim() === "") errors.push("no rua= tag: senders have nowhere to report");
  else {
    for (const uri of raw.split(",").map((u) => u.trim()).filter(Boolean)) {
      const problem = tlsRptUriProblem(uri);
      if (problem) errors.push(problem);
      else rua.push(uri);
    }
  }
  return { record, rua, errors };
}
