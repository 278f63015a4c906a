import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { sql } from "drizzle-orm";
import type { AppEnv } from "../../platform/context";
import { ApiError } from "../../platform/errors";
import { defineRoute, json } from "../../platform/route";

export const health = defineRoute({
  method: "get", path: "/api/health", tags: ["Service"], summary: "Liveness with a database check",
  access: { public: true },
  responses: {
    200: json(z.object({ status: z.literal("ok"), database: z.literal("ok") }).openapi("Health")),
    503: json(z.object({ status: z.literal("error"), database: z.literal("unavailable") }), "Database unavailable"),
  },
});

/** Where the static assets serve the API reference's script (see scripts/build-web.mjs). */
export const API_REFERENCE_SCRIPT = "/vendor/scalar-api-reference.js";

export const OPENAPI_INFO = {
  openapi: "3.1.0",
  info: {
    title: "Trust-Plane API",
    version: "0.1.0",
    description: [
      "Monitoring of the trust infrastructure of an organization's domains: Certificate Transparency, DNS, RDAP and TLS deployments, with CEL alert rules.",
      "",
      "Authentication: `Authorization: Bearer <token>` with an API token (`tpm_...`, scoped, expiring) or a login session (`tps_...`).",
      "Every route states the permission it requires (`x-required-permission`). Errors always have the body",
      '`{"success": false, "error": {"code", "message", "details"?}}`. Every response carries `RateLimit-Limit`,',
      "`RateLimit-Remaining` and `RateLimit-Reset` (token buckets per organization and per token); 429 adds `Retry-After`.",
      "Request bodies over 1 MiB are rejected with 413. Unknown JSON fields are ignored.",
    ].join("\n"),
  },
  servers: [{ url: "/" }],
};

export function registerSystemRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(health, async (c) => {
    try {
      await c.get("db").run(sql`SELECT 1`);
    } catch {
      return c.json({ status: "error" as const, database: "unavailable" as const }, 503);
    }
    return c.json({ status: "ok" as const, database: "ok" as const }, 200);
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "API token (tpm_...) or session token (tps_...)",
  });
  app.doc31("/api/openapi.json", OPENAPI_INFO);
  // The reference's script ships with the console's static assets (scripts/build-web.mjs
  // copies it from the @scalar/api-reference package): no CDN, no web fonts, so the
  // page works air-gapped. Its AI agent (which calls Scalar's servers) is turned off.
  app.get(
    "/api/docs",
    Scalar({ url: "/api/openapi.json", pageTitle: "Trust-Plane API", cdn: API_REFERENCE_SCRIPT, withDefaultFonts: false, agent: { disabled: true } }),
  );
  // Keep /api/openapi.json and /api/docs out of the 404 handler's way.
  app.get("/api", (c) => c.json({ name: "trust-plane", docs: "/api/docs", openapi: "/api/openapi.json" }));
  void ApiError;
}
