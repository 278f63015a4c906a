/**
 * AlertState: one Durable Object per organization. The rules of alert evaluation
 * live in src/modules/alerting/processor.ts; this object gives them what must be
 * per organization and serialized:
 *  - the AlertProcessor with its caches (compiled rules, compiled lists),
 *  - durable memory for throttling and de-duplication (this object's storage),
 *  - delivery of fired alerts: its alarm runs the due deliveries with backoff.
 */
import { DurableObject } from "cloudflare:workers";
import { backgroundD1 } from "../src/db/background";
import { createDb } from "../src/db/client";
import { loadConfig, type Bindings } from "../src/env";
import type { ModuleName } from "../src/modules/alerting/cel/variables";
import type { AlertStateRpc, BatchProcessResult, ProcessResult, SuppressionPreview } from "../src/modules/alerting/alert-state-contract";
import { deliverDue } from "../src/modules/alerting/delivery";
import { AlertProcessor, DEDUP_TTL_MS, MAX_THROTTLE_MS, summarize, type AlertMemory, type Remembered } from "../src/modules/alerting/processor";

/** Storage reads and writes take at most 128 keys at a time. */
const KEYS_PER_CALL = 128;

export class AlertState extends DurableObject<Bindings> implements AlertStateRpc {
  private readonly processor = new AlertProcessor(() => createDb(backgroundD1(this.env.DB)));
  private delivery: Promise<unknown> = Promise.resolve();

  private readonly memory: AlertMemory = {
    getMany: async (keys) => {
      const out = new Map<string, Remembered>();
      for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
        // Entries written before alert ids were remembered are a bare time.
        for (const [k, v] of await this.ctx.storage.get<Remembered | number>(keys.slice(i, i + KEYS_PER_CALL))) out.set(k, typeof v === "number" ? { at: v, alertId: null } : v);
      }
      return out;
    },
    putMany: async (entries) => {
      const all = [...entries];
      for (let i = 0; i < all.length; i += KEYS_PER_CALL) await this.ctx.storage.put(Object.fromEntries(all.slice(i, i + KEYS_PER_CALL)));
    },
  };

  /** Called by the API after a list or rule change: the next event sees it. */
  async invalidate(what: "lists" | "rules"): Promise<void> {
    this.processor.invalidate(what);
  }

  async preview(module: ModuleName, rule: { id: number; throttleSeconds: number }, event: Record<string, unknown>, nowMs = Date.now()): Promise<SuppressionPreview> {
    return this.processor.preview(this.memory, module, rule, event, nowMs);
  }

  async process(organizationId: number, module: ModuleName, event: Record<string, unknown>, nowMs = Date.now()): Promise<ProcessResult> {
    const [result] = await this.processor.process(this.memory, organizationId, module, [{ event }], nowMs);
    if (result.fired.length || result.resolved.length) await this.afterFiring(organizationId, nowMs);
    return result;
  }

  async processBatch(organizationId: number, module: ModuleName, events: { id?: string; event: Record<string, unknown> }[], nowMs = Date.now()): Promise<BatchProcessResult> {
    const results = await this.processor.process(this.memory, organizationId, module, events, nowMs);
    const summary = summarize(results);
    if (summary.fired.length || summary.resolved.length) await this.afterFiring(organizationId, nowMs);
    return summary;
  }

  async wake(organizationId: number): Promise<void> {
    await this.afterFiring(organizationId, Date.now());
  }

  private async afterFiring(organizationId: number, nowMs: number) {
    await this.ctx.storage.put("organizationId", organizationId);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > nowMs) await this.ctx.storage.setAlarm(nowMs);
  }

  /**
   * Runs due deliveries for this organization. Runs are chained: D1 reads do not
   * close the object's input gate, so without the chain an alarm and an explicit
   * call could pick the same pending rows and send twice.
   */
  async deliverNow(organizationId: number, nowMs?: number) {
    const run = this.delivery.then(async () => {
      await this.ctx.storage.put("organizationId", organizationId);
      const r = await deliverDue(createDb(backgroundD1(this.env.DB)), loadConfig(this.env), organizationId, new Date(nowMs ?? Date.now()));
      if (r.nextDueAt) await this.ctx.storage.setAlarm(Math.max(Date.parse(r.nextDueAt), Date.now() + 1000));
      return r;
    });
    this.delivery = run.catch(() => undefined);
    return run;
  }

  override async alarm() {
    const organizationId = await this.ctx.storage.get<number>("organizationId");
    if (organizationId !== undefined) await this.deliverNow(organizationId);
    await this.pruneMemory(Date.now());
  }

  /** Forgets what no longer suppresses anything: de-duplication after 24 h, throttling after the longest throttle. */
  private async pruneMemory(nowMs: number) {
    // "evt:" is the event-level de-duplication memory of earlier versions.
    for (const [prefix, ttl] of [["dup:", DEDUP_TTL_MS], ["evt:", DEDUP_TTL_MS], ["thr:", MAX_THROTTLE_MS]] as const) {
      const entries = await this.ctx.storage.list<Remembered | number>({ prefix });
      const stale = [...entries].filter(([, v]) => nowMs - (typeof v === "number" ? v : v.at) >= ttl).map(([k]) => k);
      for (let i = 0; i < stale.length; i += KEYS_PER_CALL) await this.ctx.storage.delete(stale.slice(i, i + KEYS_PER_CALL));
    }
  }
}
