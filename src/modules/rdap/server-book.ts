/**
 * Politeness state of the RDAP servers during one poll: loaded from D1 at the start
 * (`rdap_server_backoff`), consulted before each lookup, advanced by each answer
 * (politeness.ts decides how), and written back once at the end: only the servers
 * whose state moved.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rdapServerBackoff, type RdapCheckStatus } from "../../db/schema/rdap";
import { FRESH_SERVER, nextServerState, serverBlocked, serverKey, type ServerState } from "./politeness";

export class ServerBook {
  private readonly dirty = new Set<string>();

  private constructor(private readonly servers: Map<string, ServerState>) {}

  static async load(db: Db): Promise<ServerBook> {
    const servers = new Map<string, ServerState>();
    for (const row of await db.select().from(rdapServerBackoff).all()) {
      servers.set(row.server, { notBefore: Date.parse(row.notBefore) || 0, reason: row.reason as RdapCheckStatus, consecutiveFailures: row.consecutiveFailures });
    }
    return new ServerBook(servers);
  }

  stateOf(baseUrl: string): ServerState {
    return this.servers.get(serverKey(baseUrl)) ?? FRESH_SERVER;
  }

  blocked(baseUrl: string, nowMs: number): boolean {
    return serverBlocked(this.stateOf(baseUrl), nowMs);
  }

  /** Advances the server's state by one lookup's outcome; returns the new state. */
  observe(baseUrl: string, outcome: RdapCheckStatus, nowMs: number, retryAfterSeconds: number | null): ServerState {
    const key = serverKey(baseUrl);
    const current = this.stateOf(baseUrl);
    const after = nextServerState(current, outcome, nowMs, retryAfterSeconds);
    if (after !== current) {
      this.servers.set(key, after);
      this.dirty.add(key);
    }
    return after;
  }

  /** Writes the servers whose state moved; a server that answers again and owes no wait needs no row. */
  async save(db: Db, nowMs: number): Promise<void> {
    if (!this.dirty.size) return;
    const updatedAt = new Date(nowMs).toISOString();
    const stmts = [...this.dirty].map((server) => {
      const s = this.servers.get(server)!;
      if (s.consecutiveFailures === 0 && s.notBefore <= nowMs) return db.delete(rdapServerBackoff).where(eq(rdapServerBackoff.server, server));
      const values = { notBefore: new Date(s.notBefore).toISOString(), reason: s.reason ?? "server_error", consecutiveFailures: s.consecutiveFailures, updatedAt };
      return db.insert(rdapServerBackoff).values({ server, ...values }).onConflictDoUpdate({ target: rdapServerBackoff.server, set: values });
    });
    await db.batch(stmts as [(typeof stmts)[number], ...(typeof stmts)[number][]]);
    this.dirty.clear();
  }
}
