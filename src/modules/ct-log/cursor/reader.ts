/**
 * Reads a range of a log in order, at the speed of the log (its politeness: requests
 * per second, requests in flight, 429 pauses, all in the client's PoliteFetcher)
 * rather than at the speed of the consumer.
 *
 * The range is cut into the log's request units (a data tile, a get-entries page).
 * Up to `window` units are requested at once: the PoliteFetcher lets `concurrency` of
 * them go out and queues the rest, so the log is asked for the next unit as soon as a
 * place frees up, also while the consumer is busy verifying and publishing a batch.
 * At most `window` units are held (in flight or read and not yet taken), so memory
 * stays bounded when the consumer is slower than the log. Units are handed to the
 * consumer strictly in order. A short answer (a get-entries server returning fewer
 * entries than asked) leaves a hole that is requested next, before anything further.
 *
 * The consumer may stop at any time (budget spent, verification failed, the log asked
 * for a pause): the requests not yet sent are then dropped through an AbortSignal
 * (they do not spend the log's rate after the run), those in flight are aborted, and
 * their results and failures are ignored.
 */
import type { LogClient, LogEntry } from "../log-client/types";

interface Unit {
  start: number;
  end: number;
  result: Promise<LogEntry[]>;
}

export async function* readInOrder(client: LogClient, from: number, to: number, treeSize: number, window: number): AsyncGenerator<LogEntry[]> {
  const stop = new AbortController();
  const queue: Unit[] = [];
  let planned = from;
  const request = (start: number, end: number): Unit => {
    const result = client.fetchRange(start, end, treeSize, stop.signal);
    result.catch(() => undefined); // a dropped unit's failure is nobody's concern
    return { start, end, result };
  };
  const fill = () => {
    while (queue.length < window && planned < to) {
      const end = Math.min(to, client.unitEnd(planned, treeSize));
      queue.push(request(planned, end));
      planned = end;
    }
  };
  try {
    fill();
    while (queue.length) {
      const unit = queue.shift()!;
      const entries = await unit.result;
      const got = unit.start + entries.length;
      if (entries.length === 0 || entries[0].index !== unit.start || got > unit.end) {
        throw new Error(`log answered entries ${entries[0]?.index}..${got - 1} for ${unit.start}..${unit.end - 1}`);
      }
      // The rest of a short answer comes first.
      if (got < unit.end) queue.unshift(request(got, unit.end));
      fill();
      yield entries;
    }
  } finally {
    stop.abort(new Error("the reader stopped"));
  }
}
