/**
 * OrgGate: one instance per organization (plus one per client IP for anonymous
 * calls) holding the rate-limit buckets in memory. Being a Durable Object makes the
 * limit exact across Worker isolates: every request of one organization is
 * serialized through the same bucket state. The algorithm lives in
 * src/platform/rate-limit/buckets.ts.
 *
 * Instances named `login:account:<hash>` / `login:address:<ip>` hold the failed-login
 * state of one key (src/platform/login-throttle.ts) in durable storage, so a lock
 * survives eviction; serializing the attempts makes parallel guesses count one by one.
 */
import { DurableObject } from "cloudflare:workers";
import { decide, type Bucket, type BucketSpec, type GateDecision, type OrgGateRpc } from "../src/platform/rate-limit/buckets";
import { beginAttempt, endAttempt, FRESH_STATE, type AttemptOutcome, type LoginDecision, type LoginPolicy, type LoginState } from "../src/platform/login-throttle";

const LOGIN_STATE = "login";

export class OrgGate extends DurableObject implements OrgGateRpc {
  private buckets = new Map<string, Bucket>();

  async take(specs: BucketSpec[]): Promise<GateDecision> {
    // Drop long-idle buckets so a busy org with many tokens does not grow forever.
    if (this.buckets.size > 10_000) this.buckets.clear();
    return decide(this.buckets, specs, Date.now());
  }

  async beginLogin(policy: LoginPolicy, nowMs: number): Promise<LoginDecision> {
    const current = (await this.ctx.storage.get<LoginState>(LOGIN_STATE)) ?? FRESH_STATE;
    const { state, decision } = beginAttempt(current, policy, nowMs);
    if (state !== current) await this.ctx.storage.put(LOGIN_STATE, state);
    return decision;
  }

  async endLogin(policy: LoginPolicy, outcome: AttemptOutcome): Promise<void> {
    const current = (await this.ctx.storage.get<LoginState>(LOGIN_STATE)) ?? FRESH_STATE;
    const next = endAttempt(current, policy, outcome);
    if (next === FRESH_STATE) await this.ctx.storage.delete(LOGIN_STATE);
    else if (next !== current) await this.ctx.storage.put(LOGIN_STATE, next);
  }
}
