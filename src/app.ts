/**
 * Builds the Hono app: configuration and database per request, body limit,
 * authentication, rate limiting, then one router per module. Errors from
 * anywhere become the one error body here (docs/decisions.md#errors-and-validation).
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { bodyLimit } from "hono/body-limit";
import { createDb } from "./db/client";
import { loadConfig } from "./env";
import { authenticate, connectAgentResolver } from "./platform/auth";
import { browserHardening } from "./platform/browser-hardening";
import { clientAddress } from "./platform/client-ip";
import { CLOCK_HEADER, requestNow } from "./platform/clock";
import type { AppEnv } from "./platform/context";
import { ApiError, badRequest, ERROR_CODES, ERROR_STATUS, validationError } from "./platform/errors";
import { rateLimit } from "./platform/rate-limit/middleware";
import { registerAdminRoutes } from "./modules/admin/routes";
import { registerAlertingRoutes } from "./modules/alerting/routes";
import { registerCertWatcherRoutes } from "./modules/cert-watcher/routes";
import { registerListRoutes } from "./modules/lists/routes";
import { registerCtLogRoutes } from "./modules/ct-log/routes";
import { registerAuthRoutes } from "./modules/auth/routes";
import { registerSystemRoutes } from "./modules/system/routes";
import { registerTokenRoutes } from "./modules/tokens/routes";
import { registerRdapRoutes } from "./modules/rdap/routes";
import { registerDnsWatcherRoutes } from "./modules/dns-watcher/routes";
import { registerReportRoutes } from "./modules/reports/routes";
import { registerInventory } from "./modules/inventory/routes";
import { isForeignKeyViolation } from "./platform/db-errors";
import { connectUsageCounters } from "./platform/quotas";
import { resolveAgent } from "./modules/cert-watcher/agents";
import { certMonitorUsage } from "./modules/cert-watcher/monitor-service";
import { connectDeploymentObserver } from "./modules/cert-watcher/deployment-contract";
import { ctFilterUsage } from "./modules/ct-log/filter-service";
import { connectIssuanceLifecycle } from "./modules/ct-log/lifecycle-contract";
import { dnsDomainUsage } from "./modules/dns-watcher/domain-service";
import { daneScanObserver } from "./modules/dns-watcher/email/served";
import { deploymentObserver, issuanceLifecycle } from "./modules/inventory/lifecycle";
import { ruleListUsage } from "./modules/lists/service";
import { rdapMonitorUsage } from "./modules/rdap/service";

export const MAX_BODY_BYTES = 1024 * 1024;

function errorResponse(err: ApiError): Response {
  return new Response(JSON.stringify(err.body()), {
    status: err.status,
    headers: { "content-type": "application/json; charset=utf-8", ...err.headers },
  });
}

/**
 * The modules' connections to the platform and to each other, in this one place (no file
 * connects anything by being imported): who counts each quota resource, who resolves a
 * scanner agent's token, who hears of accepted scans (the DNS watcher's DANE check of
 * mail servers, the inventory) and of certificates the CT fan-out publishes (the
 * inventory). Every Worker entry point of this bundle (HTTP, Cron, queue, the Durable
 * Objects) runs after `createApp()` in src/index.ts has called it.
 */
export function connectModules(): void {
  connectUsageCounters({ ct_filters: ctFilterUsage, rdap_monitors: rdapMonitorUsage, cert_monitors: certMonitorUsage, dns_domains: dnsDomainUsage, rule_lists: ruleListUsage });
  connectAgentResolver(resolveAgent);
  connectDeploymentObserver(daneScanObserver);
  connectDeploymentObserver(deploymentObserver);
  connectIssuanceLifecycle(issuanceLifecycle);
}

export function createApp() {
  connectModules();
  const app = new OpenAPIHono<AppEnv>({
    // zod failures of params, query or body: 400 validation_error with per-field details.
    defaultHook: (result, _c) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });

  // First, so the error and 404 handlers' answers carry the headers too.
  app.use("*", browserHardening);
  app.use("*", async (c, next) => {
    const config = loadConfig(c.env);
    c.set("config", config);
    c.set("db", createDb(c.env.DB));
    c.set("now", requestNow(c.env.ALLOW_CLOCK_OVERRIDE, c.req.header(CLOCK_HEADER)));
    c.set("clientIp", clientAddress(c.req.raw.headers, config));
    await next();
  });
  app.use("/api/*", authenticate);
  app.use("/api/*", rateLimit);
  // After the rate limiter, so a 413 carries the RateLimit-* headers like every response.
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError("payload_too_large", `Request body exceeds ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );

  registerSystemRoutes(app);
  registerAuthRoutes(app);
  registerTokenRoutes(app);
  registerAdminRoutes(app);
  registerListRoutes(app);
  registerAlertingRoutes(app);
  registerCtLogRoutes(app);
  registerCertWatcherRoutes(app);
  registerRdapRoutes(app);
  registerDnsWatcherRoutes(app);
  registerInventory(app);
  registerReportRoutes(app);

  app.notFound(() => errorResponse(new ApiError("not_found", "No such endpoint")));
  app.onError((err) => {
    if (err instanceof ApiError) return errorResponse(err);
    if (err instanceof HTTPException) {
      // Hono's own validators: malformed JSON, wrong Content-Type.
      if (err.status === 400) return errorResponse(badRequest(err.message || "Malformed request"));
      if (err.status === 413) return errorResponse(new ApiError("payload_too_large", err.message));
      if (err.status === 415) return errorResponse(new ApiError("unsupported_media_type", "Request bodies must be JSON (Content-Type: application/json)"));
      const code = ERROR_CODES.find((k) => ERROR_STATUS[k] === err.status) ?? "internal_error";
      return errorResponse(new ApiError(code, err.message));
    }
    // A concurrent delete removed the parent between lookup and write: it no longer exists.
    if (isForeignKeyViolation(err)) return errorResponse(new ApiError("not_found", "Not found (deleted meanwhile)"));
    console.error("unhandled error", err instanceof Error ? err.stack : err);
    return errorResponse(new ApiError("internal_error", "Internal error"));
  });
  return app;
}
