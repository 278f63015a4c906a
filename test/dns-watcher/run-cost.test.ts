/**
 * What a scheduled DNS run costs, against the real DNS lab: DoH queries (counted at the
 * fetch the client uses), D1 statements and rows written (D1's own meta), history rows
 * and events. The run is called directly (the code the Cron Trigger runs) so its summary
 * and its events can be read.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { signup } from "../helpers";
import { rowCount } from "../rdap/poll-helpers";
import { lastRunAt, putZone, runWatch, uniqueZone, watchDomain } from "./lab";

const E = env as any;
const ZONE = (mx: number) =>
  `@ IN A 192.0.2.10\n@ IN AAAA 2001:db8::10\n@ IN MX ${mx} mx1\n@ IN TXT "v=spf1 ip4:192.0.2.0/24 -all"\n@ IN CAA 0 issue "letsencrypt.org"\n_dmarc IN TXT "v=DMARC1; p=reject"\nmx1 IN A 192.0.2.25\n`;

/** The distinct last_success_at of the watched domains. */
async function lastSuccess(): Promise<(string | null)[]> {
  const r = await E.DB.prepare("SELECT DISTINCT last_success_at AS at FROM dns_domains").all();
  return r.results.map((x: { at: string | null }) => x.at);
}

const watch = watchDomain;
const run = (at?: number) => runWatch({}, at);
let clock = 0;

describe("the cost of a scheduled DNS run", () => {
  it("one query per distinct record set, one row per unchanged domain, one confirmation per change, events only for changes", async () => {
    const a = await signup();
    const b = await signup();
    const shared = uniqueZone("c");
    const own = uniqueZone("o");
    await putZone(shared, ZONE(10));
    await putZone(own, ZONE(10));
    await watch(a, shared);
    await watch(b, shared); // the same 7 questions as a's
    await watch(a, own);

    // Baseline: 14 distinct questions for 21 record sets; nothing is a change, no event.
    const first = await run();
    expect(first.summary).toMatchObject({ due_domains: 3, record_sets: 21, distinct_queries: 14, confirmations: 0, changes: 0, lookup_errors: 0 });
    expect(first.requests).toBe(14);
    expect(first.events).toEqual([]);
    expect(await rowCount("dns_history")).toBe(0);

    // Nothing changed: the same 14 queries, one statement, one row per domain, no history.
    const quiet = await run();
    expect(quiet.requests).toBe(14);
    expect(quiet.summary).toMatchObject({ write_statements: 1, rows_written: 3, changes: 0, events_emitted: 0 });
    expect(await rowCount("dns_history")).toBe(0);
    // The same statement records when the data was last collected.
    expect(await lastSuccess()).toEqual([new Date(lastRunAt()).toISOString()]);

    // The shared zone's MX changes: one confirmation query; both organizations get their history item and event.
    await putZone(shared, ZONE(20));
    const changed = await run();
    expect(changed.requests).toBe(15);
    expect(changed.summary).toMatchObject({ confirmations: 1, changes: 2, facts: 2 });
    expect(changed.events.map((e) => [e.domain, e.changed_records.map((r) => `${r.type} ${r.new_values.join(",")}`)])).toEqual([
      [shared, [`MX 20 mx1.${shared}.`]],
      [shared, [`MX 20 mx1.${shared}.`]],
    ]);
    expect(await rowCount("dns_history")).toBe(2);
    expect(await rowCount("dns_change_facts", "kind = 'mx_changed'")).toBe(2);

    // Overlapping runs see the next changes: each is recorded once per domain, and one event per domain goes out,
    // whether the runs have different scheduled times or the same one (a Cron run delivered twice).
    let history = 2;
    clock = lastRunAt();
    for (const [mx, times] of [[30, [clock + 60_000, clock + 120_000]], [40, [clock + 180_000, clock + 180_000]]] as const) {
      clock = times[1];
      await putZone(shared, ZONE(mx));
      const [r1, r2] = await Promise.all(times.map((t) => run(t)));
      history += 2;
      expect(await rowCount("dns_history"), `MX ${mx}`).toBe(history);
      expect(await rowCount("dns_change_facts"), `MX ${mx}`).toBe(history);
      expect(r1.events.length + r2.events.length, `MX ${mx}`).toBe(2);
    }

    // The resolver is unreachable: the run records the errors (status error) and when it
    // checked, but last_success_at keeps the time of the last run that collected the data.
    const collected = await lastSuccess();
    // breakAfterFailures 0: every question is asked, each one a lookup error.
    const down = await runWatch({ resolverUrls: ["http://127.0.0.1:9/dns-query"], timeoutMs: 1000, breakAfterFailures: 0 });
    expect(down.summary).toMatchObject({ due_domains: 3, changes: 0 });
    expect(await lastSuccess()).toEqual(collected);
    const states = await E.DB.prepare("SELECT DISTINCT last_check_status AS s, last_checked_at AS at FROM dns_domains").all();
    expect(states.results).toEqual([{ s: "error", at: new Date(lastRunAt()).toISOString() }]);
  });
});
