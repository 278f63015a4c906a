// Per-target connection budget: at most `maxConcurrent` open probes and at least
// `minIntervalMs` between connection starts, because servers and mail hosts rate-limit scanners.

export interface BudgetOptions {
  maxConcurrent: number;
  minIntervalMs: number;
}

export class ConnectionBudget {
  private active = 0;
  private nextStart = 0;
  private readonly queue: (() => void)[] = [];
  /** Connections opened through this budget (for reports and the benchmark). */
  opened = 0;
  constructor(readonly opts: BudgetOptions) {
    if (!(opts.maxConcurrent >= 1)) throw new RangeError("maxConcurrent must be >= 1");
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.opts.maxConcurrent) await new Promise<void>((res) => this.queue.push(res));
    this.active++;
    try {
      const now = Date.now();
      const start = Math.max(now, this.nextStart);
      this.nextStart = start + this.opts.minIntervalMs;
      if (start > now) await new Promise((r) => setTimeout(r, start - now));
      this.opened++;
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

/** Runs `worker` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<I, O>(items: readonly I[], limit: number, worker: (item: I, index: number) => Promise<O>): Promise<O[]> {
  const out = new Array<O>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await worker(items[i], i);
    }
  });
  await Promise.all(lanes);
  return out;
}
