/**
 * A D1 handle for background work (Cron jobs, the queue consumer, the CT cursors' data
 * port, alert processing and delivery) that lets waiting requests in: before a statement,
 * if this isolate's background work has run for `turnEveryMs` since the event loop last
 * had a turn, it gives the loop one.
 *
 * Why: locally (`npm start`, the tests) workerd runs the API Worker, the D1 database and
 * every Durable Object of that Worker on one thread, and calls between them are not I/O:
 * a chain of D1 statements and object calls runs from one to the next without the thread
 * ever looking at its sockets. A publication of several slices followed by the queue
 * consumer's reads kept incoming requests waiting 150-250 ms (GET /api/health p99 during
 * a CT backlog, `npm run bench:ct-e2e`) although each statement took under 10 ms.
 *
 * Why not a turn before every statement: a turn is a timer, and a workerd timer costs
 * about 1.2 ms even at 0 ms (measured: 2,000 turns 2.3 s, 2,000 `SELECT 1` 2.4 s). A turn
 * per statement doubled the time of statement-bound work; three CI tests that wait for
 * deliveries and a CT restart then ran past their timeouts. Gated, a long chain pays one
 * turn per `turnEveryMs` and a short one (most jobs) nothing.
 *
 * Request handlers keep the plain handle: they are the ones being let in. Deployed, D1 is
 * a remote service and a statement is I/O anyway, so the turns buy nothing there; they
 * cost background work at most one timer per `turnEveryMs` of statements.
 */

/** How long background work may hold the thread between two turns by default. */
export const TURN_EVERY_MS = 4;

/** When this isolate's background work last gave the event loop a turn (ms since epoch). */
let lastTurnAt = 0;

/** One turn of the event loop: pending I/O (incoming requests) is handled before we go on. */
const eventLoopTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Resolves at once while the gate is closed, after a turn when it is open. workerd's
 * clock stands still while code runs and moves on I/O, and a D1 call is I/O to it, so
 * `Date.now()` here measures how long the chain of statements has run.
 */
function turnIfDue(turnEveryMs: number): Promise<void> | undefined {
  if (Date.now() - lastTurnAt < turnEveryMs) return undefined;
  return eventLoopTurn().then(() => {
    lastTurnAt = Date.now();
  });
}

class BackgroundStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly turnEveryMs: number,
  ) {}
  bind(...values: unknown[]): BackgroundStatement {
    return new BackgroundStatement(this.inner.bind(...values), this.turnEveryMs);
  }
  async first<T>(column?: string): Promise<T | null> {
    await turnIfDue(this.turnEveryMs);
    return column === undefined ? this.inner.first<T>() : this.inner.first<T>(column);
  }
  async run<T>(): Promise<D1Result<T>> {
    await turnIfDue(this.turnEveryMs);
    return this.inner.run<T>();
  }
  async all<T>(): Promise<D1Result<T>> {
    await turnIfDue(this.turnEveryMs);
    return this.inner.all<T>();
  }
  async raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    await turnIfDue(this.turnEveryMs);
    return options?.columnNames ? (this.inner.raw<T>({ columnNames: true }) as unknown as Promise<T[]>) : this.inner.raw<T>();
  }
}

class BackgroundD1 {
  constructor(
    private readonly inner: D1Database,
    private readonly turnEveryMs: number,
  ) {}
  prepare(query: string): BackgroundStatement {
    return new BackgroundStatement(this.inner.prepare(query), this.turnEveryMs);
  }
  async batch<T>(statements: BackgroundStatement[]): Promise<D1Result<T>[]> {
    await turnIfDue(this.turnEveryMs);
    return this.inner.batch<T>(statements.map((s) => s.inner));
  }
  async exec(query: string): Promise<D1ExecResult> {
    await turnIfDue(this.turnEveryMs);
    return this.inner.exec(query);
  }
  dump(): Promise<ArrayBuffer> {
    return this.inner.dump();
  }
  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.inner.withSession(constraintOrBookmark);
  }
}

/**
 * The background handle over `d1`: the same database, statement for statement.
 * `turnEveryMs` 0 gives a turn before every statement (the tests use it).
 */
export function backgroundD1(d1: D1Database, turnEveryMs = TURN_EVERY_MS): D1Database {
  return new BackgroundD1(d1, turnEveryMs) as unknown as D1Database;
}
