/**
 * Quiet logs for expected failures of outside sources. A resolver or a registry that is
 * down fails every attempt; one line per source and error class per interval, with the
 * number of repeats since the last line, says as much as a stack trace per attempt and
 * keeps the log readable. Unexpected exceptions (faults of this service) keep their stack.
 */
import type { CollectionError } from "./vocabulary";

export const SOURCE_LOG_INTERVAL_MS = 10 * 60_000;

interface Seen {
  lastLoggedAt: number;
  repeats: number;
}

/** Per isolate: enough to keep the log quiet; each isolate says it once per interval. */
const seen = new Map<string, Seen>();
const MAX_KEYS = 5_000;

/**
 * Logs an expected failure of `source` (a host, a log's URL, "DoH resolvers") unless the
 * same source failed with the same class within the interval; then it only counts.
 * Returns whether a line was written.
 */
export function logSourceFailure(source: string, error: CollectionError, nowMs: number = Date.now(), log: (line: string) => void = console.warn): boolean {
  const key = `${source}\u0000${error.class}`;
  const s = seen.get(key);
  if (s && nowMs - s.lastLoggedAt < SOURCE_LOG_INTERVAL_MS) {
    s.repeats++;
    return false;
  }
  const repeats = s?.repeats ?? 0;
  if (!s && seen.size >= MAX_KEYS) seen.clear();
  seen.set(key, { lastLoggedAt: nowMs, repeats: 0 });
  const since = repeats ? ` (${repeats} more since the last line)` : "";
  log(`[source] ${source}: ${error.class}: ${error.message}${since}`);
  return true;
}

/** Logs a fault of the service itself, with its stack: these are bugs to fix. */
export function logUnexpected(context: string, err: unknown, log: (...args: unknown[]) => void = console.error): void {
  log(`[unexpected] ${context}:`, err);
}

/** For tests: forget what was logged. */
export function resetSourceLog(): void {
  seen.clear();
}
