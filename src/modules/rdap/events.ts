/**
 * The RDAP change event (spec "RDAP event fields"): the variables alert rules
 * (CEL) see when a domain's RDAP response differs from its last snapshot.
 *
 * `rdap.current` / `rdap.previous` are the full responses as received (not the
 * canonical forms): rules read registry data as the registry wrote it. Members
 * the registry did not send stay absent, so rules on them do not fire.
 */
import type { JsonValue } from "./rdap-json";

export interface RdapChangeEvent {
  domain: string;
  tld: string;
  rdap: {
    current: JsonValue;
    /** Absent on the first snapshot (no event is normally emitted then). */
    previous?: JsonValue;
  };
  metadata: {
    /** ISO 8601. */
    fetched_at: string;
    /** The URL queried. */
    rdap_server: string;
    http_status: number;
  };
}

export interface BuildRdapEventInput {
  domain: string;
  tld: string;
  current: unknown;
  previous?: unknown;
  fetchedAt: Date | string | number;
  rdapServer: string;
  httpStatus: number;
}

function iso(t: Date | string | number): string {
  const d = t instanceof Date ? t : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString();
}

/** Plain JSON copy, so the event never shares (or leaks) caller-owned objects. */
function plain(v: unknown): JsonValue {
  try {
    return JSON.parse(JSON.stringify(v ?? null)) as JsonValue;
  } catch {
    return null;
  }
}

export function buildRdapEvent(input: BuildRdapEventInput): RdapChangeEvent {
  const rdap: RdapChangeEvent["rdap"] = { current: plain(input.current) };
  if (input.previous !== undefined && input.previous !== null) rdap.previous = plain(input.previous);
  return {
    domain: input.domain,
    tld: input.tld,
    rdap,
    metadata: {
      fetched_at: iso(input.fetchedAt),
      rdap_server: input.rdapServer,
      http_status: input.httpStatus,
    },
  };
}
