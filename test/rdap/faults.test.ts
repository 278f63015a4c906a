/**
 * The RDAP poll against a misbehaving server (the local RDAP fixture's fault modes):
 * every fault is a recorded status, never a lost or corrupted snapshot, and the last
 * good snapshot stays the comparison base. Politeness: 429 + Retry-After and runs of
 * 5xx stop requests to the server until its "not before" time.
 *
 * Tests in this file share one D1 and one RDAP server origin, and every Cron run polls
 * every due monitor of the file: the order of the tests matters (the 5xx backoff test
 * runs first, alone) and the clock is moved past each backoff.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, signup, unique } from "../helpers";
import { clone, control, FIXTURE_URL, rdapJson, requestCounts } from "./data";
import { clock, createMonitor, monitorOf, rowCount, runCron } from "./poll-helpers";

const THIN = "domain/registry-thin/verisign-hhgames.com.json";

async function thinAnswer(name: string): Promise<any> {
  const doc = clone(await rdapJson(THIN));
  doc.ldhName = name.toUpperCase();
  return doc;
}
const serve = (name: string, scenario: Record<string, unknown>) => control(`domain/${name}`, scenario);

async function statusOf(token: string, name: string): Promise<{ status: string; checked: string }> {
  const m = await monitorOf(token, name);
  return { status: m.last_check_status, checked: m.last_checked_at };
}

describe("RDAP poll: faults and politeness", () => {
  it("backs a server off after consecutive 5xx answers, then asks again", async () => {
    const org = await signup();
    const names = [0, 1, 2].map((i) => `e${i}-${unique()}.com`);
    for (const n of names) {
      await createMonitor(org.session, n);
      await serve(n, { status: 503 });
    }
    await runCron();
    for (const n of names) expect((await statusOf(org.session, n)).status).toBe("server_error");
    const backoff = await (env as any).DB.prepare("SELECT reason, consecutive_failures, not_before FROM rdap_server_backoff").first();
    expect(backoff).toMatchObject({ reason: "server_error", consecutive_failures: 3 });
    expect(Date.parse(backoff.not_before)).toBeGreaterThan(clock.now());

    // Within the backoff: nobody is asked, monitors say why.
    for (const n of names) await serve(n, { body: await thinAnswer(n) });
    const before = await requestCounts();
    await runCron();
    const after = await requestCounts();
    for (const n of names) expect(after[n]).toBe(before[n]);
    const m = await monitorOf(org.session, names[0]);
    expect(m.last_check_status).toBe("server_error");
    expect(Date.parse(m.last_checked_at)).toBeGreaterThanOrEqual(clock.now());

    // After it: asked again, success resets the server's failure count.
    clock.advance(10 * 60_000);
    await runCron();
    for (const n of names) expect((await statusOf(org.session, n)).status).toBe("success");
    expect(await rowCount("rdap_server_backoff")).toBe(0);
    // Clean slate for the following tests.
    for (const n of names) await call("DELETE", `/api/rdap/domains/${(await monitorOf(org.session, n)).id}`, { token: org.session });
  });

  it("records each fault as a status, stores nothing, and keeps the last good snapshot as the base", async () => {
    const org = await signup();
    const t = org.session;
    const u = unique();
    const faults: Record<string, { scenario: Record<string, unknown>; status: string }> = {
      [`malformed-${u}.com`]: { scenario: { mode: "malformed" }, status: "invalid_response" },
      [`html-${u}.com`]: { scenario: { mode: "html" }, status: "invalid_response" },
      [`loop-${u}.com`]: { scenario: { mode: "redirect-loop" }, status: "invalid_response" },
      [`gone-${u}.com`]: { scenario: { status: 404 }, status: "not_found" },
      [`hang-${u}.com`]: { scenario: { mode: "hang" }, status: "timeout" },
      [`notdomain-${u}.com`]: { scenario: { body: await rdapJson("error/ripe-error.json") }, status: "invalid_response" },
    };
    const names = Object.keys(faults);
    const good = new Map<string, any>();
    for (const n of names) {
      await createMonitor(t, n);
      good.set(n, await thinAnswer(n));
      await serve(n, { body: good.get(n) });
    }
    await runCron();
    for (const n of names) expect((await statusOf(t, n)).status).toBe("success");
    const snapshots = await rowCount("rdap_snapshots");
    const historyRows = await rowCount("rdap_history");
    const firstSnapshot = new Map<string, any>();
    for (const n of names) firstSnapshot.set(n, (await call("GET", `/api/rdap/domains/${n}/history`, { token: t })).body.snapshots);

    for (const n of names) await serve(n, faults[n].scenario);
    const started = Date.now();
    await runCron({ RDAP_TIMEOUT_MS: "700" });
    expect(Date.now() - started).toBeLessThan(15_000); // the hung server did not hold the run
    for (const n of names) {
      const s = await statusOf(t, n);
      expect({ n, status: s.status }).toEqual({ n, status: faults[n].status });
      expect(Date.parse(s.checked)).toBeGreaterThanOrEqual(clock.now());
      // Nothing stored, and the previous snapshot is still served.
      expect((await call("GET", `/api/rdap/domains/${n}/history`, { token: t })).body.snapshots).toEqual(firstSnapshot.get(n));
      expect((await call("GET", `/api/rdap/domains/${n}/snapshot`, { token: t })).body).toEqual(good.get(n));
    }
    expect(await rowCount("rdap_snapshots")).toBe(snapshots);
    expect(await rowCount("rdap_history")).toBe(historyRows);

    // The server recovers with the same registration (only the volatile event moved): no change.
    // One domain really changed meanwhile: compared with the last GOOD snapshot.
    for (const n of names) {
      const body = clone(good.get(n));
      body.events.find((e: any) => e.eventAction === "last update of RDAP database").eventDate = "2026-01-01T00:00:00Z";
      if (n.startsWith("gone-")) body.status = ["client hold"];
      await serve(n, { body });
    }
    await runCron();
    for (const n of names) expect((await statusOf(t, n)).status).toBe("success");
    expect(await rowCount("rdap_history")).toBe(historyRows + 1);
    const changes = (await call("GET", "/api/rdap/changes", { token: t })).body.changes;
    expect(changes.map((c: any) => c.domain_name)).toEqual([`gone-${u}.com`]);
    expect(changes[0].previous_hash).toBe(firstSnapshot.get(`gone-${u}.com`)[0].hash);
    const d = (await call("GET", `/api/rdap/domains/gone-${u}.com/diff`, { token: t })).body;
    expect(d.summary.status).toEqual({ added: ["client hold"], removed: ["client delete prohibited", "client transfer prohibited", "client update prohibited"] });
    for (const n of names) await call("DELETE", `/api/rdap/domains/${(await monitorOf(t, n)).id}`, { token: t });
  });

  it("honours 429 Retry-After per server: its domains are not asked until then, then due again before the interval", async () => {
    const org = await signup();
    const t = org.session;
    const u = unique();
    const limited = `limited-${u}.com`;
    const others = [`calm1-${u}.com`, `calm2-${u}.com`];
    for (const n of [limited, ...others]) {
      await createMonitor(t, n);
      await serve(n, { body: await thinAnswer(n) });
    }
    await runCron();
    await serve(limited, { status: 429, retryAfter: 120 });
    await runCron();
    expect((await statusOf(t, limited)).status).toBe("rate_limited");
    const row = await (env as any).DB.prepare("SELECT reason, not_before FROM rdap_server_backoff").first();
    expect(row.reason).toBe("rate_limited");
    expect(Date.parse(row.not_before)).toBeGreaterThanOrEqual(clock.now() + 119_000);

    // 60 s later: nobody on that server is asked; every monitor says rate_limited.
    await serve(limited, { body: await thinAnswer(limited) });
    const before = await requestCounts();
    clock.advance(60_000);
    await runCron();
    const after = await requestCounts();
    for (const n of [limited, ...others]) {
      expect(after[n]).toBe(before[n]);
      expect((await statusOf(t, n)).status).toBe("rate_limited");
    }

    // After Retry-After, with a 6 h check interval: the rate-limited monitors are due again
    // (retry), and are looked up; a monitor checked normally is not.
    const fresh = `fresh-${u}.com`;
    await createMonitor(t, fresh);
    clock.advance(120_000);
    await runCron({ RDAP_CHECK_INTERVAL_SECONDS: "21600" });
    const third = await requestCounts();
    for (const n of [limited, ...others]) {
      expect(third[n]).toBe(before[n] + 1);
      expect((await statusOf(t, n)).status).toBe("success");
    }
    expect(third[fresh]).toBe(1);
    clock.advance(60_000);
    await runCron({ RDAP_CHECK_INTERVAL_SECONDS: "21600" });
    const fourth = await requestCounts();
    for (const n of [limited, ...others, fresh]) expect(fourth[n]).toBe(third[n]);
    for (const n of [limited, ...others, fresh]) await call("DELETE", `/api/rdap/domains/${(await monitorOf(t, n)).id}`, { token: t });
  });

  it("no RDAP server for a TLD outside the bootstrap; RDAP_BASE_URL sends every domain to one server", async () => {
    const org = await signup();
    const t = org.session;
    const name = `orphan-${unique()}.zz`;
    await createMonitor(t, name);
    await runCron();
    expect((await statusOf(t, name)).status).toBe("no_rdap_server");
    expect((await requestCounts())[name]).toBeUndefined();
    // The bootstrap was fetched from RDAP_BOOTSTRAP_URL and persisted for other isolates.
    const boot = await (env as any).DB.prepare("SELECT url, fetched_at FROM rdap_bootstrap").first();
    expect(boot.url).toBe(`${FIXTURE_URL}/rdap/bootstrap.json`);

    await runCron({ RDAP_BASE_URL: `${FIXTURE_URL}/rdap/` });
    expect((await statusOf(t, name)).status).toBe("success");
    expect((await requestCounts())[name]).toBe(1);
    const snap = await call("GET", `/api/rdap/domains/${name}/snapshot`, { token: t });
    expect(snap.body.ldhName).toBe(name);
  });
});
