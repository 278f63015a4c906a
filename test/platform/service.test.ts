/**
 * Service endpoints: health, the OpenAPI document, the docs page.
 */
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../src/platform/permissions";
import { callFresh } from "../helpers";

/** Every platform operation: method, path, required permission ("none" = public, "authenticated" = any bearer, "session" = a login session only). */
const PLATFORM_OPERATIONS: [string, string, string | string[]][] = [
  ["get", "/api/health", "none"],
  ["post", "/api/auth/signup", "none"],
  ["post", "/api/auth/login", "none"],
  ["post", "/api/auth/logout", "authenticated"],
  ["get", "/api/auth/me", "authenticated"],
  ["get", "/api/auth/me/preferences", "authenticated"],
  ["put", "/api/auth/me/preferences", "authenticated"],
  ["post", "/api/auth/invitations/accept", "none"],
  ["post", "/api/auth/login/mfa", "none"],
  ["post", "/api/auth/password", "session"],
  ["get", "/api/auth/sessions", "session"],
  ["delete", "/api/auth/sessions", "session"],
  ["delete", "/api/auth/sessions/{session_id}", "session"],
  ["get", "/api/auth/mfa", "session"],
  ["post", "/api/auth/mfa/totp", "session"],
  ["delete", "/api/auth/mfa/totp", "session"],
  ["post", "/api/auth/mfa/totp/verify", "session"],
  ["post", "/api/auth/mfa/recovery-codes", "session"],
  ["post", "/api/auth/mfa/passkeys/options", "session"],
  ["get", "/api/auth/mfa/passkeys", "session"],
  ["post", "/api/auth/mfa/passkeys", "session"],
  ["patch", "/api/auth/mfa/passkeys/{passkey_id}", "session"],
  ["delete", "/api/auth/mfa/passkeys/{passkey_id}", "session"],
  ["get", "/api/auth/sso/start", "none"],
  ["get", "/api/auth/sso/callback", "none"],
  ["get", "/api/admin/sso", ["admin:view_users", "admin:manage_users"]],
  ["put", "/api/admin/sso", "admin:manage_users"],
  ["delete", "/api/admin/sso", "admin:manage_users"],
  ["post", "/api/admin/sso/domains/{domain}/verify", "admin:manage_users"],
  ["get", "/api/admin/security-policy", ["admin:view_users", "admin:manage_users"]],
  ["put", "/api/admin/security-policy", "admin:manage_users"],
  ["delete", "/api/admin/users/{user_id}/mfa", "admin:manage_users"],
  ["get", "/api/api-tokens", "api-tokens:view_own_tokens"],
  ["post", "/api/api-tokens", "api-tokens:create_tokens"],
  ["get", "/api/api-tokens/org", "api-tokens:view_all_tokens"],
  ["delete", "/api/api-tokens/{token_id}", ["api-tokens:delete_tokens", "api-tokens:revoke_all_tokens"]],
  ["post", "/api/api-tokens/{token_id}/renew", "authenticated"],
  ["get", "/api/admin/users", ["admin:view_users", "admin:manage_users"]],
  ["get", "/api/admin/roles", "admin:manage_users"],
  ["post", "/api/admin/invitations", "admin:manage_users"],
  ["get", "/api/admin/invitations", "admin:manage_users"],
  ["post", "/api/admin/invitations/{invitation_id}/resend", "admin:manage_users"],
  ["put", "/api/admin/users/{user_id}", "admin:manage_permissions"],
  ["put", "/api/admin/users/{user_id}/status", "admin:manage_users"],
  ["delete", "/api/admin/users/{user_id}", "admin:manage_users"],
  ["get", "/api/admin/subscription", "admin:view_subscription"],
  ["put", "/api/admin/subscription", "admin:manage_subscription"],
  ["get", "/api/admin/audit-logs", "admin:view_audit_logs"],
  ["get", "/api/admin/mail-outbox", "admin:manage_users"],
  ["get", "/api/admin/heartbeat", "admin:manage_users"],
  ["put", "/api/admin/heartbeat", "admin:manage_users"],
  ["delete", "/api/admin/heartbeat", "admin:manage_users"],
];

const WITH_BODY: [string, string, string[]][] = [
  ["post", "/api/auth/signup", ["organization_name", "email", "password"]],
  ["post", "/api/auth/login", ["email", "password"]],
  ["post", "/api/auth/invitations/accept", ["token", "password"]],
  ["post", "/api/api-tokens", ["name", "validity_days", "scopes"]],
  ["post", "/api/admin/invitations", ["email"]],
  ["put", "/api/admin/users/{user_id}", ["roles"]],
  ["put", "/api/admin/users/{user_id}/status", ["status"]],
  ["put", "/api/admin/subscription", ["tier"]],
];

describe("health", () => {
  it("GET /api/health: 200 {status: ok, database: ok} without a bearer", async () => {
    const r = await callFresh("GET", "/api/health");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok", database: "ok" });
  });
});

describe("OpenAPI document", () => {
  const load = async () => {
    const r = await callFresh("GET", "/api/openapi.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/json/);
    return r.body;
  };
  const resolve = (doc: any, schema: any): any => {
    if (schema?.$ref) return resolve(doc, schema.$ref.split("/").slice(1).reduce((o: any, k: string) => o?.[k], doc));
    return schema;
  };

  it("is OpenAPI 3.1 with every platform path and operation", async () => {
    const doc = await load();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toBeTruthy();
    for (const [method, path] of PLATFORM_OPERATIONS) {
      expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
    }
    // And no platform path the list does not know (new endpoints must be added here).
    const platformPaths = Object.keys(doc.paths).filter((p) => /^\/api\/(auth|api-tokens|admin|health)/.test(p));
    for (const p of platformPaths) {
      for (const method of Object.keys(doc.paths[p])) {
        expect(PLATFORM_OPERATIONS.some(([m, path]) => m === method && path === p), `${method} ${p}`).toBe(true);
      }
    }
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("every operation states x-required-permission, matching the route's access; protected ones require bearerAuth", async () => {
    const doc = await load();
    for (const [method, path, permission] of PLATFORM_OPERATIONS) {
      const op = doc.paths[path][method];
      expect(op["x-required-permission"], `${method} ${path}`).toEqual(permission);
      if (permission === "none") expect(op.security ?? []).toEqual([]);
      else {
        expect(op.security, `${method} ${path}`).toEqual([{ bearerAuth: [] }]);
        expect(op.responses["401"]).toBeDefined();
        expect(op.responses["403"]).toBeDefined();
      }
    }
    // Across the whole document (modules included): every operation carries a known permission.
    const known = new Set<string>([...ALL_PERMISSIONS, "none", "authenticated", "session"]);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const p = op["x-required-permission"];
        expect(p, `${method} ${path}`).toBeDefined();
        for (const x of Array.isArray(p) ? p : [p]) expect(known.has(x), `${method} ${path}: ${x}`).toBe(true);
      }
    }
  });

  it("request bodies have JSON schemas with their required fields; errors reference the Error schema", async () => {
    const doc = await load();
    for (const [method, path, required] of WITH_BODY) {
      const op = doc.paths[path][method];
      const schema = resolve(doc, op.requestBody?.content?.["application/json"]?.schema);
      expect(schema, `${method} ${path}`).toBeDefined();
      expect(schema.type).toBe("object");
      expect([...(schema.required ?? [])].sort()).toEqual([...required].sort());
      for (const f of required) expect(schema.properties[f], `${path} ${f}`).toBeDefined();
    }
    // The shared error answers are response components each route references (platform/route.ts).
    expect(doc.paths["/api/api-tokens"].post.responses["400"]).toEqual({ $ref: "#/components/responses/ValidationError" });
    const err = resolve(doc, resolve(doc, doc.paths["/api/api-tokens"].post.responses["400"]).content["application/json"].schema);
    expect(err.properties.success).toBeDefined();
    expect(err.properties.error.properties.code).toBeDefined();
    const vd = resolve(doc, doc.paths["/api/api-tokens"].post.requestBody.content["application/json"].schema).properties.validity_days;
    expect([vd.minimum, vd.maximum]).toEqual([1, 30]);
  });
});

describe("docs", () => {
  it("GET /api/docs returns an HTML page whose start-up script points at the OpenAPI document", async () => {
    const r = await callFresh("GET", "/api/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/html/);
    expect(typeof r.body).toBe("string");
    expect(r.body).toMatch(/<html/i);
    // Air-gapped: the reference's script comes from this origin (the console's static
    // assets), never from a CDN, and no web fonts are fetched.
    expect(r.body).toContain('<script src="/vendor/scalar-api-reference.js">');
    expect(r.body).not.toMatch(/<script[^>]+src="https?:/);
    const init = await callFresh("GET", "/api/docs/init.js");
    expect(init.body).toContain('"url":"/api/openapi.json"');
    expect(init.body).toContain('"withDefaultFonts":false');
    expect(init.body).toContain('"agent":{"disabled":true}');
  });
});
