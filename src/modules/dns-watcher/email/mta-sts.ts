/**
 * MTA-STS (RFC 8461): the `_mta-sts.<domain>` TXT record that advertises a policy and
 * its `id`, the policy file served at `https://mta-sts.<domain>/.well-known/mta-sts.txt`,
 * whether the domain's MX hosts are covered by the policy, and what got worse between
 * two observations. Pure: fetching the policy is collect.ts's business.
 */
import { parseTagList, quoted, recordsOfVersion } from "./tags";

export const MTA_STS_MODES = ["enforce", "testing", "none"] as const;
export type MtaStsMode = (typeof MTA_STS_MODES)[number];

/** RFC 8461 §3.2: max_age is at most 31557600 s (about a year). */
export const MTA_STS_MAX_AGE_LIMIT = 31_557_600;
/** Under a day, a policy lapses between a sender's visits; the RFC recommends weeks. */
export const MTA_STS_SHORT_MAX_AGE = 86_400;
/** RFC 8461 §3.3: senders should not read policies larger than 64 KiB. */
export const MTA_STS_POLICY_MAX_BYTES = 64 * 1024;

export interface MtaStsRecord {
  /** The v=STSv1 TXT record, "" when there is none. */
  record: string;
  /** The policy id (1-32 letters and digits), "" when absent or invalid. */
  id: string;
  /** Why senders would ignore the record; empty when it is usable. */
  errors: string[];
}

/** Parses the TXT set of `_mta-sts.<domain>` (strings glued per record). */
export function parseMtaStsRecord(txts: readonly string[]): MtaStsRecord {
  const records = recordsOfVersion(txts, "STSv1");
  if (records.length === 0) return { record: "", id: "", errors: [] };
  // §3.1: several v=STSv1 records and senders assume no MTA-STS at all.
  if (records.length > 1) return { record: records.join(" | "), id: "", errors: [`${records.length} v=STSv1 records: senders ignore MTA-STS (RFC 8461 §3.1)`] };
  const record = records[0];
  const t = parseTagList(record);
  const errors = [...t.errors];
  const id = t.tags.get("id") ?? "";
  if (!t.tags.has("id")) errors.push("no id= tag: senders cannot tell when the policy changes");
  else if (!/^[A-Za-z0-9]{1,32}$/.test(id)) errors.push(`id=${quoted(id)} is not 1-32 letters and digits`);
  return { record, id: errors.length ? "" : id, errors };
}

export interface MtaStsPolicy {
  mode: MtaStsMode | "";
  /** Seconds; null when absent or unreadable. */
  max_age: number | null;
  /** The mx patterns in order written (lowercase, no trailing dot). */
  mx: string[];
  /** Why senders would not use the policy; empty when usable. */
  errors: string[];
  /** What is odd but does not stop senders (repeated fields, max_age above the limit). */
  warnings: string[];
}

/** A policy mx pattern: a host name or `*.` followed by one (RFC 8461 §3.2, §4.1). */
const MX_PATTERN = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** Parses a policy body (RFC 8461 §3.2: `key: value` lines, LF or CRLF). */
export function parseMtaStsPolicy(body: string): MtaStsPolicy {
  const out: MtaStsPolicy = { mode: "", max_age: null, mx: [], errors: [], warnings: [] };
  const seen = new Set<string>();
  let version = "";
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.replace(/[ \t]+$/, "");
    if (line === "") continue;
    const m = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,31})[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!m) {
      out.errors.push(`unreadable line ${quoted(line)}`);
      continue;
    }
    const key = m[1];
    const value = m[2];
    if (key !== "mx" && seen.has(key)) {
      out.warnings.push(`field ${key} given twice (the first counts)`);
      continue;
    }
    seen.add(key);
    switch (key) {
      case "version":
        version = value;
        if (value !== "STSv1") out.errors.push(`version ${quoted(value)} is not STSv1`);
        break;
      case "mode":
        if ((MTA_STS_MODES as readonly string[]).includes(value)) out.mode = value as MtaStsMode;
        else out.errors.push(`mode ${quoted(value)} is not enforce, testing or none`);
        break;
      case "max_age":
        if (/^\d{1,10}$/.test(value)) {
          out.max_age = Number(value);
          if (out.max_age > MTA_STS_MAX_AGE_LIMIT) out.warnings.push(`max_age ${value} is above the limit of ${MTA_STS_MAX_AGE_LIMIT} s (senders cap it)`);
        } else out.errors.push(`max_age ${quoted(value)} is not a number of seconds`);
        break;
      case "mx": {
        const pattern = value.toLowerCase().replace(/\.$/, "");
        if (MX_PATTERN.test(pattern) && pattern.length <= 253) out.mx.push(pattern);
        else out.errors.push(`mx ${quoted(value)} is not a host name or *.host name`);
        break;
      }
      default:
        break; // extension fields are ignored (RFC 8461 §3.2)
    }
  }
  if (!seen.has("version")) out.errors.push("no version field");
  else if (version === "STSv1" && !seen.has("mode")) out.errors.push("no mode field");
  if (!seen.has("max_age")) out.errors.push("no max_age field");
  if ((out.mode === "enforce" || out.mode === "testing") && out.mx.length === 0) out.errors.push(`mode ${out.mode} without any mx field: no mail server is allowed`);
  return out;
}

/** Whether an MX host (any case, trailing dot or not) is one a policy mx pattern allows (RFC 8461 §4.1). */
export function mxPatternMatches(pattern: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  const p = pattern.toLowerCase().replace(/\.$/, "");
  if (!p.startsWith("*.")) return h === p;
  // A wildcard matches exactly one leftmost label.
  const dot = h.indexOf(".");
  return dot > 0 && h.slice(dot + 1) === p.slice(2);
}

/** The MX hosts no pattern of the policy allows: senders enforcing the policy refuse to deliver to them. */
export function uncoveredMxHosts(policy: Pick<MtaStsPolicy, "mx">, mxHosts: readonly string[]): string[] {
  return mxHosts.filter((h) => !policy.mx.some((p) => mxPatternMatches(p, h)));
}

/**
 * A policy as it matters to senders, for telling whether it changed: mode, max_age and
 * the mx patterns as a set. Line endings, field order and extension fields are not a change.
 */
export function policyFingerprint(p: Pick<MtaStsPolicy, "mode" | "max_age" | "mx">): string {
  return JSON.stringify([p.mode, p.max_age, [...new Set(p.mx)].sort()]);
}

const MODE_RANK: Record<MtaStsMode | "", number> = { "": 0, none: 0, testing: 1, enforce: 2 };
export const modeRank = (m: MtaStsMode | "") => MODE_RANK[m];
