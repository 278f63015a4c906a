/**
 * CtLogCursor: one instance per CT log (named by its LogID), the only reader of that
 * log. The monitor loop (read, verify, match, publish) is src/modules/ct-log/cursor/
 * run.ts, set up by cursor/resources.ts (log client, filter indexes, DoH client,
 * publication); this object gives it what must be per log and serialized:
 *
 *   storage   the log descriptor and options of the last poke, and the cursor record
 *             (verified collapsed Merkle tree, status), in this object's SQLite
 *   memory    the log's CursorResources, kept between runs
 *   alarm     the Cron job's poke records the log and arms the alarm (at the log's
 *             offset in the spread window), so the Cron run never waits on a log; the
 *             alarm runs the loop for up to CT_RUN_SECONDS and arms the next run: at
 *             once while a backlog remains, at the end of the backoff (or of the pause
 *             the log's Retry-After asked for) while the log backs off
 *   RPC       poke(), status()
 *
 * Verified batches are published to D1 and announced on the EVENTS_QUEUE (one message
 * per published range, src/modules/ct-log/fanout.ts): alert evaluation happens in the
 * queue's consumer, never on this object's time. Deployed in the service's one Worker,
 * this object reaches D1 and the queue directly; run by the ingest Worker
 * (wrangler.ingest.toml, how `npm start` runs it), it has neither and reaches them
 * through its CT_CURSOR_DATA service binding to the API Worker (cursor/data.ts); either
 * way the port is built by serviceCursorData (src/ct-cursor-data.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { logUnexpected } from "../src/platform/collection";
import { serviceCursorData } from "../src/ct-cursor-data";
import type { Bindings } from "../src/env";
import type { CtLogCursorRpc, CursorOptions, CursorStatus } from "../src/modules/ct-log/cursor-contract";
import { CursorResources, pollOffsetMs } from "../src/modules/ct-log/cursor/resources";
import { initialStatus, type CursorRecord, type CursorStore } from "../src/modules/ct-log/cursor/state";
import type { CtLogDescriptor } from "../src/modules/ct-log/loglist";

/** Default window over which the logs' runs are spread after each poke. */
const POLL_SPREAD_MS = 30_000;

export class CtLogCursor extends DurableObject<Bindings> implements CtLogCursorRpc {
  private readonly sql: SqlStorage;
  private readonly resources: CursorResources;
  private running: Promise<void> | null = null;
  /** The status of the run under way (position read so far), for status(). */
  private live: Omit<CursorStatus, "inProgress"> | null = null;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.resources = new CursorResources(env.CT_CURSOR_DATA ?? serviceCursorData(env));
    this.sql.exec("CREATE TABLE IF NOT EXISTS cursor_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    // Left by the previous design (unverified observations were stored): nothing reads it any more.
    this.sql.exec("DROP TABLE IF EXISTS pending_observations");
  }

  // ---- RPC --------------------------------------------------------------------

  /** Called by the Cron job every run: remembers the log and options, then reads what is due. */
  async poke(log: CtLogDescriptor, options: CursorOptions, nowMs: number = Date.now()): Promise<CursorStatus> {
    this.put("log", log);
    this.put("options", options);
    this.put("clock", nowMs);
    // Each log reads at its own stable offset after the Cron run (derived from its id),
    // so the logs of a deployment do not all open connections in the same instant.
    const at = Date.now() + pollOffsetMs(log.logId, options.pollSpreadMs ?? POLL_SPREAD_MS);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > at) await this.ctx.storage.setAlarm(at);
    return this.status();
  }

  async status(): Promise<CursorStatus> {
    const log = this.get<CtLogDescriptor>("log");
    const status = this.live ?? this.get<CursorRecord>("record")?.status ?? initialStatus(log?.logId ?? "", log?.description ?? "");
    return { ...status, inProgress: this.running !== null };
  }

  override async alarm(): Promise<void> {
    // One run at a time: an alarm arriving during a run (after a poke) joins it.
    this.running ??= this.run().finally(() => {
      this.running = null;
      this.live = null;
    });
    await this.running;
  }

  // ---- storage ----------------------------------------------------------------

  private get<T>(key: string): T | undefined {
    const [row] = [...this.sql.exec<{ value: string }>("SELECT value FROM cursor_state WHERE key = ?", key)];
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  private put(key: string, value: unknown): void {
    this.sql.exec("INSERT INTO cursor_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, JSON.stringify(value));
  }

  // ---- the run ------------------------------------------------------------------

  private async run(): Promise<void> {
    const log = this.get<CtLogDescriptor>("log");
    const options = this.get<CursorOptions>("options");
    if (!log || !options) return;
    const store: CursorStore = {
      load: async () => this.get<CursorRecord>("record") ?? null,
      save: async (record) => this.put("record", record),
    };
    let resumeAfterMs: number | null = null;
    try {
      const result = await this.resources.run({
        log,
        options,
        store,
        // The scheduler's clock of the last poke: backoff is judged against the later of it and ours.
        now: new Date(Math.max(Date.now(), this.get<number>("clock") ?? 0)),
        onProgress: (s) => (this.live = s),
      });
      resumeAfterMs = result.resumeAfterMs;
    } catch (err) {
      // Only the store or the environment can fail here (runCursor records log failures): a fault of ours.
      logUnexpected(`ct-log cursor ${log.description}`, err);
    }
    // A backlog remains: read on at once, in a fresh invocation (its own time and CPU limits).
    // Backing off: not before the log may be asked again (a poke may still arm an earlier, idle run).
    if (resumeAfterMs !== null) await this.ctx.storage.setAlarm(Date.now() + resumeAfterMs);
  }
}
