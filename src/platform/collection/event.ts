/**
 * The `collection` fields of alert events, the same in every module's event schema, so
 * one rule (`event_type == "collection_failing"`, `collection.error_class == "timeout"`)
 * reads alike whichever module raised it. Each module's events.ts embeds
 * `CollectionEventFieldsSchema` as `collection` beside its own fields and its
 * `event_type`; on events of other types the fields hold NOT_A_COLLECTION_EVENT, so a
 * rule on them never fails on a missing field.
 */
import { z } from "zod";
import { COLLECTION_ERROR_CLASSES, COLLECTION_STATES, type CollectionErrorClass } from "./vocabulary";
import { collectionState, type CollectionRecord } from "./state";

export const CollectionEventFieldsSchema = z
  .object({
    state: z.enum(["", ...COLLECTION_STATES]).describe('The asset\'s collection state after this event: "failing" or "ok" ("" on events that are not about collection)'),
    error_class: z.enum(["", ...COLLECTION_ERROR_CLASSES]).describe('Why collection failed (dns_resolution, connect, timeout, tls, http_status, rate_limited, protocol, blocked, internal); "" when it did not'),
    error_message: z.string().describe("What failed, naming the host and the step; \"\" when nothing did"),
    failing_since: z.string().describe('First failed attempt of the run of failures (ISO 8601); "" when not failing'),
  })
  .describe("Collection state of the asset (events collection_failing and collection_recovered)");

export type CollectionEventFields = z.infer<typeof CollectionEventFieldsSchema>;

export const NOT_A_COLLECTION_EVENT: CollectionEventFields = { state: "", error_class: "", error_message: "", failing_since: "" };

/** The fields of a collection_failing / collection_recovered event from the record after the attempt. */
export function collectionEventFields(record: CollectionRecord): CollectionEventFields {
  const state = collectionState(record);
  return {
    state,
    error_class: (record.errorClass ?? "") as CollectionErrorClass | "",
    error_message: record.errorMessage ?? "",
    failing_since: record.failingSince ?? "",
  };
}
