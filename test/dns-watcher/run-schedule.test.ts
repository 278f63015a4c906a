/**
 * Which domains a run resolves and what it takes for a difference to count: due domains
 * by DNS_CHECK_INTERVAL_SECONDS and the per-run cap, a difference (of values or of the
 * DNSSEC status) that the second query does not confirm, and one it does. The fake DoH
 * resolver of the fixture hub answers (fake-doh.ts): it can alternate between two zones
 * and set the AD bit, which the lab cannot do on cue.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, signup, unique } from "../helpers";
import { rowCount } from "../rdap/poll-helpers";
import { fakeResolver, fakeZone } from "./fake-doh";
import { forgetWatchedDomains, runWatch, watchDomain } from "./lab";

const E = env as any;

beforeEach(forgetWatchedDomains);

const checkedAt = async (): Promise<(string | null)[]> =>
  (await E.DB.prepare("SELECT last_checked_at AS at FROM dns_domains ORDER BY id").all()).results.map((r: { at: string | null }) => r.at);

describe("due domains", () => {
  it("with DNS_CHECK_INTERVAL_SECONDS > 0 only due domains are resolved, least recently checked first; the per-run cap leaves a backlog for the next runs", async () => {
    const org = await signup();
    const names = Array.from({ length: 5 }, (_, i) => `due${i}-${unique()}.test`);
    for (const n of names) await watchDomain(org, n);
    const resolver = await fakeResolver(names.flatMap((n) => fakeZone(n)));
    const settings = { resolverUrls: [resolver.url], intervalSeconds: 600, maxDomainsPerRun: 2 };
    const t0 = Date.now() + 7_200_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();

    expect((await runWatch(settings, t0)).summary.due_domains).toBe(2);
    expect(await checkedAt()).toEqual([at(0), at(0), null, null, null]);
    expect((await runWatch(settings, t0 + 60_000)).summary.due_domains).toBe(2); // the backlog, never checked first
    expect((await runWatch(settings, t0 + 120_000)).summary.due_domains).toBe(1);
    expect(await checkedAt()).toEqual([at(0), at(0), at(60), at(60), at(120)]);
    expect((await runWatch(settings, t0 + 180_000)).summary.due_domains).toBe(0); // none is due
    // 600 s after the first run, the first two are due again, and only they.
    const again = await runWatch(settings, t0 + 600_000);
    expect(again.summary).toMatchObject({ due_domains: 2, changes: 0 });
    expect(await checkedAt()).toEqual([at(600), at(600), at(60), at(60), at(120)]);
  });
});

describe("confirmation by a second query", () => {
  it("a difference the second answer does not repeat is no change, run after run; one it repeats is exactly one change", async () => {
    const org = await signup();
    const domain = `flap-${unique()}.test`;
    const id = await watchDomain(org, domain);
    // The resolver alternates between two answers for every question: only the A set differs.
    const resolver = await fakeResolver(fakeZone(domain, { a: "192.0.2.10" }), { alternate: fakeZone(domain, { a: "203.0.113.66" }) });
    await runWatch({ resolverUrls: [resolver.url] }); // baseline from the first zone
    for (let i = 0; i < 2; i++) {
      const run = await runWatch({ resolverUrls: [resolver.url] });
      expect(run.summary, `run ${i}`).toMatchObject({ confirmations: 1, unconfirmed: 1, changes: 0, events_emitted: 0 });
    }
    const d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(d.records.find((r: any) => r.type === "A").values).toEqual(["192.0.2.10"]);
    expect(await rowCount("dns_history")).toBe(0);

    // The resolver settles on the new address: the next difference is confirmed, once.
    await resolver.set(fakeZone(domain, { a: "203.0.113.66" }));
    expect((await runWatch({ resolverUrls: [resolver.url] })).summary).toMatchObject({ confirmations: 1, unconfirmed: 0, changes: 1, facts: 1 });
    expect((await runWatch({ resolverUrls: [resolver.url] })).summary).toMatchObject({ confirmations: 0, changes: 0 });
    expect(await rowCount("dns_history")).toBe(1);
  });

  it("a DNSSEC status change (validated to insecure) counts only when the second answer says it too", async () => {
    const org = await signup();
    const domain = `sec-${unique()}.test`;
    const id = await watchDomain(org, domain);
    const zone = fakeZone(domain);
    // AD on every answer: validated.
    const resolver = await fakeResolver(zone, { ad: true });
    await runWatch({ resolverUrls: [resolver.url] });
    expect((await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.dnssec_status).toBe("validated");

    // AD comes and goes (answers from `records` have it, from the same `alternate` zone not): never confirmed.
    await resolver.set(zone, { ad: true, alternate: zone });
    await runWatch({ resolverUrls: [resolver.url] }); // every first answer from records (AD): nothing to confirm
    for (let i = 0; i < 3; i++) {
      // Some first answer lacks AD; the witness asked again has it.
      const run = await runWatch({ resolverUrls: [resolver.url] });
      expect(run.summary, `run ${i}`).toMatchObject({ confirmations: 1, unconfirmed: 1, dnssec_changes: 0, events_emitted: 0 });
    }
    expect((await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.dnssec_status).toBe("validated");
    expect(await rowCount("dns_history")).toBe(0);

    // No AD any more, twice in a row: insecure, one history item and one event.
    await resolver.set(zone, { ad: false });
    const run = await runWatch({ resolverUrls: [resolver.url] });
    expect(run.summary).toMatchObject({ confirmations: 1, dnssec_changes: 1, events_emitted: 1 });
    expect(run.events[0].dnssec).toMatchObject({ status: "insecure", previous_status: "validated", validated: false });
    const h = (await call("GET", `/api/dns-watcher/domains/${id}/history`, { token: org.session })).body;
    expect(h.changes.map((c: any) => [c.kind, c.detail])).toEqual([["dnssec", "DNSSEC status validated -> insecure"]]);
    expect((await runWatch({ resolverUrls: [resolver.url] })).summary).toMatchObject({ confirmations: 0, dnssec_changes: 0 });
  });
});
