/**
 * RDAP endpoints (docs/modules/rdap.md). GET /api/rdap/introspection and the alerting
 * endpoints of the module are served by the alerting module.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { tenantOf, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import * as s from "./schema";
import * as rdap from "./service";

const tags = ["RDAP"];
const view = { permission: "rdap:view_monitoring" } as const;

export const listDomains = defineRoute({
  method: "get", path: "/api/rdap/domains", tags, summary: "Monitored domains",
  description: "Sorted by `sort_by` then id (stable pages). `last_check_status` is one of success, not_found, rate_limited, server_error, timeout, invalid_response, no_rdap_server (null before the first check).",
  access: view, request: { query: s.MonitorListQuery }, responses: { 200: json(s.MonitorList) },
});
export const listChanges = defineRoute({
  method: "get", path: "/api/rdap/changes", tags, summary: "Registration changes of the enabled monitored domains",
  description: "One item per detected change (a monitor's first snapshot is a baseline, not a change). Hashes are SHA-256 of the canonical RDAP answer (volatile parts such as the \"last update of RDAP database\" event, notices and links ignored).",
  access: view, request: { query: s.ChangeQuery }, responses: { 200: json(s.ChangeList) },
});
export const createDomain = defineRoute({
  method: "post", path: "/api/rdap/domains", tags, summary: "Monitor a domain",
  description: "The name is validated and stored as a lowercase A-label without trailing dot (UTS #46). One monitor per domain per organization (409 otherwise). Quota per tier: free 10, pro 100, enterprise 1000 (403 `quota_exceeded`). The first check happens at the next scheduled run.",
  access: { permission: "rdap:create_monitoring" }, audit: { action: "rdap_monitor.create", targetType: "rdap_monitor" },
  request: { body: body(s.CreateMonitor) }, responses: { 201: json(s.MonitorCreated, "Created") },
});
export const updateDomain = defineRoute({
  method: "patch", path: "/api/rdap/domains/{monitor_id}", tags, summary: "Update notes and/or enabled state",
  description: "A disabled monitor is not polled and raises no events; its history is kept, and on re-enabling the next answer is compared with its last snapshot.",
  access: { permission: "rdap:update_monitoring" }, audit: { action: "rdap_monitor.update", targetType: "rdap_monitor", idParam: "monitor_id" },
  request: { params: s.MonitorIdParam, body: body(s.UpdateMonitor) }, responses: { 200: json(s.Message) },
});
export const deleteDomain = defineRoute({
  method: "delete", path: "/api/rdap/domains/{monitor_id}", tags, summary: "Stop monitoring a domain (its history is deleted)",
  access: { permission: "rdap:delete_monitoring" }, audit: { action: "rdap_monitor.delete", targetType: "rdap_monitor", idParam: "monitor_id" },
  request: { params: s.MonitorIdParam }, responses: { 200: json(s.Message) },
});
export const domainHistory = defineRoute({
  method: "get", path: "/api/rdap/domains/{domain}/history", tags, summary: "Snapshots of a monitored domain, newest first",
  description: "The first snapshot (`changed: false`) and every later one whose content differed (`changed: true`). Polls that found the registration unchanged add nothing; the monitor's `last_checked_at` tells when it was last confirmed. `limit` default 30, at most 100.",
  access: view, request: { params: s.DomainParam, query: s.HistoryQuery }, responses: { 200: json(s.History) },
});
export const domainSnapshot = defineRoute({
  method: "get", path: "/api/rdap/domains/{domain}/snapshot", tags, summary: "One full RDAP snapshot",
  description: "`snapshot_id` (from the history) or `at` (ISO 8601: the snapshot in force then, i.e. the latest at or before it); neither: the latest. 404 when no such snapshot exists.",
  access: view, request: { params: s.DomainParam, query: s.SnapshotQuery }, responses: { 200: json(s.RdapJson) },
});
export const domainDiff = defineRoute({
  method: "get", path: "/api/rdap/domains/{domain}/diff", tags, summary: "Difference between two snapshots",
  description: "`from` and `to` are each a snapshot id or an ISO 8601 timestamp; `to` defaults to the latest snapshot and `from` to the one before `to`. `added`/`removed`/`modified` list JSON paths of the canonical form, naming list items by identity (`$.nameservers[ns1.example.com]`, `$.events[expiration].eventDate`, `$.entities[registrar:292]...`); `summary` gives registrar, registrant, nameservers, status and expiration changes in readable form.",
  access: view, request: { params: s.DomainParam, query: s.DiffQuery }, responses: { 200: json(s.Diff) },
});

export function registerRdapRoutes(app: OpenAPIHono<AppEnv>) {
  const t = tenantOf;
  app.openapi(listDomains, async (c) => c.json(await rdap.listMonitors(t(c), c.req.valid("query")), 200));
  app.openapi(listChanges, async (c) => c.json(await rdap.listChanges(t(c), c.req.valid("query")), 200));
  app.openapi(createDomain, async (c) => c.json(await rdap.createMonitor(t(c), c.req.valid("json"), c.get("now")), 201));
  app.openapi(updateDomain, async (c) => c.json(await rdap.updateMonitor(t(c), c.req.valid("param").monitor_id, c.req.valid("json"), c.get("now")), 200));
  app.openapi(deleteDomain, async (c) => c.json(await rdap.deleteMonitor(t(c), c.req.valid("param").monitor_id), 200));
  app.openapi(domainHistory, async (c) => c.json(await rdap.history(t(c), c.req.valid("param").domain, c.req.valid("query")), 200));
  app.openapi(domainSnapshot, async (c) => c.json(await rdap.snapshot(t(c), c.req.valid("param").domain, c.req.valid("query")), 200));
  app.openapi(domainDiff, async (c) => c.json(await rdap.diff(t(c), c.req.valid("param").domain, c.req.valid("query")), 200));
}
