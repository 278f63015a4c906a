/**
 * The `event_type` and `collection` fields of alert events, the same in every module's
 * event schema, so one rule (`event_type == "collection_failing"`,
 * `collection.error_class == "timeout"`) reads alike whichever module raised it.
 *
 * Each module's events.ts declares `event_type` as a closed enum: the name of its own
 * event in the domain's words (`dns_changed`, `rdap_changed`, `scan_completed`, CT's
 * `match`/`typosquat`) followed by COLLECTION_EVENT_TYPES, and embeds
 * `CollectionEventFieldsSchema` as `collection`. On events of the module's own types the
 * collection fields hold NOT_A_COLLECTION_EVENT, so a rule on them never fails on a
 * missing field.
 *
 * A collection event is raised once per transition (state.ts `recordAttempt`): when the
 * asset enters `failing` and when it recovers. Rules written before collection events
 * existed do not see them: see alerting/cel/engine.ts (a rule sees collection events
 * only when it reads `event_type` or `collection`).
 */
// zod as @hono/zod-openapi extends it: zod 4 gives each schema its methods when it is built,
// so a schema built before that extension ran has no .openapi(), which the API schemas call
// on these (the ingest Worker's bundle evaluates this file first).
import { z } from "@hono/zod-openapi";
import { COLLECTION_ERROR_CLASSES, COLLECTION_EVENT_TYPES, COLLECTION_STATES, type CollectionErrorClass, type CollectionEventType } from "./vocabulary";
import { collectionState, type CollectionRecord, type CollectionTransition } from "./state";

export const CollectionEventFieldsSchema = z
  .object({
    state: z.enum(["", ...COLLECTION_STATES]).describe('The asset\'s collection state after this event: "failing" or "ok" ("" on events that are not about collection)'),
    error_class: z
      .enum(["", ...COLLECTION_ERROR_CLASSES])
      .describe('Why collection failed (dns_resolution, connect, timeout, tls, http_status, rate_limited, protocol, blocked, internal); "" when it did not'),
    error_message: z.string().describe("What failed, naming the host and the step; \"\" when nothing did"),
    failing_since: z
      .string()
      .describe('First failed attempt of the run of failures (ISO 8601): the current one on collection_failing, the one that ended on collection_recovered; "" on other events'),
  })
  .describe("Collection state of the asset (events collection_failing and collection_recovered; empty values on other events)");

export type CollectionEventFields = z.infer<typeof CollectionEventFieldsSchema>;

export const NOT_A_COLLECTION_EVENT: CollectionEventFields = { state: "", error_class: "", error_message: "", failing_since: "" };

/**
 * The fields of a collection_failing / collection_recovered event from the record after
 * the attempt. `previous` (the record before it) gives a recovery the start of the run
 * of failures it ended, so two recoveries of one asset never read alike.
 */
export function collectionEventFields(record: CollectionRecord, previous?: CollectionRecord): CollectionEventFields {
  const state = collectionState(record);
  return {
    state,
    error_class: (record.errorClass ?? "") as CollectionErrorClass | "",
    error_message: record.errorMessage ?? "",
    failing_since: record.failingSince ?? previous?.failingSince ?? "",
  };
}

/** The event type a transition raises. */
export function collectionEventType(transition: Exclude<CollectionTransition, null>): CollectionEventType {
  return transition === "failing" ? "collection_failing" : "collection_recovered";
}

/** Whether an event's `event_type` is one of the collection events. */
export function isCollectionEventType(eventType: unknown): eventType is CollectionEventType {
  return typeof eventType === "string" && (COLLECTION_EVENT_TYPES as readonly string[]).includes(eventType);
}

/** What every module's collection-event builder takes beside the asset's identity. */
export interface CollectionEventInput {
  transition: Exclude<CollectionTransition, null>;
  /** The asset's record after the attempt that caused the transition. */
  record: CollectionRecord;
  /** The record before it (gives a recovery its failing_since). */
  previous?: CollectionRecord;
}

/** `event_type` and `collection` of a collection event. */
export function collectionEventHead(input: CollectionEventInput): { event_type: CollectionEventType; collection: CollectionEventFields } {
  return { event_type: collectionEventType(input.transition), collection: collectionEventFields(input.record, input.previous) };
}

/**
 * The `event_type` enum of a module: its own event types, then the collection events.
 * `described` is what each own type means, for the rule author.
 */
export function eventTypeSchema<const T extends readonly [string, ...string[]]>(own: T, described: string) {
  return z
    .enum([...own, ...COLLECTION_EVENT_TYPES] as [T[number] | CollectionEventType, ...(T[number] | CollectionEventType)[]])
    .describe(
      `What the event is: ${described}; "collection_failing" when the asset enters the failing state (its second failed collection in a row), "collection_recovered" when it is collected again (see collection.*)`,
    );
}
