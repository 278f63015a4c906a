// Lookalikes through the CT path, end to end: Debian's dnstwist generates permutations of a
// three-letter name (ibm.com), a name under a two-level suffix (example.co.uk) and an IDN
// (xn--80ak6aa92e.com, "аррӏе" in Cyrillic); a sample of every fuzzer's permutations, and
// real names from navigli2025h2 as the negative set, are put in certificates appended to a
// local static-ct-api log; the Cron Trigger has the log's cursor read them. Every name the
// detector flags is a typosquatting match with the detector's verdict, and its registrable
// domain a lookalike asset (source ct); no real name is one.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, pollUntil, signup } from "../helpers";
import { candidateName, detectLookalike, namesBrandKeyword, corroborate, prepareProtected, protectedDomainOf, type LookalikeMatch } from "../../src/modules/ct-log/typosquat/detect";
import { certificate } from "./certificates";
import { createLog, dohZone, logKey, navigliEntries, postJson, publishLogList, runCron, uid, waitForPosition } from "./ingest-helpers";

const base = (env as any).FIXTURE_URL as string;
const PROTECTED = ["ibm.com", "example.co.uk", "xn--80ak6aa92e.com"];
/** Permutations of each dnstwist fuzzer put in certificates (all of the Cyrillic and homoglyph sets up to this). */
const PER_FUZZER = 4;
const NAMES_PER_CERTIFICATE = 8;

async function allPages(path: string, token: string, key: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await call("GET", `${path}${path.includes("?") ? "&" : "?"}page=${page}&page_size=100`, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body[key]);
    if (out.length >= r.body.total) return out;
  }
}

describe("lookalikes through the CT path", () => {
  it("dnstwist's permutations in certificates of a static-ct-api log: every one the detector flags is matched, with its verdict; real names are not", async () => {
    const id = uid();
    const log = `lk${id}`;
    await createLog(log);
    const org = await signup("CT lookalikes");
    const filters: Record<string, number> = {};
    for (const pattern of PROTECTED) {
      const f = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern, match_type: "wide", typosquat_enabled: true } });
      expect(f.status, JSON.stringify(f.body)).toBe(201);
      filters[pattern] = f.body.id;
    }

    // Names: a sample of each fuzzer's permutations per protected domain (the Cyrillic and homoglyph sets included).
    const groups: string[][] = [];
    const sampled: string[] = [];
    for (const domain of PROTECTED) {
      const res = await fetch(`${base}/dnstwist/${domain}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const twist = (await res.json()) as { permutations: { fuzzer: string; domain: string }[] };
      const byFuzzer = new Map<string, string[]>();
      for (const p of twist.permutations) if (p.fuzzer !== "*original" && p.domain !== "ibn.com") byFuzzer.set(p.fuzzer, [...(byFuzzer.get(p.fuzzer) ?? []), p.domain]);
      const names = [...byFuzzer.entries()].flatMap(([fuzzer, list]) => list.slice(0, fuzzer === "cyrillic" || fuzzer === "homoglyph" ? 3 * PER_FUZZER : PER_FUZZER));
      // As certificates carry them: some with www, some as wildcards.
      const shaped = names.map((n, i) => (i % 5 === 1 ? `www.${n}` : i % 5 === 2 ? `*.${n}` : n));
      sampled.push(...shaped);
      for (let i = 0; i < shaped.length; i += NAMES_PER_CERTIFICATE) groups.push(shaped.slice(i, i + NAMES_PER_CERTIFICATE));
    }
    // The negative set: real certificate names of navigli2025h2.
    const real = [...new Set((await navigliEntries()).flatMap((e) => e.dns))].slice(0, 120);
    for (let i = 0; i < real.length; i += 12) groups.push(real.slice(i, i + 12));
    // A low-confidence candidate the same certificate corroborates with the brand keyword.
    groups.push(["ibn.com", "ibm.ibn.com"]);

    const certs = await Promise.all(groups.map((names) => certificate(names)));
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: certs.map((c) => c.b64) });
    const list = await publishLogList(`lkl${id}`, [{ log, protocol: "static-ct" }]);
    const config = { ...list, CT_START_POSITION: "start", CT_BATCH_SIZE: "256", DOH_RESOLVER_URLS: await dohZone(`lkz${id}`, []) };
    const key = await logKey(log);
    await runCron(config);
    await waitForPosition(key.log_id_b64, groups.length);

    // What the detector says, name by name, for each protected domain: one verdict per filter,
    // candidate domain and certificate (the first name of the certificate that gives it).
    const expected = new Map<string, LookalikeMatch>();
    groups.forEach((names, g) => {
      for (const name of names) {
        for (const domain of PROTECTED) {
          const p = prepareProtected(protectedDomainOf(domain)!);
          let m = detectLookalike(p, name);
          if (!m) continue;
          if (m.confidence === "low" && namesBrandKeyword(p, names, candidateName(name)!.label)) m = corroborate(m, p.length, ["brand_keyword"]);
          const k = `${filters[domain]} ${m.candidate_domain} ${certs[g].sha256}`;
          if (!expected.has(k)) expected.set(k, m);
        }
      }
    });
    expect(expected.size).toBeGreaterThan(100);

    const matches = await allPages("/api/ct-log/typosquatting/matches?sort_by=candidate_domain&sort_order=asc", org.session, "matches");
    const got = new Map<string, any>();
    for (const m of matches) got.set(`${m.filter_id} ${m.candidate_domain} ${m.sha256}`, m);
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [k, m] of expected) {
      expect({ evidence: got.get(k).evidence, confidence: got.get(k).confidence, edit_distance: got.get(k).edit_distance }, k).toEqual({
        evidence: m.evidence,
        confidence: m.confidence,
        edit_distance: m.edit_distance ?? null,
      });
    }
    // None of the real names is a lookalike; every sampled permutation the detector flags is in.
    for (const n of real) expect([...got.values()].some((m) => m.certificate_name === n), n).toBe(false);
    const of = (filter: number, candidate: string) => [...got.values()].filter((m) => m.filter_id === filter && m.candidate_domain === candidate);
    expect(of(filters["ibm.com"], "ibn.com")).toMatchObject([{ evidence: ["edit_distance", "brand_keyword"], confidence: "high" }]);
    // dnstwist's Cyrillic lookalike of ibm.com (іьм.com) is matched as a confusable.
    expect(of(filters["ibm.com"], "xn--l1a5a3a.com")).toMatchObject([{ evidence: ["confusable", "whole_script"], confidence: "high" }]);

    // Each candidate domain is one lookalike asset of the organization, found by CT (high when any certificate said so).
    const assets = await allPages("/api/ct-log/lookalikes?source=ct", org.session, "lookalikes");
    expect(new Set(assets.map((a) => a.domain))).toEqual(new Set([...expected.values()].map((m) => m.candidate_domain)));
    expect(assets.every((a) => a.state === "new" && a.source === "ct" && a.certificate_seen_at)).toBe(true);
    const low = assets.filter((a) => a.confidence === "low").map((a) => a.domain);
    expect(low.length).toBeGreaterThan(5);
    for (const a of assets) {
      const verdicts = [...expected.values()].filter((m) => m.candidate_domain === a.domain);
      expect(a.confidence, a.domain).toBe(verdicts.some((m) => m.confidence === "high") ? "high" : "low");
    }
    const ibn = assets.find((a) => a.domain === "ibn.com");
    const detail = await call("GET", `/api/ct-log/lookalikes/${ibn.id}`, { token: org.session });
    expect(detail.body.certificates.map((c: any) => c.certificate_name)).toEqual(["ibn.com"]);
    expect(detail.body.timeline.map((e: any) => e.kind)).toEqual(["detected", "certificate"]);

    // A dismissed lookalike never alerts again: a new certificate naming it raises no event
    // (it is still listed among its certificates); a new lookalike in the same batch does.
    // (Once the first batch's events went to the alert rules: the queue delivers them after the cursor moved.)
    const emitted = await pollUntil(async () => {
      const r = await (env as any).DB.prepare("SELECT count(*) AS n FROM ct_typosquat_matches WHERE organization_id = ? AND event_emitted_at IS NULL").bind(org.organizationId).first();
      return r.n === 0;
    }, 30_000, 100);
    expect(emitted).toBe(true);
    const rule = await call("POST", "/api/ct-log/alert-rules", {
      token: org.session,
      body: { name: "these lookalikes", expression: 'typosquat.candidate_domain in ["ibn.com", "ibm-secure.com"]', severity: "high", throttle_seconds: 0 },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const dismissed = await call("POST", `/api/ct-log/lookalikes/${ibn.id}/dismiss`, { token: org.session, body: { reason: "A partner's domain" } });
    expect(dismissed.status).toBe(200);
    const later = await Promise.all([certificate(["ibn.com", "www.ibn.com"]), certificate(["ibm-secure.com"])]);
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: later.map((c) => c.b64) });
    await runCron(config);
    await waitForPosition(key.log_id_b64, groups.length + 2);
    const fired = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100", { token: org.session });
      return r.status === 200 && r.body.total >= 1 ? r.body.alerts : null;
    }, 20_000, 100);
    expect(fired.map((a: any) => a.event_summary)).toEqual([expect.stringContaining("ibm-secure.com")]);
    expect(JSON.stringify(fired)).not.toContain(later[0].sha256);
    const after = await call("GET", `/api/ct-log/lookalikes/${ibn.id}`, { token: org.session });
    expect(after.body).toMatchObject({ state: "dismissed" });
    expect(after.body.certificates.map((c: any) => c.sha256)).toContain(later[0].sha256);
    console.log(`${sampled.length} dnstwist permutations and ${real.length} real names in ${groups.length} certificates: ${expected.size} lookalike matches, ${low.length} of them low-confidence`);
  }, 120_000);
});
