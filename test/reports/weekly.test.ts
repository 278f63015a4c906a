/**
 * The weekly report job through the Worker's scheduled handler with an injected clock:
 * the report of the week that ended Monday 00:00 UTC, stored once however often (and
 * however concurrently) the job runs, mailed through the outbox and SMTP (the local sink)
 * with the PDF attached to exactly the users whose flag is on, and missed weeks caught up.
 * Also the users' own switch of that flag.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, call, callFresh, createToken, expectErrorShape, invitationTokenFor, unique, type Org } from "../helpers";
import { agentCall, createMonitor, registerAgent, result } from "../cert-watcher/helpers";
import { lastWeekEnd } from "../../src/modules/reports/period";
import { E, clock, cron, download } from "./helpers";
import { inspectPdf, squash } from "./poppler";

const DAY = 86_400_000;
const SMTP = () => ({ SMTP_URL: `smtp://127.0.0.1:${E.SMTP_SINK_PORT}` });

async function invite(admin: Org, weekly: boolean | undefined) {
  const email = `weekly-${unique()}@example.com`.toLowerCase();
  const body: Record<string, unknown> = { email, roles: [{ module_name: "rdap", role_name: "Viewer" }] };
  if (weekly !== undefined) body.weekly_audit_report_enabled = weekly;
  expect((await call("POST", "/api/admin/invitations", { token: admin.session, body })).status).toBe(201);
  const acc = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: await invitationTokenFor(admin.session, email), password: PASSWORD } });
  expect(acc.status).toBe(201);
  return { email, userId: acc.body.user_id as number, session: acc.body.token as string };
}

async function sinkMessages(to: string): Promise<{ data: string }[]> {
  return (await (await fetch(`${E.FIXTURE_URL}/smtp/__control/messages?to=${encodeURIComponent(to)}`)).json<any>()).messages;
}

/** The base64 body of the MIME part attached as `filename`. */
function attachmentOf(mime: string, filename: string): Uint8Array {
  const at = mime.indexOf(`filename="${filename}"`);
  expect(at).toBeGreaterThan(0);
  const start = mime.indexOf("\r\n\r\n", at) + 4;
  const end = mime.indexOf("\r\n--", start);
  const bin = atob(mime.slice(start, end).replace(/\s+/g, ""));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * Calls after the job's clock moved days ahead use an API token (30 days): that run's
 * session pruning removed the 12-hour sessions.
 */
let token: string;

async function reportsOf() {
  const r = await call("GET", "/api/reports?limit=54", { token });
  expect(r.status).toBe(200);
  return r.body.data as any[];
}

let org: Org;
let recipients: string[];
let notMailed: string[];
let weekEnd: Date;

beforeAll(async () => {
  // A report judges freshness at its week's end, so the setup's scan must lie more than a
  // certificate window (2 h 5 min) before the end of the week reported, whatever the hour
  // the test runs: within 3 hours of Monday 00:00 UTC, the setup moves into the next week
  // (the clock moves forward less than 3 hours: the 12-hour sessions stay valid) and the
  // organization is created there, so the week that just ended is not one of its weeks.
  weekEnd = new Date(lastWeekEnd(clock.now()).getTime() + 7 * DAY); // the Monday ending this week
  if (weekEnd.getTime() - clock.now().getTime() < 3 * 3_600_000) {
    clock.set(new Date(weekEnd.getTime() + 60_000));
    weekEnd = new Date(weekEnd.getTime() + 7 * DAY);
  }
  const email = `admin-${unique()}@example.com`;
  const signup = await call("POST", "/api/auth/signup", {
    body: { organization_name: `Weekly ${unique()}`, email, password: PASSWORD },
    headers: { "x-trust-plane-now": clock.now().toISOString() },
  });
  expect(signup.status, JSON.stringify(signup.body)).toBe(201);
  org = { organizationId: signup.body.organization_id, userId: signup.body.user_id, email, session: signup.body.token };
  token = (await createToken(org.session, ["admin:manage_users"])).token;
  const on = await invite(org, true);
  const offByDefault = await invite(org, undefined);
  const switchedOff = await invite(org, true);
  const disabled = await invite(org, true);
  // Users switch the flag for themselves.
  expect((await call("PUT", "/api/auth/me/preferences", { token: offByDefault.session, body: { weekly_audit_report_enabled: true } })).body).toEqual({ weekly_audit_report_enabled: true });
  expect((await call("PUT", "/api/auth/me/preferences", { token: switchedOff.session, body: { weekly_audit_report_enabled: false } })).status).toBe(200);
  expect((await call("PUT", `/api/admin/users/${disabled.userId}/status`, { token: org.session, body: { status: "disabled" } })).status).toBe(200);
  recipients = [org.email.toLowerCase(), on.email, offByDefault.email].sort();
  notMailed = [switchedOff.email, disabled.email];

  // One fact this week: an endpoint presenting an expired certificate (a scan posted by the agent).
  await createMonitor(org.session, { cn: "expired.example.test", ip_addresses: ["192.0.2.40"] });
  const agent = await registerAgent(org.session);
  const scannedAt = await cron();
  const clockHeader = { "x-trust-plane-now": scannedAt.toISOString() };
  const lease = await agentCall("lease", agent.token, { max_jobs: 10 }, clockHeader);
  const job = lease.body.jobs.find((j: any) => j.ip_address === "192.0.2.40");
  expect((await agentCall("results", agent.token, { job_id: job.job_id, result: result("ecdsaTrusted", { daysLeft: -2 }) }, clockHeader)).status).toBe(200);
}, 120_000);

describe("preferences", () => {
  it("each user reads and switches their own weekly-report flag; bad input is a 400 that changes nothing", async () => {
    const me = await call("GET", "/api/auth/me/preferences", { token: org.session });
    expect(me.body).toEqual({ weekly_audit_report_enabled: true }); // the signup user starts with it on
    expect((await call("GET", "/api/auth/me", { token: org.session })).body.user.weekly_audit_report_enabled).toBe(true);
    expectErrorShape(await call("PUT", "/api/auth/me/preferences", { token: org.session, body: { weekly_audit_report_enabled: "yes" } }), 400, "validation_error");
    expectErrorShape(await call("PUT", "/api/auth/me/preferences", { token: org.session, body: { weekly_audit_report_enabled: false, other: 1 } }), 400, "validation_error");
    expectErrorShape(await call("PUT", "/api/auth/me/preferences", { body: { weekly_audit_report_enabled: false } }), 401, "unauthorized");
    expect((await call("GET", "/api/auth/me/preferences", { token: org.session })).body).toEqual({ weekly_audit_report_enabled: true });
    expect((await call("PUT", "/api/auth/me/preferences", { token: org.session, body: {} })).body).toEqual({ weekly_audit_report_enabled: true });
  });
});

describe("the weekly report job", () => {
  it("generates the week that ended Monday 00:00 UTC once, however often and concurrently the job runs, and mails it with the PDF", async () => {
    // Before the week has ended nothing is due for it.
    await cron(SMTP(), 60_000);
    expect(await reportsOf()).toEqual([]);

    // Monday 03:00 UTC after the week: two Cron runs at the same moment, then two more.
    const at = clock.set(new Date(weekEnd.getTime() + 3 * 3_600_000));
    const { createExecutionContext, createScheduledController, waitOnExecutionContext } = await import("cloudflare:test");
    const worker = (await import("../../src/index")).default;
    const { quietCt } = await import("./helpers");
    const env = { ...(E as object), ...(await quietCt()), ...SMTP() } as never;
    await Promise.all(
      [0, 1].map(async () => {
        const ctx = createExecutionContext();
        await worker.scheduled(createScheduledController({ scheduledTime: at.getTime(), cron: "* * * * *" }), env, ctx);
        await waitOnExecutionContext(ctx);
      }),
    );
    const runs = [at, await cron(SMTP(), 60_000), await cron(SMTP(), 60_000)]; // the later ones deliver the mail queued by the first

    const reports = await reportsOf();
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report).toMatchObject({
      report_type: "weekly",
      period_start: new Date(weekEnd.getTime() - 7 * DAY).toISOString(),
      period_end: weekEnd.toISOString(),
      generated_at: at.toISOString(),
      // certificates 70 (expired 30); coverage 70 (modules without assets 12 + stale scan 18):
      // (100·30 + 100·20 + 70·20 + 100·15 + 70·15) / 100 = 89.5 -> 90, an A by half-up rounding.
      overall_score: 90,
      grade: "A",
      category_scores: { dns: 100, ct: 100, certificates: 70, rdap: 100, coverage: 70 },
      findings_count: 3,
      // The endpoint's only scan is days before the week's end: the certificates score rests on nothing recent.
      provisional: true,
      graded: false,
      category_status: { certificates: { status: "blind", expected: 1, collected: 0 }, dns: { status: "no_assets" }, coverage: { status: "assessed" } },
    });
    expect(report.pdf_filename).toMatch(/^trust-plane-weekly-report-weekly-[a-z0-9-]+-\d{4}-W\d\d\.pdf$/);

    // The outbox: one mail per enabled, active user, PDF attached; delivered over SMTP (content then dropped),
    // sent at a delivery run's clock.
    const downloaded = await download(token, report.id);
    const outbox = (await call("GET", "/api/admin/mail-outbox?limit=100", { token })).body.messages.filter((m: any) => m.kind === "weekly_report");
    expect(outbox.map((m: any) => m.to).sort()).toEqual(recipients);
    for (const m of outbox) {
      expect(m.status).toBe("sent");
      expect(m.subject).toBe(`Trust-Plane weekly security report: not graded (Certificates not assessed); provisional score 90/100, ${report.period_start.slice(0, 10)} – ${report.period_end.slice(0, 10)}`);
      expect(m.attachments).toEqual([{ filename: report.pdf_filename, content_type: "application/pdf", size: downloaded.bytes.length }]);
      expect(runs.map((r) => r.toISOString())).toContain(m.sent_at);
    }

    // Each recipient got exactly one message over SMTP; its attachment is the PDF the API serves
    // (rendered from the stored report when the mail was sent: no outbox row held a copy).
    for (const to of recipients) {
      const got = await sinkMessages(to);
      expect(got, to).toHaveLength(1);
      // (Quoted-printable: a long line is broken by a soft "=" line end.)
      expect(got[0].data.replace(/=\r?\n/g, "")).toContain("Overall score: not graded (Certificates not assessed); provisional score 90/100");
      expect(got[0].data).toMatch(/Certificates: not assessed \(0 of 1 endpoint scanned since /);
      expect(got[0].data).toContain("Content-Type: application/pdf");
      const pdf = attachmentOf(got[0].data, report.pdf_filename);
      expect(pdf).toEqual(downloaded.bytes);
    }
    for (const to of notMailed) expect(await sinkMessages(to)).toEqual([]);

    const text = squash((await inspectPdf(downloaded.bytes)).text);
    expect(text).toContain("Expired certificates");
    expect(text).toContain("expired.example.test:443 (192.0.2.40)");
    expect(text).toContain("Monitoring data stale");
    expect(text).toMatch(/Certificate deployments: expired\.example\.test:443 \(192\.0\.2\.40\)/);
  });

  it("catches up the weeks it missed (the service was down), oldest first, and only once", async () => {
    // Two more weeks pass without a Cron run; the service comes back on a Wednesday.
    const at = clock.set(new Date(weekEnd.getTime() + 16 * DAY + 3_600_000));
    await cron({}, 0);
    let reports = await reportsOf();
    expect(reports.map((r) => r.period_end)).toEqual([
      new Date(weekEnd.getTime() + 14 * DAY).toISOString(),
      new Date(weekEnd.getTime() + 7 * DAY).toISOString(),
      weekEnd.toISOString(),
    ]);
    expect(reports.slice(0, 2).every((r) => r.generated_at === at.toISOString())).toBe(true);
    // No scan in those weeks: the expired certificate is not a finding of theirs, the stale data is.
    expect(reports[0]).toMatchObject({ findings_count: 2, category_scores: { certificates: 100, coverage: 70 } });
    await cron({}, 60_000);
    reports = await reportsOf();
    // Still three: the job found nothing due (and weeks before the organization existed never are).
    expect(reports).toHaveLength(3);
  });
});
