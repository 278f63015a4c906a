/**
 * The email checks end to end against the real DNS lab (signed zones with MTA-STS, TLS-RPT,
 * TLSA, DKIM and BIMI records) and the local MTA-STS policy server of the fixture hub:
 * every regression is produced by a zone or policy edit between two scheduled runs; re-signing,
 * reordering and TTL changes are no change; nothing is recorded while the resolver or the
 * policy host is down (a collection error, with its reason).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, signup, type Org } from "../helpers";
import { factsOf, lastRunAt, putZone, runWatch, startLab, stopLab, uniqueZone, type WatchRun } from "./lab";
import * as K from "./email-keys";

const base = (env as any).FIXTURE_URL as string;
const POLICY_URL = `${base}/mta-sts/{domain}/.well-known/mta-sts.txt`;
const DAY = 24 * 3600_000;

/** A TXT value longer than 255 bytes, as zone-file strings. */
const strings = (s: string) => (s.match(/.{1,200}/g) ?? []).map((p) => `"${p}"`).join(" ");

interface ZoneOptions {
  mtaSts?: string | null;
  tlsRpt?: string | null;
  bimi?: string | null;
  dkim?: string | null;
  tlsa1?: string | null;
  tlsa2?: string | null;
  extraMx?: string;
  ttl?: number;
  reorder?: boolean;
}
function zone(o: ZoneOptions = {}): string {
  const ttl = o.ttl ? `${o.ttl} ` : "";
  const line = (name: string, type: string, v: string | null | undefined, dflt: string) => (v === null ? "" : `${name} ${ttl}IN ${type} ${v ?? dflt}\n`);
  const lines = [
    `@ ${ttl}IN MX 10 mx1\n`,
    `@ ${ttl}IN MX 20 mx2\n${o.extraMx ?? ""}`,
    `@ IN TXT "v=spf1 mx -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\nmx1 IN A 192.0.2.25\nmx2 IN A 192.0.2.26\n`,
    line("_mta-sts", "TXT", o.mtaSts, '"v=STSv1; id=20261129a"'),
    line("_smtp._tls", "TXT", o.tlsRpt, '"v=TLSRPTv1; rua=mailto:tls-reports@example.net"'),
    line("default._bimi", "TXT", o.bimi, '"v=BIMI1; l=https://brand.example/logo.svg; a=https://brand.example/vmc.pem"'),
    line("s1._domainkey", "TXT", o.dkim, strings(`v=DKIM1; k=rsa; p=${K.RSA2048_SPKI}`)),
    line("_25._tcp.mx1", "TLSA", o.tlsa1, `3 1 1 ${K.MX_SPKI_SHA256}`),
    line("_25._tcp.mx2", "TLSA", o.tlsa2, `2 0 1 ${K.CA_CERT_SHA256}`),
  ];
  return (o.reorder ? lines.reverse() : lines).join("");
}
const POLICY = (z: string, over: { mode?: string; mx?: string[]; maxAge?: number } = {}) =>
  `version: STSv1\r\nmode: ${over.mode ?? "enforce"}\r\n${(over.mx ?? [`*.${z}`]).map((m) => `mx: ${m}\r\n`).join("")}max_age: ${over.maxAge ?? 604800}\r\n`;

async function setPolicy(domain: string, p: { body?: string; status?: number; down?: boolean; location?: string }) {
  await fetch(`${base}/mta-sts/__control/policy`, { method: "POST", body: JSON.stringify({ domain, ...p }) });
}
const fetchesOf = async (domain: string) => ((await (await fetch(`${base}/mta-sts/__control/log?domain=${domain}`)).json()) as { fetches: number }).fetches;

const run = (at?: number): Promise<WatchRun> => runWatch({ mtaStsPolicyUrl: POLICY_URL }, at);
const detail = async (org: Org, id: number) => (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
const emailHistory = async (org: Org, id: number) =>
  ((await call("GET", `/api/dns-watcher/domains/${id}/history?limit=100`, { token: org.session })).body.changes as any[]).filter((c) => c.kind === "email");
const statuses = (d: any) => ["mta_sts", "tls_rpt", "dane", "dkim", "bimi"].map((m) => `${m}:${d.email_security[m].status}`);

describe("email transport security, watched continuously", () => {
  it("each regression from a zone or policy edit between two runs, nothing for re-signing, reordering, TTL or outages", async () => {
    const org = await signup();
    const z = uniqueZone("m");
    await putZone(z, zone());
    await setPolicy(z, { body: POLICY(z) });
    const created = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: z, email_checks: true, dkim_selectors: ["S1"] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as number;

    // Never observed: unknown, not missing.
    let d = await detail(org, id);
    expect(d.email_checks).toBe(true);
    expect(d.dkim_selectors).toEqual(["s1"]);
    expect(statuses(d)).toEqual(["mta_sts:unknown", "tls_rpt:unknown", "dane:unknown", "dkim:unknown", "bimi:unknown"]);

    // Run 1: the records' baseline and the first policy fetch. Run 2: the MX hosts' TLSA (they follow the stored MX set).
    let r = await run();
    expect(r.summary).toMatchObject({ policy_fetches: 1, policy_fetch_failures: 0, email_regressions: 0, changes: 0 });
    r = await run();
    expect(r.summary.tlsa_queries).toBe(2);
    d = await detail(org, id);
    expect(statuses(d)).toEqual(["mta_sts:ok", "tls_rpt:ok", "dane:ok", "dkim:ok", "bimi:ok"]);
    expect(d.email_security.mta_sts).toMatchObject({ id: "20261129a", mx_hosts: [`mx1.${z}`, `mx2.${z}`], uncovered_mx: [] });
    expect(d.email_security.mta_sts.policy).toMatchObject({ status: "ok", mode: "enforce", max_age: 604800, mx: [`*.${z}`], fetched_for_id: "20261129a" });
    expect(d.email_security.dane.hosts.map((h: any) => [h.host, h.status, h.validated, h.usable])).toEqual([[`mx1.${z}`, "ok", true, 1], [`mx2.${z}`, "ok", true, 1]]);
    expect(d.email_security.dkim.selectors[0]).toMatchObject({ selector: "s1", key_type: "rsa", bits: 2048, strength: "strong", status: "ok" });
    expect(d.email_security.bimi).toMatchObject({ dmarc_enforced: true, location: "https://brand.example/logo.svg" });
    expect(await emailHistory(org, id)).toEqual([]);

    // Re-signed with a new serial, records reordered, TTLs changed: no change, no fetch (the id did not change).
    await putZone(z, zone({ reorder: true, ttl: 120 }));
    const fetched = await fetchesOf(z);
    r = await run();
    // The cost of an unchanged domain with its email checks on is that of one without: its one row, in the run's one statement (bench:dns measures it over 1,000 domains).
    expect(r.summary).toMatchObject({ changes: 0, email_regressions: 0, policy_fetches: 0, unconfirmed: 0, write_statements: 1, rows_written: 1 });
    expect(r.events).toEqual([]);
    expect(await fetchesOf(z)).toBe(fetched);

    // A day later the policy host is down: a collection error with its reason, no change; the last policy stays.
    await setPolicy(z, { down: true });
    r = await run(lastRunAt() + DAY);
    expect(r.summary).toMatchObject({ policy_fetches: 1, policy_fetch_failures: 1, email_regressions: 0 });
    d = await detail(org, id);
    expect(d.email_security.mta_sts.status).toBe("ok");
    expect(d.email_security.mta_sts.policy.collection).toMatchObject({ failures: 1, error_class: "connect" });
    expect(d.email_security.mta_sts.policy.collection.error).toMatch(/^MTA-STS policy fetch: connection to 127\.0\.0\.1:\d+ failed/);
    expect(d.email_security.mta_sts.findings.join(" ")).toMatch(/The last fetch of the policy failed/);
    expect(JSON.stringify(d.email_security)).not.toMatch(/internal error|reference =/i);
    // Retried after the backoff, not at every run.
    r = await run();
    expect(r.summary.policy_fetches).toBe(0);

    // The resolver is down for a run: lookup errors, no change of any mechanism.
    await stopLab("unbound");
    try {
      r = await run();
    } finally {
      await startLab("unbound");
    }
    expect(r.summary).toMatchObject({ changes: 0, email_regressions: 0 });
    expect(statuses(await detail(org, id))).toEqual(["mta_sts:ok", "tls_rpt:ok", "dane:ok", "dkim:ok", "bimi:ok"]);

    // The policy changed but the id did not: caught at the daily re-read.
    await setPolicy(z, { body: POLICY(z, { maxAge: 1209600 }) });
    r = await run(lastRunAt() + DAY);
    let h = await emailHistory(org, id);
    expect(h.map((x) => x.detail)).toEqual([`MTA-STS policy changed while the id stayed 20261129a: senders keep the policy they cached until max_age runs out`]);
    expect(h[0]).toMatchObject({ name: `_mta-sts.${z}`, type: "TXT", analysis: { email: { mechanism: "mta_sts", regressions: ["changed_without_id"] } } });
    expect(r.events).toHaveLength(1);
    expect(r.events[0].mta_sts).toMatchObject({ status: "ok", regressions: ["changed_without_id"], max_age: 1209600 });

    // Mode lowered, announced with a new id: fetched at once.
    const edit = async (o: ZoneOptions, policy?: string) => {
      if (policy !== undefined) await setPolicy(z, { body: policy });
      await putZone(z, zone(o));
      const before = (await emailHistory(org, id)).length;
      const out = await run();
      const items = (await emailHistory(org, id)).slice(0, (await emailHistory(org, id)).length - before);
      return { run: out, items };
    };
    let e = await edit({ mtaSts: '"v=STSv1; id=20261129b"' }, POLICY(z, { mode: "testing" }));
    expect(e.items.map((x) => x.analysis.email.regressions)).toEqual([["mode_lowered"]]);
    expect(e.run.events[0].mta_sts).toMatchObject({ mode: "testing", regressions: ["mode_lowered"], verdict: "MTA-STS mode lowered from enforce to testing" });

    // max_age under a day.
    e = await edit({ mtaSts: '"v=STSv1; id=20261129c"' }, POLICY(z, { mode: "enforce", maxAge: 3600 }));
    expect(e.items.map((x) => x.analysis.email.regressions)).toEqual([["max_age_short"]]);

    // An MX host the policy does not cover.
    e = await edit({ mtaSts: '"v=STSv1; id=20261129c"', extraMx: "@ IN MX 30 mail.elsewhere.test.\n" });
    expect(e.items.map((x) => x.detail)).toEqual([`MX host mail.elsewhere.test not covered by the MTA-STS policy (mx: *.${z})`]);
    expect(e.run.events[0].mta_sts.uncovered_mx).toEqual(["mail.elsewhere.test"]);

    // The policy is gone (404) while the TXT record still advertises it.
    await setPolicy(z, { status: 404 });
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"' });
    expect(e.items.map((x) => x.analysis.email.regressions)).toEqual([["policy_invalid"]]);
    expect(e.items[0].detail).toMatch(/answers HTTP 404 instead of the policy/);
    expect((await detail(org, id)).email_security.mta_sts.status).toBe("invalid");

    // TLS reporting removed; DKIM weakened, then revoked; DANE removed and unusable; BIMI changed; MTA-STS removed.
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"', tlsRpt: null });
    expect(e.items.map((x) => `${x.analysis.email.mechanism}:${x.analysis.email.regressions}`)).toEqual(["tls_rpt:removed"]);
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"', tlsRpt: null, dkim: strings(`v=DKIM1; k=rsa; p=${K.RSA1024_SPKI}`) });
    expect(e.items.map((x) => `${x.name}:${x.analysis.email.regressions}`)).toEqual([`s1._domainkey.${z}:key_changed,weakened`]);
    expect(e.run.events[0].dkim.selectors[0]).toMatchObject({ selector: "s1", bits: 1024, strength: "legacy" });
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"', tlsRpt: null, dkim: '"v=DKIM1; k=rsa; p="' });
    expect(e.items.map((x) => `${x.analysis.email.mechanism}:${x.analysis.email.regressions}`)).toEqual(["dkim:revoked"]);
    // The TLSA changes show at the run that reads them (the MX set is unchanged, so the same run).
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"', tlsRpt: null, dkim: '"v=DKIM1; k=rsa; p="', tlsa1: null, tlsa2: `1 1 1 ${K.MX_SPKI_SHA256}` });
    expect(e.items.map((x) => `${x.name}:${x.analysis.email.regressions}`).sort()).toEqual([`_25._tcp.mx1.${z}:removed`, `_25._tcp.mx2.${z}:unusable`]);
    e = await edit({ mtaSts: '"v=STSv1; id=20261129e"', tlsRpt: null, dkim: '"v=DKIM1; k=rsa; p="', tlsa1: null, tlsa2: `1 1 1 ${K.MX_SPKI_SHA256}`, bimi: '"v=BIMI1; l=https://brand.example/new.svg"' });
    expect(e.items.map((x) => `${x.analysis.email.mechanism}:${x.analysis.email.regressions}`)).toEqual(["bimi:changed"]);
    e = await edit({ mtaSts: null, tlsRpt: null, dkim: '"v=DKIM1; k=rsa; p="', tlsa1: null, tlsa2: `1 1 1 ${K.MX_SPKI_SHA256}`, bimi: '"v=BIMI1; l=https://brand.example/new.svg"' });
    expect(e.items.map((x) => `${x.analysis.email.mechanism}:${x.analysis.email.regressions}`)).toEqual(["mta_sts:removed"]);

    // Seen again: nothing new.
    r = await run();
    expect(r.summary.email_regressions).toBe(0);

    // What the weekly report reads: a fact per regression that weakens (a new BIMI logo does not), with the subject before and after.
    const facts = (await factsOf(id)).filter((f) => f.kind === "email_weakened" || f.kind === "dane_mismatch");
    expect(facts.map((f) => `${f.kind} ${f.record_name}`)).toEqual([
      ...Array(5).fill(`email_weakened _mta-sts.${z}`),
      `email_weakened _smtp._tls.${z}`,
      `email_weakened s1._domainkey.${z}`,
      `email_weakened s1._domainkey.${z}`,
      `email_weakened _25._tcp.mx1.${z}`,
      `email_weakened _25._tcp.mx2.${z}`,
      `email_weakened _mta-sts.${z}`,
    ]);
    const values = (f: (typeof facts)[number]) => [JSON.parse(f.old_values), JSON.parse(f.new_values)];
    expect(values(facts[1])).toEqual([
      ['v=STSv1; id=20261129a', `policy mode enforce, max_age 1209600 s, mx *.${z}`],
      ['v=STSv1; id=20261129b', `policy mode testing, max_age 604800 s, mx *.${z}`],
    ]);
    expect(facts[1].detail).toBe("MTA-STS mode lowered from enforce to testing");
    expect(values(facts[6])).toEqual([["rsa 2048 bits"], ["rsa 1024 bits"]]);
    expect(values(facts[7])).toEqual([["rsa 1024 bits"], ["revoked (empty p=)"]]);
    expect(values(facts[8])).toEqual([[`3 1 1 ${K.MX_SPKI_SHA256}`.toUpperCase()], []]);
  });
});
