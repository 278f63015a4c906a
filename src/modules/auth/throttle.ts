/**
 * Login throttling around one attempt: both keys (account, client address) must
 * allow it; the outcome is reported to both. State and serialization: the OrgGate
 * Durable Object; policy and algorithm: src/platform/login-throttle.ts.
 */
import type { Bindings } from "../../env";
import { ApiError } from "../../platform/errors";
import { ACCOUNT_POLICY, ADDRESS_POLICY, loginThrottleKeys, type LoginPolicy } from "../../platform/login-throttle";
import { sha256Hex } from "../../platform/secrets";
import { normalizeEmail } from "./service";

/** Runs `attempt` under the throttle: 429 with Retry-After while a key is locked. */
export async function throttledLogin<R>(env: Bindings, email: string, clientIp: string | null, now: Date, attempt: () => Promise<R>): Promise<R> {
  const keys = loginThrottleKeys(await sha256Hex(normalizeEmail(email)), clientIp);
  const gates: [ReturnType<Bindings["ORG_GATE"]["get"]>, LoginPolicy][] = [
    [env.ORG_GATE.get(env.ORG_GATE.idFromName(keys.account)), ACCOUNT_POLICY],
    [env.ORG_GATE.get(env.ORG_GATE.idFromName(keys.address)), ADDRESS_POLICY],
  ];
  const decisions = await Promise.all(gates.map(([gate, policy]) => gate.beginLogin(policy, now.getTime())));
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length) {
    // A key that did allow counted this attempt; it never ran, so forgive it there.
    await Promise.all(gates.map(([gate, policy], i) => (decisions[i].allowed ? gate.endLogin(policy, "cancelled") : undefined)));
    const wait = Math.max(...refused.map((d) => d.retryAfterSeconds));
    throw new ApiError("rate_limited", `Too many failed logins; retry in ${wait} s`, undefined, { "Retry-After": String(wait) });
  }
  let succeeded = false;
  try {
    const result = await attempt();
    succeeded = true;
    return result;
  } finally {
    await Promise.all(gates.map(([gate, policy]) => gate.endLogin(policy, succeeded ? "succeeded" : "failed")));
  }
}
