/**
 * The reports and dashboard endpoints: access (any authenticated user of the
 * organization, another organization's report is 404), validation of `limit`, the
 * overview of an organization with nothing configured, listing and downloading.
 */
import { describe, expect, it } from "vitest";
import { PASSWORD, addMember, call, createToken, expectErrorShape, login, signup, unique } from "../helpers";
import { control } from "../rdap/data";
import { createDb } from "../../src/db/client";
import { generateWeeklyReport } from "../../src/modules/reports/generation-service";
import { loadConfig } from "../../src/env";
import { lastWeekEnd, weekEndingAt } from "../../src/modules/reports/period";
import { E, callAt, clock, download, findingIds, overview, rdapAnswer, rdapCron, watchRdap } from "./helpers";
import { inspectPdf, squash } from "./poppler";

const DAY = 86_400_000;

/** A weekly report made by the service directly (the Cron job is weekly.test.ts's subject). */
async function makeReport(org: { organizationId: number }, name: string, at: Date) {
  const period = weekEndingAt(lastWeekEnd(new Date(at.getTime() + 7 * 86_400_000)));
  return generateWeeklyReport({ db: createDb(E.DB), config: loadConfig(E as never), now: at }, { id: org.organizationId, name }, period);
}

describe("security overview", () => {
  it("an organization with nothing configured: only 'Modules without assets', naming every module", async () => {
    const org = await signup("Empty");
    const at = clock.advance(1000);
    const data = await overview(org.session, at);
    expect(findingIds(data)).toEqual(["coverage.modules_without_assets"]);
    const modules = ["CT Log", "Certificate deployments", "DNS watcher", "RDAP"];
    expect(data.findings[0].evidence.map((e: any) => e.asset).sort()).toEqual(modules);
    expect(data.findings[0]).toMatchObject({ title: "Modules without assets", severity: "medium", score_impact: 12, category: "coverage", affected_assets: modules.length });
    expect(data.category_scores).toEqual({ dns: 100, ct: 100, certificates: 100, rdap: 100, coverage: 88 });
    // (100·85 + 88·15) / 100 = 98.2 -> 98
    expect(data.overall_score).toBe(98);
    expect(data.grade).toBe("A");
    expect(data.generated_at).toBe(at.toISOString());
    expect(Date.parse(data.window.end) - Date.parse(data.window.start)).toBe(7 * 86_400_000 + 1);
    expect(data.coverage.map((c: any) => [c.module, c.configured_assets, c.enabled_assets, c.stale_assets]).sort()).toEqual(
      [["ct-log", 0, 0, 0], ["cert-watcher", 0, 0, 0], ["dns-watcher", 0, 0, 0], ["rdap", 0, 0, 0]].sort(),
    );
  });

  it("'Modules without assets' counts a module whose assets are all paused like one with none: both watch nothing", async () => {
    const org = await signup("Paused");
    const created = await call("POST", "/api/rdap/domains", { token: org.session, body: { domain_name: `paused-${unique()}.example` } });
    expect(created.status).toBe(201);
    expect((await call("PATCH", `/api/rdap/domains/${created.body.id}`, { token: org.session, body: { enabled: false } })).status).toBe(200);
    const data = await overview(org.session, clock.advance(1000));
    const finding = data.findings.find((f: any) => f.id === "coverage.modules_without_assets");
    expect(finding.evidence.map((e: any) => [e.asset, e.detail])).toEqual([
      ["CT Log", "No asset configured"],
      ["Certificate deployments", "No asset configured"],
      ["DNS watcher", "No asset configured"],
      ["RDAP", "All 1 configured asset(s) paused: the module watches nothing"],
    ]);
    expect(data.coverage.find((c: any) => c.module === "rdap")).toMatchObject({ configured_assets: 1, enabled_assets: 0, stale_assets: 0 });
    // Resumed, it is an asset again (and not yet checked: pending, not stale).
    expect((await call("PATCH", `/api/rdap/domains/${created.body.id}`, { token: org.session, body: { enabled: true } })).status).toBe(200);
    const resumed = (await overview(org.session, clock.advance(1000))).findings.find((f: any) => f.id === "coverage.modules_without_assets");
    expect(resumed.evidence.map((e: any) => e.asset)).toEqual(["CT Log", "Certificate deployments", "DNS watcher"]);
  });

  it("counts a change for 7 days: a registrar change is a finding until it is older than that", async () => {
    const org = await signup("Window");
    const domain = `window-${unique()}.com`;
    await control(`domain/${domain}`, { body: await rdapAnswer(domain) });
    await watchRdap(org, domain);
    await rdapCron();
    await control(`domain/${domain}`, { body: await rdapAnswer(domain, { registrar: { handle: "146", name: "GoDaddy.com, LLC" } }) });
    const changedAt = await rdapCron();
    const at = async (ms: number) => {
      const when = new Date(changedAt.getTime() + ms);
      return findingIds(await overview((await login(org.email, PASSWORD, when)).body.token, when));
    };
    expect(await at(1000)).toContain("rdap.ownership_or_registrar_change");
    expect(await at(7 * DAY - 60_000)).toContain("rdap.ownership_or_registrar_change");
    expect(await at(7 * DAY + 60_000)).not.toContain("rdap.ownership_or_registrar_change");
  });

  it("needs a bearer, and any authenticated user of the organization may read it (a Viewer, an API token with an unrelated scope)", async () => {
    const org = await signup("Access");
    expectErrorShape(await call("GET", "/api/dashboard/security-overview"), 401, "unauthorized");
    const viewer = await addMember(org.session, [{ module_name: "rdap", role_name: "Viewer" }]);
    const token = await createToken(org.session, ["lists:view_lists"]);
    for (const t of [viewer.session, token.token]) {
      const r = await callAt("GET", "/api/dashboard/security-overview", t);
      expect(r.status).toBe(200);
      expect(r.body.success).toBe(true);
      expect(r.body.data.overall_score).toBe(98);
    }
  });
});

describe("reports listing and download", () => {
  it("validates limit (1-54, default 10) and lists newest first", async () => {
    const org = await signup("Listing");
    for (const bad of ["0", "55", "x", "1.5"]) expectErrorShape(await callAt("GET", `/api/reports?limit=${bad}`, org.session), 400, "validation_error");
    expect((await callAt("GET", "/api/reports", org.session)).body).toEqual({ success: true, data: [] });

    const a = clock.now();
    await makeReport(org, "Listing Org", new Date(a.getTime() - 14 * 86_400_000));
    await makeReport(org, "Listing Org", new Date(a.getTime() - 7 * 86_400_000));
    await makeReport(org, "Listing Org", a);
    const all = await callAt("GET", "/api/reports?limit=54", org.session);
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(3);
    const ends = all.body.data.map((r: any) => r.period_end);
    expect(ends).toEqual([...ends].sort().reverse());
    const one = await callAt("GET", "/api/reports?limit=1", org.session);
    expect(one.body.data).toEqual([all.body.data[0]]);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(
      ["id", "report_type", "period_start", "period_end", "overall_score", "grade", "generated_at", "pdf_filename", "category_scores", "category_status", "provisional", "graded", "findings_count", "mail"].sort(),
    );
    expect(all.body.data[0]).toMatchObject({ report_type: "weekly", overall_score: 98, grade: "A", provisional: false, graded: true, findings_count: 1, pdf_filename: expect.stringMatching(/^trust-plane-weekly-report-listing-org-\d{4}-W\d\d\.pdf$/) });
    // Nothing configured: nothing to assess, which is not a blind spot.
    expect(Object.values(all.body.data[0].category_status).map((s: any) => s.status)).toEqual(["no_assets", "no_assets", "no_assets", "no_assets", "assessed"]);
    expect(Date.parse(all.body.data[0].period_end) - Date.parse(all.body.data[0].period_start)).toBe(7 * 86_400_000);
    expect(new Date(all.body.data[0].period_end).getUTCDay()).toBe(1); // a Monday
  });

  it("returns the 10 newest reports by default, of 12 stored", async () => {
    const org = await signup("Twelve");
    const a = clock.now();
    for (let week = 11; week >= 0; week--) expect((await makeReport(org, "Twelve Org", new Date(a.getTime() - week * 7 * DAY))).created).toBe(true);
    const all = (await callAt("GET", "/api/reports?limit=54", org.session)).body.data as any[];
    expect(all).toHaveLength(12);
    const byDefault = (await callAt("GET", "/api/reports", org.session)).body.data as any[];
    expect(byDefault).toHaveLength(10);
    expect(byDefault).toEqual(all.slice(0, 10));
    expect(byDefault.map((r) => r.period_end)).toEqual(all.map((r) => r.period_end).sort().reverse().slice(0, 10));
  });

  it("downloads the PDF with its file name; the same bytes every time; another organization's report is 404", async () => {
    const org = await signup("Download");
    const other = await signup("Other");
    await makeReport(org, "Download Org", clock.now());
    const [report] = (await callAt("GET", "/api/reports", org.session)).body.data;

    const first = await download(org.session, report.id);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/pdf");
    expect(first.headers.get("content-disposition")).toBe(`attachment; filename=${report.pdf_filename}`);
    const again = await download(org.session, report.id);
    expect(again.bytes).toEqual(first.bytes);

    const doc = await inspectPdf(first.bytes);
    const text = squash(doc.text);
    expect(text).toContain("Download Org");
    expect(text).toContain("Modules without assets");
    expect(text).toContain(`Reporting period ${report.period_start.slice(0, 10)} – ${report.period_end.slice(0, 10)} (UTC)`);

    // Any user of the organization; never another organization (404, not 403), nor an unknown id.
    const viewer = await addMember(org.session, [{ module_name: "ct-log", role_name: "Viewer" }]);
    expect((await download(viewer.session, report.id)).status).toBe(200);
    const foreign = await call("GET", `/api/reports/${report.id}/download`, { token: other.session });
    expectErrorShape(foreign, 404, "not_found");
    expectErrorShape(await call("GET", `/api/reports/999999/download`, { token: org.session }), 404, "not_found");
    expectErrorShape(await call("GET", `/api/reports/abc/download`, { token: org.session }), 400, "validation_error");
    expect((await callAt("GET", "/api/reports", other.session)).body.data).toEqual([]);
  });

  it("a report stored before category status and classified failures: status null, said in its PDF, no opaque runtime error shown", async () => {
    const org = await signup("Older");
    await makeReport(org, "Older Org", clock.now());
    const [report] = (await callAt("GET", "/api/reports", org.session)).body.data;
    // What such a report holds: no category status, an error text as the runtime gave it.
    const opaque = "Scan failed: internal error; reference = 7epfj5hq0t4mqtbrkqi3jp6a";
    await E.DB.prepare("UPDATE reports SET category_status = NULL WHERE id = ?").bind(report.id).run();
    await E.DB.prepare("UPDATE report_findings SET evidence = json_set(evidence, '$[0].detail', ?) WHERE report_id = ?").bind(opaque, report.id).run();

    const [older] = (await callAt("GET", "/api/reports", org.session)).body.data;
    expect(older).toMatchObject({ id: report.id, category_status: null, provisional: null, graded: null });
    const text = squash((await inspectPdf((await download(org.session, report.id)).bytes)).text);
    expect(text).toContain("This report was generated before what each category could assess was recorded");
    expect(text).toContain("Scan failed: the runtime gave no reason");
    expect(text).not.toMatch(/internal error/i);
  });
});

describe("generation is idempotent", () => {
  it("two generations of the same week at once: one report, its findings once, one mail per recipient", async () => {
    const org = await signup("Twice");
    const at = clock.advance(1000);
    const [a, b] = await Promise.all([makeReport(org, "Twice Org", at), makeReport(org, "Twice Org", at)]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    const reports = (await callAt("GET", "/api/reports", org.session)).body.data;
    expect(reports).toHaveLength(1);
    expect(reports[0].findings_count).toBe(1);
    const again = await makeReport(org, "Twice Org", new Date(at.getTime() + 60_000));
    expect(again.created).toBe(false);
    const mails = (await call("GET", "/api/admin/mail-outbox?limit=100", { token: org.session })).body.messages.filter((m: any) => m.kind === "weekly_report");
    expect(mails).toHaveLength(1); // the signup user, whose flag starts on
    expect(mails[0]).toMatchObject({ to: org.email.toLowerCase(), status: "stored", attachments: [{ filename: reports[0].pdf_filename, content_type: "application/pdf" }] });
    expect(mails[0].attachments[0].size).toBe((await download(org.session, reports[0].id)).bytes.length);
    // The outbox row names the report; it holds no copy of the PDF (rendered when the mail is sent).
    const row = await E.DB.prepare("SELECT attachments FROM mail_outbox WHERE id = ?").bind(mails[0].id).first<{ attachments: string }>();
    expect(JSON.parse(row!.attachments)).toEqual([
      { filename: reports[0].pdf_filename, content_type: "application/pdf", size: mails[0].attachments[0].size, content: "", source: { kind: "report_pdf", key: `weekly/${reports[0].period_start}` } },
    ]);
  });
});

