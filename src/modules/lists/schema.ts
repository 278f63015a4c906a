import { z } from "@hono/zod-openapi";
import { LIST_TYPES } from "../../db/schema";
import { pathId } from "../../platform/paging";
import { safeMultilineText } from "../../platform/text";

const entries = z.array(z.string().max(300)).max(1000);

export const ListSummary = z
  .object({
    id: z.number().int(),
    name: z.string(),
    list_type: z.enum(LIST_TYPES).openapi({ description: "ip: addresses and CIDR networks; domain: domain names; spki: keys as the SHA-256 of their SubjectPublicKeyInfo (the CT module's known keys)" }),
    description: z.string(),
    entry_count: z.number().int(),
    entry_limit: z.number().int().openapi({ description: "Per-list entry limit of the current tier" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("RuleList");
export const ListEntry = z.object({ id: z.number().int(), value: z.string(), created_at: z.string() }).openapi("RuleListEntry");

export const ListsResponse = z.object({ success: z.literal(true), lists: z.array(ListSummary) });
export const ListResponse = ListSummary.extend({ success: z.literal(true), entries: z.array(ListEntry) });
export const CreateListRequest = z
  .object({
    name: z.string().openapi({ example: "vip_domains", description: "lowercase letters, digits, _ and -; unique; immutable" }),
    list_type: z.enum(LIST_TYPES),
    description: safeMultilineText(1000).optional(),
    entries: entries.optional(),
  })
  .openapi("CreateRuleList");
export const CreateListResponse = ListSummary.extend({ success: z.literal(true), message: z.string() });
export const UpdateListRequest = z
  .object({
    description: safeMultilineText(1000),
    name: z.string().optional().openapi({ description: "Must equal the current name if given (immutable)" }),
    list_type: z.string().optional().openapi({ description: "Must equal the current type if given (immutable)" }),
  })
  .openapi("UpdateRuleList");
export const EntriesRequest = z.object({ entries }).openapi("RuleListEntries");
export const Success = z.object({ success: z.literal(true), message: z.string() });
export const AddEntriesResponse = Success.extend({ entries: z.array(ListEntry) });
export const ReplaceEntriesResponse = Success.extend({ entry_count: z.number().int() });

export const ListIdParam = z.object({ list_id: pathId("list_id") });
export const EntryIdParam = z.object({ list_id: pathId("list_id"), entry_id: pathId("entry_id") });
