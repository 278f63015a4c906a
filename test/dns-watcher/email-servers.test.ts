/**
 * What the mail servers and the MTA-STS policy server serve, end to end.
 *
 * DANE against what the mail servers serve: the DNS lab's signed zone publishes
 * `_25._tcp` TLSA records for two MX hosts, real SMTP servers of the TLS lab offer STARTTLS
 * with certificates of a lab CA, the mail-server offers of the domain become port-25
 * certificate monitors, the scanner agent's own scan of each server is posted through the
 * agent API, and the served chains are matched against the TLSA records (DANE-EE against
 * the server's certificate, DANE-TA against the CA in the chain, PKIX usages ignored).
 * A mismatch appears twice: from a TLSA edit between two DNS runs, and from a scan of a
 * server that started serving another certificate; each is a history item and an event.
 *
 * The MTA-STS policy that cannot be fetched while the TXT record advertises it: the second
 * failed fetch in a row raises collection_failing with the reason in words (an alert rule on
 * it fires and its webhook channel receives the alert, once), the first fetch that answers
 * again collection_recovered, each once.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { alertStateOf } from "../../src/modules/alerting/emit";
import { call, signup } from "../helpers";
import { agentCall, registerAgent } from "../cert-watcher/helpers";
import { createDb } from "../../src/db/client";
import { enqueueDueScans } from "../../src/modules/cert-watcher/jobs";
import { factsOf, lastRunAt, putZone, runWatch, uniqueZone } from "./lab";

const base = (env as any).FIXTURE_URL as string;
const DAY = 86_400_000;
const lab = async (action: string, body: unknown): Promise<any> => {
  const res = await fetch(`${base}/tls-lab/__control/${action}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`tls-lab ${action}: ${await res.text()}`);
  return res.json();
};

function zone(z: string, tlsa1: string, tlsa2: string[]): string {
  return [
    "@ IN MX 10 mx1",
    "@ IN MX 20 mx2",
    '_dmarc IN TXT "v=DMARC1; p=reject"',
    "mx1 IN A 192.0.2.25",
    "mx2 IN A 192.0.2.26",
    `_25._tcp.mx1 IN TLSA ${tlsa1}`,
    ...tlsa2.map((v) => `_25._tcp.mx2 IN TLSA ${v}`),
  ].join("\n") + "\n";
}

describe("DANE: the chain each MX host serves against its TLSA records", () => {
  // Real scans of real SMTP servers (STARTTLS, each a full protocol and cipher enumeration): longer than the default 30 s on a busy machine.
  it("offers port-25 monitors, matches DANE-EE and DANE-TA, raises a mismatch from a TLSA edit and from a scan", { timeout: 90_000 }, async () => {
    const org = await signup("Mail");
    const token = org.session;
    const z = uniqueZone("dane");
    const [mx1, mx2] = [`mx1.${z}`, `mx2.${z}`];
    const ca = await lab("ca", { name: `Mail CA ${z}` });
    const now = Date.now();
    const validity = { not_before: new Date(now - DAY).toISOString(), not_after: new Date(now + 90 * DAY).toISOString() };
    const certA = await lab("issue", { ca: ca.id, names: [mx1], ...validity });
    const certB = await lab("issue", { ca: ca.id, names: [mx1], ...validity });
    const certC = await lab("issue", { ca: ca.id, names: [mx2], ...validity });
    const servers: Record<string, number> = { [mx1]: (await lab("serve", { cert: certA.id, starttls: "smtp" })).port, [mx2]: (await lab("serve", { cert: certC.id, starttls: "smtp" })).port };

    // mx1: DANE-EE on the server's key. mx2: DANE-TA on the CA's key, and a PKIX-EE record naming mx2's own key (ignored by SMTP senders).
    const eeA = `3 1 1 ${certA.spki_sha256}`;
    const ta = `2 1 1 ${ca.spki_sha256}`;
    const pkixEe = `1 1 1 ${certC.spki_sha256}`;
    await putZone(z, zone(z, eeA, [ta, pkixEe]));
    const created = await call("POST", "/api/dns-watcher/domains", { token, body: { domain_name: z, email_checks: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as number;
    const detail = async () => (await call("GET", `/api/dns-watcher/domains/${id}`, { token })).body;
    const danes = async () => ((await detail()).email_security.dane.hosts as any[]).map((h) => [h.host, h.status, h.served.status]);
    const emailHistory = async () => ((await call("GET", `/api/dns-watcher/domains/${id}/history?limit=100`, { token })).body.changes as any[]).filter((c) => c.kind === "email");
    const rule = await call("POST", "/api/dns-watcher/alert-rules", { token, body: { name: "DANE mismatch", expression: 'dane.regressions.exists(r, r == "mismatch")', severity: "critical", throttle_seconds: 0, channel_ids: [] } });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);

    // Two runs: the records, then the MX hosts' TLSA (they follow the stored MX set).
    await runWatch();
    await runWatch();
    let d = await detail();
    expect(d.email_security.dane.status).toBe("ok");
    expect(await danes()).toEqual([[mx1, "ok", "not_scanned"], [mx2, "ok", "not_scanned"]]);
    expect(d.email_security.dane.hosts[0].served).toMatchObject({ monitor_id: null, checked_at: null });
    expect(d.email_security.dane.hosts[0].served.text).toMatch(/^No certificate monitor scans mx1\..* on port 25 with STARTTLS/);
    expect(d.email_security.dane.hosts[1].records.find((r: any) => r.usage === 1).problem).toMatch(/ignored by SMTP senders/);

    // The offers: every MX host without a port-25 monitor. Accepting creates the monitor; a host that is not an MX host is a 400.
    expect(d.email_security.mail_server_offers).toEqual([{ host: mx1 }, { host: mx2 }]);
    const bad = await call("POST", `/api/dns-watcher/domains/${id}/mail-server-monitors`, { token, body: { host: `www.${z}` } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ path: "host" });
    expect(bad.body.error.details[0].message).toMatch(/is not an MX host of /);
    const monitors: Record<string, number> = {};
    for (const [host, ip] of [[mx1, "192.0.2.25"], [mx2, "192.0.2.26"]]) {
      const r = await call("POST", `/api/dns-watcher/domains/${id}/mail-server-monitors`, { token, body: { host, ip_addresses: [ip] } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      monitors[host] = r.body.id;
    }
    expect((await call("POST", `/api/dns-watcher/domains/${id}/mail-server-monitors`, { token, body: { host: mx1 } })).status).toBe(409);
    const monitor = (await call("GET", `/api/cert-watcher/monitors/${monitors[mx1]}`, { token })).body;
    expect(monitor).toMatchObject({ cn: mx1, port: 25, starttls: "smtp", connection_method: "starttls" });
    d = await detail();
    expect(d.email_security.mail_server_offers).toEqual([]);
    expect(d.email_security.dane.hosts.map((h: any) => [h.served.status, h.served.monitor_id])).toEqual([["not_scanned", monitors[mx1]], ["not_scanned", monitors[mx2]]]);
    expect(d.email_security.dane.hosts[0].served.text).toMatch(/has not been scanned on port 25 yet/);

    // The agent scans each server (STARTTLS on the lab's SMTP servers) and posts what it saw.
    const agent = await registerAgent(token, "mail agent");
    // `answer`: what the agent posts instead of its own successful scan (given the scan to run and each host's last report).
    const lastReport: Record<string, any> = {};
    const scanRound = async (answer?: (host: string, scan: () => Promise<any>) => Promise<any>) => {
      await enqueueDueScans(createDb((env as any).DB), new Date(), 0, org.organizationId);
      const lease = await agentCall("lease", agent.token, { max_jobs: 10 });
      expect(lease.status, JSON.stringify(lease.body)).toBe(200);
      for (const job of lease.body.jobs) {
        expect(job).toMatchObject({ port: 25, starttls: "smtp" });
        const scan = () => lab("scan", { port: servers[job.monitor_cn], sni: job.sni ?? job.monitor_cn, starttls: "smtp" });
        const report = answer ? await answer(job.monitor_cn, scan) : await scan();
        if (!answer) expect(report.has_error, report.error).toBe(false);
        lastReport[job.monitor_cn] = report;
        const posted = await agentCall("results", agent.token, { job_id: job.job_id, result: report });
        expect(posted.status, JSON.stringify(posted.body)).toBe(200);
      }
      return lease.body.jobs.length as number;
    };
    expect(await scanRound()).toBe(2);
    d = await detail();
    expect(await danes()).toEqual([[mx1, "ok", "matched"], [mx2, "ok", "matched"]]);
    // DANE-EE matched the server's certificate; DANE-TA the CA the server sent after it, not the PKIX-EE record.
    expect(d.email_security.dane.hosts[0].served.targets).toEqual([{ ip_address: "192.0.2.25", scanned_at: expect.any(String), matched: true, record: eeA.toUpperCase(), problem: "" }]);
    expect(d.email_security.dane.hosts[1].served.targets[0]).toMatchObject({ matched: true, record: ta.toUpperCase() });
    expect(d.email_security.dane.hosts[0].served.checked_at).not.toBeNull();
    expect(await emailHistory()).toEqual([]);

    // The TLSA record of mx1 now names another key: the served chain matches nothing. Critical, a history item and an event.
    const eeB = `3 1 1 ${certB.spki_sha256}`;
    await putZone(z, zone(z, eeB, [ta, pkixEe]));
    let r = await runWatch();
    d = await detail();
    expect(d.email_security.dane.status).toBe("invalid");
    expect(await danes()).toEqual([[mx1, "ok", "mismatch"], [mx2, "ok", "matched"]]);
    expect(d.email_security.dane.hosts[0].served.targets[0]).toMatchObject({ matched: false, record: "" });
    expect(d.email_security.dane.findings[0]).toMatch(/^The certificate chain served by mx1\..* \(192\.0\.2\.25\) matches none of its TLSA records: senders that enforce DANE stop delivering mail to it/);
    let h = await emailHistory();
    expect(h.map((x) => [x.name, x.type, x.analysis.email.regressions])).toEqual([[`_25._tcp.${mx1}`, "TLSA", ["mismatch"]]]);
    const dane = r.events.map((e) => e.dane);
    expect(dane).toEqual([expect.objectContaining({ status: "invalid", mismatched_hosts: [mx1], regressions: ["mismatch"] })]);
    expect(dane[0].hosts.map((x: any) => x.served)).toEqual(["mismatch", "matched"]);

    // The record is put back: matched again, no regression.
    await putZone(z, zone(z, eeA, [ta, pkixEe]));
    r = await runWatch();
    expect(r.events).toEqual([]);
    expect(await danes()).toEqual([[mx1, "ok", "matched"], [mx2, "ok", "matched"]]);

    // mx1 starts serving another certificate: its next scan raises the mismatch (a history item at the scan's time, and the alert).
    await lab("stop", { port: servers[mx1] });
    servers[mx1] = (await lab("serve", { cert: certB.id, starttls: "smtp" })).port;
    expect(await scanRound()).toBe(2);
    expect(await danes()).toEqual([[mx1, "ok", "mismatch"], [mx2, "ok", "matched"]]);
    h = await emailHistory();
    expect(h.map((x) => [x.name, x.analysis.email.regressions])).toEqual([[`_25._tcp.${mx1}`, ["mismatch"]], [`_25._tcp.${mx1}`, ["mismatch"]]]);
    expect(h[0].detail).toMatch(/^DANE for mx1\..* fails: The certificate chain served by/);
    // Each mismatch is also a fact for the weekly report ("DANE mismatch on a mail server"), the served chain's verdict after it.
    const mismatches = (await factsOf(id)).filter((f) => f.kind === "dane_mismatch");
    expect(mismatches.map((f) => [f.record_name, JSON.parse(f.new_values).at(-1)])).toEqual([[`_25._tcp.${mx1}`, "served on port 25: matches no record"], [`_25._tcp.${mx1}`, "served on port 25: matches no record"]]);
    const alerts = (await call("GET", "/api/dns-watcher/alert-history?limit=100", { token })).body.alerts as any[];
    // (The DNS run's event went to the run's own collector above; this one went through alerting.)
    expect(alerts.filter((a) => a.rule_id === rule.body.id).map((a) => [a.subject, a.severity])).toEqual([[z, "critical"]]);
    // A scan that changes nothing raises nothing more.
    expect(await scanRound()).toBe(2);
    expect((await emailHistory()).length).toBe(2);
    expect((await call("GET", "/api/dns-watcher/alert-history?limit=100", { token })).body.alerts.filter((a: any) => a.rule_id === rule.body.id).length).toBe(1);

    // mx1's server is down (its scan fails) and mx2's scan comes from an agent that kept no
    // chain: neither address is compared, each says why; not a match, not a mismatch, no change.
    await lab("stop", { port: servers[mx1] });
    expect(
      await scanRound(async (host, scan) => {
        if (host === mx1) {
          const failed = await scan();
          expect(failed.has_error).toBe(true);
          return failed;
        }
        const chainless = structuredClone(lastReport[mx2]);
        delete chainless.certificate.der;
        delete chainless.intermediates_der;
        return chainless;
      }),
    ).toBe(2);
    d = await detail();
    expect(await danes()).toEqual([[mx1, "ok", "not_checked"], [mx2, "ok", "not_checked"]]);
    const [failed, chainless] = d.email_security.dane.hosts.map((x: any) => x.served);
    // The failed scan's own reason, as the agent reported it.
    expect(lastReport[mx1].error).toMatch(/^connect to 127\.0\.0\.1:\d+ failed: ECONNREFUSED$/);
    expect(failed.targets).toEqual([{ ip_address: "192.0.2.25", scanned_at: expect.any(String), matched: null, record: "", problem: lastReport[mx1].error }]);
    expect(failed.text).toBe(`Not compared: 192.0.2.25: ${lastReport[mx1].error}.`);
    expect(chainless.targets[0]).toMatchObject({ matched: null, problem: "the scan kept no certificate chain (an agent older than DANE matching)" });
    expect(chainless.text).toBe("Not compared: 192.0.2.26: the scan kept no certificate chain (an agent older than DANE matching).");
    expect(d.email_security.dane.findings.join(" ")).not.toMatch(/matches none of its TLSA records/);
    expect((await emailHistory()).length).toBe(2);
    await Promise.all(Object.entries(servers).filter(([host]) => host !== mx1).map(([, port]) => lab("stop", { port })));
  });
});

describe("an MTA-STS policy that cannot be fetched", () => {
  it("raises collection_failing at the second failed fetch in a row and collection_recovered once", async () => {
    const org = await signup("Mail policy");
    const z = uniqueZone("sts");
    const policyUrl = `${base}/mta-sts/{domain}/.well-known/mta-sts.txt`;
    const setPolicy = (p: Record<string, unknown>) => fetch(`${base}/mta-sts/__control/policy`, { method: "POST", body: JSON.stringify({ domain: z, ...p }) });
    await putZone(z, `@ IN MX 10 mx1\nmx1 IN A 192.0.2.25\n_mta-sts IN TXT "v=STSv1; id=1"\n`);
    await setPolicy({ body: `version: STSv1\r\nmode: enforce\r\nmx: mx1.${z}\r\nmax_age: 604800\r\n` });
    const created = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: z, email_checks: true } });
    expect(created.status).toBe(201);
    const policyOf = async () => (await call("GET", `/api/dns-watcher/domains/${created.body.id}`, { token: org.session })).body.email_security.mta_sts.policy;
    // The rule a team writes for "our MTA-STS policy cannot be read", to a webhook (the hub's receiver): events go through alerting.
    const box = `sts-${z}`;
    const ch = await call("POST", "/api/notification-channels", { token: org.session, body: { name: "mail team", kind: "webhook", url: `${base}/webhook/${box}` } });
    expect(ch.status, JSON.stringify(ch.body)).toBe(201);
    const rule = await call("POST", "/api/dns-watcher/alert-rules", {
      token: org.session,
      body: { name: "MTA-STS policy unreadable", expression: 'event_type == "collection_failing" && collection.error_message.startsWith("MTA-STS policy fetch")', severity: "high", throttle_seconds: 0, channel_ids: [ch.body.id] },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const delivered = async () => {
      await (runInDurableObject as unknown as (s: DurableObjectStub, fn: (o: any) => Promise<unknown>) => Promise<unknown>)(alertStateOf(env as any, org.organizationId) as unknown as DurableObjectStub, (o) => o.deliverNow(org.organizationId));
      return ((await (await fetch(`${base}/webhook/__control/${box}`)).json()) as { received: { body: string }[] }).received.map((m) => JSON.parse(m.body));
    };
    const run = (at?: number) => runWatch({ mtaStsPolicyUrl: policyUrl }, at, { alerting: true });
    const collectionEvents = (r: { events: any[] }) => r.events.filter((e) => e.domain === z && e.event_type.startsWith("collection_"));

    let r = await run();
    expect(r.summary).toMatchObject({ policy_fetches: 1, policy_fetch_failures: 0 });
    expect((await policyOf()).status).toBe("ok");

    // A day later the policy host is down: one failure is not yet failing; the retry 10 minutes later is.
    await setPolicy({ down: true });
    r = await run(lastRunAt() + DAY);
    expect(r.summary).toMatchObject({ policy_fetches: 1, policy_fetch_failures: 1 });
    expect(collectionEvents(r)).toEqual([]);
    r = await run(lastRunAt() + 11 * 60_000);
    expect(r.summary).toMatchObject({ policy_fetches: 1, policy_fetch_failures: 1 });
    const [failing] = collectionEvents(r);
    expect(collectionEvents(r)).toHaveLength(1);
    expect(failing.event_type).toBe("collection_failing");
    expect(failing.collection).toMatchObject({ state: "failing", error_class: "connect" });
    expect(failing.collection.error_message).toMatch(/^MTA-STS policy fetch: connection to 127\.0\.0\.1:\d+ failed: refused or closed before an answer$/);
    expect(failing.mta_sts).toMatchObject({ status: "ok", mode: "enforce", regressions: [] });
    expect(await policyOf()).toMatchObject({ status: "ok", collection: { failures: 2, error_class: "connect" } });
    // The rule fired and the webhook received the alert, with the fetch's reason.
    let inbox = await delivered();
    expect(inbox).toHaveLength(1);
    expect(JSON.stringify(inbox[0])).toContain("MTA-STS policy unreadable");
    expect(JSON.stringify(inbox[0])).toContain(failing.collection.error_message);

    // A third failure changes nothing but the count.
    r = await run(lastRunAt() + 21 * 60_000);
    expect(r.summary.policy_fetch_failures).toBe(1);
    expect(collectionEvents(r)).toEqual([]);
    inbox = await delivered();
    expect(inbox).toHaveLength(1);

    // The host answers again: recovered, once, with the start of the failures it ended.
    await setPolicy({ body: `version: STSv1\r\nmode: enforce\r\nmx: mx1.${z}\r\nmax_age: 604800\r\n` });
    r = await run(lastRunAt() + 41 * 60_000);
    expect(collectionEvents(r).map((e) => [e.event_type, e.collection.failing_since])).toEqual([["collection_recovered", failing.collection.failing_since]]);
    expect((await policyOf()).collection).toMatchObject({ failures: 0, error: null });
    r = await run(lastRunAt() + DAY);
    expect(r.summary.policy_fetches).toBe(1);
    expect(collectionEvents(r)).toEqual([]);
  });
});
