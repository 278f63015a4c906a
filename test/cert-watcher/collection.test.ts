// Collection state of certificate targets: each scan job is an attempt (answered, abandoned
// by its agent, or never taken), classified into the closed error classes with a message
// naming the address, port and what failed; two failed attempts in a row make a target
// failing, one success makes it ok again; the monitor summarises its targets; the
// organization's agents are said when none scans.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LEASE_SECONDS } from "../../src/modules/cert-watcher/agents";
import { classifyScanError } from "../../src/modules/cert-watcher/collection";
import { call } from "../helpers";
import { agentCall, createMonitor, fireCron, newOrg, registerAgent, result } from "./helpers";

const M = "/api/cert-watcher/monitors";
const HOUR = 3600_000;

/**
 * The test clock: the scheduler's and the requests' (X-Trust-Plane-Now), shared by the tests
 * of this file and only moving forward, as the scheduler needs.
 */
let t = Date.now() + 60_000;
function clock() {
  t += 60_000;
  return {
    at: () => new Date(t),
    advance: (ms: number) => new Date((t += ms)),
    header: () => ({ "x-trust-plane-now": new Date(t).toISOString() }),
  };
}

async function detail(token: string, id: number, headers: Record<string, string> = {}) {
  return (await call("GET", `${M}/${id}`, { token, headers })).body;
}

/** Runs the schedule at the clock, has the agent lease and answer with `answer(ip)`; returns the jobs it leased. */
async function scanRound(c: ReturnType<typeof clock>, agentToken: string, answer: (ip: string) => unknown) {
  await fireCron(c.at(), { SCAN_INTERVAL_SECONDS: "0" });
  const lease = await agentCall("lease", agentToken, { max_jobs: 50 }, c.header());
  for (const job of lease.body.jobs) {
    const r = answer(job.ip_address);
    if (r) expect((await agentCall("results", agentToken, { job_id: job.job_id, result: r }, c.header())).status).toBe(200);
  }
  return lease.body.jobs;
}

describe("certificate target collection", () => {
  it("never scanned and no agent: pending, said so; a refused connection twice: failing (connect); a success: ok again", async () => {
    const c = clock();
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "coll.example.test", ip_addresses: ["192.0.2.61", "192.0.2.62"] });
    const before = await detail(org.session, id, c.header());
    expect(before.scanning).toMatchObject({ agents_registered: 0, agents_seen_recently: 0, note: expect.stringMatching(/No scanner agent is registered/) });
    expect(before.targets[0].collection).toEqual({
      state: "pending", last_attempt_at: null, last_success_at: null, failing_since: null, consecutive_failures: 0, next_attempt_at: null, error: null,
    });
    expect(before.collection.state).toBe("pending");

    // One alert per transition, not per attempt: the rule reads the collection events.
    for (const [name, expression] of [["blind", 'event_type == "collection_failing" && collection.error_class == "connect"'], ["sees again", 'event_type == "collection_recovered"']]) {
      expect((await call("POST", "/api/cert-watcher/alert-rules", { token: org.session, body: { name, expression, severity: "high" } })).status).toBe(201);
    }
    const alerts = async () => (await call("GET", "/api/cert-watcher/alert-history", { token: org.session })).body.alerts.map((a: any) => a.rule_name);
    const agent = await registerAgent(org.session);
    const refused = () => result("refused");
    const first = c.advance(60_000);
    await scanRound(c, agent.token, (ip) => (ip === "192.0.2.61" ? refused() : result("ecdsaTrusted", { daysLeft: 90 })));
    let d = await detail(org.session, id, c.header());
    expect(d.scanning.note).toBeNull();
    // One failed attempt is not yet failing: pending (never collected), with the error said.
    expect(d.targets[0].collection).toMatchObject({
      state: "pending", consecutive_failures: 1, failing_since: first.toISOString(), last_success_at: null,
      error: { class: "connect", message: "TLS scan of 192.0.2.61:443 (coll.example.test): connect to 127.0.0.1:18447 failed: ECONNREFUSED" },
    });
    expect(d.targets[1].collection).toMatchObject({ state: "ok", last_success_at: first.toISOString(), error: null, consecutive_failures: 0 });
    expect(await alerts()).toEqual([]);
    expect(Date.parse(d.targets[1].collection.next_attempt_at)).toBeGreaterThan(first.getTime());

    c.advance(60_000);
    await scanRound(c, agent.token, (ip) => (ip === "192.0.2.61" ? refused() : result("ecdsaTrusted", { daysLeft: 90 })));
    d = await detail(org.session, id, c.header());
    expect(d.targets[0].collection).toMatchObject({ state: "failing", consecutive_failures: 2, failing_since: first.toISOString(), error: { class: "connect" } });
    // The monitor says its worst target: failing since the first failure, with that error.
    expect(d.collection).toMatchObject({ state: "failing", failing_since: first.toISOString(), last_success_at: null, error: { class: "connect" } });
    const list = (await call("GET", `${M}?limit=100`, { token: org.session, headers: c.header() })).body;
    expect(list.monitors.find((m: any) => m.id === id).collection.state).toBe("failing");
    expect(await alerts()).toEqual(["blind"]);
    // A third failure is no new transition: no new alert.
    c.advance(60_000);
    await scanRound(c, agent.token, (ip) => (ip === "192.0.2.61" ? refused() : result("ecdsaTrusted", { daysLeft: 90 })));
    expect(await alerts()).toEqual(["blind"]);

    const back = c.advance(60_000);
    await scanRound(c, agent.token, () => result("ecdsaTrusted", { daysLeft: 90 }));
    d = await detail(org.session, id, c.header());
    expect(d.targets[0].collection).toMatchObject({ state: "ok", consecutive_failures: 0, failing_since: null, error: null, last_success_at: back.toISOString() });
    expect(d.collection).toMatchObject({ state: "ok", error: null, last_success_at: back.toISOString() });
    const history = (await call("GET", "/api/cert-watcher/alert-history", { token: org.session })).body.alerts;
    expect(history.map((a: any) => a.rule_name).sort()).toEqual(["blind", "sees again"]);
    // The stored columns are what the reports read (CollectionRecord).
    const row = await (env as any).DB.prepare("SELECT last_attempt_at, last_success_at, collection_failures, collection_error_class FROM cert_targets WHERE id = ?").bind(d.targets[0].id).first();
    expect(row).toEqual({ last_attempt_at: back.toISOString(), last_success_at: back.toISOString(), collection_failures: 0, collection_error_class: null });

    // Disabled: paused, nothing due.
    await call("PATCH", `${M}/${id}`, { token: org.session, body: { enabled: false } });
    d = await detail(org.session, id, c.header());
    expect(d.collection.state).toBe("paused");
    expect(d.targets[0].collection).toMatchObject({ state: "paused", next_attempt_at: null });
  });

  it("an agent older than error_class: its error text is classified (DNS, timeout, TLS, protocol)", async () => {
    const c = clock();
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "old-agent.example.test", port: 8443, ip_addresses: ["192.0.2.71", "2001:db8::71", "192.0.2.73", "192.0.2.74"] });
    const agent = await registerAgent(org.session);
    const failed = (error: string) => ({ ...result("refused"), error, error_class: undefined });
    const answers: Record<string, unknown> = {
      "192.0.2.71": failed("cannot resolve db.internal.example"),
      "2001:db8::71": failed("connect to [2001:db8::71]:8443 timed out after 5000 ms"),
      "192.0.2.73": failed("server accepted no SSL/TLS version"),
      "192.0.2.74": failed('not a TLS record: "HTTP/1.1 400 Bad Request"'),
    };
    await scanRound(c, agent.token, (ip) => answers[ip]);
    const d = await detail(org.session, id, c.header());
    expect(d.targets.map((t: any) => t.collection.error)).toEqual([
      { class: "dns_resolution", message: "TLS scan of 192.0.2.71:8443 (old-agent.example.test): cannot resolve db.internal.example" },
      { class: "timeout", message: "TLS scan of [2001:db8::71]:8443 (old-agent.example.test): connect to [2001:db8::71]:8443 timed out after 5000 ms" },
      { class: "tls", message: "TLS scan of 192.0.2.73:8443 (old-agent.example.test): server accepted no SSL/TLS version" },
      { class: "protocol", message: 'TLS scan of 192.0.2.74:8443 (old-agent.example.test): not a TLS record: "HTTP/1.1 400 Bad Request"' },
    ]);
    expect(classifyScanError("connect to 127.0.0.1:1 failed: ECONNREFUSED")).toBe("connect");
    expect(classifyScanError("SMTP greeting refused: 554 go away")).toBe("protocol");
    expect(classifyScanError("scan failed: out of memory")).toBe("internal");
  });

  it("a leased job never answered (agent gone) is a failed attempt when its lease expires, then handed out again", async () => {
    const c = clock();
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "gone.example.test", ip_addresses: ["192.0.2.81"] });
    const gone = await registerAgent(org.session, "dmz-gone");
    const leasedAt = c.at();
    const jobs = await scanRound(c, gone.token, () => null); // leased, never answered
    expect(jobs).toHaveLength(1);
    c.advance((LEASE_SECONDS - 10) * 1000);
    await fireCron(c.at());
    expect((await detail(org.session, id, c.header())).targets[0].collection.consecutive_failures).toBe(0);

    c.advance(20_000);
    await fireCron(c.at());
    const d = await detail(org.session, id, c.header());
    expect(d.targets[0].collection).toMatchObject({
      state: "pending",
      consecutive_failures: 1,
      error: {
        class: "timeout",
        message: `TLS scan of 192.0.2.81:443 (gone.example.test): the scan job leased by agent "dmz-gone" at ${leasedAt.toISOString()} was not answered within ${LEASE_SECONDS} s (the agent stopped or lost its connection)`,
      },
    });
    // Counted once: another run finds nothing new; the job is open again for any agent.
    await fireCron(c.advance(1000));
    expect((await detail(org.session, id, c.header())).targets[0].collection.consecutive_failures).toBe(1);
    const other = await registerAgent(org.session, "dmz-2");
    const again = (await agentCall("lease", other.token, { max_jobs: 5 }, c.header())).body.jobs;
    expect(again.map((j: any) => [j.job_id, j.attempt])).toEqual([[jobs[0].job_id, 2]]);
    // The same expiry found by a lease (before the schedule runs) is counted too, once.
    c.advance((LEASE_SECONDS + 5) * 1000);
    const third = (await agentCall("lease", other.token, { max_jobs: 5 }, c.header())).body.jobs;
    expect(third.map((j: any) => j.attempt)).toEqual([3]);
    const after = (await detail(org.session, id, c.header())).targets[0].collection;
    expect(after).toMatchObject({ state: "failing", consecutive_failures: 2, error: { message: expect.stringContaining('agent "dmz-2"') } });
  });

  it("no agent takes the job within a scan interval: a failed attempt saying no agent is registered, then none running", async () => {
    const c = clock();
    const org = await newOrg();
    const id = await createMonitor(org.session, { cn: "idle.example.test", ip_addresses: ["192.0.2.91"] });
    await fireCron(c.at());
    await fireCron(c.advance(HOUR - 120_000)); // within the interval (3600 s): nothing counted
    expect((await detail(org.session, id, c.header())).targets[0].collection.consecutive_failures).toBe(0);
    await fireCron(c.advance(180_000));
    let t = (await detail(org.session, id, c.header())).targets[0].collection;
    expect(t).toMatchObject({ state: "pending", consecutive_failures: 1, error: { class: "timeout", message: expect.stringMatching(/^TLS scan of 192\.0\.2\.91:443 \(idle\.example\.test\) did not happen: No scanner agent is registered/) } });

    // An agent registered but never started: said as such; the second interval makes it failing.
    await registerAgent(org.session, "never-started");
    await fireCron(c.advance(HOUR + 60_000));
    t = (await detail(org.session, id, c.header())).targets[0].collection;
    expect(t).toMatchObject({ state: "failing", consecutive_failures: 2, error: { message: expect.stringContaining("No registered scanner agent has ever asked for work") } });
    expect((await detail(org.session, id, c.header())).scanning.note).toMatch(/never asked for work|ever asked for work/);
  });
});
