import type { Context } from "hono";
import type { Bindings, Config } from "../env";
import type { Db } from "../db/client";
import type { Permission } from "./permissions";
import { unauthorized, type ApiError } from "./errors";
import type { AgentPrincipal } from "./auth";

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
}

export interface AuditNote {
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
  };
};

export type AppContext = Context<AppEnv>;

export function principalOf(c: AppContext): Principal {
  const p = c.get("principal");
  if (!p) throw c.get("authFailure") ?? unauthorized();
  return p;
}
