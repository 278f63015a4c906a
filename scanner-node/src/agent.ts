// Agent mode: lease scan jobs from the Trust-Plane API, scan with bounded concurrency, post
// results. The protocol is the agent/API contract (packages/scan-contract):
//   POST {api}/api/cert-watcher/agents/lease    Bearer <agent token>  LeaseRequest -> LeaseResponse
//   POST {api}/api/cert-watcher/agents/results  PostResultRequest  -> 200, or 409 = already accepted (done)
// Leased jobs are checked against the contract's schema: a job this agent cannot read is
// skipped (its lease expires), never scanned with guessed values.
// SIGINT/SIGTERM: stop leasing, let in-flight scans finish within a grace period, then abandon
// them (their lease expires server-side and the job is handed out again).
import { AGENT_PATHS, LeasedJob, type LeaseRequest, type PostResultRequest, type ScanResult } from "@trust-plane/scan-contract";
import { scanTarget, type ScanOptions } from "./scan";

export type { LeasedJob };

export interface AgentOptions {
  apiUrl: string;
  token: string;
  /** Scans in flight at once (across targets). */
  concurrency?: number;
  /** Wait between empty leases. */
  idleDelayMs?: number;
  /** Time in-flight scans get after a shutdown signal. */
  shutdownGraceMs?: number;
  scan?: ScanOptions;
  fetch?: typeof fetch;
  log?: (msg: string) => void;
  /** Stop after this many leases came back empty (tests, one-pass runs); default: never. */
  maxIdleLeases?: number;
}

export interface AgentStats { leased: number; posted: number; conflicts: number; failedPosts: number; abandoned: number }

export class Agent {
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();
  readonly stats: AgentStats = { leased: 0, posted: 0, conflicts: 0, failedPosts: 0, abandoned: 0 };
  private wakeIdle: (() => void) | null = null;
  private signalStop!: () => void;
  /** Resolves on stop(), so waits for a free slot or an idle period end at once. */
  private readonly stopped = new Promise<void>((r) => { this.signalStop = r; });
  private readonly f: typeof fetch;
  private readonly log: (m: string) => void;

  constructor(readonly opts: AgentOptions) {
    this.f = opts.fetch ?? fetch;
    this.log = opts.log ?? ((m) => console.error(`[scanner-agent] ${m}`));
  }

  /** Requests a graceful stop: no further leases; in-flight scans finish or are abandoned. */
  stop(): void {
    if (!this.stopping) this.log("stopping: no new leases");
    this.stopping = true;
    this.signalStop();
    this.wakeIdle?.();
  }

  private url(path: string) { return this.opts.apiUrl.replace(/\/+$/, "") + path; }
  private headers() { return { authorization: `Bearer ${this.opts.token}`, "content-type": "application/json" }; }

  async lease(max: number): Promise<LeasedJob[]> {
    const request: LeaseRequest = { max_jobs: max };
    const res = await this.f(this.url(AGENT_PATHS.lease), { method: "POST", headers: this.headers(), body: JSON.stringify(request) });
    if (res.status === 401 || res.status === 403) throw new Error(`lease refused: HTTP ${res.status} (agent token invalid or revoked)`);
    if (res.status === 429) {
      // The organization's rate limit: wait as told before leasing again.
      await sleep(retryAfterMs(res, 5_000));
      return [];
    }
    if (!res.ok) throw new Error(`lease failed: HTTP ${res.status}`);
    const body = (await res.json()) as { jobs?: unknown };
    return Array.isArray(body.jobs) ? body.jobs.flatMap((j) => this.readJob(j)) : [];
  }

  /** A leased job as the contract declares it, or nothing (logged) when it does not conform. */
  private readJob(raw: unknown): LeasedJob[] {
    const job = LeasedJob.safeParse(raw);
    if (job.success) return [job.data];
    const id = (raw as { job_id?: unknown } | null)?.job_id;
    this.log(`skipping leased job ${JSON.stringify(id ?? null)}: ${job.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    return [];
  }

  /**
   * Posts a result; retries network errors, 5xx (exponential backoff) and 429 (as long
   * as Retry-After says), so a result is not lost to a busy API. 409 means another post
   * was already accepted: done. Other 4xx are final.
   */
  async postResult(job: LeasedJob, result: ScanResult): Promise<void> {
    const post: PostResultRequest = { job_id: job.job_id, result };
    for (let attempt = 0; attempt < POST_ATTEMPTS; attempt++) {
      let waitMs = Math.min(30_000, 500 * 2 ** attempt);
      try {
        const res = await this.f(this.url(AGENT_PATHS.results), { method: "POST", headers: this.headers(), body: JSON.stringify(post) });
        if (res.ok) { this.stats.posted++; return; }
        if (res.status === 409) { this.stats.conflicts++; return; } // already accepted: done
        if (res.status === 429) waitMs = retryAfterMs(res, waitMs);
        else if (res.status < 500) { this.stats.failedPosts++; this.log(`result for job ${job.job_id} refused: HTTP ${res.status}`); return; }
      } catch (e) {
        this.log(`posting job ${job.job_id} failed: ${(e as Error).message}`);
      }
      await sleep(waitMs);
    }
    this.stats.failedPosts++;
  }

  private async runJob(job: LeasedJob): Promise<void> {
    const result = await scanTarget(
      { host: job.ip_address, port: job.port, sni: job.sni, starttls: job.starttls, rootCaPem: job.root_ca, monitorCn: job.monitor_cn },
      this.opts.scan,
    );
    if (this.stopping && this.abandoning) { this.stats.abandoned++; return; }
    await this.postResult(job, result);
  }
  private abandoning = false;

  /** Runs until stop() (or maxIdleLeases); resolves when in-flight work is settled. */
  async run(): Promise<AgentStats> {
    const concurrency = this.opts.concurrency ?? 20;
    let idle = 0;
    while (!this.stopping) {
      const free = concurrency - this.inFlight.size;
      if (free <= 0) { await Promise.race([...this.inFlight, this.stopped]); continue; }
      let jobs: LeasedJob[] = [];
      try {
        jobs = await this.lease(free);
      } catch (e) {
        this.log((e as Error).message);
      }
      if (this.stopping) break;
      this.stats.leased += jobs.length;
      for (const job of jobs) {
        const p: Promise<void> = this.runJob(job).catch((e) => this.log(`job ${job.job_id}: ${(e as Error).message}`)).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      }
      if (!jobs.length) {
        idle++;
        if (this.opts.maxIdleLeases !== undefined && idle >= this.opts.maxIdleLeases && this.inFlight.size === 0) break;
        await new Promise<void>((res) => { this.wakeIdle = res; setTimeout(res, this.inFlight.size ? 50 : this.opts.idleDelayMs ?? 5000); });
        this.wakeIdle = null;
      } else idle = 0;
    }
    const grace = this.opts.shutdownGraceMs ?? 30_000;
    const settled = Promise.all(this.inFlight).then(() => true);
    const finished = await Promise.race([settled, sleep(grace).then(() => false)]);
    if (!finished) {
      this.abandoning = true;
      this.log(`abandoning ${this.inFlight.size} in-flight scan(s); their leases will expire`);
    }
    return this.stats;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const POST_ATTEMPTS = 6;

/** Retry-After (seconds or HTTP date) in ms, capped at a minute; the fallback when absent. */
function retryAfterMs(res: Response, fallbackMs: number): number {
  const h = res.headers.get("retry-after");
  if (!h) return fallbackMs;
  const seconds = /^\d+$/.test(h.trim()) ? Number(h) : (Date.parse(h) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.min(60_000, Math.max(0, seconds * 1000)) : fallbackMs;
}

/** Agent with SIGINT/SIGTERM wired to a graceful stop (a second signal exits at once). */
export async function runAgentProcess(opts: AgentOptions): Promise<AgentStats> {
  const agent = new Agent(opts);
  let signals = 0;
  const onSignal = (sig: string) => {
    signals++;
    if (signals > 1) process.exit(130);
    opts.log?.(`${sig} received`);
    agent.stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await agent.run();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
