/**
 * Single sign-on enforcement: a member whose email domain is a verified domain of the
 * organization's identity provider, with `enforce` on, signs in through the provider
 * only, except the one break-glass administrator the configuration names.
 */
import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { ssoConnections, ssoDomains } from "../../../db/schema/identity";
import { emailDomain } from "../email";

export async function passwordRefusedBySso(db: Db, user: { id: number; organizationId: number; email: string }): Promise<boolean> {
  const row = await db
    .select({ enforce: ssoConnections.enforce, breakGlassUserId: ssoConnections.breakGlassUserId })
    .from(ssoConnections)
    .innerJoin(
      ssoDomains,
      and(eq(ssoDomains.organizationId, ssoConnections.organizationId), eq(ssoDomains.domain, emailDomain(user.email)), isNotNull(ssoDomains.verifiedAt)),
    )
    .where(eq(ssoConnections.organizationId, user.organizationId))
    .get();
  return !!row?.enforce && row.breakGlassUserId !== user.id;
}

export const SSO_REQUIRED_MESSAGE = "Your organization signs you in through its identity provider: use “Sign in with SSO” (GET /api/auth/sso/start?email=...)";
