/**
 * The IANA bootstrap registry as the poller uses it: a BootstrapCache (bootstrap.ts:
 * 24 h refresh, failed refresh keeps the last good copy, bundled copy as last
 * resort) per isolate, seeded from and persisted to D1 (`rdap_bootstrap`) so that
 * every isolate and every restart shares one fetched copy per 24 h rather than
 * downloading the file again.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rdapBootstrap } from "../../db/schema/rdap";
import { BootstrapCache, type BootstrapLookup } from "./bootstrap";

interface Entry {
  cache: BootstrapCache;
  /** The caller of the latest lookup: persistence and the clock follow it, never a stale request's. */
  db: Db;
  now: () => number;
}
const caches = new Map<string, Entry>();

export interface BootstrapStoreOptions {
  fetch?: typeof fetch;
  now?: () => number;
}

/** The bootstrap for `url`: from memory, else D1, else the network, else the bundled copy. */
export async function loadBootstrap(db: Db, url: string, opts: BootstrapStoreOptions = {}): Promise<BootstrapLookup> {
  let entry = caches.get(url);
  if (!entry) {
    const row = await db.select().from(rdapBootstrap).where(eq(rdapBootstrap.url, url)).get();
    const e: Entry = {
      db,
      now: opts.now ?? Date.now,
      cache: new BootstrapCache({
        url,
        fetch: (input, init) => (opts.fetch ?? fetch)(input, init),
        now: () => e.now(),
        initial: row ? { text: row.body, fetchedAt: row.fetchedAt } : undefined,
        onFetched: async (text, fetchedAt) => {
          await e.db
            .insert(rdapBootstrap)
            .values({ url, body: text, fetchedAt })
            .onConflictDoUpdate({ target: rdapBootstrap.url, set: { body: text, fetchedAt } })
            .run();
        },
      }),
    };
    entry = e;
    caches.set(url, entry);
  }
  entry.db = db;
  entry.now = opts.now ?? Date.now;
  return entry.cache.get();
}

/** Forgets the in-memory copies (tests; a configuration change). */
export function resetBootstrapMemory(): void {
  caches.clear();
}
