/**
 * The words of the lookalike lifecycle. The stored sets (states, sources, timeline kinds,
 * the DNS a check records) are declared with their table in db/schema/lookalikes.ts, so
 * the table does not import the module; they are re-exported here for the module, the API
 * schemas, the CEL event schema and the console. Below: the sets only the module uses.
 */
export { LOOKALIKE_SOURCES, LOOKALIKE_STATES, LOOKALIKE_TIMELINE_KINDS } from "../../../db/schema/lookalikes";
export type { LookalikeDns, LookalikeSource, LookalikeState, LookalikeTimelineKind } from "../../../db/schema/lookalikes";
import type { LookalikeState } from "../../../db/schema/lookalikes";

/** States of an open lookalike: what the export and the default list show. */
export const OPEN_STATES: readonly LookalikeState[] = ["new", "registered", "resolving", "mail_capable", "serving"];

/** Export formats of GET /api/ct-log/lookalikes/export. */
export const EXPORT_FORMATS = ["csv", "json", "txt", "rpz"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
