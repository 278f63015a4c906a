// The CT log endpoints appear in the generated OpenAPI document with their permissions.
import { describe, expect, it } from "vitest";
import { call } from "../helpers";

describe("CT log OpenAPI", () => {
  it("documents every CT log endpoint with its required permission", async () => {
    const r = await call("GET", "/api/openapi.json");
    expect(r.status).toBe(200);
    const paths = r.body.paths as Record<string, Record<string, any>>;
    const expected: [string, string, string][] = [
      ["/api/ct-log/filters", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/filters", "post", "ct-log:create_monitoring"],
      ["/api/ct-log/filters/{filter_id}", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/filters/{filter_id}", "put", "ct-log:update_monitoring"],
      ["/api/ct-log/filters/{filter_id}", "delete", "ct-log:delete_monitoring"],
      ["/api/ct-log/matches", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/matches/check-new", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/matches/{sha256}", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/typosquatting/filters", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/proposals", "get", "ct-log:view_monitoring"],
      ["/api/ct-log/proposals/{proposal_id}/accept", "post", "ct-log:update_monitoring"],
      ["/api/ct-log/proposals/{proposal_id}/dismiss", "post", "ct-log:update_monitoring"],
      ["/api/ct-log/logs", "get", "ct-log:view_monitoring"],
      ["/api/cert-watcher/ct-log-list", "get", "cert-watcher:view_monitoring"],
    ];
    for (const [path, method, permission] of expected) {
      expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
      expect(paths[path][method]["x-required-permission"]).toBe(permission);
    }
    // Polling by time is safe: the description says which time check-new compares.
    expect(paths["/api/ct-log/matches/check-new"].get.description).toMatch(/became visible/);
    expect(paths["/api/ct-log/matches/check-new"].get.description).toMatch(/no match is ever missed/);
    // ...and how to poll: with the server's watermark, not the client's clock.
    expect(paths["/api/ct-log/matches/check-new"].get.description).toMatch(/pass the previous answer's `as_of` as the next `since`/);
    const checkNewBody = paths["/api/ct-log/matches/check-new"].get.responses["200"].content["application/json"].schema;
    expect(JSON.stringify(r.body.components.schemas.CtCheckNew ?? checkNewBody)).toContain("as_of");
    // Accepting a dns proposal needs the DNS watcher's create permission too, and answers the domain.
    expect(paths["/api/ct-log/proposals/{proposal_id}/accept"].post.description).toMatch(/dns-watcher:create_monitoring/);
    expect(JSON.stringify(r.body.components.schemas.CtProposalAccepted)).toContain("dns_domain_id");
    expect(paths["/api/ct-log/filters"].get.parameters.map((p: any) => p.name).sort()).toEqual(["page", "page_size", "sort_by", "sort_order"]);
  });
});
