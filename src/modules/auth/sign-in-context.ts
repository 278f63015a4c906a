import type { AppContext } from "../../platform/context";
import type { SignInContext } from "./service";

/** What a sign-in needs from its request: bindings, database, configuration, clock, client. */
export function signInContext(c: AppContext): SignInContext {
  return { env: c.env, db: c.get("db"), config: c.get("config"), now: c.get("now"), clientIp: c.get("clientIp"), userAgent: c.req.header("user-agent") ?? null };
}
