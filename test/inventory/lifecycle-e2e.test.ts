// The certificate inventory end to end, with real certificates: test CAs of the TLS lab
// (test/fixtures/servers/tls-lab.ts) issue certificates for a few names (a wildcard, a
// renewal that keeps the key and one that changes it, another CA for a known name, a
// private CA), a local CT log publishes the public ones, `openssl s_server` serves some
// of them and the scanner agent's own scan of each server is posted through the agent
// API. Each hostname state, the authorization verdicts, the lifecycle events and the
// renewal thresholds are then asserted, with the API clock moved (never slept).
import { describe, expect, it } from "vitest";
import { call, createToken, expectError, pollUntil, signup } from "../helpers";
import { agentCall, fireCron, registerAgent } from "../cert-watcher/helpers";
import { advance, base, createLog, cronAndWait, dohZone, logKey, postJson, publishLogList, runCron, uid, waitForPosition } from "../ct-log/ingest-helpers";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();

interface LabCert {
  id: string;
  key: string;
  der_b64: string;
  sha256: string;
  spki_sha256: string;
  chain_b64: string[];
}
interface LabCa {
  id: string;
  pem: string;
  spki_sha256: string;
}

const lab = (action: string, body: unknown) => postJson(`/tls-lab/__control/${action}`, body);
const issue = (ca: string, names: string[], notBefore: number, notAfter: number, key?: string): Promise<LabCert> =>
  lab("issue", { ca, names, not_before: iso(notBefore), not_after: iso(notAfter), key });
const at = (ms: number) => ({ "x-trust-plane-now": iso(ms) });

describe("certificate inventory end to end", () => {
  it("joins CT issuance to what the scanned targets serve: every state, authorization verdicts, lifecycle events, lifetime-relative renewal", async () => {
    const id = uid();
    const D = `inv${id}.com`;
    const T = Date.now();
    const publicCas = (await (await fetch(`${base}/tls-lab/__control/public-cas`)).json()) as LabCa[];
    const [caA, caB] = publicCas;
    const privateCa = (await lab("ca", { name: `Intranet ${id}` })) as LabCa;

    // The CT side: an empty log, then the certificates appended to it; caa.D forbids every CA.
    const log = `inv${id}`;
    await createLog(log);
    const list = await publishLogList(`inv${id}`, [{ log, protocol: "static-ct" }]);
    const resolver = await dohZone(`inv${id}`, [{ name: `caa.${D}`, type: "CAA", ttl: 300, data: { flags: 0, tag: "issue", value: ";" } }]);
    const config = { ...list, DOH_RESOLVER_URLS: resolver, CT_BATCH_SIZE: "64" };
    const key = await logKey(log);
    await cronAndWait(config, [key.log_id_b64]);

    const org = await signup("Inventory");
    const other = await signup("Inventory other");
    const token = org.session;
    // Reads with the clock moved a day on use an API token (the scheduled runs at that clock end idle sessions).
    const reader = (await createToken(token, ["ct-log:view_monitoring", "cert-watcher:view_monitoring", "ct-log:view_alerts", "cert-watcher:view_alerts"])).token;
    // The filter exists since ten days: certificates issued since are expected in the logs read.
    const filter = await call("POST", "/api/ct-log/filters", { token, body: { pattern: D, match_type: "wide" }, headers: at(T - 10 * DAY) });
    expect(filter.status).toBe(201);
    // Rules on the new CEL fields: every non-routine issuance, and the lifecycle events.
    const rules: Record<string, string> = {
      "Unexpected issuance": 'event_type == "match" && cert.authorization != "authorized"',
      "Routine renewal": 'event_type == "match" && cert.authorization == "authorized" && cert.replaces != ""',
      "Stale deployment": 'event_type == "stale_deployment"',
      "Renewal overdue": 'event_type == "renewal_overdue"',
    };
    for (const [name, expression] of Object.entries(rules)) {
      const r = await call("POST", "/api/ct-log/alert-rules", { token, body: { name, expression, severity: "high" } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    // The rules a new organization is offered: the issuance ones leave a routine renewal out.
    const suggested = (await call("GET", "/api/ct-log/introspection", { token })).body.suggested_rules as { name: string; expression: string; severity: string }[];
    const suggestedIssuance = suggested.filter((r) => r.expression.includes("cert.authorization"));
    expect(suggestedIssuance.map((r) => r.expression).sort()).toEqual(['event_type == "match" && cert.authorization == "unknown_key"', 'event_type == "match" && cert.authorization in ["unexpected_issuer", "caa_violation"]']);
    expect(suggested.map((r) => r.expression)).toEqual(expect.arrayContaining(['event_type == "stale_deployment"', 'event_type == "renewal_overdue"']));
    for (const r of suggestedIssuance) expect((await call("POST", "/api/ct-log/alert-rules", { token, body: { name: r.name, expression: r.expression, severity: r.severity } })).status).toBe(201);
    const notInCtRule = await call("POST", "/api/cert-watcher/alert-rules", { token, body: { name: "Not in CT", expression: 'event_type == "not_in_ct"', severity: "high" } });
    expect(notInCtRule.status, JSON.stringify(notInCtRule.body)).toBe(201);

    // Phase 1: issued and logged.
    const www1 = await issue(caA.id, [`www.${D}`], T - 40 * DAY, T + 50 * DAY - 1000);
    const wild1 = await issue(caA.id, [`*.${D}`], T - 20 * DAY, T + 70 * DAY - 1000);
    const old = await issue(caA.id, [`old.${D}`], T - 80 * DAY, T + 10 * DAY - 1000);
    const gone = await issue(caA.id, [`gone.${D}`], T - 100 * DAY, T - 10 * DAY - 1000);
    const mail = await issue(caA.id, [`mail.${D}`], T - 5 * DAY, T + 85 * DAY - 1000);
    const caaCert = await issue(caA.id, [`caa.${D}`], T - 2 * DAY, T + 88 * DAY - 1000);
    const phase1 = [www1, wild1, old, gone, mail, caaCert];
    for (const c of phase1) await postJson(`/ctlog/${log}/__control/entries`, { certificates: [c.der_b64], chain: c.chain_b64 });
    // Never logged: a public certificate (CA B) and a private CA's.
    const shadow = await issue(caB.id, [`shadow.${D}`], T - 1 * DAY, T + 89 * DAY - 1000);
    const intranet = await issue(privateCa.id, [`intranet.${D}`], T - 3 * DAY, T + 362 * DAY - 1000);

    await runCron(config);
    await waitForPosition(key.log_id_b64, phase1.length);
    const listed = async (q = "", headers: Record<string, string> = {}) => {
      const r = await call("GET", `/api/inventory/hostnames?page_size=100${q}`, { token: reader, headers });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const stateOf = (body: any) => Object.fromEntries(body.hostnames.map((h: any) => [h.hostname, h.state]));
    expect(await pollUntil(async () => (await listed()).total >= 6, 20_000, 100)).toBe(true);
    // Logged, nothing monitored yet: every name is unmonitored (gone.D's own certificate
    // expired, but the wildcard covers it: its latest issued certificate is valid).
    expect(stateOf(await listed())).toEqual({
      [`*.${D}`]: "unmonitored",
      [`caa.${D}`]: "unmonitored",
      [`gone.${D}`]: "unmonitored",
      [`mail.${D}`]: "unmonitored",
      [`old.${D}`]: "unmonitored",
      [`www.${D}`]: "unmonitored",
    });
    // Unmonitored names are offered as certificate monitors (not the wildcard).
    const proposals = (await call("GET", "/api/ct-log/proposals?page_size=100", { token })).body.proposals.filter((p: any) => p.kind === "certs");
    expect(proposals.map((p: any) => p.hostname).sort()).toEqual([`caa.${D}`, `gone.${D}`, `mail.${D}`, `old.${D}`, `www.${D}`]);
    const goneD = (await call("GET", `/api/inventory/hostnames/gone.${D}`, { token })).body;
    expect(goneD.latest_issued.sha256).toBe(wild1.sha256);
    expect(goneD.timeline.map((e: any) => e.sha256)).toEqual([wild1.sha256, gone.sha256]);
    expect(goneD.proposal).toMatchObject({ status: "proposed" });

    // Authorization of the first certificates: new keys (nothing deployed yet), caa.D not permitted by its CAA records.
    const match = async (sha: string) => (await call("GET", `/api/ct-log/matches/${sha}`, { token })).body;
    const wwwMatch = await match(www1.sha256);
    expect(wwwMatch.authorization).toMatchObject({ verdict: "unknown_key" });
    expect(wwwMatch.authorization.reason).toMatch(/never seen deployed/);
    expect(wwwMatch.filters[0]).toMatchObject({ filter_id: filter.body.id, pattern: D });
    expect(wwwMatch.cert.spki_sha256).toBe(www1.spki_sha256);
    // A static-ct-api certificate entry names its issuer by fingerprint only (issuers are not fetched): its key is unknown.
    expect(wwwMatch.cert.issuer_spki_sha256).toBe("");
    expect((await match(caaCert.sha256)).authorization).toMatchObject({ verdict: "caa_violation" });

    // The monitored side: servers for www (first certificate), api (the wildcard), old, gone, shadow, intranet.
    const servers: Record<string, number> = {};
    const serve = async (name: string, c: LabCert) => {
      if (servers[name]) await lab("stop", { port: servers[name] });
      servers[name] = (await lab("serve", { cert: c.id })).port;
    };
    await serve("www", www1);
    await serve("api", wild1);
    await serve("old", old);
    await serve("gone", gone);
    await serve("shadow", shadow);
    await serve("intranet", intranet);
    const ips: Record<string, string> = { www: "192.0.2.31", api: "192.0.2.32", old: "192.0.2.33", gone: "192.0.2.34", shadow: "192.0.2.35", intranet: "192.0.2.36" };
    const monitors: Record<string, number> = {};
    for (const name of Object.keys(ips)) {
      const r = await call("POST", "/api/cert-watcher/monitors", {
        token,
        body: { cn: `${name}.${D}`, ip_addresses: [ips[name]], ...(name === "intranet" ? { root_ca: privateCa.pem } : {}) },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      monitors[name] = r.body.id;
    }
    const agent = await registerAgent(token, "inventory agent");
    /** One scan round at `now`: every due job leased, its target's server scanned by the scanner's code, the report posted. */
    const scanRound = async (now: number) => {
      // Scheduled runs never go back in time (the CT runs above took the clock forward).
      await fireCron(new Date(Math.max(now, advance(0.05))));
      const lease = await agentCall("lease", agent.token, { max_jobs: 100 }, at(now));
      expect(lease.status, JSON.stringify(lease.body)).toBe(200);
      const byIp = Object.fromEntries(Object.entries(ips).map(([n, ip]) => [ip, n]));
      for (const job of lease.body.jobs) {
        const name = byIp[job.ip_address];
        const report = await lab("scan", { port: servers[name], sni: job.sni ?? job.monitor_cn, root_ca_pem: job.root_ca ?? null });
        const posted = await agentCall("results", agent.token, { job_id: job.job_id, result: report }, at(now));
        expect(posted.status, JSON.stringify(posted.body)).toBe(200);
      }
      return lease.body.jobs.length;
    };
    expect(await scanRound(T)).toBe(6);

    const phase1States = stateOf(await listed());
    expect(phase1States).toMatchObject({
      [`*.${D}`]: "current",
      [`www.${D}`]: "current",
      [`api.${D}`]: "current",
      [`gone.${D}`]: "expired",
      [`shadow.${D}`]: "not_in_ct",
      [`intranet.${D}`]: "not_in_ct",
      [`mail.${D}`]: "unmonitored",
      // 80 of 90 days passed: past the last sixth, no successor.
      [`old.${D}`]: "expiring_without_successor",
    });
    const detail = async (h: string, headers: Record<string, string> = {}) => {
      const r = await call("GET", `/api/inventory/hostnames/${encodeURIComponent(h)}`, { token: reader, headers });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const api = await detail(`api.${D}`);
    expect(api.latest_issued).toMatchObject({ sha256: wild1.sha256, spki_sha256: wild1.spki_sha256, lifetime_days: 90 });
    expect(api.deployed).toEqual([expect.objectContaining({ standing: "current", ct_status: "logged", trust: "public", address: `${ips.api}:443` })]);
    const shadowD = await detail(`shadow.${D}`);
    // Asked for by its name and by the wildcard above it, the target counts once.
    expect(shadowD.deployed).toHaveLength(1);
    expect(shadowD.target_count).toBe(1);
    expect(shadowD.deployed[0]).toMatchObject({ ct_status: "not_logged", trust: "public" });
    expect(shadowD.state_reason).toMatch(/Test Public CA B.*never seen in the CT logs read/);
    const intranetD = await detail(`intranet.${D}`);
    expect(intranetD.deployed[0]).toMatchObject({ ct_status: "private_ca", trust: "private_ca" });
    expect(intranetD.state_reason).toMatch(new RegExp(`Intranet ${id}.*private CA`));
    const oldD = await detail(`old.${D}`);
    expect(oldD.renewal).toMatchObject({ status: "overdue" });
    // Thresholds relative to the lifetime: due at two thirds (day 60), overdue in the last sixth (day 75).
    expect(Date.parse(oldD.renewal.due_at)).toBe(Date.parse(iso(T - 80 * DAY)) + 60 * DAY - 667);
    expect(Math.abs(Date.parse(oldD.renewal.overdue_at) - (Date.parse(iso(T - 80 * DAY)) + 75 * DAY))).toBeLessThan(1000);
    expect((await detail(`www.${D}`)).renewal).toMatchObject({ status: "ok" });

    // Filters, paging and the state counts.
    const notInCt = await listed("&state=not_in_ct");
    expect(notInCt.hostnames.map((h: any) => h.hostname).sort()).toEqual([`intranet.${D}`, `shadow.${D}`]);
    // current: www, api and the wildcard itself (served on api).
    expect(notInCt.state_counts).toMatchObject({ not_in_ct: 2, current: 3, expired: 1, unmonitored: 2, expiring_without_successor: 1 });
    expect((await listed(`&q=${encodeURIComponent("WWW.")}`)).hostnames.map((h: any) => h.hostname)).toEqual([`www.${D}`]);
    const page = (await call("GET", "/api/inventory/hostnames?page=2&page_size=3", { token })).body;
    expect(page).toMatchObject({ page: 2, page_size: 3 });
    expect(page.hostnames).toHaveLength(3);
    expectError(await call("GET", "/api/inventory/hostnames?state=fine", { token }), 400, "validation_error");
    // Another organization sees none of it.
    expect((await call("GET", "/api/inventory/hostnames", { token: other.session })).body.total).toBe(0);
    expectError(await call("GET", `/api/inventory/hostnames/www.${D}`, { token: other.session }), 404, "not_found");
    expectError(await call("GET", `/api/inventory/certificates/${www1.sha256}`, { token: other.session }), 404, "not_found");

    // The served certificate, by its fingerprint: names, filter, where it is deployed, its verdict.
    const cert = (await call("GET", `/api/inventory/certificates/${www1.sha256}`, { token })).body;
    expect(cert).toMatchObject({ names: [`www.${D}`], spki_sha256: www1.spki_sha256, authorization: { verdict: "unknown_key" } });
    expect(cert.filters).toEqual([{ id: filter.body.id, pattern: D }]);
    expect(cert.deployed).toEqual([expect.objectContaining({ hostname: `www.${D}`, address: `${ips.www}:443`, current: true })]);

    // Phase 2 (one hour later): the organization authorizes CA A; www renewed with the same key,
    // the wildcard renewed with a new key, CA B issues for mail (a known name).
    await call("PUT", "/api/ct-log/issuance-policy", { token, body: { authorized_issuers: [{ name: "Test Public CA A" }], known_key_list_ids: [] } });
    const checkNew = async (since: string) => {
      const r = await call("GET", `/api/ct-log/matches/check-new?since=${encodeURIComponent(since)}`, { token: reader });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const beforePhase2 = (await checkNew(new Date(0).toISOString())).as_of;
    const www2 = await issue(caA.id, [`www.${D}`], T + HOUR, T + HOUR + 90 * DAY - 1000, www1.key);
    const wild2 = await issue(caA.id, [`*.${D}`], T + HOUR, T + HOUR + 90 * DAY - 1000);
    const mailB = await issue(caB.id, [`mail.${D}`], T + HOUR, T + HOUR + 90 * DAY - 1000);
    for (const c of [www2, wild2, mailB]) await postJson(`/ctlog/${log}/__control/entries`, { certificates: [c.der_b64], chain: c.chain_b64 });
    await runCron(config);
    await waitForPosition(key.log_id_b64, phase1.length + 3);
    const T2 = T + 2 * HOUR;
    await pollUntil(async () => (await detail(`www.${D}`, at(T2))).latest_issued?.sha256 === www2.sha256 && (await detail(`mail.${D}`, at(T2))).latest_issued?.sha256 === mailB.sha256, 20_000, 100);
    expect((await match(www2.sha256)).authorization).toMatchObject({ verdict: "authorized" });
    expect((await match(www2.sha256)).authorization.reason).toMatch(/Routine.*Test Public CA A.*seen deployed on www\./);
    expect((await match(wild2.sha256)).authorization).toMatchObject({ verdict: "unknown_key" });
    expect((await match(mailB.sha256)).authorization).toMatchObject({ verdict: "unexpected_issuer" });
    expect((await match(mailB.sha256)).authorization.reason).toMatch(/Test Public CA B.*not among the organization's issuance policy/);
    // "New since your last visit" tells the routine renewal apart from the issuance that stands out.
    expect(await checkNew(beforePhase2)).toMatchObject({
      count: 3,
      routine: 1,
      unexpected: 2,
      unexpected_by_verdict: { unknown_key: 1, unexpected_issuer: 1, caa_violation: 0 },
      not_judged: 0,
    });

    // Newer certificates not yet served: deploying within 24 h, stale after.
    expect(stateOf(await listed("", at(T2)))).toMatchObject({ [`www.${D}`]: "deploying", [`api.${D}`]: "deploying" });
    const T3 = T + 26 * HOUR;
    expect(stateOf(await listed("", at(T3)))).toMatchObject({ [`www.${D}`]: "stale_deployment", [`api.${D}`]: "stale_deployment" });
    const staleD = await detail(`www.${D}`, at(T3));
    expect(staleD.deployed[0]).toMatchObject({ standing: "behind" });
    expect(staleD.state_reason).toContain(`${ips.www}:443`);

    // The renewal is deployed late (www only) and scanned: current again, the timeline shows both.
    await serve("www", www2);
    await scanRound(T3 + HOUR);
    const T4 = T3 + 2 * HOUR;
    const states4 = stateOf(await listed("", at(T4)));
    expect(states4).toMatchObject({ [`www.${D}`]: "current", [`api.${D}`]: "stale_deployment" });
    const www = await detail(`www.${D}`, at(T4));
    // The timeline holds every certificate covering the name, the wildcards too, newest first.
    expect(new Set(www.timeline.map((e: any) => e.sha256))).toEqual(new Set([www2.sha256, wild2.sha256, wild1.sha256, www1.sha256]));
    const notBefores = www.timeline.map((e: any) => e.not_before);
    expect(notBefores).toEqual([...notBefores].sort().reverse());
    const entry = (sha: string) => www.timeline.find((e: any) => e.sha256 === sha);
    expect(entry(www2.sha256)).toMatchObject({ first_seen_ct_at: expect.any(String), first_deployed_at: iso(T3 + HOUR), authorization: { verdict: "authorized" } });
    expect(entry(www1.sha256)).toMatchObject({ first_deployed_at: iso(T), last_deployed_at: iso(T) });
    expect(entry(wild2.sha256).first_deployed_at).toBeNull();
    // The cadence of the name's own certificates (40 days), not of the wildcard beside them.
    expect(www.renewal_interval_days).toBe(40);

    // The events, through the CEL rules on the new fields.
    const history = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100", { token: reader });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const names = new Set(r.body.alerts.map((a: any) => a.rule_name));
      return names.has("Stale deployment") && names.has("Routine renewal") && names.has("Renewal overdue") ? r.body.alerts : null;
    }, 20_000, 100);
    const firing = (rule: string) => history.filter((a: any) => a.rule_name === rule).map((a: any) => a.event_id);
    expect(firing("Routine renewal")).toHaveLength(1);
    expect(firing("Unexpected issuance").length).toBe(phase1.length + 2); // all first-seen keys, the CAA violation, the new wildcard key, CA B
    // The offered rules together fire on exactly those, never on the routine renewal.
    expect(suggestedIssuance.flatMap((r) => firing(r.name)).sort()).toEqual(firing("Unexpected issuance").sort());
    expect(firing("Stale deployment").sort()).toEqual([`ct-log:stale_deployment:*.${D}:${wild2.sha256}`, `ct-log:stale_deployment:api.${D}:${wild2.sha256}`, `ct-log:stale_deployment:www.${D}:${www2.sha256}`].sort());
    expect(firing("Renewal overdue")).toEqual([`ct-log:renewal_overdue:old.${D}:${old.sha256}`]);
    const notInCtAlerts = (await call("GET", "/api/cert-watcher/alert-history?limit=100", { token: reader })).body.alerts.filter((a: any) => a.rule_name === "Not in CT");
    expect(notInCtAlerts).toHaveLength(2);

    for (const port of Object.values(servers)) await lab("stop", { port });
  }, 120_000);
});
