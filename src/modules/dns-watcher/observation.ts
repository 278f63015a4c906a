/**
 * What one resolution of a watched record set says, and what a domain's answers say
 * about DNSSEC. Pure functions over DoH answers (src/platform/dns).
 *
 *  - `observe`: a DoH answer (or the error the client threw) becomes either values
 *    (NOERROR with records, NODATA and NXDOMAIN are all "resolved"; the last two with no
 *    values) or a lookup error (SERVFAIL, REFUSED, another RCODE, a transport fault, a
 *    garbage or oversize answer). Only a resolved observation can ever change stored
 *    values: an error is never "record removed". A question the client never put (the
 *    run's deadline, every resolver's circuit open) is an error marked `notAsked`: the
 *    run leaves that domain for the next run instead of recording anything. A question
 *    refused because every resolver's circuit is open (they failed again and again during
 *    the run) IS a failed lookup: the resolvers are down, and the domain says so.
 *    Every error carries its collection failure (platform/collection: a class and a
 *    message naming the resolver and what failed, never a runtime's opaque text).
 *  - `classifyDnssec`: validated = every resolved answer of the domain had AD set;
 *    insecure = resolved without AD, nothing bogus; bogus = an answer was SERVFAIL and the
 *    same question resolves with CD (checking disabled) set; unknown = nothing resolved.
 */
import { classifyFailure, type CollectionError } from "../../platform/collection";
import { DnsLookupError, type DnsResponse, type ExtendedDnsError } from "../../platform/dns/doh";
import { canonicalRecordSet, PresentationError, type WatchedRecordType } from "../../platform/dns/presentation";

export type Observation =
  | { kind: "resolved"; rcode: "NOERROR" | "NXDOMAIN"; values: string[]; authenticData: boolean }
  | {
      kind: "error";
      rcode: string | null;
      /** What failed, in words (= failure.message). */
      error: string;
      failure: CollectionError;
      ede: ExtendedDnsError[];
      /** Not an answer at all: the run's deadline passed, so the question was never put. */
      notAsked?: boolean;
    };

/** The question was never put because the run's time ran out: nothing is known about the name, the domain waits for the next run. */
export const leftForNextRun = (err: unknown): boolean => err instanceof DnsLookupError && err.code === "deadline";

/** "DoH resolver host:port" of a resolver URL (a cached answer names the resolver it came from). */
function resolverName(url: string): string {
  try {
    return `DoH resolver ${new URL(url.replace(/^cache:/, "")).host}`;
  } catch {
    return "the DoH resolver";
  }
}

/** A transport failure of a lookup (every resolver failed, or none was asked) as a collection failure. */
export const lookupFailure = (err: unknown): CollectionError => classifyFailure(err);

export function describeEde(ede: readonly ExtendedDnsError[]): string {
  return ede.map((e) => `EDE ${e.code} ${e.name}${e.text ? `: ${e.text}` : ""}`).join("; ");
}

function failed(rcode: string | null, failure: CollectionError, ede: ExtendedDnsError[] = [], notAsked?: boolean): Observation {
  return { kind: "error", rcode, error: failure.message, failure, ede, ...(notAsked ? { notAsked } : {}) };
}

export function observe(type: WatchedRecordType, answer: DnsResponse | unknown): Observation {
  if (answer instanceof Error || !answer || typeof answer !== "object" || !("rcode" in answer)) {
    return failed(null, lookupFailure(answer), [], leftForNextRun(answer));
  }
  const r = answer as DnsResponse;
  if (r.rcode !== "NOERROR" && r.rcode !== "NXDOMAIN") {
    // The resolver answered, but could not resolve the name (SERVFAIL: the zone's servers failed or DNSSEC did not validate; REFUSED).
    const ede = describeEde(r.ede);
    return failed(r.rcode, { class: "dns_resolution", message: `${r.rcode} from ${resolverName(r.resolver)}${ede ? ` (${ede})` : ""}` }, r.ede);
  }
  try {
    const values = r.rcode === "NXDOMAIN" ? [] : canonicalRecordSet(type, r.answers);
    return { kind: "resolved", rcode: r.rcode, values, authenticData: r.authenticData };
  } catch (err) {
    if (err instanceof PresentationError) return failed(r.rcode, { class: "protocol", message: `unusable answer from ${resolverName(r.resolver)}: ${err.message}` });
    throw err;
  }
}

export const sameValues = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

export type DnssecStatus = "validated" | "insecure" | "bogus" | "unknown";
export const DNSSEC_STATUSES: readonly DnssecStatus[] = ["validated", "insecure", "bogus", "unknown"];

export interface DnssecVerdict {
  status: DnssecStatus;
  /** Why validation failed (SERVFAIL with its Extended DNS Errors), "" otherwise. */
  error: string;
  ede: ExtendedDnsError[];
}

/**
 * `observations`: the domain's answers this run. `cdProbe`: for a SERVFAIL among them,
 * the same question asked again with CD set (null when none was needed or it failed).
 */
export function classifyDnssec(observations: readonly Observation[], cdProbe: Observation | null): DnssecVerdict {
  const servfail = observations.find((o): o is Extract<Observation, { kind: "error" }> => o.kind === "error" && o.rcode === "SERVFAIL");
  if (servfail && cdProbe?.kind === "resolved") {
    const ede = describeEde(servfail.ede);
    return { status: "bogus", error: `SERVFAIL, resolves with checking disabled${ede ? ` (${ede})` : ""}`, ede: servfail.ede };
  }
  const resolved = observations.filter((o): o is Extract<Observation, { kind: "resolved" }> => o.kind === "resolved");
  if (resolved.length === 0) return { status: "unknown", error: "", ede: [] };
  return { status: resolved.every((o) => o.authenticData) ? "validated" : "insecure", error: "", ede: [] };
}
