import { z } from "@hono/zod-openapi";
import { pathId } from "../../platform/paging";
import { safeText } from "../../platform/text";
import { MAX_VALIDITY_DAYS } from "./service";

export const CreateTokenRequest = z
  .object({
    name: safeText(100).openapi({ example: "ci-deploy" }),
    validity_days: z.number().int().min(1).max(MAX_VALIDITY_DAYS).openapi({ example: 30 }),
    scopes: z
      .array(z.string())
      .min(1)
      .max(200)
      .openapi({ example: ["rdap:view_monitoring", "ct-log:view_monitoring"], description: "`<module>:<permission>` scopes" }),
  })
  .openapi("CreateTokenRequest");

export const CreateTokenResponse = z
  .object({
    id: z.number().int(),
    token: z.string().openapi({ description: "The full token; returned only here" }),
    name: z.string(),
    token_prefix: z.string(),
    scopes: z.array(z.string()),
    expires_at: z.string(),
    message: z.string(),
  })
  .openapi("CreateTokenResponse");

export const TokenListingItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    token_prefix: z.string().openapi({ example: "tpm_4fG7hJ2k" }),
    scopes: z.array(z.string()),
    validity_days: z.number().int(),
    expires_at: z.string(),
    last_used_at: z.string().nullable().openapi({ description: "May lag by up to 60 seconds" }),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    status: z.enum(["active", "expired", "revoked"]),
  })
  .openapi("TokenListingItem");

export const TokenList = z.object({ tokens: z.array(TokenListingItem) }).openapi("TokenList");
export const OrgTokenList = z
  .object({ tokens: z.array(TokenListingItem.extend({ user_id: z.number().int(), user_email: z.string() })) })
  .openapi("OrganizationTokenList");

export const RevokeResponse = z.object({ message: z.string(), revoked_at: z.string() });
export const RenewResponse = z.object({ message: z.string(), expires_at: z.string() });
export const TokenIdParam = z.object({
  token_id: pathId("token_id"),
});
