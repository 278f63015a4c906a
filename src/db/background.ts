/**
 * A D1 handle for background work that gives the event loop a turn before each
 * statement. Used by the CT cursors' data port (src/ct-cursor-data.ts).
 *
 * Why: locally (`npm start`, the tests) workerd runs the API Worker, the D1 database and
 * every Durable Object of that Worker on one thread, and calls between them are not I/O:
 * a chain of D1 statements and object calls runs from one to the next without the thread
 * ever looking at its sockets. A publication of several slices followed by the queue
 * consumer's reads kept incoming requests waiting 150-250 ms (GET /api/health p99 during
 * a CT backlog, `npm run bench:ct-e2e`) although each statement took under 10 ms. One
 * timer turn per statement lets waiting requests in between. Deployed, D1 is a remote
 * service and a statement is I/O anyway; the turn costs a timer tick.
 *
 * Request handlers keep the plain handle: they are the ones being let in. The Cron jobs,
 * the queue consumer and AlertState used it too for one commit, which helped the tail
 * more (README, "The API while a backlog is read"), but three CI tests that wait for
 * deliveries and a CT restart then ran past their timeouts; they keep the plain handle
 * until that is understood.
 */

/** One turn of the event loop: pending I/O (incoming requests) is handled before we go on. */
const eventLoopTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

class BackgroundStatement {
  constructor(readonly inner: D1PreparedStatement) {}
  bind(...values: unknown[]): BackgroundStatement {
    return new BackgroundStatement(this.inner.bind(...values));
  }
  async first<T>(column?: string): Promise<T | null> {
    await eventLoopTurn();
    return column === undefined ? this.inner.first<T>() : this.inner.first<T>(column);
  }
  async run<T>(): Promise<D1Result<T>> {
    await eventLoopTurn();
    return this.inner.run<T>();
  }
  async all<T>(): Promise<D1Result<T>> {
    await eventLoopTurn();
    return this.inner.all<T>();
  }
  async raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    await eventLoopTurn();
    return options?.columnNames ? (this.inner.raw<T>({ columnNames: true }) as unknown as Promise<T[]>) : this.inner.raw<T>();
  }
}

class BackgroundD1 {
  constructor(private readonly inner: D1Database) {}
  prepare(query: string): BackgroundStatement {
    return new BackgroundStatement(this.inner.prepare(query));
  }
  async batch<T>(statements: BackgroundStatement[]): Promise<D1Result<T>[]> {
    await eventLoopTurn();
    return this.inner.batch<T>(statements.map((s) => s.inner));
  }
  async exec(query: string): Promise<D1ExecResult> {
    await eventLoopTurn();
    return this.inner.exec(query);
  }
  dump(): Promise<ArrayBuffer> {
    return this.inner.dump();
  }
  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.inner.withSession(constraintOrBookmark);
  }
}

/** The background handle over `d1`: the same database, statement for statement. */
export function backgroundD1(d1: D1Database): D1Database {
  return new BackgroundD1(d1) as unknown as D1Database;
}
