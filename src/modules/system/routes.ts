import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { cspOf, DOCS_CSP } from "../../platform/browser-hardening";
import type { AppEnv } from "../../platform/context";
import { ApiError } from "../../platform/errors";
import { normalizeDocument } from "../../platform/openapi-document";
import { defineRoute, json, registerErrorResponses } from "../../platform/route";

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
/** The reference's start-up script, a file of its own so the page's CSP needs no inline script. */
export const API_REFERENCE_INIT = "/api/docs/init.js";

/**
 * Scalar's configuration: the document of this origin, no web fonts and no AI agent (it
 * calls Scalar's servers), so the page works air-gapped and talks to this origin only.
 */
const API_REFERENCE_CONFIG = { url: "/api/openapi.json", withDefaultFonts: false, agent: { disabled: true }, _integration: "hono" };

const API_REFERENCE_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <title>Trust-Plane API</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="app"></div>
    <script src="${API_REFERENCE_SCRIPT}"></script>
    <script src="${API_REFERENCE_INIT}"></script>
  </body>
</html>
`;

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

/**
 * The document /api/openapi.json serves and `npm run api:generate` types the console from:
 * the routes' zod declarations, restated so every schema says its type
 * (src/platform/openapi-document.ts).
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  return normalizeDocument(app.getOpenAPI31Document(OPENAPI_INFO as Parameters<typeof app.getOpenAPI31Document>[0]));
}

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
  registerErrorResponses(app.openAPIRegistry);
  // Built on first request, once every module has registered its routes; the routes do not change afterwards.
  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get("/api/openapi.json", (c) => c.json((document ??= openApiDocument(app))));
  // The reference's script ships with the console's static assets (scripts/build-web.mjs
  // copies it from the @scalar/api-reference package): no CDN. The page is written here
  // rather than by @scalar/hono-api-reference, whose page starts Scalar from an inline
  // script that a CSP allowing only this origin's scripts would block.
  app.get("/api/docs", (c) => {
    c.header("Content-Security-Policy", cspOf(DOCS_CSP));
    return c.html(API_REFERENCE_PAGE);
  });
  app.get(API_REFERENCE_INIT, (c) => {
    c.header("content-type", "text/javascript; charset=utf-8");
    return c.body(`Scalar.createApiReference("#app", ${JSON.stringify(API_REFERENCE_CONFIG)});\n`);
  });
  // Keep /api/openapi.json and /api/docs out of the 404 handler's way.
  app.get("/api", (c) => c.json({ name: "trust-plane", docs: "/api/docs", openapi: "/api/openapi.json" }));
  void ApiError;
}
