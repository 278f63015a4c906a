/**
 * The RDAP module's events: the variables alert rules (CEL) see.
 *
 *   event_type "rdap_changed"          a domain's RDAP response differs from its last
 *                                      snapshot: `buildRdapEvent`
 *   event_type "collection_failing"    the domain could not be looked up twice in a row /
 *              "collection_recovered"  is looked up again: `buildRdapCollectionEvent`
 *
 * `rdap.current` / `rdap.previous` are the full responses as received (not the
 * canonical forms): rules read registry data as the registry wrote it. Members
 * the registry did not send stay absent, so rules on them do not fire. A collection
 * event carries the last snapshot as `rdap.current` ({} when none was ever taken), no
 * `rdap.previous`, and in `metadata` the attempt: its time, the server asked ("" when
 * none is known for the TLD) and its HTTP status (0 when none came).
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which the API schemas call
// on these (the ingest Worker's bundle evaluates this file first).
import { z } from "@hono/zod-openapi";
import { CollectionEventFieldsSchema, collectionEventHead, eventTypeSchema, NOT_A_COLLECTION_EVENT, type CollectionEventInput } from "../../platform/collection/event";
import { variablesOf } from "../../platform/event-variables";
import type { JsonValue } from "./rdap-json";

const rdapAnswer = (what: string) => z.record(z.string(), z.unknown()).describe(what);

/** The one declaration of the event: its TypeScript type and its CEL variables come from it. */
export const RdapEventSchema = z.object({
  event_type: eventTypeSchema(["rdap_changed"], '"rdap_changed" when the registration data differs from the last snapshot'),
  collection: CollectionEventFieldsSchema,
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

export type RdapEvent = Omit<z.infer<typeof RdapEventSchema>, "rdap"> & { rdap: { current: JsonValue; previous?: JsonValue } };

/** The CEL variable schema of RDAP events (introspection, type checking). */
export const rdapVariables = variablesOf(RdapEventSchema);

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

export function buildRdapEvent(input: BuildRdapEventInput): RdapEvent {
  const rdap: RdapEvent["rdap"] = { current: plain(input.current) };
  if (input.previous !== undefined && input.previous !== null) rdap.previous = plain(input.previous);
  return {
    event_type: "rdap_changed",
    collection: NOT_A_COLLECTION_EVENT,
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

/** A monitored domain whose RDAP lookups entered `failing` or recovered. */
export interface RdapCollectionEventInput extends CollectionEventInput {
  domain: string;
  tld: string;
  /** The last snapshot taken (null: none yet). */
  lastSnapshot: unknown;
  attemptedAt: Date | string | number;
  /** The RDAP server asked, "" when none is known for the TLD. */
  rdapServer: string;
  /** Its HTTP status, 0 when no answer came. */
  httpStatus: number;
}

export function buildRdapCollectionEvent(input: RdapCollectionEventInput): RdapEvent {
  const current = input.lastSnapshot === null || input.lastSnapshot === undefined ? {} : plain(input.lastSnapshot);
  return {
    ...collectionEventHead(input),
    domain: input.domain,
    tld: input.tld,
    rdap: { current },
    metadata: { fetched_at: iso(input.attemptedAt), rdap_server: input.rdapServer, http_status: input.httpStatus },
  };
}
