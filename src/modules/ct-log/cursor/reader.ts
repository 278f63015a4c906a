/**
 * Reads a range of a log in order with several requests in flight: the speed of the
 * log (its politeness: requests per second, requests in flight, 429 pauses, all in the
 * client's PoliteFetcher) rather than of one request after another.
 *
 * The range is cut into the log's request units (a data tile, a get-entries page);
 * up to `ahead` units are requested at once, and handed to the consumer strictly in
 * order. A short answer (a get-entries server returning fewer entries than asked)
 * leaves a hole that is requested next, before anything further.
 *
 * The consumer may stop at any time (budget spent, verification failed): requests
 * still in flight are then dropped, their results and failures ignored.
 */
import type { LogClient, LogEntry } from "../log-client/types";

interface Unit {
  start: number;
  end: number;
  result: Promise<LogEntry[]>;
}

export async function* readInOrder(client: LogClient, from: number, to: number, treeSize: number, ahead: number): AsyncGenerator<LogEntry[]> {
  const queue: Unit[] = [];
  let planned = from;
  const request = (start: number, end: number): Unit => {
    const result = client.fetchRange(start, end, treeSize);
    result.catch(() => undefined); // a dropped unit's failure is nobody's concern
    return { start, end, result };
  };
  const fill = () => {
    while (queue.length < ahead && planned < to) {
      const end = Math.min(to, client.unitEnd(planned, treeSize));
      queue.push(request(planned, end));
      planned = end;
    }
  };
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
}
