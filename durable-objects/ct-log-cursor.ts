/**
 * CtLogCursor: one instance per CT log (named by its LogID). It owns the log's
 * ingestion state and is the only writer of it:
 *
 *   state        the log descriptor and options (from the last poke), the
 *                VerifiedIngestion trees (current = next entry to fetch, verified
 *                = last position checked against a signed tree head), the last
 *                verified tree head, the target tree head of a backlog in progress
 *                (kept until reached, so the unverified window never moves), backoff
 *                and counters (all in this object's SQLite storage)
 *   pending      observations (matches) derived from entries past the verified
 *                position: not yet trusted, never written to D1
 *   memory       the FilterIndex of every organization's enabled filters and the
 *                TyposquatIndex of their typosquat-enabled eligible ones (both rebuilt
 *                when ct_filter_generation moves, checked before every batch), the
 *                DoH client with its cache, the log client
 *
 * Driven by the Cron Trigger (ct-log.poke_cursors pokes every monitored log each
 * run) through its alarm: a poke only records the log and options and sets the
 * alarm to now, so the Cron run never waits on a log (a Worker invocation has few
 * simultaneous connections; 60 logs read inline would serialize). The alarm does
 * the reading, and re-arms itself (1 s) while a backlog remains.
 *
 * Commit protocol (no entry skipped or processed twice, across crashes):
 *   progress  (tree not yet at the tree head's size): pending observations + the
 *             advanced trees, in ONE SQLite transaction of this object.
 *   verified  (root matched): 1. D1: every pending + new observation, idempotent
 *             (unique per organization/log/index); 2. events of (match, filter)
 *             rows not yet emitted (marked after emitting); 3. this object's
 *             transaction: drop pending, store the trees and the tree head.
 *             A crash before 3 replays the same range: D1 inserts nothing new and
 *             only unemitted events are emitted (at-least-once).
 *   mismatch  pending dropped and the trees rewound, in one transaction: nothing
 *             derived from the unverified entries ever reaches D1 or an alert.
 */
import { DurableObject } from "cloudflare:workers";
import { createDb, type Db } from "../src/db/client";
import type { Bindings } from "../src/env";
import { createDohClient, MemoryDnsCache, type DnsResolver } from "../src/modules/dns/doh";
import { emitEvent } from "../src/modules/alerting/emit";
import { loadFilterRows, loadTyposquatRows, filterGeneration } from "../src/modules/ct-log/filter-source";
import { TyposquatIndex } from "../src/modules/ct-log/typosquat/index";
import { FilterIndex } from "../src/modules/ct-log/filters/label-index";
import { EntryMatcher, type LogRef, type ObservedEntry } from "../src/modules/ct-log/ingest";
import type { CtLogDescriptor } from "../src/modules/ct-log/loglist";
import { Rfc6962Client } from "../src/modules/ct-log/log-client/rfc6962-client";
import { StaticCtClient, originFromSubmissionUrl } from "../src/modules/ct-log/log-client/static-ct-client";
import { rfc6962TreeAt, staticCtTreeAt } from "../src/modules/ct-log/log-client/start-tree";
import type { LogClient, SignedTreeHead } from "../src/modules/ct-log/log-client/types";
import { VerifiedIngestion } from "../src/modules/ct-log/log-client/verified-ingestion";
import { commitObservations, emitPendingEvents } from "../src/modules/ct-log/store";
import { fromBase64, toBase64 } from "../src/modules/ct-log/wire/bytes";
import { importLogPublicKey } from "../src/modules/ct-log/wire/digitally-signed";

export interface CursorOptions {
  /** Entries per fetch (CT_BATCH_SIZE). */
  batchSize: number;
  /** Where a log never seen before starts (CT_START_POSITION). */
  startPosition: "end" | "start";
  dohResolverUrls: string[];
  /** Entries per run before yielding to the alarm (default 16 batches). */
  maxEntriesPerRun?: number;
  /** Each log's runs start at a stable offset within this window after a poke (CT_POLL_SPREAD_SECONDS). */
  pollSpreadMs?: number;
}

export interface CursorStatus {
  logId: string;
  logName: string;
  /** Next entry to fetch (null before the first run). */
  position: number | null;
  verifiedPosition: number | null;
  /** Size of the last verified tree head. */
  treeSize: number | null;
  backlog: number;
  lastRunAt: string | null;
  lastError: string | null;
  lastMismatch: { treeSize: number; signedRoot: string; computedRoot: string; at: string } | null;
  consecutiveFailures: number;
  backoffUntil: string | null;
  /** Entries whose results were committed (pending or verified): each entry counts once across restarts. */
  entriesProcessed: number;
  matchesFound: number;
  /** Completed runs. */
  runs: number;
  /** A run is under way in this instance (not persisted). */
  inProgress: boolean;
}

interface StoredHead {
  treeSize: number;
  timestamp: number;
  rootHash: string;
}

interface Persisted {
  log?: CtLogDescriptor;
  options?: CursorOptions;
  ingestion?: unknown;
  head?: StoredHead;
  /**
   * The tree head a backlog is being read towards. It stays the target until the
   * tree reaches it, so the unverified window is one tree head, not a moving one.
   */
  target?: StoredHead;
  status?: CursorStatus;
  /** The scheduler's clock at the last poke (ms): backoff is judged against max(now, clock). */
  clock?: number;
}

const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 3600_000;
/** While a backlog remains, the alarm brings the cursor back this soon. */
const BACKLOG_ALARM_MS = 1_000;
/** Default window over which the logs' runs are spread after each poke. */
const POLL_SPREAD_MS = 30_000;

/** A stable delay in [0, spreadMs) from the log id (base64 of SHA-256). */
export function pollOffsetMs(logId: string, spreadMs: number): number {
  if (spreadMs <= 0) return 0;
  let h = 0;
  for (let i = 0; i < logId.length; i++) h = (h * 31 + logId.charCodeAt(i)) >>> 0;
  return h % spreadMs;
}

export class CtLogCursor extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;
  private running: Promise<CursorStatus> | null = null;
  private index: FilterIndex | null = null;
  /** Protected domains of typosquat-enabled filters: rebuilt with `index`, on the same generation. */
  private typosquat: TyposquatIndex | null = null;
  private indexGeneration = -1;
  private resolver: { urls: string; client: DnsResolver } | null = null;
  private client: { key: string; client: LogClient } | null = null;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS cursor_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS pending_observations (log_index INTEGER PRIMARY KEY, observation TEXT NOT NULL)");
  }

  // ---- RPC --------------------------------------------------------------------

  /** Called by the Cron job every run: remembers the log and options, then reads what is due. */
  async poke(log: CtLogDescriptor, options: CursorOptions, nowMs: number = Date.now()): Promise<CursorStatus> {
    this.put({ log, options, clock: nowMs });
    // Each log reads at its own stable offset after the Cron run (derived from its id),
    // so the logs of a deployment do not all open connections in the same instant.
    const at = Date.now() + pollOffsetMs(log.logId, options.pollSpreadMs ?? POLL_SPREAD_MS);
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > at) await this.ctx.storage.setAlarm(at);
    return this.currentStatus(this.load());
  }

  async status(): Promise<CursorStatus> {
    return this.currentStatus(this.load());
  }

  override async alarm(): Promise<void> {
    await this.run(Math.max(Date.now(), this.load().clock ?? 0));
  }

  // ---- storage ----------------------------------------------------------------

  private load(): Persisted {
    const out: Record<string, unknown> = {};
    for (const row of this.sql.exec<{ key: string; value: string }>("SELECT key, value FROM cursor_state")) out[row.key] = JSON.parse(row.value);
    return out as Persisted;
  }

  private put(values: Persisted): void {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) continue;
      this.sql.exec("INSERT INTO cursor_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", k, JSON.stringify(v));
    }
  }

  private pending(): ObservedEntry[] {
    return [...this.sql.exec<{ observation: string }>("SELECT observation FROM pending_observations ORDER BY log_index")].map(
      (r) => JSON.parse(r.observation) as ObservedEntry,
    );
  }

  private currentStatus(p: Persisted): CursorStatus {
    const base: CursorStatus = p.status ?? {
      logId: p.log?.logId ?? "",
      logName: p.log?.description ?? "",
      position: null,
      verifiedPosition: null,
      treeSize: null,
      backlog: 0,
      lastRunAt: null,
      lastError: null,
      lastMismatch: null,
      consecutiveFailures: 0,
      backoffUntil: null,
      entriesProcessed: 0,
      matchesFound: 0,
      runs: 0,
      inProgress: false,
    };
    return { ...base, runs: base.runs ?? 0, inProgress: this.running !== null, logId: p.log?.logId ?? base.logId, logName: p.log?.description ?? base.logName };
  }

  // ---- the run ------------------------------------------------------------------

  /** `nowMs`: the scheduler's clock (the Cron Trigger's scheduled time), used for backoff decisions. */
  private run(nowMs: number): Promise<CursorStatus> {
    // One run at a time: a poke arriving during an alarm run (or vice versa) joins it.
    this.running ??= this.runOnce(new Date(nowMs)).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runOnce(now: Date): Promise<CursorStatus> {
    const p = this.load();
    if (!p.log || !p.options) return this.currentStatus(p);
    const log = p.log;
    const options = p.options;
    const status = this.currentStatus(p);
    if (status.backoffUntil && Date.parse(status.backoffUntil) > now.getTime()) {
      status.runs += 1; // a run that found the cursor backing off
      this.put({ status });
      return status;
    }
    status.lastRunAt = now.toISOString();

    const db = createDb(this.env.DB);
    const ref: LogRef = { logId: log.logId, logName: log.description };
    let backlog = false;
    try {
      const client = await this.logClient(log, options);
      let ingestion: VerifiedIngestion | null = p.ingestion ? VerifiedIngestion.fromJSON(p.ingestion) : null;
      const head =
        p.target && ingestion && p.target.treeSize > ingestion.position ? fromStored(p.target) : await this.treeHead(log, client);
      if (!ingestion) {
        ingestion = await this.startingPoint(log, client, head, options);
        this.put({ ingestion: ingestion.toJSON(), head: storedHead(head) });
      }
      const budget = options.maxEntriesPerRun ?? options.batchSize * 16;
      let processed = 0;
      for (;;) {
        const index = await this.filterIndex(db);
        const matcher = new EntryMatcher({ log: ref, index, typosquat: this.typosquat ?? undefined, resolver: this.dns(options) });
        const verifiedBefore = ingestion.verifiedPosition;
        const step = await ingestion.step(client, head, Math.min(options.batchSize, budget - processed));
        if (step.kind === "up-to-date") break;
        if (step.kind === "mismatch") {
          // Nothing derived from the unverified entries survives.
          this.ctx.storage.transactionSync(() => {
            this.sql.exec("DELETE FROM pending_observations");
            this.sql.exec("DELETE FROM cursor_state WHERE key = 'target'");
            this.put({ ingestion: ingestion!.toJSON() });
          });
          status.lastMismatch = { treeSize: step.treeSize, signedRoot: step.signedRoot, computedRoot: step.computedRoot, at: now.toISOString() };
          throw new Error(
            `tree head of size ${step.treeSize} does not match the entries served (signed root ${step.signedRoot}, computed ${step.computedRoot}); rewound to ${step.rewoundTo}`,
          );
        }
        const observed = await matcher.observe(step.entries);
        processed += step.entries.length;
        // Counted with the commit that makes them durable, so a crash never counts an entry twice.
        const counted = (): CursorStatus => ({
          ...status,
          entriesProcessed: status.entriesProcessed + step.entries.length,
          matchesFound: status.matchesFound + observed.length,
        });
        if (step.kind === "progress") {
          const next = counted();
          this.ctx.storage.transactionSync(() => {
            for (const o of observed) {
              this.sql.exec("INSERT OR REPLACE INTO pending_observations (log_index, observation) VALUES (?, ?)", o.logIndex, JSON.stringify(o));
            }
            this.put({ ingestion: ingestion!.toJSON(), status: next, target: storedHead(head) });
          });
          status.entriesProcessed = next.entriesProcessed;
          status.matchesFound = next.matchesFound;
          if (processed >= budget) {
            backlog = true;
            break;
          }
          continue;
        }
        // verified: D1 first (idempotent), events, then our own commit.
        const all = [...this.pending(), ...observed];
        await commitObservations(db, ref, all);
        await emitPendingEvents(db, ref, verifiedBefore, step.position, (org, event) => emitEvent(this.env, "ct-log", org, event as unknown as Record<string, unknown>));
        const next = counted();
        this.ctx.storage.transactionSync(() => {
          this.sql.exec("DELETE FROM pending_observations");
          this.sql.exec("DELETE FROM cursor_state WHERE key = 'target'");
          this.put({ ingestion: ingestion!.toJSON(), head: storedHead(step.treeHead), status: next });
        });
        status.entriesProcessed = next.entriesProcessed;
        status.matchesFound = next.matchesFound;
        break;
      }
      status.lastError = null;
      status.consecutiveFailures = 0;
      status.backoffUntil = null;
      status.position = ingestion.position;
      status.verifiedPosition = ingestion.verifiedPosition;
      status.treeSize = head.treeSize;
      status.backlog = Math.max(0, head.treeSize - ingestion.position);
    } catch (err) {
      // A fresh client next time: nothing it cached (the last data tile) from a failed run is reused.
      this.client = null;
      status.lastError = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      status.consecutiveFailures += 1;
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (status.consecutiveFailures - 1));
      status.backoffUntil = new Date(now.getTime() + delay).toISOString();
      // Say it when it starts failing (and every 10th failure), not at every retry.
      if (status.consecutiveFailures === 1 || status.consecutiveFailures % 10 === 0) {
        console.error(`ct-log cursor ${log.description}: ${status.lastError} (failure ${status.consecutiveFailures}, next try ${status.backoffUntil})`);
      }
    }
    status.runs += 1;
    this.put({ status });
    if (backlog) await this.ctx.storage.setAlarm(Date.now() + BACKLOG_ALARM_MS);
    return status;
  }

  /** A log's starting tree: entry 0, or (CT_START_POSITION=end) its verified tree at the current size. */
  private async startingPoint(log: CtLogDescriptor, client: LogClient, head: SignedTreeHead, options: CursorOptions): Promise<VerifiedIngestion> {
    if (options.startPosition === "start") return VerifiedIngestion.fromStart();
    const tree = client instanceof StaticCtClient ? await staticCtTreeAt(client, head) : await rfc6962TreeAt(client as Rfc6962Client, head);
    return VerifiedIngestion.fromVerifiedTree(tree);
  }

  /** The latest signed tree head; a read-only log's final tree head (from the signed log list) instead. */
  private async treeHead(log: CtLogDescriptor, client: LogClient): Promise<SignedTreeHead> {
    const final = log.state?.name === "readonly" ? log.state.finalTreeHead : undefined;
    if (final) return { treeSize: final.treeSize, timestamp: Date.parse(log.state!.timestamp) || 0, rootHash: fromBase64(final.sha256RootHash) };
    return client.getTreeHead();
  }

  private async logClient(log: CtLogDescriptor, options: CursorOptions): Promise<LogClient> {
    const key = `${log.protocol} ${log.readUrl} ${log.key} ${options.batchSize}`;
    if (this.client?.key === key) return this.client.client;
    const publicKey = await importLogPublicKey(log.key);
    // 429/5xx/timeouts are retried within the run; an unreachable host (DNS, refused)
    // is left to the cursor's own backoff across runs instead of being hammered now.
    const politeness = { maxRetries: 3, maxNetworkRetries: 0, baseBackoffMs: 500, maxBackoffMs: 10_000, timeoutMs: 20_000 };
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
  private async filterIndex(db: Db): Promise<FilterIndex> {
    const generation = await filterGeneration(db);
    if (!this.index || generation !== this.indexGeneration) {
      const index = new FilterIndex();
      for (const row of await loadFilterRows(db)) {
        try {
          index.add(row);
        } catch {
          // A pattern stored before a stricter parser: skip it rather than stop the log.
        }
      }
      this.index = index;
      this.typosquat = TyposquatIndex.from(await loadTyposquatRows(db));
      this.indexGeneration = generation;
    }
    return this.index;
  }
}

function fromStored(h: StoredHead): SignedTreeHead {
  return { treeSize: h.treeSize, timestamp: h.timestamp, rootHash: fromBase64(h.rootHash) };
}

function storedHead(h: SignedTreeHead): StoredHead {
  return { treeSize: h.treeSize, timestamp: h.timestamp, rootHash: toBase64(h.rootHash) };
}
