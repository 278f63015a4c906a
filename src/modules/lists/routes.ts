import type { OpenAPIHono } from "@hono/zod-openapi";
import { tenantOf, type AppContext, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import { notifyAlertState } from "../alerting/contract";
import * as s from "./schema";
import * as lists from "./service";

const tags = ["Rule lists"];
const view = { permission: "lists:view_lists" } as const;
const manage = { permission: "lists:manage_lists" } as const;

export const listLists = defineRoute({ method: "get", path: "/api/lists", tags, summary: "Every rule list (no entries)", access: view, responses: { 200: json(s.ListsResponse) } });
export const getList = defineRoute({
  method: "get", path: "/api/lists/{list_id}", tags, summary: "One list with its entries", access: view,
  request: { params: s.ListIdParam }, responses: { 200: json(s.ListResponse) },
});
export const createList = defineRoute({
  method: "post", path: "/api/lists", tags, summary: "Create a list (entries optional, all or nothing)",
  description: "Invalid name or entry: 400; duplicate name or entry: 409; list or entry quota of the tier: 403 `quota_exceeded`.",
  access: manage, audit: { action: "rule_list.create", targetType: "rule_list" },
  request: { body: body(s.CreateListRequest) }, responses: { 201: json(s.CreateListResponse, "Created") },
});
export const updateList = defineRoute({
  method: "put", path: "/api/lists/{list_id}", tags, summary: "Edit the description (name and type are immutable)",
  access: manage, audit: { action: "rule_list.update", targetType: "rule_list", idParam: "list_id" },
  request: { params: s.ListIdParam, body: body(s.UpdateListRequest) }, responses: { 200: json(s.Success) },
});
export const addEntries = defineRoute({
  method: "post", path: "/api/lists/{list_id}/entries", tags, summary: "Add entries (all or none)",
  access: manage, audit: { action: "rule_list.add_entries", targetType: "rule_list", idParam: "list_id" },
  request: { params: s.ListIdParam, body: body(s.EntriesRequest) }, responses: { 201: json(s.AddEntriesResponse, "Added") },
});
export const replaceEntries = defineRoute({
  method: "put", path: "/api/lists/{list_id}/entries", tags, summary: "Replace every entry atomically (empty array empties the list)",
  access: manage, audit: { action: "rule_list.replace_entries", targetType: "rule_list", idParam: "list_id" },
  request: { params: s.ListIdParam, body: body(s.EntriesRequest) }, responses: { 200: json(s.ReplaceEntriesResponse) },
});
export const deleteEntry = defineRoute({
  method: "delete", path: "/api/lists/{list_id}/entries/{entry_id}", tags, summary: "Remove one entry",
  access: manage, audit: { action: "rule_list.delete_entry", targetType: "rule_list_entry", idParam: "entry_id" },
  request: { params: s.EntryIdParam }, responses: { 200: json(s.Success) },
});
export const deleteList = defineRoute({
  method: "delete", path: "/api/lists/{list_id}", tags, summary: "Delete a list no alert rule references (else 409)",
  access: manage, audit: { action: "rule_list.delete", targetType: "rule_list", idParam: "list_id" },
  request: { params: s.ListIdParam }, responses: { 200: json(s.Success) },
});

export function registerListRoutes(app: OpenAPIHono<AppEnv>) {
  /** Every change reaches the alert state at once (and within 60 s regardless). */
  const changed = async (c: AppContext) => notifyAlertState(c.env, tenantOf(c).organizationId, "lists");
  const ok = <T extends object>(x: T) => ({ success: true as const, ...x });

  app.openapi(listLists, async (c) => c.json(ok({ lists: await lists.listLists(tenantOf(c)) }), 200));
  app.openapi(getList, async (c) => c.json(ok(await lists.getList(tenantOf(c), c.req.valid("param").list_id)), 200));
  app.openapi(createList, async (c) => {
    const r = await lists.createList(tenantOf(c), c.req.valid("json"), c.get("now"));
    await changed(c);
    return c.json(ok(r), 201);
  });
  app.openapi(updateList, async (c) => c.json(ok(await lists.updateList(tenantOf(c), c.req.valid("param").list_id, c.req.valid("json"), c.get("now"))), 200));
  app.openapi(addEntries, async (c) => {
    const r = await lists.addEntries(tenantOf(c), c.req.valid("param").list_id, c.req.valid("json").entries, c.get("now"));
    await changed(c);
    return c.json(ok(r), 201);
  });
  app.openapi(replaceEntries, async (c) => {
    const r = await lists.replaceEntries(tenantOf(c), c.req.valid("param").list_id, c.req.valid("json").entries, c.get("now"));
    await changed(c);
    return c.json(ok(r), 200);
  });
  app.openapi(deleteEntry, async (c) => {
    const p = c.req.valid("param");
    const r = await lists.deleteEntry(tenantOf(c), p.list_id, p.entry_id, c.get("now"));
    await changed(c);
    return c.json(ok(r), 200);
  });
  app.openapi(deleteList, async (c) => {
    const r = await lists.deleteList(tenantOf(c), c.req.valid("param").list_id);
    await changed(c);
    return c.json(ok(r), 200);
  });
}
