/**
 * DMARC (RFC 7489, and RFC 9989 "DMARCbis"): the policy record at `_dmarc.<domain>`
 * parsed, and what got worse between two observations.
 *
 * Tags: v, p, sp, np (9989: non-existent subdomains), pct (7489; removed in 9989),
 * t (9989: testing mode, y/n), adkim, aspf, rua, ruf, psd (9989: y/n/u), fo, rf, ri.
 * Effective policies: sp defaults to p; np defaults to sp, then p (9989 §4.7).
 * A record without a valid `p` is kept (the watcher shows it) but `valid` is false; a
 * receiver would apply no policy, so for comparisons its policies count as "none".
 */

export type DmarcPolicy = "none" | "quarantine" | "reject";

export interface DmarcRecord {
  /** The v=DMARC1 TXT record, "" when there is none. */
  record: string;
  /** A usable policy record (exactly one v=DMARC1 record with a valid p). */
  valid: boolean;
  /** Requested policy for the domain, "" if no (valid) record. */
  p: DmarcPolicy | "";
  /** Subdomain policy as written, "" when not given (then p applies). */
  sp: DmarcPolicy | "";
  /** Non-existent subdomain policy as written, "" when not given (then sp, then p applies). */
  np: DmarcPolicy | "";
  /** Percentage of mail the policy applies to (RFC 7489; default 100). */
  pct: number;
  /** Testing mode (RFC 9989 t=y): receivers apply the next lower policy. */
  t: boolean;
  adkim: "r" | "s";
  aspf: "r" | "s";
  /** Aggregate report URIs. */
  rua: string[];
  /** Failure report URIs. */
  ruf: string[];
  /** Public Suffix Domain flag (RFC 9989): y, n or u (default). */
  psd: "y" | "n" | "u";
  fo: string;
  /** Problems in the record (unknown values, duplicate tags, several records). */
  errors: string[];
}

export const NO_DMARC: DmarcRecord = {
  record: "", valid: false, p: "", sp: "", np: "", pct: 100, t: false, adkim: "r", aspf: "r", rua: [], ruf: [], psd: "u", fo: "0", errors: [],
};

const POLICIES: readonly string[] = ["none", "quarantine", "reject"];
const RANK: Record<DmarcPolicy | "", number> = { "": 0, none: 0, quarantine: 1, reject: 2 };

const isDmarc = (txt: string) => /^v\s*=\s*DMARC1\s*(;|$)/.test(txt);

/** Parses the TXT record set of `_dmarc.<domain>` (strings already glued per record). */
export function parseDmarc(txts: readonly string[]): DmarcRecord {
  const records = txts.filter(isDmarc);
  if (records.length === 0) return { ...NO_DMARC, errors: [] };
  if (records.length > 1) return { ...NO_DMARC, record: records.join(" | "), errors: [`${records.length} v=DMARC1 records: receivers apply none (RFC 7489 §6.6.3)`] };
  const record = records[0];
  const out: DmarcRecord = { ...NO_DMARC, record, rua: [], ruf: [], errors: [] };
  const seen = new Set<string>();
  for (const part of record.split(";").slice(1)) {
    const m = /^\s*([A-Za-z]+)\s*=\s*(.*?)\s*$/s.exec(part);
    if (!m) {
      if (part.trim() !== "") out.errors.push(`unreadable tag '${part.trim()}'`);
      continue;
    }
    const tag = m[1].toLowerCase();
    const value = m[2];
    if (seen.has(tag)) {
      out.errors.push(`tag ${tag} given twice (the first counts)`);
      continue;
    }
    seen.add(tag);
    const lower = value.toLowerCase();
    switch (tag) {
      case "p":
      case "sp":
      case "np":
        if (POLICIES.includes(lower)) out[tag] = lower as DmarcPolicy;
        else out.errors.push(`${tag}=${value} is not none, quarantine or reject`);
        break;
      case "pct": {
        const n = /^\d{1,3}$/.test(value) ? Number(value) : NaN;
        if (n >= 0 && n <= 100) out.pct = n;
        else out.errors.push(`pct=${value} is not 0-100`);
        break;
      }
      case "t":
        if (lower === "y" || lower === "n") out.t = lower === "y";
        else out.errors.push(`t=${value} is not y or n`);
        break;
      case "adkim":
      case "aspf":
        if (lower === "r" || lower === "s") out[tag] = lower;
        else out.errors.push(`${tag}=${value} is not r or s`);
        break;
      case "psd":
        if (lower === "y" || lower === "n" || lower === "u") out.psd = lower;
        else out.errors.push(`psd=${value} is not y, n or u`);
        break;
      case "rua":
      case "ruf":
        out[tag] = value
          .split(",")
          .map((u) => u.trim())
          .filter(Boolean)
          // A size limit ("!10m") is not part of the address.
          .map((u) => u.replace(/!\d+[kmgt]?$/i, ""));
        break;
      case "fo":
        out.fo = value;
        break;
      default:
        break; // rf, ri and unknown tags: ignored (RFC 7489 §6.3)
    }
  }
  if (out.p === "") {
    // RFC 7489 §6.6.3: no valid p but a valid rua -> treat as p=none; RFC 9989 does the same.
    if (out.rua.length > 0) out.p = "none";
    else out.errors.push("no valid p= tag: receivers apply no policy");
  }
  out.valid = out.p !== "";
  return out;
}

/** Effective policies: sp falls back to p, np to sp then p. */
export function effectivePolicies(d: DmarcRecord): { p: DmarcPolicy | ""; sp: DmarcPolicy | ""; np: DmarcPolicy | "" } {
  if (!d.valid) return { p: "", sp: "", np: "" };
  const sp = d.sp || d.p;
  return { p: d.p, sp, np: d.np || sp };
}

export const DMARC_REGRESSIONS = ["removed", "policy_lowered", "pct_lowered", "testing_enabled", "alignment_relaxed", "reporting_removed"] as const;
export type DmarcRegressionKind = (typeof DMARC_REGRESSIONS)[number];

export interface DmarcRegression {
  kind: DmarcRegressionKind;
  /** The tag concerned (p, sp, np, pct, t, adkim, aspf, rua, ruf; "record" for removal). */
  tag: string;
  from: string;
  to: string;
  /** The regression in words. */
  text: string;
}

/**
 * What got worse from `previous` to `current`. A record that disappears (or stops being
 * valid) is `removed`; otherwise each weakened tag is one regression. Improvements and
 * neutral edits are not listed. An absent previous record yields nothing (nothing to weaken).
 */
export function dmarcRegressions(previous: DmarcRecord, current: DmarcRecord): DmarcRegression[] {
  if (!previous.valid) return [];
  if (!current.valid) {
    const why = current.record === "" ? "the DMARC record was removed" : "the DMARC record is no longer usable (" + current.errors.join("; ") + ")";
    return [{ kind: "removed", tag: "record", from: previous.record, to: current.record, text: why }];
  }
  const out: DmarcRegression[] = [];
  const a = effectivePolicies(previous);
  const b = effectivePolicies(current);
  for (const tag of ["p", "sp", "np"] as const) {
    if (RANK[b[tag]] < RANK[a[tag]]) {
      const label = tag === "p" ? "policy" : tag === "sp" ? "subdomain policy" : "non-existent subdomain policy";
      out.push({ kind: "policy_lowered", tag, from: a[tag], to: b[tag], text: `${label} lowered from ${a[tag]} to ${b[tag]}` });
    }
  }
  if (current.pct < previous.pct) out.push({ kind: "pct_lowered", tag: "pct", from: String(previous.pct), to: String(current.pct), text: `policy applied to ${current.pct}% of mail instead of ${previous.pct}%` });
  if (current.t && !previous.t) out.push({ kind: "testing_enabled", tag: "t", from: "n", to: "y", text: "testing mode switched on (t=y): receivers apply the next lower policy" });
  for (const tag of ["adkim", "aspf"] as const) {
    if (previous[tag] === "s" && current[tag] === "r") out.push({ kind: "alignment_relaxed", tag, from: "s", to: "r", text: `${tag === "adkim" ? "DKIM" : "SPF"} alignment relaxed from strict to relaxed` });
  }
  for (const tag of ["rua", "ruf"] as const) {
    const gone = previous[tag].filter((u) => !current[tag].some((v) => v.toLowerCase() === u.toLowerCase()));
    if (gone.length) out.push({ kind: "reporting_removed", tag, from: previous[tag].join(","), to: current[tag].join(","), text: `${tag === "rua" ? "aggregate" : "failure"} report address removed: ${gone.join(", ")}` });
  }
  return out;
}

/** The verdict in words: "DMARC weakened: policy lowered from reject to none; ..." or "". */
export function dmarcVerdict(regressions: readonly DmarcRegression[]): string {
  if (regressions.length === 0) return "";
  if (regressions.some((r) => r.kind === "removed")) return `DMARC removed: ${regressions[0].text}`;
  return `DMARC weakened: ${regressions.map((r) => r.text).join("; ")}`;
}
