/**
 * CtLogCursor: one instance per CT log (named by its LogID), the only reader of that
 * log. The monitor loop (read, verify, match, publish) is src/modules/ct-log/cursor/
 * run.ts; this object gives it what must be per log and serialized:
 *
 *   storage   the log descriptor and options of the last poke, and the cursor record
 *             (verified collapsed Merkle tree, status), in this object's SQLite; the
 *             record is mirrored to D1 (ct_log_states) for GET /api/ct-log/logs
 *   memory    the FilterIndex of every organization's enabled filters and the
 *             TyposquatIndex of the typosquat-enabled eligible ones (rebuilt when
 *             ct_filter_generation moves, checked before every batch, and at least
 *             every minute), the DoH client with its cache, the log client with its
 *             politeness state
 *   alarm     the Cron job's poke records the log and arms the alarm (at the log's
 *             offset in the spread window), so the Cron run never waits on a log; the
 *             alarm runs the loop for up to CT_RUN_SECONDS and, while a backlog
 *             remains, re-arms itself at once
 *   RPC       poke(), status()
 *
 * Verified batches are published to D1 and announced on the EVENTS_QUEUE (one message
 * per organization, src/modules/ct-log/fanout.ts): alert evaluation happens in the
 * queue's consumer, never on this object's time.
 */
import { DurableObject } from "cloudflare:workers";
import { createDb, type Db } from "../src/db/client";
import type { Bindings } from "../src/env";
import { createDohClient, MemoryDnsCache, type DnsResolver } from "../src/platform/dns/doh";
import type { CtLogCursorRpc, CursorOptions, CursorStatus } from "../src/modules/ct-log/cursor-contract";
import { runCursor } from "../src/modules/ct-log/cursor/run";
import { initialStatus, type CursorRecord, type CursorStore } from "../src/modules/ct-log/cursor/state";
import { publishVerified, type PublishedQueue } from "../src/modules/ct-log/fanout";
import { filterGeneration, loadFilterRows, loadTyposquatRows } from "../src/modules/ct-log/filter-source";
import { FilterIndex } from "../src/modules/ct-log/filters/label-index";
import { EntryMatcher } from "../src/modules/ct-log/ingest";
import { Rfc6962Client } from "../src/modules/ct-log/log-client/rfc6962-client";
import { StaticCtClient, originFromSubmissionUrl } from "../src/modules/ct-log/log-client/static-ct-client";
import type { LogClient, SignedTreeHead } from "../src/modules/ct-log/log-client/types";
import type { CtLogDescriptor } from "../src/modules/ct-log/loglist";
import { saveLogState } from "../src/modules/ct-log/store";
import { TyposquatIndex } from "../src/modules/ct-log/typosquat/index";
import { fromBase64 } from "../src/modules/ct-log/wire/bytes";
import { importLogPublicKey } from "../src/modules/ct-log/wire/digitally-signed";

/** Default window over which the logs' runs are spread after each poke. */
const POLL_SPREAD_MS = 30_000;
/** The filter indexes are rebuilt at least this often, even when the generation did not move. */
const INDEX_MAX_AGE_MS = 60_000;

/** A stable delay in [0, spreadMs) from the log id (base64 of SHA-256). */
export function pollOffsetMs(logId: string, spreadMs: number): number {
  if (spreadMs <= 0) return 0;
  let h = 0;
  for (let i = 0; i < logId.length; i++) h = (h * 31 + logId.charCodeAt(i)) >>> 0;
  return h % spreadMs;
}

/**
 * Gives the isolate to other work (API requests share it) between two tiles/ranges: a
 * real timer, not a microtask. Measured with bench:ct-e2e (131,072 entries, npm start
 * without the DevTools inspector, same machine, one run each): 0 ms 10,698 entries/s
 * with /api/health p99 108 ms during ingestion; 1 ms 10,926/s, p99 90 ms; 2 ms 9,036/s,
 * p99 97 ms. (Under the `wrangler dev` CLI, whose inspector slows every subrequest,
 * 0 ms starved the API completely.)
 */
const PAUSE_MS = 1;
const yieldToOthers = () => new Promise<void>((resolve) => setTimeout(resolve, PAUSE_MS));

export class CtLogCursor extends DurableObject<Bindings> implements CtLogCursorRpc {
  private readonly sql: SqlStorage;
  private running: Promise<void> | null = null;
  /** The status of the run under way (position read so far), for status(). */
  private live: Omit<CursorStatus, "inProgress"> | null = null;
  private indexes: { generation: number; builtAt: number; filters: FilterIndex; typosquat: TyposquatIndex } | null = null;
  private resolver: { urls: string; client: DnsResolver } | null = null;
  private client: { key: string; client: LogClient } | null = null;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
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
    const db = createDb(this.env.DB);
    const store: CursorStore = {
      load: async () => this.get<CursorRecord>("record") ?? null,
      save: async (record) => {
        this.put("record", record);
        // The published view; a failure to write it never stops the log.
        await saveLogState(db, record.status, new Date().toISOString()).catch((err) => console.error(`ct-log cursor ${log.description}: log state not recorded: ${String(err)}`));
      },
    };
    const ref = { logId: log.logId, logName: log.description };
    const queue = this.env.EVENTS_QUEUE as unknown as PublishedQueue;
    let more = false;
    try {
      const client = await this.logClient(log, options);
      const resolver = this.dns(options);
      const result = await runCursor({
        log: ref,
        client,
        finalHead: finalTreeHead(log),
        startPosition: options.startPosition,
        store,
        sink: { publish: (b) => publishVerified(db, queue, ref, b.from, b.to, b.observed) },
        matcher: async () => {
          const { filters, typosquat } = await this.filterIndexes(db);
          return new EntryMatcher({ log: ref, index: filters, typosquat, resolver });
        },
        ahead: options.concurrency,
        budgetMs: options.runBudgetMs,
        // The scheduler's clock of the last poke: backoff is judged against the later of it and ours.
        now: new Date(Math.max(Date.now(), this.get<number>("clock") ?? 0)),
        clock: () => Date.now(),
        pause: yieldToOthers,
        onProgress: (s) => (this.live = s),
      });
      more = result.more;
      if (result.status.lastError) {
        // A fresh client next time: nothing it cached from a failed run is reused.
        this.client = null;
        // Say it when it starts failing (and every 10th failure), not at every retry.
        const n = result.status.consecutiveFailures;
        if (n === 1 || n % 10 === 0) console.error(`ct-log cursor ${log.description}: ${result.status.lastError} (failure ${n}, next try ${result.status.backoffUntil})`);
      }
    } catch (err) {
      // Only the store or the environment can fail here (runCursor records log failures).
      console.error(`ct-log cursor ${log.description}: ${String(err)}`);
    }
    // A backlog remains: read on at once, in a fresh invocation (its own time and CPU limits).
    if (more) await this.ctx.storage.setAlarm(Date.now());
  }

  private async logClient(log: CtLogDescriptor, options: CursorOptions): Promise<LogClient> {
    const key = `${log.protocol} ${log.readUrl} ${log.key} ${options.batchSize} ${options.requestsPerSecond} ${options.concurrency}`;
    if (this.client?.key === key) return this.client.client;
    const publicKey = await importLogPublicKey(log.key);
    // 429/5xx/timeouts are retried within the run (and pause every request to the log);
    // an unreachable host (DNS, refused) is left to the cursor's own backoff across runs.
    const politeness = {
      requestsPerSecond: options.requestsPerSecond,
      concurrency: options.concurrency,
      maxRetries: 3,
      maxNetworkRetries: 0,
      baseBackoffMs: 500,
      maxBackoffMs: 10_000,
      timeoutMs: 20_000,
    };
    const client: LogClient =
      log.protocol === "static-ct"
        ? new StaticCtClient({
            monitoringUrl: log.readUrl,
            key: publicKey,
            origin: log.submissionUrl ? originFromSubmissionUrl(log.submissionUrl) : undefined,
            // Events need no issuer certificates (cert.issuer comes from the certificate itself).
            resolveIssuers: false,
            ...politeness,
          })
        : new Rfc6962Client({ baseUrl: log.readUrl, key: publicKey, batchSize: options.batchSize, ...politeness });
    this.client = { key, client };
    return client;
  }

  private dns(options: CursorOptions): DnsResolver {
    const urls = options.dohResolverUrls.join(",");
    if (this.resolver?.urls !== urls) {
      this.resolver = { urls, client: createDohClient({ resolverUrls: options.dohResolverUrls, cache: new MemoryDnsCache() }) };
    }
    return this.resolver.client;
  }

  /** Every organization's enabled filters, rebuilt when any filter changed since the last batch. */
  private async filterIndexes(db: Db): Promise<{ filters: FilterIndex; typosquat: TyposquatIndex }> {
    const generation = await filterGeneration(db);
    const now = Date.now();
    if (!this.indexes || generation !== this.indexes.generation || now - this.indexes.builtAt >= INDEX_MAX_AGE_MS) {
      const filters = new FilterIndex();
      for (const row of await loadFilterRows(db)) {
        try {
          filters.add(row);
        } catch {
          // A pattern stored before a stricter parser: skip it rather than stop the log.
        }
      }
      this.indexes = { generation, builtAt: now, filters, typosquat: TyposquatIndex.from(await loadTyposquatRows(db)) };
    }
    return this.indexes;
  }
}

/** A read-only log's final tree head, from the signed log list: it is read up to there and no further. */
function finalTreeHead(log: CtLogDescriptor): SignedTreeHead | undefined {
  const final = log.state?.name === "readonly" ? log.state.finalTreeHead : undefined;
  if (!final) return undefined;
  return { treeSize: final.treeSize, timestamp: Date.parse(log.state!.timestamp) || 0, rootHash: fromBase64(final.sha256RootHash) };
}
