/**
 * /api/cert-watcher: certificate monitors, IP targets, recent scans, history,
 * security standards, and scanner agents with their lease/results protocol
 * (docs/decisions.md#certificate-monitors-and-scanner-agents). The alerting endpoints of the module
 * (alert-rules, alert-history, introspection...) live in the alerting module; the
 * CT log list endpoint in the CT module.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { unauthorized } from "../../platform/errors";
import { principalOf, tenantOf, type AppContext, type AppEnv } from "../../platform/context";
import { tenantDb, type Tenant } from "../../platform/tenant";
import { body, defineRoute, ErrorBody, json } from "../../platform/route";
import * as agents from "./agents";
import * as s from "./schema";
import { MAX_TARGETS_PER_MONITOR } from "./monitor-input";
import * as monitors from "./monitor-service";
import * as scans from "./scan-service";
import * as targets from "./target-service";

const tags = ["Certificate deployment"];
/** limitOffsetQuery's output with its sort fields (validated by the query schema). */
type Sorted<S> = { limit: number; offset: number; sort_by: S; sort_order: "asc" | "desc" };
const agentTags = ["Certificate deployment: scanner agents"];
const view = { permission: "cert-watcher:view_monitoring" } as const;
const create = { permission: "cert-watcher:create_monitoring" } as const;
const update = { permission: "cert-watcher:update_monitoring" } as const;
const remove = { permission: "cert-watcher:delete_monitoring" } as const;
const M = "/api/cert-watcher/monitors";

export const listMonitors = defineRoute({
  method: "get", path: M, tags, summary: "Certificate monitors with indicators and last scan", access: view,
  description:
    "`sort_by=target` sorts by `target_dns` (monitors without one first in ascending order); ties are broken by cn, then id. " +
    "See CertMonitorIndicators for the indicator values.",
  request: { query: s.MonitorListQuery }, responses: { 200: json(s.MonitorList) },
});
export const recentScans = defineRoute({
  method: "get", path: "/api/cert-watcher/recent-scans", tags, summary: "The latest scan of every target", access: view,
  description:
    "One item per scanned target: its latest scan. `sort_by`: `validity` orders by certificate expiry (soonest first in ascending order, " +
    "targets without a certificate last); `protocol`, `cipher` and `validation` order by status severity, worst first in ascending order " +
    "(legacy < modern < unknown; weak < legacy < strong < unknown; self_signed < untrusted < hostname_mismatch < trusted < unknown); " +
    "`last_scan_time` (default, descending) by scan time.",
  request: { query: s.RecentScansQuery }, responses: { 200: json(s.RecentScanList) },
});
export const getMonitor = defineRoute({
  method: "get", path: `${M}/{monitor_id}`, tags, summary: "One monitor including its IP targets", access: view,
  request: { params: s.MonitorIdParam }, responses: { 200: json(s.MonitorDetail) },
});
export const createMonitor = defineRoute({
  method: "post", path: M, tags, summary: "Create a certificate monitor",
  description:
    "Invalid hostname, IP address, port outside 1-65535, or a root_ca that is not a PEM CA certificate: 400 (nothing saved). " +
    "A second monitor with the same (cn, port, target_dns): 409. Over the tier's quota (free 10, pro 200, enterprise 2000): 403 `quota_exceeded`. " +
    "Targets are scanned by the organization's scanner agents from the next scheduled run on.",
  access: create, audit: { action: "cert_monitor.create", targetType: "cert_monitor" },
  request: { body: body(s.CreateMonitorRequest) }, responses: { 201: json(s.CreateMonitorResponse, "Created") },
});
export const replaceMonitor = defineRoute({
  method: "put", path: `${M}/{monitor_id}`, tags, summary: "Replace every setting of a monitor",
  description: "The body is ReplaceCertMonitor: all settings; omitted optional fields take their defaults. Targets and history are kept.",
  access: update, audit: { action: "cert_monitor.update", targetType: "cert_monitor", idParam: "monitor_id" },
  request: { params: s.MonitorIdParam, body: body(s.ReplaceMonitorRequest) }, responses: { 200: json(s.Message) },
});
export const patchMonitor = defineRoute({
  method: "patch", path: `${M}/{monitor_id}`, tags, summary: "Enable or disable (pause) a monitor",
  access: update, audit: { action: "cert_monitor.toggle", targetType: "cert_monitor", idParam: "monitor_id" },
  request: { params: s.MonitorIdParam, body: body(s.EnabledRequest) }, responses: { 200: json(s.Message) },
});
export const deleteMonitor = defineRoute({
  method: "delete", path: `${M}/{monitor_id}`, tags, summary: "Delete a monitor with its targets and scan history",
  access: remove, audit: { action: "cert_monitor.delete", targetType: "cert_monitor", idParam: "monitor_id" },
  request: { params: s.MonitorIdParam }, responses: { 200: json(s.Message) },
});

export const listTargets = defineRoute({
  method: "get", path: `${M}/{monitor_id}/targets`, tags, summary: "IP targets of a monitor with their latest scan", access: view,
  request: { params: s.MonitorIdParam }, responses: { 200: json(s.TargetList) },
});
export const addTarget = defineRoute({
  method: "post", path: `${M}/{monitor_id}/targets`, tags, summary: "Add an IP target",
  description: `Invalid IPv4/IPv6 address: 400; already a target: 409; more than ${MAX_TARGETS_PER_MONITOR} targets: 403 \`quota_exceeded\`.`,
  access: update, audit: { action: "cert_target.create", targetType: "cert_target" },
  request: { params: s.MonitorIdParam, body: body(s.CreateTargetRequest) }, responses: { 201: json(s.CreateTargetResponse, "Created") },
});
export const patchTarget = defineRoute({
  method: "patch", path: `${M}/{monitor_id}/targets/{target_id}`, tags, summary: "Enable or disable an IP target",
  access: update, audit: { action: "cert_target.toggle", targetType: "cert_target", idParam: "target_id" },
  request: { params: s.TargetIdParam, body: body(s.EnabledRequest) }, responses: { 200: json(s.Message) },
});
export const deleteTarget = defineRoute({
  method: "delete", path: `${M}/{monitor_id}/targets/{target_id}`, tags, summary: "Delete an IP target with its scan history",
  access: update, audit: { action: "cert_target.delete", targetType: "cert_target", idParam: "target_id" },
  request: { params: s.TargetIdParam }, responses: { 200: json(s.Message) },
});

export const history = defineRoute({
  method: "get", path: "/api/cert-watcher/history/{monitor_id}", tags, summary: "Scan results of a monitor, newest first", access: view,
  description: "Each scan carries protocols, suites, groups, the certificate, audit findings and the five framework verdicts (evaluated by the service from the observed configuration).",
  request: { params: s.MonitorIdParam, query: s.HistoryQuery }, responses: { 200: json(s.HistoryResponse) },
});
export const standards = defineRoute({
  method: "get", path: "/api/cert-watcher/security-standards", tags, summary: "Full definitions of the five security frameworks", access: view,
  responses: { 200: json(s.SecurityStandards) },
});

// Agents ----------------------------------------------------------------------

const A = "/api/cert-watcher/agents";
export const registerAgent = defineRoute({
  method: "post", path: A, tags: agentTags, summary: "Register a scanner agent (token shown once)",
  description: "Returns the agent token (`tpa_...`) once; only its hash is stored. Run scanner-node with it to lease this organization's scan jobs.",
  access: create, audit: { action: "cert_agent.create", targetType: "cert_agent" },
  request: { body: body(s.RegisterAgentRequest) }, responses: { 201: json(s.RegisterAgentResponse, "Created") },
});
export const listAgents = defineRoute({
  method: "get", path: A, tags: agentTags, summary: "Scanner agents of the organization (revoked ones included)", access: view,
  responses: { 200: json(s.AgentList) },
});
export const revokeAgent = defineRoute({
  method: "delete", path: `${A}/{agent_id}`, tags: agentTags, summary: "Revoke a scanner agent",
  description: "Immediate and irreversible: the token is refused from the next request on; jobs it holds become leasable by other agents at once. Revoking twice is a 200.",
  access: remove, audit: { action: "cert_agent.revoke", targetType: "cert_agent", idParam: "agent_id" },
  request: { params: s.AgentIdParam }, responses: { 200: json(s.Message) },
});

const AGENT_AUTH =
  "Authentication: `Authorization: Bearer <agent token>` (`tpa_...` from POST /api/cert-watcher/agents) only; user sessions and API tokens are refused (401), " +
  "as are unknown and revoked agent tokens.";
export const lease = defineRoute({
  method: "post", path: `${A}/lease`, tags: agentTags, summary: "Agent: lease due scan jobs of its organization",
  description:
    `${AGENT_AUTH} Returns up to \`max_jobs\` open jobs (oldest first) for enabled targets of enabled monitors. A job stays with the agent for ` +
    `\`lease_seconds\` (${agents.LEASE_SECONDS}); a job whose lease passed without a result is handed out again.`,
  access: { public: true },
  request: { body: body(s.LeaseRequest) }, responses: { 200: json(s.LeaseResponse), 401: json(ErrorBody, "Missing, invalid or revoked agent token") },
});
export const postResult = defineRoute({
  method: "post", path: `${A}/results`, tags: agentTags, summary: "Agent: post the result of a leased job",
  description:
    `${AGENT_AUTH} The first result of a job is accepted (200), stored as a scan, its framework verdicts re-evaluated by the service, ` +
    "and the certificate scan event sent to the alert rules. Any later post for the same job is 409 and changes nothing (the agent treats it as done). " +
    "A job of another organization is 404.",
  access: { public: true },
  request: { body: body(s.PostResultRequest) },
  responses: { 200: json(s.PostResultResponse), 401: json(ErrorBody, "Missing, invalid or revoked agent token"), 404: json(ErrorBody, "No such job in the agent's organization"), 409: json(ErrorBody, "Result already accepted") },
});

/** The agent calling (its `tpa_` bearer was resolved by the platform) and its organization's handle. */
function agentOf(c: AppContext): { agentId: number; t: Tenant } {
  const a = c.get("agent");
  if (!a) throw c.get("authFailure") ?? unauthorized("An agent token (Bearer tpa_...) is required");
  return { agentId: a.agentId, t: tenantDb(c.get("db"), a.organizationId) };
}

export function registerCertWatcherRoutes(app: OpenAPIHono<AppEnv>) {
  const t = tenantOf;
  const now = (c: AppContext) => c.get("now");
  const monitorId = (c: { req: { valid(k: "param"): { monitor_id: number } } }) => c.req.valid("param").monitor_id;

  app.openapi(listMonitors, async (c) => c.json(await monitors.listMonitors(t(c), c.req.valid("query") as Sorted<monitors.MonitorSort>, now(c)), 200));
  app.openapi(recentScans, async (c) => c.json(await scans.recentScans(t(c), c.req.valid("query") as Sorted<scans.RecentScanSort>, now(c)), 200));
  app.openapi(getMonitor, async (c) => c.json(await monitors.getMonitor(t(c), monitorId(c), now(c)), 200));
  app.openapi(createMonitor, async (c) => c.json(await monitors.createMonitor(t(c), c.req.valid("json"), now(c)), 201));
  app.openapi(replaceMonitor, async (c) => c.json(await monitors.replaceMonitor(t(c), monitorId(c), c.req.valid("json"), now(c)), 200));
  app.openapi(patchMonitor, async (c) => c.json(await monitors.setMonitorEnabled(t(c), monitorId(c), c.req.valid("json").enabled, now(c)), 200));
  app.openapi(deleteMonitor, async (c) => c.json(await monitors.deleteMonitor(t(c), monitorId(c)), 200));

  app.openapi(listTargets, async (c) => c.json(await targets.listTargets(t(c), monitorId(c), now(c)), 200));
  app.openapi(addTarget, async (c) => c.json(await targets.addTarget(t(c), monitorId(c), c.req.valid("json").ip_address, now(c)), 201));
  app.openapi(patchTarget, async (c) => {
    const p = c.req.valid("param");
    return c.json(await targets.setTargetEnabled(t(c), p.monitor_id, p.target_id, c.req.valid("json").enabled), 200);
  });
  app.openapi(deleteTarget, async (c) => {
    const p = c.req.valid("param");
    return c.json(await targets.deleteTarget(t(c), p.monitor_id, p.target_id), 200);
  });

  app.openapi(history, async (c) => c.json(await scans.scanHistory(t(c), monitorId(c), c.req.valid("query")), 200));
  app.openapi(standards, async (c) => c.json(scans.securityStandards(), 200));

  app.openapi(registerAgent, async (c) => c.json(await agents.registerAgent(t(c), principalOf(c).userId, c.req.valid("json").name, now(c)), 201));
  app.openapi(listAgents, async (c) => c.json(await agents.listAgents(t(c)), 200));
  app.openapi(revokeAgent, async (c) => c.json(await agents.revokeAgent(t(c), c.req.valid("param").agent_id, now(c)), 200));

  // Agent endpoints: the platform's authentication resolved the `tpa_` bearer (see
  // agents.ts resolveAgent); refuse before the body is validated, so a caller without
  // a valid agent token learns nothing but 401.
  for (const path of [lease.path, postResult.path]) {
    app.post(path, async (c, next) => {
      agentOf(c);
      await next();
    });
  }
  app.openapi(lease, async (c) => {
    const { agentId, t } = agentOf(c);
    return c.json(await agents.leaseJobs(c.env, t, agentId, c.req.valid("json").max_jobs, now(c), { scanIntervalSeconds: c.get("config").scanIntervalSeconds }), 200);
  });
  app.openapi(postResult, async (c) => {
    const { agentId, t } = agentOf(c);
    const { job_id, result } = c.req.valid("json");
    return c.json(await agents.acceptResult(c.env, t, agentId, job_id, result, now(c), { scanIntervalSeconds: c.get("config").scanIntervalSeconds }), 200);
  });
}
