/**
 * "Monitoring data stale" means data not COLLECTED within the module's window, not data
 * not checked: an RDAP monitor whose registry answers errors is checked at every run
 * (its last_checked_at moves) and still goes stale once its last successful check is
 * older than the window, beside a healthy monitor of the same server that does not.
 * Checks through the Cron's real poll of the local RDAP server, with the injected clock.
 * And the CT log cursors' progress, from which the CT module's freshness is read.
 */
import { describe, expect, it } from "vitest";
import { PASSWORD, login, signup, unique } from "../helpers";
import { control } from "../rdap/data";
import { ctLogCollectedThrough } from "../../src/modules/reports/facts/ct";
import { callAt, clock, findingIds, overview, rdapAnswer, rdapCron, watchRdap } from "./helpers";

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** When the RDAP module last checked `domain`, as its listing says (the lookup's start: the run's clock and a few ms). */
const checkedAt = (monitors: { domain_name: string; last_checked_at: string }[], domain: string) => Date.parse(monitors.find((m) => m.domain_name === domain)!.last_checked_at);

describe("RDAP freshness", () => {
  it("a monitor whose checks fail goes stale after the window (12 h 5 min) although it is checked at every run; a healthy one does not", async () => {
    const org = await signup("Fresh");
    const healthy = `fresh-ok-${unique()}.com`;
    const failing = `fresh-ko-${unique()}.com`;
    await control(`domain/${healthy}`, { body: await rdapAnswer(healthy) });
    await control(`domain/${failing}`, { body: await rdapAnswer(failing) });
    await watchRdap(org, healthy);
    await watchRdap(org, failing);
    const collected = await rdapCron();

    // From now on the registry answers 503 for one of them; both are checked every 4 hours.
    await control(`domain/${failing}`, { status: 503 });
    const sessionAt = async (at: Date) => (await login(org.email, PASSWORD, at)).body.token as string;
    for (let run = 0; run < 2; run++) await rdapCron({}, 4 * HOUR);
    const inWindow = clock.now();
    let session = await sessionAt(inWindow);
    const monitors = (await callAt("GET", "/api/rdap/domains", session, inWindow)).body.domains as any[];
    // Checked 8 hours after its last success, and failing: not stale yet (within 12 h 5 min).
    expect(monitors.find((m) => m.domain_name === failing)).toMatchObject({ last_check_status: "server_error" });
    expect(checkedAt(monitors, failing)).toBeGreaterThanOrEqual(inWindow.getTime());
    expect(findingIds(await overview(session, inWindow))).not.toContain("coverage.monitoring_data_stale");

    // 12 h 30 min after the last success: checked again (and failing), now stale; the healthy one is fresh.
    const late = await rdapCron({}, 4 * HOUR + 30 * MINUTE);
    session = await sessionAt(late);
    const monitorsLate = (await callAt("GET", "/api/rdap/domains", session, late)).body.domains as any[];
    expect(monitorsLate.find((m) => m.domain_name === failing)).toMatchObject({ last_check_status: "server_error" });
    expect(monitorsLate.find((m) => m.domain_name === healthy)).toMatchObject({ last_check_status: "success" });
    for (const name of [failing, healthy]) expect(checkedAt(monitorsLate, name)).toBeGreaterThanOrEqual(late.getTime());
    const data = await overview(session, late);
    const stale = data.findings.find((f: any) => f.id === "coverage.monitoring_data_stale");
    expect(stale.evidence).toEqual([
      {
        asset: `RDAP: ${failing}`,
        // Its collection state: failing since the first failed check, with the newest data it has.
        detail: expect.stringMatching(
          new RegExp(`^Failing since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(http_status\\): RDAP lookup of ${failing.replace(/\./g, "\\.")}: HTTP 503 from .*; newest data \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC; expected within 12 h 5 min$`),
        ),
        observed_at: expect.any(String),
        fingerprint: null,
        old_value: null,
        new_value: null,
      },
    ]);
    // The RDAP category rests on one of its two domains: partly assessed, the grade provisional.
    expect(data.provisional).toBe(true);
    expect(data.category_status.rdap).toMatchObject({ status: "partial", expected: 2, collected: 1 });
    expect(data.category_status.rdap.reason).toMatch(new RegExp(`^1 of 2 domains looked up since .* UTC: HTTP error for 1 domain since .* UTC \\(RDAP lookup of ${failing.replace(/\./g, "\\.")}: .*503`));
    // Its newest data is the first run's answer (the lookup's start, a moment after that run's clock).
    const newest = Date.parse(stale.evidence[0].observed_at);
    expect(newest - collected.getTime()).toBeGreaterThanOrEqual(0);
    expect(newest - collected.getTime()).toBeLessThan(MINUTE);
    expect(data.coverage.find((c: any) => c.module === "rdap")).toMatchObject({ enabled_assets: 2, stale_assets: 1, expected_window_seconds: 43_500 });
  });
});

describe("CT freshness: how far each log's cursor has really read", () => {
  const at = (m: number) => new Date(Date.UTC(2026, 10, 20, 12, m)).toISOString();
  const caughtUp = { verifiedPosition: 1000, treeSize: 1000, verifiedTreeHeadAt: at(0), lastEntryAt: at(1), lastRunAt: at(30), consecutiveFailures: 0 };

  it("a cursor whose last run read everything the log had: that run", () => {
    expect(ctLogCollectedThrough(caughtUp)).toBe(at(30));
    expect(ctLogCollectedThrough(null)).toBeNull();
    expect(ctLogCollectedThrough({ ...caughtUp, verifiedPosition: null })).toBeNull();
  });

  it("a cursor that runs without catching up (stuck behind the head): its newest verified entry, however recent its runs", () => {
    expect(ctLogCollectedThrough({ ...caughtUp, treeSize: 50_000, lastRunAt: at(59) })).toBe(at(1));
  });

  it("a cursor failing since it caught up: the tree head it verified, not the time of its failing runs", () => {
    expect(ctLogCollectedThrough({ ...caughtUp, consecutiveFailures: 4, lastRunAt: at(59) })).toBe(at(1));
    expect(ctLogCollectedThrough({ ...caughtUp, consecutiveFailures: 4, verifiedTreeHeadAt: at(5) })).toBe(at(5));
  });
});
