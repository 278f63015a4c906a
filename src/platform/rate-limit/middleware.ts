/**
 * Rate limiting middleware: charges each request to its organization's and its
 * token's buckets in the OrgGate Durable Object (anonymous calls: to the client
 * IP), answers 429 with Retry-After when empty, and puts RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset on every response (docs/security.md#rate-limits-and-login-throttling).
 * Scanner agents are charged to their organization, each agent with its own bucket.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../errors";
import type { BucketSpec, GateDecision } from "./buckets";

export const rateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limits = c.get("config").rateLimit;
  const principal = c.get("principal");
  const agent = c.get("agent");
  let gateName: string;
  let specs: BucketSpec[];
  if (agent) {
    // Scanner agents spend their organization's allowance, each with its own bucket.
    gateName = `org:${agent.organizationId}`;
    specs = [
      { key: "org", perMinute: limits.orgPerMinute },
      { key: `agent:${agent.agentId}`, perMinute: limits.tokenPerMinute },
    ];
  } else if (principal) {
    gateName = `org:${principal.organizationId}`;
    const credential = principal.tokenId !== null ? `token:${principal.tokenId}` : `session:${principal.sessionId}`;
    specs = [
      { key: "org", perMinute: limits.orgPerMinute },
      { key: credential, perMinute: limits.tokenPerMinute },
    ];
  } else {
    gateName = `ip:${c.get("clientIp") ?? "unknown"}`;
    specs = [{ key: "ip", perMinute: limits.anonymousPerMinute }];
  }
  const gate = c.env.ORG_GATE.get(c.env.ORG_GATE.idFromName(gateName));
  const decision: GateDecision = await gate.take(specs);
  const headers = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(decision.resetSeconds),
  };
  if (!decision.allowed) {
    throw new ApiError("rate_limited", "Too many requests; retry later", undefined, {
      ...headers,
      "Retry-After": String(Math.max(1, decision.retryAfterSeconds)),
    });
  }
  await next();
  for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
};
