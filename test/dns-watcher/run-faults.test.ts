/**
 * A scheduled DNS run against resolvers that fail: one that never answers (the circuit
 * breaker opens and questions fail over to the next resolver; the run's deadline ends
 * the DNS work and leaves what is left due), and answers that are truncated, oversize or
 * not DNS at all (lookup errors, never a change). The fake DoH resolver of the fixture
 * hub plays the resolvers (fake-doh.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, signup, unique } from "../helpers";
import { rowCount } from "../rdap/poll-helpers";
import { fakeResolver, fakeZone } from "./fake-doh";
import { forgetWatchedDomains, runWatch, watchDomain } from "./lab";

const E = env as any;

interface DomainRow {
  id: number;
  last_checked_at: string | null;
  last_check_status: string | null;
  last_check_detail: string | null;
}
const domainRows = async (): Promise<DomainRow[]> =>
  (await E.DB.prepare("SELECT id, last_checked_at, last_check_status, last_check_detail FROM dns_domains ORDER BY id").all()).results;
beforeEach(forgetWatchedDomains);

const storedValues = async () => (await E.DB.prepare("SELECT id, values_json FROM dns_record_sets ORDER BY id").all()).results;

describe("a run against a resolver that hangs", () => {
  it("the circuit opens after a few timeouts, every question fails over to the second resolver, and the run ends within a bound", async () => {
    const org = await signup();
    const domains = Array.from({ length: 10 }, (_, i) => `h${i}-${unique()}.test`);
    const hanging = await fakeResolver([], { fail: "timeout" });
    const working = await fakeResolver(domains.flatMap((d) => fakeZone(d)));
    for (const d of domains) await watchDomain(org, d);

    // 70 questions, 8 in flight, 1 s per attempt: without the breaker each question costs
    // 3 attempts on the hanging resolver (about 3.6 s with backoff) before the failover, about 30 s in all.
    const run = await runWatch({ resolverUrls: [hanging.url, working.url], timeoutMs: 1_000, breakAfterFailures: 8 });
    expect(run.ms).toBeLessThan(8_000);
    expect(run.summary, JSON.stringify(run.summary)).toMatchObject({ due_domains: 10, distinct_queries: 70, lookup_errors: 0, unresolved_domains: 0, changes: 0 });
    expect((await domainRows()).map((d) => d.last_check_status)).toEqual(Array(10).fill("ok"));
    // The hanging resolver got the first wave only; after that it was not asked during the run.
    expect((await hanging.log()).length).toBeLessThanOrEqual(12);
    expect((await working.log()).length).toBeGreaterThanOrEqual(70);
  });

  it("the run's deadline ends the DNS work: domains not resolved by then stay due, nothing is recorded as a change", async () => {
    const org = await signup();
    const domains = Array.from({ length: 5 }, (_, i) => `d${i}-${unique()}.test`);
    const working = await fakeResolver(domains.flatMap((d) => fakeZone(d)));
    for (const d of domains) await watchDomain(org, d);
    const t0 = Date.now() + 3_600_000;
    await runWatch({ resolverUrls: [working.url], intervalSeconds: 600 }, t0);
    const baseline = await storedValues();

    // Every domain is due again; the only resolver hangs and the breaker is off: the deadline must end the run.
    const hanging = await fakeResolver([], { fail: "timeout" });
    const run = await runWatch({ resolverUrls: [hanging.url], intervalSeconds: 600, timeoutMs: 1_000, breakAfterFailures: 0, runDeadlineMs: 2_500 }, t0 + 601_000);
    expect(run.ms).toBeLessThan(5_000);
    expect(run.summary).toMatchObject({ due_domains: 5, changes: 0, unconfirmed: 0 });
    // The first 8 questions (the first domain's 7 and one of the second) were asked and timed out: the
    // first domain is checked with its lookup errors; the others were not resolved and are left as they were.
    expect(run.summary.unresolved_domains).toBe(4);
    const rows = await domainRows();
    expect(rows[0]).toMatchObject({ last_checked_at: new Date(t0 + 601_000).toISOString(), last_check_status: "error" });
    expect(rows[0].last_check_detail).toMatch(/^[\w.-]+ A: no answer from DoH resolver 127\.0\.0\.1:\d+ in time;/);
    for (const r of rows.slice(1)) expect(r).toMatchObject({ last_checked_at: new Date(t0).toISOString(), last_check_status: "ok" });
    expect(await storedValues()).toEqual(baseline);
    expect(await rowCount("dns_history")).toBe(0);

    // So the next run resolves them (they are due), not the one just checked.
    const next = await runWatch({ resolverUrls: [working.url], intervalSeconds: 600 }, t0 + 602_000);
    expect(next.summary).toMatchObject({ due_domains: 4, unresolved_domains: 0, changes: 0 });
    expect(await rowCount("dns_history")).toBe(0);
  });
});

describe("answers that cannot be used", () => {
  it("a timeout, a truncated message, oversize record sets and a body larger than any DNS message are lookup errors, classified, never a change", async () => {
    const org = await signup();
    const domain = `f${unique()}.test`;
    const id = await watchDomain(org, domain);
    const working = await fakeResolver(fakeZone(domain));
    await runWatch({ resolverUrls: [working.url] });
    const baseline = await storedValues();

    for (const [fail, error, errorClass] of [
      ["timeout", /^no answer from DoH resolver 127\.0\.0\.1:\d+ in time$/, "timeout"],
      ["truncated", /^unusable answer from DoH resolver 127\.0\.0\.1:\d+: malformed DNS message: /, "protocol"],
      ["oversize", /^unusable answer from DoH resolver 127\.0\.0\.1:\d+: (TXT record of 5000 bytes|120 \w+ records exceed 100)/, "protocol"],
      ["huge", /^unusable answer from DoH resolver 127\.0\.0\.1:\d+: answered more than 65535 bytes$/, "protocol"],
    ] as const) {
      const faulty = await fakeResolver(fakeZone(domain), { fail });
      const run = await runWatch({ resolverUrls: [faulty.url], timeoutMs: 300, breakAfterFailures: 0 });
      expect(run.summary, fail).toMatchObject({ lookup_errors: 7, changes: 0, unresolved_domains: 0 });
      const d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
      expect(d.last_check_status, fail).toBe("error");
      for (const r of d.records) {
        expect(r.last_error, `${fail} ${r.name} ${r.type}`).toMatch(error);
        expect(r.collection.error, `${fail} ${r.name} ${r.type}`).toEqual({ class: errorClass, message: r.last_error });
      }
      expect(d.collection.error.class, fail).toBe(errorClass);
      expect(await storedValues(), fail).toEqual(baseline);
    }
    const back = await runWatch({ resolverUrls: [working.url] });
    expect(back.summary).toMatchObject({ lookup_errors: 0, changes: 0 });
    expect(await rowCount("dns_history")).toBe(0);
    expect(await rowCount("dns_change_facts")).toBe(0);
  });
});

describe("a domain whose run resolved nothing", () => {
  it("is retried after 1 minute, then 2, then 4, never later than its regular check; once resolved, the regular interval again", async () => {
    const org = await signup();
    const domain = `retry-${unique()}.test`;
    const id = await watchDomain(org, domain);
    const down = [`http://127.0.0.1:${E.REFUSING_PORT}/dns-query`];
    const hour = { intervalSeconds: 3600, breakAfterFailures: 1 };
    const collection = async () => (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.collection;
    const t0 = Date.now() + 7_200_000;
    const at = (ms: number) => new Date(t0 + ms).toISOString();

    await runWatch({ ...hour, resolverUrls: down }, t0);
    expect(await collection()).toMatchObject({ state: "pending", consecutive_failures: 1, last_attempt_at: at(0), next_attempt_at: at(60_000), error: { class: "connect" } });
    // Not due before its retry time, due at it.
    expect((await runWatch({ ...hour, resolverUrls: down }, t0 + 59_000)).summary.due_domains).toBe(0);
    expect((await runWatch({ ...hour, resolverUrls: down }, t0 + 60_000)).summary.due_domains).toBe(1);
    expect(await collection()).toMatchObject({ state: "failing", consecutive_failures: 2, failing_since: at(0), next_attempt_at: at(180_000) });
    expect((await runWatch({ ...hour, resolverUrls: down }, t0 + 179_000)).summary.due_domains).toBe(0);
    await runWatch({ ...hour, resolverUrls: down }, t0 + 180_000);
    expect(await collection()).toMatchObject({ consecutive_failures: 3, next_attempt_at: at(420_000) });

    const working = await fakeResolver(fakeZone(domain));
    await runWatch({ ...hour, resolverUrls: [working.url] }, t0 + 420_000);
    expect(await collection()).toMatchObject({ state: "ok", consecutive_failures: 0, error: null, next_attempt_at: at(420_000 + 3_600_000) });
    expect((await runWatch({ ...hour, resolverUrls: [working.url] }, t0 + 480_000)).summary.due_domains).toBe(0);
  });
});
