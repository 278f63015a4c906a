/**
 * What a log cursor keeps in memory between runs, and how one run is set up. The
 * host (the CtLogCursor Durable Object) holds one CursorResources per log and hands
 * it its storage and its clock; everything that is CT logic is here:
 *
 *   log client   the log's protocol client with its politeness state (rate, places,
 *                429 pauses), rebuilt when the log or the options change, or after a
 *                failed run (nothing it cached from a failure is reused)
 *   matcher      the FilterIndex of every organization's enabled filters and the
 *                TyposquatIndex of the protected ones, rebuilt when
 *                ct_filter_generation moves (checked before every batch) and at least
 *                every minute; the DoH client (and its cache) for the CAA checks
 *   publication  verified batches go to D1 and the event queue (fanout.ts); every save
 *                of the cursor's record is mirrored to ct_log_states for GET /api/ct-log/logs
 * The filters, the publication and the mirror are reached through the CursorData port
 * (data.ts), so the cursor may run in a Worker without D1.
 */
import { logSourceFailure, logUnexpected } from "../../../platform/collection";
import { createDohClient, MemoryDnsCache, type DnsResolver } from "../../../platform/dns/doh";
import type { CursorOptions } from "../cursor-contract";
import { FilterIndex } from "../filters/label-index";
import { EntryMatcher, type LogRef } from "../ingest";
import { Rfc6962Client } from "../log-client/rfc6962-client";
import { StaticCtClient, originFromSubmissionUrl } from "../log-client/static-ct-client";
import type { PolitenessOptions } from "../log-client/politeness";
import type { LogClient, SignedTreeHead } from "../log-client/types";
import type { CtLogDescriptor } from "../loglist";
import { TyposquatIndex } from "../typosquat/index";
import { TILE_WIDTH } from "../wire/static-ct";
import { fromBase64 } from "../wire/bytes";
import { importLogPublicKey } from "../wire/digitally-signed";
import type { CursorData } from "./data";
import { runCursor, type CursorRunResult } from "./run";
import type { CursorStore } from "./state";

/** The filter indexes are rebuilt at least this often, even when the generation did not move. */
const INDEX_MAX_AGE_MS = 60_000;

/**
 * Retries within a run. 429/5xx/timeouts are retried (and pause every request to the
 * log) with backoff steps of at most 10 s; a Retry-After longer than that ends the run
 * and the log is read again when it said (LogPausedError, run.ts). An unreachable host
 * (DNS, refused) is not retried within the run: the cursor's own backoff across runs
 * handles it.
 */
export const LOG_CLIENT_RETRIES: Omit<PolitenessOptions, "requestsPerSecond" | "concurrency"> = {
  maxRetries: 3,
  maxNetworkRetries: 0,
  baseBackoffMs: 500,
  maxBackoffMs: 10_000,
  timeoutMs: 20_000,
};

/**
 * Entries the reader may hold ahead of the consumer (read, or requested and waiting
 * for a place): enough to go on reading through a commit (a D1 publication and a
 * proof, a few hundred ms) at the rate limit, small enough for the isolate's memory
 * (32 static-ct-api tiles of real certificates are about 16 MB).
 */
export const READ_AHEAD_ENTRIES = 8192;

/** The reader's window in request units: READ_AHEAD_ENTRIES, and never fewer units than the log's places. */
export function readWindow(log: Pick<CtLogDescriptor, "protocol">, options: Pick<CursorOptions, "batchSize" | "concurrency">): number {
  const unit = log.protocol === "static-ct" ? TILE_WIDTH : Math.max(1, options.batchSize);
  return Math.max(options.concurrency, Math.floor(READ_AHEAD_ENTRIES / unit));
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
export const yieldToOthers = () => new Promise<void>((resolve) => setTimeout(resolve, PAUSE_MS));

/** A stable delay in [0, spreadMs) from the log id (base64 of SHA-256): each log's runs start at its own offset. */
export function pollOffsetMs(logId: string, spreadMs: number): number {
  if (spreadMs <= 0) return 0;
  let h = 0;
  for (let i = 0; i < logId.length; i++) h = (h * 31 + logId.charCodeAt(i)) >>> 0;
  return h % spreadMs;
}

/** A read-only log's final tree head, from the signed log list: it is read up to there and no further. */
export function finalTreeHead(log: CtLogDescriptor): SignedTreeHead | undefined {
  const final = log.state?.name === "readonly" ? log.state.finalTreeHead : undefined;
  if (!final) return undefined;
  return { treeSize: final.treeSize, timestamp: Date.parse(log.state!.timestamp) || 0, rootHash: fromBase64(final.sha256RootHash) };
}

/** The log's client with the politeness of the options (CT_REQUESTS_PER_SECOND, CT_CONCURRENCY, CT_LOG_POLITENESS). */
export async function createLogClient(log: CtLogDescriptor, options: CursorOptions): Promise<LogClient> {
  const key = await importLogPublicKey(log.key);
  const politeness: PolitenessOptions = { ...LOG_CLIENT_RETRIES, requestsPerSecond: options.requestsPerSecond, concurrency: options.concurrency };
  return log.protocol === "static-ct"
    ? new StaticCtClient({
        monitoringUrl: log.readUrl,
        key,
        origin: log.submissionUrl ? originFromSubmissionUrl(log.submissionUrl) : undefined,
        // Events need no issuer certificates (cert.issuer comes from the certificate itself).
        resolveIssuers: false,
        ...politeness,
      })
    : new Rfc6962Client({ baseUrl: log.readUrl, key, batchSize: options.batchSize, ...politeness });
}

export interface CursorRunRequest {
  log: CtLogDescriptor;
  options: CursorOptions;
  /** The host's storage of the cursor record. */
  store: CursorStore;
  /** The scheduler's clock (the later of the last poke's and the runtime's): backoff decisions. */
  now: Date;
  /** Live view of the run under way. */
  onProgress?: Parameters<typeof runCursor>[0]["onProgress"];
}

/** One log's cursor resources, kept by its host between runs. */
export class CursorResources {
  private indexes: { generation: number; builtAt: number; filters: FilterIndex; typosquat: TyposquatIndex } | null = null;
  private resolver: { urls: string; client: DnsResolver } | null = null;
  private client: { key: string; client: LogClient } | null = null;

  constructor(private readonly data: CursorData) {}

  /** Reads what is due (runCursor), publishing verified batches and mirroring the record to D1. */
  async run(req: CursorRunRequest): Promise<CursorRunResult> {
    const { log, options } = req;
    const ref: LogRef = { logId: log.logId, logName: log.description };
    const resolver = this.dns(options);
    const result = await runCursor({
      log: ref,
      client: await this.logClient(log, options),
      finalHead: finalTreeHead(log),
      startPosition: options.startPosition,
      store: this.mirrored(req.store, log.description),
      sink: { publish: (b) => this.data.publish(ref, b.from, b.to, b.observed) },
      matcher: async () => {
        const { filters, typosquat } = await this.filterIndexes();
        return new EntryMatcher({ log: ref, index: filters, typosquat, resolver });
      },
      ahead: readWindow(log, options),
      budgetMs: options.runBudgetMs,
      now: req.now,
      clock: () => Date.now(),
      pause: yieldToOthers,
      onProgress: req.onProgress,
    });
    // This run read (or tried to): not one that found the log backing off and left it alone.
    const tried = result.status.lastRunAt === req.now.toISOString();
    if (tried && result.status.lastError) {
      // A fresh client next time: nothing it cached from a failed run is reused.
      this.client = null;
      // An outside failure, expected: one line for all CT logs per error class and interval
      // (platform/collection/log.ts), naming one log and counting the others; with the network
      // down, 71 logs failing are one line every ten minutes, not 71. Each log's own state and
      // error: GET /api/ct-log/logs.
      const s = result.status;
      logSourceFailure("CT logs", {
        class: s.lastErrorClass ?? "internal",
        message: `${s.lastError} (failure ${s.consecutiveFailures} of this log, next try ${s.backoffUntil}; every log's state: GET /api/ct-log/logs)`,
      });
    }
    return result;
  }

  /** The host's store, with every save mirrored to ct_log_states (a failure to mirror never stops the log). */
  private mirrored(store: CursorStore, logName: string): CursorStore {
    return {
      load: () => store.load(),
      save: async (record) => {
        await store.save(record);
        await this.data.saveLogState(record.status, new Date().toISOString()).catch((err) => logUnexpected(`ct-log cursor ${logName}: log state not recorded`, err));
      },
    };
  }

  private async logClient(log: CtLogDescriptor, options: CursorOptions): Promise<LogClient> {
    const key = `${log.protocol} ${log.readUrl} ${log.key} ${options.batchSize} ${options.requestsPerSecond} ${options.concurrency}`;
    if (this.client?.key !== key) this.client = { key, client: await createLogClient(log, options) };
    return this.client.client;
  }

  private dns(options: CursorOptions): DnsResolver {
    const urls = options.dohResolverUrls.join(",");
    if (this.resolver?.urls !== urls) {
      this.resolver = { urls, client: createDohClient({ resolverUrls: options.dohResolverUrls, cache: new MemoryDnsCache() }) };
    }
    return this.resolver.client;
  }

  /** Every organization's enabled filters, rebuilt when any filter changed since the last batch. */
  private async filterIndexes(): Promise<{ filters: FilterIndex; typosquat: TyposquatIndex }> {
    const generation = await this.data.filterGeneration();
    const now = Date.now();
    if (!this.indexes || generation !== this.indexes.generation || now - this.indexes.builtAt >= INDEX_MAX_AGE_MS) {
      const rows = await this.data.filterRows();
      const filters = new FilterIndex();
      for (const row of rows.filters) {
        try {
          filters.add(row);
        } catch {
          // A pattern stored before a stricter parser: skip it rather than stop the log.
        }
      }
      this.indexes = { generation, builtAt: now, filters, typosquat: TyposquatIndex.from(rows.typosquats) };
    }
    return this.indexes;
  }
}
