// Lookalikes as assets, against real counterparts: the registered-permutation discovery
// asks the DNS lab (BIND + Unbound + dnsdist over DoH) which permutations of ibm.com are
// registered (the lab's zones register some, under its com. and net. registries); the
// scheduled checks resolve them, read RDAP from the local RDAP server and connect to the
// HTTPS port; zone edits between runs, with the clock moved, drive the lifecycle (a
// lookalike gains MX, then loses its delegation); the API lists, details, dismisses and
// exports them; the events reach the alert rules.
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { drizzle } from "drizzle-orm/d1";
import { createDb, schema, type Db } from "../../src/db/client";
import { insertDiscovered } from "../../src/modules/ct-log/lookalikes/store";
import { egressPolicy } from "../../src/platform/egress";
import { runLookalikeChecks, type LookalikeCheckSettings } from "../../src/modules/ct-log/lookalikes/check-run";
import { runScheduledDiscovery, scheduledOffsetMs } from "../../src/modules/ct-log/lookalikes/discovery";
import type { CtLogEvent } from "../../src/modules/ct-log/events";
import { call, expectError, pollUntil, signup, type Org } from "../helpers";
import { checkZone, labDohUrl, putZone, removeZone } from "../dns-watcher/lab";

const E = env as any;
const db = () => createDb(E.DB);
const HOUR = 3_600_000;

/** An API call with configuration overrides (the DoH resolver, the budget). */
async function callEnv(method: string, path: string, token: string, overrides: Record<string, string>, body?: unknown, at?: number) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, "cf-connecting-ip": "192.0.2.1" };
  if (at !== undefined) headers["x-trust-plane-now"] = new Date(at).toISOString();
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await worker.fetch(new Request(`http://trust-plane.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }), { ...E, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

async function settings(overrides: Partial<LookalikeCheckSettings> = {}): Promise<LookalikeCheckSettings> {
  return {
    resolverUrls: [await labDohUrl()],
    intervalSeconds: 6 * 3600,
    maxPerRun: 100,
    concurrency: 8,
    timeoutMs: 3000,
    runDeadlineMs: 60_000,
    // The fixture hub answers on its port: lookalikes pointing at 127.0.0.1 "serve" there (the allow-list admits it).
    httpsPort: Number(new URL(E.FIXTURE_URL).port),
    probeTimeoutMs: 2000,
    egress: egressPolicy({ egressAllowlist: E.EGRESS_ALLOWLIST, dohResolverUrls: [] }),
    rdap: { bootstrapUrl: E.RDAP_BOOTSTRAP_URL, baseUrl: "", timeoutMs: 5000, maxPerRun: 25 },
    ...overrides,
  };
}

/** One scheduled check run at `at`; returns its summary and the events it raised. */
async function checks(at: number, overrides: Partial<LookalikeCheckSettings> = {}, realAlerting = false) {
  const events: { org: number; id: string; event: CtLogEvent }[] = [];
  const summary = await runLookalikeChecks({
    db: db(),
    env: E,
    settings: await settings(overrides),
    now: new Date(at),
    emit: realAlerting ? undefined : async (org, evs) => void events.push(...evs.map((e) => ({ org, ...e }))),
  });
  return { summary, events };
}

const list = async (org: Org, query = "") => (await call("GET", `/api/ct-log/lookalikes${query}`, { token: org.session })).body;
const byDomain = async (org: Org) => Object.fromEntries(((await list(org, "?page_size=100")).lookalikes as any[]).map((l) => [l.domain, l]));

describe("lookalike lifecycle", () => {
  it("discovers registered permutations through the DNS lab, checks them on a schedule, follows zone edits, dismisses, exports, alerts", async () => {
    const doh = await labDohUrl();
    const recent = new Date(Date.now() - 5 * 86_400_000).toISOString();
    // The protected domain and four lookalikes the lab registers (com. and net. registries).
    await putZone("ibm.com", "@ IN A 192.0.2.10", "insecure");
    await putZone("ibn.com", "@ IN A 198.51.100.7", "insecure"); // another network: foreign hosting
    await putZone("bm.com", "@ IN A 192.0.2.20", "insecure"); // IBM's network, but registered 5 days ago (RDAP)
    await putZone("ibm.net", "@ IN A 192.0.2.11\n@ IN MX 10 mx.ibm.net.\nmx IN A 192.0.2.12", "insecure");
    await putZone("ibm-access.com", "@ IN A 127.0.0.1", "insecure"); // accepts connections: serving
    const rdap = (name: string, scenario: unknown) =>
      fetch(`${E.FIXTURE_URL}/rdap/__control/domain/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(scenario) });
    await rdap("bm.com", {
      body: {
        objectClassName: "domain",
        ldhName: "bm.com",
        events: [{ eventAction: "registration", eventDate: recent }],
        entities: [{ objectClassName: "entity", roles: ["registrar"], vcardArray: ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "Lookalike Registrar <b>Inc</b>"]]] }],
      },
    });

    const org = await signup("Lookalikes");
    const other = await signup("Other");
    const f = await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "ibm.com", match_type: "wide", typosquat_enabled: true } });
    expect(f.status).toBe(201);
    const config = { DOH_RESOLVER_URLS: doh, LOOKALIKE_DISCOVERY_QUERIES_PER_DAY: "300" };
    // Before the organization's scheduled discovery of the day (whose share counts once its time has come).
    const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const discoverAt = dayStart + scheduledOffsetMs(org.organizationId) - 20 * 60_000;

    // ---- discovery on demand: the most likely permutations first, within the day's budget
    const d1 = await callEnv("POST", "/api/ct-log/lookalikes/discover", org.session, config, {}, discoverAt);
    expect(d1.status, JSON.stringify(d1.body)).toBe(200);
    expect(d1.body).toMatchObject({ queries: 200, budget: { per_day: 300, spent_today: 200, remaining_today: 100 } });
    expect(d1.body.permutations).toBeGreaterThan(400);
    expect(d1.body.new_lookalikes).toEqual(["bm.com", "ibm-access.com", "ibm.net", "ibn.com"]);
    expect(d1.body.registered).toBe(4);
    // The lab serves com., net. and test. only: other TLDs' permutations get REFUSED, reported, never "not registered".
    expect(d1.body.failed).toBeGreaterThan(0);
    expect(d1.body.error).toMatchObject({ class: "dns_resolution" });
    expect(d1.body.error.message).toMatch(/REFUSED/);
    // The rest of the day's budget, then nothing; another organization's filter is a 404, a bad one a 400.
    const d2 = await callEnv("POST", "/api/ct-log/lookalikes/discover", org.session, config, { filter_id: f.body.id }, discoverAt);
    expect(d2.body).toMatchObject({ queries: 100, new_lookalikes: [], budget: { spent_today: 300, remaining_today: 0 } });
    expect((await callEnv("POST", "/api/ct-log/lookalikes/discover", org.session, config, {}, discoverAt)).body).toMatchObject({ queries: 0, budget: { remaining_today: 0 } });
    await expectError(await callEnv("POST", "/api/ct-log/lookalikes/discover", other.session, config, { filter_id: f.body.id }) as any, 404, "not_found");
    await expectError(await callEnv("POST", "/api/ct-log/lookalikes/discover", other.session, config, {}) as any, 400, "validation_error");

    let all = await byDomain(org);
    expect(Object.keys(all).sort()).toEqual(["bm.com", "ibm-access.com", "ibm.net", "ibn.com"]);
    expect(all["ibn.com"]).toMatchObject({ source: "permutation", state: "new", confidence: "low", protected_domain: "ibm.com", filter_id: f.body.id, dns: null, collection: { state: "pending" } });
    expect((await list(other)).total).toBe(0);

    // ---- first scheduled check: what each lookalike is; lookalike_detected with it
    const t0 = Date.now() + 60_000;
    const run1 = await checks(t0);
    expect(run1.summary).toMatchObject({ due: 4, checked: 4, failed: 0 });
    all = await byDomain(org);
    expect(all["ibn.com"]).toMatchObject({ state: "resolving", confidence: "high", dns: { registered: true, a: ["198.51.100.7"], mx: [] }, collection: { state: "ok" } });
    expect(all["ibn.com"].evidence).toEqual(["edit_distance", "foreign_hosting"]);
    expect(all["bm.com"]).toMatchObject({ state: "resolving", confidence: "high", registered_at: recent, registrar: "Lookalike Registrar <b>Inc</b>" });
    expect(all["bm.com"].evidence).toEqual(["omission", "recently_registered"]);
    expect(all["ibm.net"]).toMatchObject({ state: "mail_capable", confidence: "high", dns: { mx: ["10 mx.ibm.net"] }, registered_at: null });
    expect(all["ibm.net"].rdap_error).toMatch(/no RDAP server/);
    expect(all["ibm-access.com"]).toMatchObject({ state: "serving", serving: true });
    expect(all["ibm-access.com"].serving_detail).toMatch(/accepted a connection/);
    expect(run1.events.map((e) => [e.event.event_type, e.event.lookalike.domain, e.event.lookalike.state]).sort()).toEqual([
      ["lookalike_detected", "bm.com", "resolving"],
      ["lookalike_detected", "ibm-access.com", "serving"],
      ["lookalike_detected", "ibm.net", "mail_capable"],
      ["lookalike_detected", "ibn.com", "resolving"],
    ]);
    expect(run1.events.every((e) => e.org === org.organizationId && e.event.kind === "lookalike" && e.event.filter_id === f.body.id)).toBe(true);

    // Nothing due before its interval; an unchanged check writes one row per lookalike (D1 counts it
    // twice: the row and its entry in the next-check index) and raises nothing.
    expect((await checks(t0 + HOUR)).summary.due).toBe(0);
    const quiet = await checks(t0 + 6 * HOUR + 60_000);
    expect(quiet.summary).toMatchObject({ due: 4, checked: 4, changed: 0, events: 0, rows_written: 8 });
    expect(quiet.events).toEqual([]);

    // ---- a rule that pages only when a lookalike becomes mail-capable; a rule written for certificates sees none of it
    const box = `lk-${Date.now()}`;
    const ch = await call("POST", "/api/notification-channels", { token: org.session, body: { name: box, kind: "webhook", url: `${E.FIXTURE_URL}/webhook/${box}` } });
    for (const [name, expression] of [
      ["lookalike takes mail", 'event_type == "lookalike_state_changed" && lookalike.state == "mail_capable"'],
      ["every certificate of the filter", `filter_id == ${f.body.id}`],
    ]) {
      const r = await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name, expression, severity: "high", throttle_seconds: 0, channel_ids: [ch.body.id] } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    // Zone edit between runs: ibn.com gains an MX; ibm-access.com stops listening (points elsewhere).
    await putZone("ibn.com", "@ IN A 198.51.100.7\n@ IN MX 10 mx.ibn.com.\nmx IN A 198.51.100.8", "insecure");
    const t1 = t0 + 12 * HOUR + 120_000;
    const run2 = await checks(t1, {}, true);
    expect(run2.summary).toMatchObject({ due: 4, changed: 1, events: 1 });
    all = await byDomain(org);
    expect(all["ibn.com"]).toMatchObject({ state: "mail_capable", dns: { mx: ["10 mx.ibn.com"] } });
    const hist = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100", { token: org.session });
      return r.status === 200 && r.body.total >= 1 ? r : null;
    }, 20_000, 100);
    expect(hist!.body.total).toBe(1);
    expect(JSON.stringify(hist!.body.alerts)).toContain("ibn.com");
    expect(JSON.stringify(hist!.body.alerts)).toContain("resolving -> mail_capable");

    // ---- the delegation goes: gone, with the change in words on the timeline
    await removeZone("ibn.com");
    const run3 = await checks(t1 + 6 * HOUR + 60_000);
    const gone = run3.events.find((e) => e.event.lookalike.domain === "ibn.com")!;
    expect(gone.event).toMatchObject({ event_type: "lookalike_state_changed", lookalike: { previous_state: "mail_capable", state: "gone", change: "no longer registered (NXDOMAIN)", registered: false } });
    const detail = await call("GET", `/api/ct-log/lookalikes/${all["ibn.com"].id}`, { token: org.session });
    expect(detail.status).toBe(200);
    expect(detail.body.timeline.map((e: any) => [e.kind, e.from_state, e.to_state])).toEqual([
      ["detected", null, null],
      ["state_changed", "new", "resolving"],
      ["registration", null, null],
      ["confidence_raised", null, null],
      ["state_changed", "resolving", "mail_capable"],
      ["state_changed", "mail_capable", "gone"],
    ]);
    expect(detail.body.timeline[4].detail).toBe("MX 10 mx.ibn.com added");
    expect(detail.body.timeline[2].detail).toMatch(/^registered \d{4}-.* through /);
    expect(detail.body.comparison).toMatchObject({ protected_label: "ibm", lookalike_label: "ibn", scripts: ["Latin"] });
    expect(detail.body.comparison.characters.map((c: any) => c.status)).toEqual(["same", "same", "changed"]);
    await expectError(await call("GET", `/api/ct-log/lookalikes/${all["ibn.com"].id}`, { token: other.session }), 404, "not_found");

    // ---- dismissed: never checked nor alerted again; a second dismissal is a conflict
    const access = all["ibm-access.com"];
    await expectError(await call("POST", `/api/ct-log/lookalikes/${access.id}/dismiss`, { token: org.session, body: { reason: "" } }), 400, "validation_error");
    await expectError(await call("POST", `/api/ct-log/lookalikes/${access.id}/dismiss`, { token: other.session, body: { reason: "x" } }), 404, "not_found");
    const dis = await call("POST", `/api/ct-log/lookalikes/${access.id}/dismiss`, { token: org.session, body: { reason: "Our defensive registration" } });
    expect(dis.status).toBe(200);
    expect(dis.body).toMatchObject({ state: "dismissed", dismissed: { reason: "Our defensive registration", by_user_id: org.userId }, collection: { state: "paused" } });
    await expectError(await call("POST", `/api/ct-log/lookalikes/${access.id}/dismiss`, { token: org.session, body: { reason: "again" } }), 409, "conflict");
    const run4 = await checks(t1 + 24 * HOUR);
    expect(run4.events.some((e) => e.event.lookalike.domain === "ibm-access.com")).toBe(false);
    expect((await list(org, "?state=dismissed")).lookalikes.map((l: any) => l.domain)).toEqual(["ibm-access.com"]);
    expect((await list(org, "?state=open&sort_by=domain&sort_order=asc")).lookalikes.map((l: any) => l.domain)).toEqual(["bm.com", "ibm.net"]);
    expect((await list(org, "?source=ct")).total).toBe(0);
    expect((await list(org, "?confidence=low")).total).toBe(0);
    for (const q of ["state=closed", "confidence=medium", "source=dns", "page_size=101", "sort_by=registrar"]) {
      await expectError(await call("GET", `/api/ct-log/lookalikes?${q}`, { token: org.session }), 400, "validation_error");
    }

    // ---- collection state: a resolver that answers nothing, twice in a row, is `failing` with the cause; then recovered
    const dead = { resolverUrls: [`http://127.0.0.1:${E.REFUSING_PORT}/dns-query`] };
    const f1 = await checks(t1 + 36 * HOUR, dead);
    expect(f1.summary).toMatchObject({ due: 3, failed: 3 });
    expect(f1.events).toEqual([]);
    const f2 = await checks(t1 + 38 * HOUR, dead);
    expect(f2.events.map((e) => [e.event.event_type, e.event.lookalike.domain]).sort()).toEqual([
      ["collection_failing", "bm.com"],
      ["collection_failing", "ibm.net"],
      ["collection_failing", "ibn.com"],
    ]);
    const failing = (await byDomain(org))["ibm.net"];
    expect(failing).toMatchObject({ state: "mail_capable", collection: { state: "failing", consecutive_failures: 2, error: { class: "connect" } } });
    expect(failing.collection.error.message).not.toMatch(/internal error|reference =/);
    const back = await checks(t1 + 45 * HOUR);
    expect(back.events.map((e) => e.event.event_type)).toEqual(["collection_recovered", "collection_recovered", "collection_recovered"]);
    expect((await byDomain(org))["ibm.net"].collection.state).toBe("ok");

    // ---- scheduled discovery: at the organization's time, within the budget; an unchanged run writes nothing
    const slot = Math.floor(Date.now() / 86_400_000 + 2) * 86_400_000 + scheduledOffsetMs(org.organizationId) + 60_000;
    const before = await db().$client.prepare("SELECT count(*) AS n FROM ct_lookalikes WHERE organization_id = ?").bind(org.organizationId).first<{ n: number }>();
    const sent: string[] = [];
    const logged = drizzle(E.DB, { schema, logger: { logQuery: (query) => void sent.push(query) } }) as unknown as Db;
    const writes = () => sent.filter((q) => /^\s*(insert|update|delete)\b/i.test(q));
    const scheduled = await runScheduledDiscovery({ db: logged, settings: { resolverUrls: [doh], queriesPerDay: 300, concurrency: 8, timeoutMs: 3000, runDeadlineMs: 60_000 }, now: new Date(slot) });
    const mine = scheduled.find((s) => s.organization_id === org.organizationId)!;
    expect(mine).toMatchObject({ queries: 300, new_lookalikes: [], budget: { spent_today: 300, remaining_today: 0 } });
    const afterRun = await db().$client.prepare("SELECT count(*) AS n FROM ct_lookalikes WHERE organization_id = ?").bind(org.organizationId).first<{ n: number }>();
    expect(afterRun!.n).toBe(before!.n);
    expect(writes()).toEqual([]);
    // Registered permutations it knows already are not even offered to D1 (an INSERT that
    // ON CONFLICT DO NOTHING skips still counts a row written there).
    const known = { organizationId: org.organizationId, domain: "ibn.com", protectedDomain: "ibm.com", filterId: f.body.id, evidence: ["replacement"], editDistance: 1, confidence: "high" as const };
    expect(await insertDiscovered(logged, [known], new Date(slot).toISOString())).toEqual([]);
    expect(writes()).toEqual([]);
    // An hour later it is not this organization's time.
    expect((await runScheduledDiscovery({ db: db(), settings: { resolverUrls: [doh], queriesPerDay: 300, concurrency: 8, timeoutMs: 3000, runDeadlineMs: 60_000 }, now: new Date(slot + HOUR) })).some((s) => s.organization_id === org.organizationId)).toBe(false);

    // ---- export: the open lookalikes; CSV neutralizes formulas; TXT and RPZ carry only host names; the RPZ zone loads in BIND
    await E.DB.prepare("UPDATE ct_lookalikes SET registrar = ? WHERE organization_id = ? AND domain = 'ibm.net'").bind("=HYPERLINK(\"http://evil\")", org.organizationId).run();
    await E.DB.prepare(
      "INSERT INTO ct_lookalikes (organization_id, domain, protected_domain, source, evidence, confidence, state, state_changed_at, first_seen_at) VALUES (?, ?, 'ibm.com', 'ct', '[\"affix\"]', 'high', 'registered', ?, ?)",
    )
      .bind(org.organizationId, "ibm-x.com\n@ IN NS evil.", new Date().toISOString(), new Date().toISOString())
      .run();
    const csv = await call("GET", "/api/ct-log/lookalikes/export?format=csv", { token: org.session });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename=lookalikes-\d+-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(csv.body).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(csv.body.split("\r\n")[0]).toBe('"domain","domain_unicode","protected_domain","state","confidence","source","evidence","first_seen_at","registered_at","registrar","mx","addresses"');
    expect(csv.body).not.toContain("ibm-access.com"); // dismissed
    expect(csv.body).not.toContain("ibn.com"); // gone
    const json = await call("GET", "/api/ct-log/lookalikes/export?format=json", { token: org.session });
    expect(json.body.lookalikes.map((l: any) => l.domain).sort()).toEqual(["bm.com", "ibm-x.com\n@ IN NS evil.", "ibm.net"]);
    const txt = await call("GET", "/api/ct-log/lookalikes/export?format=txt", { token: org.session });
    expect(txt.body.split("\n").filter((l: string) => l && !l.startsWith("#"))).toEqual(["bm.com", "ibm.net"]);
    expect(txt.body).toContain("# 1 name(s) left out");
    const rpz = await call("GET", "/api/ct-log/lookalikes/export?format=rpz", { token: org.session });
    expect(rpz.headers.get("content-type")).toMatch(/^text\/dns/);
    expect(rpz.body).toContain("bm.com CNAME .\n*.bm.com CNAME .");
    expect(rpz.body).not.toContain("evil");
    const verdict = await checkZone("rpz.trust-plane", rpz.body);
    expect(verdict.ok, verdict.output).toBe(true);
    await expectError(await call("GET", "/api/ct-log/lookalikes/export?format=xml", { token: org.session }), 400, "validation_error");
    expect((await call("GET", "/api/ct-log/lookalikes/export?format=txt", { token: other.session })).body).not.toContain("ibm.net");
  }, 120_000);
});
