/** Request and response schemas of the RDAP endpoints. */
import { z } from "@hono/zod-openapi";
import { limitOffsetQuery, pathId, sortOrder } from "../../platform/paging";
import { RDAP_CHECK_STATUSES } from "../../db/schema/rdap";
import { safeMultilineText } from "../../platform/text";
import { CollectionSchema } from "../../platform/collection/schema";

export const MONITOR_SORT = ["domain_name", "tld", "enabled", "last_checked_at", "created_at"] as const;
export const CHANGE_SORT = ["domain_name", "tld", "changed_at"] as const;
/** Notes are free text; bounded so a monitor row stays small (spec leaves the length open). */
export const NOTES_MAX = 2000;

export const RdapMonitor = z
  .object({
    id: z.number().int(),
    domain_name: z.string().openapi({ example: "example.com", description: "Lowercase A-label, no trailing dot" }),
    tld: z.string().openapi({ example: "com" }),
    enabled: z.boolean(),
    notes: z.string(),
    last_checked_at: z.string().nullable(),
    last_check_status: z.enum(RDAP_CHECK_STATUSES).nullable(),
    last_success_at: z.string().nullable().openapi({ description: "ISO 8601: the latest check that took a snapshot (registration data collected); null while none has" }),
    collection: CollectionSchema.openapi({
      description:
        "Whether the registration data could be collected: each check is an attempt, which succeeds when it takes a snapshot; a 404, an error answer, a server backing off or no RDAP server for the TLD is a failed attempt, said with its class and message; failing after two in a row",
    }),
    created_at: z.string(),
  })
  .openapi("RdapMonitor");

export const MonitorListQuery = limitOffsetQuery({ defaultLimit: 100, maxLimit: 1000 }).extend({
  sort_by: z.enum(MONITOR_SORT).default("domain_name"),
  sort_order: sortOrder("asc"),
  enabled: z.enum(["true", "false"]).optional().openapi({ description: "Only enabled (true) or disabled (false) monitors" }),
  domain_name: z.string().max(300).optional().openapi({ description: "Only the monitor of this domain (any spelling: compared as a lowercase A-label)" }),
});

export const MonitorList = z
  .object({
    domains: z.array(RdapMonitor),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    sort_by: z.enum(MONITOR_SORT),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("RdapMonitorList");

export const CreateMonitor = z
  .object({
    domain_name: z.string().max(300).openapi({ example: "example.com", description: "Fully-qualified domain name; Unicode names are stored as A-labels" }),
    enabled: z.boolean().default(true),
    notes: safeMultilineText(NOTES_MAX).default(""),
  })
  .openapi("CreateRdapMonitor");

export const MonitorCreated = z
  .object({ id: z.number().int(), message: z.string(), quota_remaining: z.number().int() })
  .openapi("RdapMonitorCreated");

export const UpdateMonitor = z
  .object({ notes: safeMultilineText(NOTES_MAX).optional(), enabled: z.boolean().optional() })
  .refine((b) => b.notes !== undefined || b.enabled !== undefined, { message: "give notes and/or enabled" })
  .openapi("UpdateRdapMonitor");

export const Message = z.object({ message: z.string() }).openapi("RdapMessage");

export const MonitorIdParam = z.object({
  monitor_id: pathId("monitor_id"),
});
export const DomainParam = z.object({
  domain: z.string().min(1).max(300).openapi({ param: { name: "domain", in: "path" }, example: "example.com" }),
});

export const ChangeQuery = limitOffsetQuery({ defaultLimit: 10, maxLimit: 100 }).extend({
  sort_by: z.enum(CHANGE_SORT).default("changed_at"),
  sort_order: sortOrder("desc"),
});
export const RdapChange = z
  .object({
    domain_name: z.string(),
    tld: z.string(),
    changed_at: z.string(),
    previous_hash: z.string(),
    current_hash: z.string(),
    snapshot_id: z.string().openapi({ description: "The new snapshot (for /snapshot and /diff)" }),
    previous_snapshot_id: z.string().nullable(),
  })
  .openapi("RdapChange");
export const ChangeList = z
  .object({
    changes: z.array(RdapChange),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    sort_by: z.enum(CHANGE_SORT),
    sort_order: z.enum(["asc", "desc"]),
  })
  .openapi("RdapChangeList");

export const HistoryQuery = limitOffsetQuery({ defaultLimit: 30, maxLimit: 100 });
export const SnapshotSummary = z
  .object({
    id: z.string().openapi({ example: "42" }),
    timestamp: z.string(),
    changed: z.boolean(),
    hash: z.string(),
  })
  .openapi("RdapSnapshotSummary");
export const History = z
  .object({ domain: z.string(), snapshots: z.array(SnapshotSummary), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .openapi("RdapHistory");

const snapshotRef = (what: string) =>
  z
    .string()
    .max(100)
    .optional()
    .openapi({ description: `${what}: a snapshot id (from the history) or an ISO 8601 timestamp (the snapshot in force then)` });

export const SnapshotQuery = z.object({
  snapshot_id: z.string().max(100).optional().openapi({ description: "A snapshot id from the history" }),
  at: z.string().max(100).optional().openapi({ description: "ISO 8601 timestamp: the latest snapshot at or before it" }),
});
export const RdapJson = z.record(z.string(), z.unknown()).openapi("RdapDomainObject", {
  description: "The full RDAP domain object (RFC 9083) as the registry returned it",
});

export const DiffQuery = z.object({ from: snapshotRef("Older side"), to: snapshotRef("Newer side") });

const jsonValue = z.unknown();
const SetChange = z.object({ added: z.array(z.string()), removed: z.array(z.string()) });
const Registrar = z.object({ handle: z.string().nullable(), name: z.string().nullable(), iana_id: z.string().nullable() }).nullable();
const Registrant = z.object({ handle: z.string().nullable(), name: z.string().nullable(), organization: z.string().nullable() }).nullable();
export const Diff = z
  .object({
    domain: z.string(),
    from: SnapshotSummary,
    to: SnapshotSummary,
    changed: z.boolean().openapi({ description: "False when both sides have the same canonical content" }),
    added: z.array(z.object({ path: z.string(), value: jsonValue })),
    removed: z.array(z.object({ path: z.string(), value: jsonValue })),
    modified: z.array(z.object({ path: z.string(), from: jsonValue, to: jsonValue })),
    summary: z
      .object({
        registrar: z.object({ from: Registrar, to: Registrar }).optional(),
        registrant: z.object({ from: Registrant, to: Registrant }).optional(),
        nameservers: SetChange.optional(),
        status: SetChange.optional(),
        expiration: z.object({ from: z.string().nullable(), to: z.string().nullable() }).optional(),
      })
      .openapi({ description: "The changes that matter, in readable form; a member is present only when that aspect changed" }),
  })
  .openapi("RdapDiff");
