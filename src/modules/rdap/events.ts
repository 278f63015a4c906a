/**
 * The RDAP change event: the variables alert rules
 * (CEL) see when a domain's RDAP response differs from its last snapshot.
 *
 * `rdap.current` / `rdap.previous` are the full responses as received (not the
 * canonical forms): rules read registry data as the registry wrote it. Members
 * the registry did not send stay absent, so rules on them do not fire.
 */
import { z } from "zod";
import { variablesOf } from "../alerting/cel/variables/from-schema";
import type { JsonValue } from "./rdap-json";

const rdapAnswer = (what: string) => z.record(z.string(), z.unknown()).describe(what);

/** The one declaration of the event: its TypeScript type and its CEL variables come from it. */
export const RdapChangeEventSchema = z.object({
  domain: z.string().describe("The monitored domain"),
  tld: z.string().describe("Its top-level domain"),
  rdap: z
    .object({
      current: rdapAnswer(
        "Full RDAP response (RFC 9083): ldhName, status list, nameservers (objects with ldhName), events (eventAction/eventDate), entities. Fields the registry does not return are absent (test with has())",
      ),
      /** Absent on the first snapshot (no event is normally emitted then). */
      previous: rdapAnswer("The previous snapshot, same shape").optional(),
    })
    .describe("The new and the previous RDAP snapshot"),
  metadata: z
    .object({
      fetched_at: z.string().describe("Fetch time, ISO 8601"),
      rdap_server: z.string().describe("URL queried"),
      http_status: z.number().int().describe("HTTP status from the RDAP server"),
    })
    .describe("How the snapshot was fetched"),
});

export type RdapChangeEvent = Omit<z.infer<typeof RdapChangeEventSchema>, "rdap"> & { rdap: { current: JsonValue; previous?: JsonValue } };

/** The CEL variable schema of RDAP change events (introspection, type checking). */
export const rdapVariables = variablesOf(RdapChangeEventSchema);

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
