import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, tenantOf, type AppEnv } from "../../platform/context";
import { body, defineRoute, json } from "../../platform/route";
import * as s from "./schema";
import * as tokens from "./service";

const tags = ["API tokens"];

export const listOwn = defineRoute({
  method: "get", path: "/api/api-tokens", tags, summary: "List your own tokens",
  access: { permission: "api-tokens:view_own_tokens" },
  responses: { 200: json(s.TokenList) },
});

export const listOrg = defineRoute({
  method: "get", path: "/api/api-tokens/org", tags, summary: "List every token of the organization",
  access: { permission: "api-tokens:view_all_tokens" },
  responses: { 200: json(s.OrgTokenList) },
});

export const create = defineRoute({
  method: "post", path: "/api/api-tokens", tags, summary: "Create a token (its value is shown once)",
  description: "Scopes must be held by the caller (403 otherwise). Created with an API token, the new token may not expire after the creating token (403).",
  access: { permission: "api-tokens:create_tokens" },
  audit: { action: "api_token.create", targetType: "api_token" },
  request: { body: body(s.CreateTokenRequest) },
  responses: { 201: json(s.CreateTokenResponse, "Created") },
});

export const revoke = defineRoute({
  method: "delete", path: "/api/api-tokens/{token_id}", tags, summary: "Revoke a token",
  description: "Own tokens need `api-tokens:delete_tokens`; any token of the organization needs `api-tokens:revoke_all_tokens` (another user's token with `delete_tokens` only: 403).",
  access: { anyOf: ["api-tokens:delete_tokens", "api-tokens:revoke_all_tokens"] },
  audit: { action: "api_token.revoke", targetType: "api_token", idParam: "token_id" },
  request: { params: s.TokenIdParam },
  responses: { 200: json(s.RevokeResponse) },
});

export const renew = defineRoute({
  method: "post", path: "/api/api-tokens/{token_id}/renew", tags, summary: "Renew a token with itself",
  description: "Authenticated by the token being renewed; new expiry = now + its original validity days, but never after the current expiry of the API token that created it (if one did). Another credential: 403; an expired or revoked token: 401; a token whose creating token is revoked or expired: 403.",
  access: { authenticated: true },
  audit: { action: "api_token.renew", targetType: "api_token", idParam: "token_id" },
  request: { params: s.TokenIdParam },
  responses: { 200: json(s.RenewResponse) },
});

export function registerTokenRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listOwn, async (c) => c.json({ tokens: await tokens.listOwnTokens(tenantOf(c), principalOf(c), c.get("now")) }, 200));
  app.openapi(listOrg, async (c) => c.json({ tokens: await tokens.listOrganizationTokens(tenantOf(c), c.get("now")) }, 200));
  app.openapi(create, async (c) => c.json(await tokens.createToken(tenantOf(c), principalOf(c), c.req.valid("json"), c.get("now")), 201));
  app.openapi(revoke, async (c) => c.json(await tokens.revokeToken(tenantOf(c), principalOf(c), c.req.valid("param").token_id, c.get("now")), 200));
  app.openapi(renew, async (c) => c.json(await tokens.renewToken(tenantOf(c), principalOf(c), c.req.valid("param").token_id, c.get("now")), 200));
}
