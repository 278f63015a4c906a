/**
 * The `collection` object of every monitored asset in API responses (OpenAPI component
 * `Collection`), declared once here and embedded by each module's list and detail schemas.
 */
import { z } from "@hono/zod-openapi";
import { COLLECTION_ERROR_CLASSES, COLLECTION_STATES } from "./vocabulary";

export const CollectionErrorSchema = z
  .object({
    class: z.enum(COLLECTION_ERROR_CLASSES).describe("Why the attempt failed, as a closed set"),
    message: z.string().describe('What failed, naming the host and the step ("DNS lookup of rdap.example failed")'),
  })
  .openapi("CollectionError");

export const CollectionSchema = z
  .object({
    state: z
      .enum(COLLECTION_STATES)
      .describe(
        "ok: collected (one failed attempt after a success is still ok, with its error); failing: two or more consecutive attempts failed; pending: not collected yet (never attempted, or only one attempt failed); paused: disabled",
      ),
    last_attempt_at: z.string().nullable().describe("When the source was last asked (ISO 8601), null if never"),
    last_success_at: z.string().nullable().describe("When data was last collected (ISO 8601), null if never"),
    failing_since: z.string().nullable().describe("First failed attempt of the current run of failures (ISO 8601), null when the latest attempt succeeded"),
    consecutive_failures: z.number().int().nonnegative().describe("Failed attempts in a row, 0 after a success"),
    next_attempt_at: z.string().nullable().describe("When the source is asked next (ISO 8601), null when paused or not known"),
    error: CollectionErrorSchema.nullable().describe("The latest attempt's failure, null when it succeeded or none was made"),
  })
  .openapi("Collection");

export type CollectionView = z.infer<typeof CollectionSchema>;
