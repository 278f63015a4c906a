import type { Context } from "hono";
import type { Bindings, Config } from "../env";
import type { Db } from "../db/client";
import type { Permission } from "./permissions";
import { unauthorized, type ApiError } from "./errors";
import { tenantDb, type Tenant } from "./tenant";

/** Who is calling: resolved once per request from the bearer by `authenticate`. */
export interface Principal {
  kind: "session" | "api_token";
  organizationId: number;
  userId: number;
  userEmail: string;
  isSignupUser: boolean;
  /** API token id (kind api_token) or null. */
  tokenId: number | null;
  /** Session row id (kind session) or null. */
  sessionId: number | null;
  /** Session: the user's role permissions. API token: its scopes that the user still holds. */
  permissions: ReadonlySet<Permission>;
  /** When the presented credential (session or API token) expires, ISO 8601. */
  expiresAt: string;
  /**
   * A session of a member who must enroll a second factor before anything else (the
   * organization requires one): only routes declared `duringMfaEnrollment` answer it.
   */
  mfaEnrollmentRequired: boolean;
}

/** A scanner agent authenticated by its `tpa_` token (docs/modules/cert-watcher.md). */
export interface AgentPrincipal {
  agentId: number;
  organizationId: number;
}

export interface AuditNote {
  /** Instead of the route's action (e.g. a sign-in that needs its second factor yet). */
  action?: string;
  organizationId?: number;
  userId?: number | null;
  targetType?: string;
  targetId?: string | number | null;
}

export type AppEnv = {
  Bindings: Bindings;
  Variables: {
    config: Config;
    db: Db;
    principal: Principal | undefined;
    /** A scanner agent (its `tpa_` token), for the agent endpoints only. */
    agent: AgentPrincipal | undefined;
    /** Why the bearer was rejected, raised only when the route needs a principal. */
    authFailure: ApiError | undefined;
    /** Handlers may refine what the audit log records about their call. */
    audit: AuditNote | undefined;
    clientIp: string | null;
    /** The request's clock (src/platform/clock.ts): read it instead of `new Date()`. */
    now: Date;
    /** The caller's organization handle, built on first use by `tenantOf`. */
    tenant: Tenant | undefined;
  };
};

export type AppContext = Context<AppEnv>;

export function principalOf(c: AppContext): Principal {
  const p = c.get("principal");
  if (!p) throw c.get("authFailure") ?? unauthorized();
  return p;
}

/** The data-access handle of the caller's organization (src/platform/tenant.ts). */
export function tenantOf(c: AppContext): Tenant {
  let t = c.get("tenant");
  if (!t) {
    t = tenantDb(c.get("db"), principalOf(c).organizationId);
    c.set("tenant", t);
  }
  return t;
}
