/**
 * The organization's heartbeat through the API and the Worker's scheduled handler with
 * an injected clock: set (sealed, shown masked, egress-checked), pinged after a run in
 * which the organization's collection is healthy (the fixture hub's webhook receiver
 * plays the team's checker, answering like healthchecks: 2xx, or a scripted 500), not
 * pinged with the reason when an asset is not collected within its window or a job of
 * the run failed, a failed ping recorded with its cause and tried again at the next
 * run, and removed.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { loadConfig } from "../../src/env";
import { runHeartbeats } from "../../src/modules/admin/heartbeat";
import { expectErrorShape, signup, unique, type Org } from "../helpers";
import { createMonitor } from "../cert-watcher/helpers";
import { E, callAt, clock, cron } from "../reports/helpers";

const checkId = () => `check-${unique()}`;
const received = async (inbox: string) =>
  (await (await fetch(`${E.FIXTURE_URL}/webhook/__control/${inbox}`)).json<{ received: { headers: Record<string, string>; body: string }[] }>()).received;
const script = (inbox: string, statuses: number[]) =>
  fetch(`${E.FIXTURE_URL}/webhook/__control/${inbox}/script`, { method: "POST", body: JSON.stringify({ statuses }) });

let org: Org;
let inbox: string;
let pingUrl: string;
const heartbeat = () => callAt("GET", "/api/admin/heartbeat", org.session);

beforeAll(async () => {
  org = await signup("Heartbeat");
  inbox = checkId();
  pingUrl = `${E.FIXTURE_URL}/webhook/${inbox}`;
});

describe("the heartbeat URL", () => {
  it("is set by an administrator, sealed and shown masked; a URL to an internal address or not http(s) is a 400 that saves nothing", async () => {
    expect((await heartbeat()).body).toEqual({ configured: false, url: null, created_at: null, updated_at: null, last_run: null });
    for (const url of ["http://10.0.0.7/ping", "http://169.254.169.254/latest/meta-data", "ftp://hc.example.com/x", "not a url"]) {
      expectErrorShape(await callAt("PUT", "/api/admin/heartbeat", org.session, clock.now(), { url }), 400, "validation_error");
    }
    expectErrorShape(await callAt("PUT", "/api/admin/heartbeat", org.session, clock.now(), { url: pingUrl, extra: 1 }), 400, "validation_error");
    expect((await heartbeat()).body.configured).toBe(false);
    expectErrorShape(await callAt("DELETE", "/api/admin/heartbeat", org.session), 404, "not_found");

    const put = await callAt("PUT", "/api/admin/heartbeat", org.session, clock.now(), { url: pingUrl });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const origin = new URL(E.FIXTURE_URL);
    expect(put.body).toMatchObject({ configured: true, url: `${origin.protocol}//${origin.host}/***`, last_run: null });
    // The check's id (its credential) is never returned.
    expect(JSON.stringify(put.body)).not.toContain(inbox);
    expect(JSON.stringify((await heartbeat()).body)).not.toContain(inbox);
    const row = await E.DB.prepare("SELECT url_sealed FROM organization_heartbeats WHERE organization_id = ?").bind(org.organizationId).first<{ url_sealed: string }>();
    expect(row!.url_sealed).not.toContain(inbox);
  });
});

describe("the scheduled run", () => {
  it("pings after a run in which the organization's collection is healthy; a failed ping is recorded with its cause and tried again at the next run", async () => {
    const first = await cron({}, 60_000);
    let got = await received(inbox);
    expect(got).toHaveLength(1);
    expect(got[0].body).toBe(`Trust-Plane: scheduled run at ${first.toISOString()} completed; every monitored asset collected within its window`);
    expect((await heartbeat()).body.last_run).toEqual({ at: first.toISOString(), outcome: "pinged", reason: null, error_class: null, http_status: 200, last_pinged_at: first.toISOString() });

    await script(inbox, [500]);
    const failedAt = await cron({}, 60_000);
    const origin = new URL(E.FIXTURE_URL);
    expect((await heartbeat()).body.last_run).toEqual({
      at: failedAt.toISOString(),
      outcome: "ping_failed",
      reason: `heartbeat ping: HTTP 500 from ${origin.protocol}//${origin.host}/***`,
      error_class: "http_status",
      http_status: 500,
      last_pinged_at: first.toISOString(),
    });
    const retried = await cron({}, 60_000);
    expect((await heartbeat()).body.last_run).toMatchObject({ at: retried.toISOString(), outcome: "pinged", last_pinged_at: retried.toISOString() });
    got = await received(inbox);
    expect(got).toHaveLength(3);
  });

  it("does not ping when an asset is not collected within its window, and says which and why", async () => {
    // An endpoint no agent scans: pending at first (a new asset does not stop the heartbeat) ...
    await createMonitor(org.session, { cn: "unscanned.example.test", ip_addresses: ["192.0.2.77"] });
    await cron({}, 60_000);
    expect((await heartbeat()).body.last_run.outcome).toBe("pinged");
    const before = (await received(inbox)).length;
    // ... stale once a whole certificate window (2 h 5 min) has passed without a scan.
    const at = await cron({}, 2 * 3_600_000 + 6 * 60_000);
    const run = (await heartbeat()).body.last_run;
    expect(run).toMatchObject({ at: at.toISOString(), outcome: "not_pinged", error_class: null, http_status: null });
    // Which asset, since when, and why, in the reports' words: here no agent scans the endpoint.
    expect(run.reason).toMatch(/^not pinged: collection is not keeping up: Certificate deployments: .* for 1 endpoint since .*192\.0\.2\.77:443 \(unscanned\.example\.test\).*No scanner agent is registered/);
    expect(await received(inbox)).toHaveLength(before);
  });

  it("does not ping after a run in which a job failed", async () => {
    const other = await signup("Heartbeat job");
    const otherInbox = checkId();
    expect((await callAt("PUT", "/api/admin/heartbeat", other.session, clock.now(), { url: `${E.FIXTURE_URL}/webhook/${otherInbox}` })).status).toBe(200);
    const now = clock.advance(1000);
    await runHeartbeats({ db: createDb(E.DB), config: loadConfig(env as never), now }, [
      { name: "dns-watcher.check_due", status: "error", error: "D1 unavailable" },
      { name: "reports.weekly", status: "ok" },
    ]);
    expect((await callAt("GET", "/api/admin/heartbeat", other.session)).body.last_run).toMatchObject({
      outcome: "not_pinged",
      reason: "not pinged: scheduled job dns-watcher.check_due failed in this run",
    });
    expect(await received(otherInbox)).toEqual([]);
  });

  it("stops when removed", async () => {
    expect((await callAt("DELETE", "/api/admin/heartbeat", org.session)).body).toEqual({ message: "Heartbeat removed" });
    const before = (await received(inbox)).length;
    await cron({}, 60_000);
    expect(await received(inbox)).toHaveLength(before);
    expect((await heartbeat()).body.configured).toBe(false);
    expectErrorShape(await callAt("DELETE", "/api/admin/heartbeat", org.session), 404, "not_found");
  });
});
