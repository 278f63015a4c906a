// The OpenAPI document describes every cert-watcher endpoint, including the agent protocol.
import { expect, it } from "vitest";
import { call } from "../helpers";

it("documents the cert-watcher endpoints, agent auth, indicator values and the PUT body", async () => {
  const r = await call("GET", "/api/openapi.json");
  expect(r.status).toBe(200);
  const paths = r.body.paths as Record<string, Record<string, any>>;
  const expected: [string, string][] = [
    ["/api/cert-watcher/monitors", "get"], ["/api/cert-watcher/monitors", "post"],
    ["/api/cert-watcher/monitors/{monitor_id}", "get"], ["/api/cert-watcher/monitors/{monitor_id}", "put"],
    ["/api/cert-watcher/monitors/{monitor_id}", "patch"], ["/api/cert-watcher/monitors/{monitor_id}", "delete"],
    ["/api/cert-watcher/monitors/{monitor_id}/targets", "get"], ["/api/cert-watcher/monitors/{monitor_id}/targets", "post"],
    ["/api/cert-watcher/monitors/{monitor_id}/targets/{target_id}", "patch"], ["/api/cert-watcher/monitors/{monitor_id}/targets/{target_id}", "delete"],
    ["/api/cert-watcher/recent-scans", "get"], ["/api/cert-watcher/history/{monitor_id}", "get"], ["/api/cert-watcher/security-standards", "get"],
    ["/api/cert-watcher/agents", "get"], ["/api/cert-watcher/agents", "post"], ["/api/cert-watcher/agents/{agent_id}", "delete"],
    ["/api/cert-watcher/agents/lease", "post"], ["/api/cert-watcher/agents/results", "post"],
  ];
  for (const [path, method] of expected) expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
  expect(paths["/api/cert-watcher/agents/lease"].post.description).toMatch(/agent token/);
  expect(paths["/api/cert-watcher/agents/lease"].post.security).toEqual([]);
  expect(paths["/api/cert-watcher/monitors"].post["x-required-permission"]).toBe("cert-watcher:create_monitoring");
  const schemas = r.body.components.schemas;
  expect(schemas.CertMonitorIndicators.description).toMatch(/expiring_soon/);
  expect(Object.keys(schemas.ReplaceCertMonitor.properties)).toEqual(expect.arrayContaining(["cn", "port", "target_dns", "enabled", "notes", "root_ca", "starttls"]));
});
