/**
 * OrgGate: one instance per organization (plus one per client IP for anonymous
 * calls) holding the rate-limit buckets in memory. Being a Durable Object makes the
 * limit exact across Worker isolates: every request of one organization is
 * serialized through the same bucket state. The algorithm lives in
 * src/platform/rate-limit/buckets.ts.
 *
 * Instances named `login:account:<hash>` hold one account's failed sign-in state (its
 * ceiling and one entry per client address), those named `login:address:<ip>` one
 * address's (src/platform/login-throttle.ts), in durable storage, so a lock survives
 * eviction; serializing the attempts makes parallel guesses count one by one. An alarm
 * drops address entries that are neither failing nor known any more.
 */
import { DurableObject } from "cloudflare:workers";
import { decide, type Bucket, type BucketSpec, type GateDecision, type OrgGateRpc } from "../src/platform/rate-limit/buckets";
import {
  beginAttempt,
  beginCeiling,
  ceilingReached,
  endAttempt,
  factorCeilingReached,
  endCeiling,
  FRESH_CEILING,
  FRESH_STATE,
  isWorthKeeping,
  KNOWN_ADDRESS_MS,
  PAIR_POLICY,
  type AccountDecision,
  type AttemptOutcome,
  type CeilingState,
  type LoginDecision,
  type LoginPolicy,
  type LoginState,
  type SignInStep,
} from "../src/platform/login-throttle";

const LOGIN_STATE = "login";
const CEILING = "ceiling";
const PAIR_PREFIX = "pair:";
/** The latest clock an attempt brought (tests move it), for the alarm's pruning. */
const LATEST_NOW = "now";
const PRUNE_EVERY_MS = 6 * 3_600_000;

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

  async endLogin(policy: LoginPolicy, outcome: AttemptOutcome, nowMs: number): Promise<void> {
    const current = (await this.ctx.storage.get<LoginState>(LOGIN_STATE)) ?? FRESH_STATE;
    const next = endAttempt(current, policy, outcome, nowMs);
    if (next.failures === 0 && !next.lastSuccessMs) await this.ctx.storage.delete(LOGIN_STATE);
    else if (next !== current) await this.ctx.storage.put(LOGIN_STATE, next);
  }

  async beginAccountAttempt(address: string, step: SignInStep, nowMs: number): Promise<AccountDecision> {
    const key = PAIR_PREFIX + address;
    const stored = await this.ctx.storage.get<LoginState | CeilingState>([key, CEILING]);
    const pair = (stored.get(key) as LoginState | undefined) ?? FRESH_STATE;
    const ceiling = (stored.get(CEILING) as CeilingState | undefined) ?? FRESH_CEILING;
    const knownAddress = !!pair.lastSuccessMs && nowMs - pair.lastSuccessMs <= KNOWN_ADDRESS_MS;
    const seen = { ceilingReached: ceilingReached(ceiling, nowMs), factorCeilingReached: factorCeilingReached(ceiling, nowMs), knownAddress };
    const { state, decision } = beginAttempt(pair, PAIR_POLICY, nowMs);
    if (!decision.allowed) return { ...decision, ...seen };
    await this.ctx.storage.put<LoginState | CeilingState | number>({ [key]: state, [CEILING]: beginCeiling(ceiling, step, nowMs), [LATEST_NOW]: nowMs });
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
    return { ...decision, ...seen };
  }

  /** Ends an attempt `beginAccountAttempt` allowed; `reportAttack`: this failure took the account to its ceiling. */
  async endAccountAttempt(address: string, step: SignInStep, outcome: AttemptOutcome, nowMs: number): Promise<{ reportAttack: boolean; failures: number; factorFailures: number }> {
    const key = PAIR_PREFIX + address;
    const stored = await this.ctx.storage.get<LoginState | CeilingState>([key, CEILING]);
    const pair = (stored.get(key) as LoginState | undefined) ?? FRESH_STATE;
    const ceiling = (stored.get(CEILING) as CeilingState | undefined) ?? FRESH_CEILING;
    const nextPair = endAttempt(pair, PAIR_POLICY, outcome, nowMs);
    const { state: nextCeiling, report } = endCeiling(ceiling, step, outcome, nowMs);
    await this.ctx.storage.put<LoginState | CeilingState>({ [key]: nextPair, [CEILING]: nextCeiling });
    return { reportAttack: report, failures: nextCeiling.failures, factorFailures: nextCeiling.factorFailures };
  }

  override async alarm(): Promise<void> {
    const nowMs = Math.max(Date.now(), (await this.ctx.storage.get<number>(LATEST_NOW)) ?? 0);
    const pairs = await this.ctx.storage.list<LoginState>({ prefix: PAIR_PREFIX });
    const stale = [...pairs].filter(([, s]) => !isWorthKeeping(s, PAIR_POLICY, nowMs)).map(([k]) => k);
    for (let i = 0; i < stale.length; i += 128) await this.ctx.storage.delete(stale.slice(i, i + 128));
    if (pairs.size > stale.length) await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
  }
}
