// Lifetime rules of src/modules/ct-log/cert/lifetime.ts, pure, with the clock passed in:
// the CA/Browser Forum maximum in force at a certificate's not_before (its steps on the
// day, both ends of the validity counted), renewal due at two thirds and overdue in the
// last sixth of a certificate's own lifetime, the observed cadence and the "not ready for
// the next maximum" verdict with the date it starts to matter.
import { describe, expect, it } from "vitest";
import {
  exceedsMaximumValidity,
  lifetimeDays,
  maximumValidityAt,
  nextMaximum,
  observedRenewalIntervalDays,
  renewalReadiness,
  renewalStatus,
  renewalThresholds,
} from "../../../src/modules/ct-log/cert/lifetime";

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);
/** A certificate valid `days` days from `notBefore`, notAfter one second short of it (as CAs issue them). */
const cert = (notBefore: string, days: number, extraSeconds = 0) => ({
  notBefore,
  notAfter: new Date(Date.parse(notBefore) + days * DAY - 1000 + extraSeconds * 1000).toISOString(),
});

describe("the maximum validity in force at not_before", () => {
  it("steps from 398 to 200 days on 2026-03-15, to 100 on 2027-03-15 and to 47 on 2029-03-15, each from midnight UTC", () => {
    expect(maximumValidityAt("2025-06-01T00:00:00Z").days).toBe(398);
    expect(maximumValidityAt("2026-03-14T23:59:59Z").days).toBe(398);
    expect(maximumValidityAt("2026-03-15T00:00:00Z")).toEqual({ days: 200, since: "2026-03-15T00:00:00Z" });
    expect(maximumValidityAt("2027-03-14T23:59:59Z").days).toBe(200);
    expect(maximumValidityAt("2027-03-15T00:00:00Z").days).toBe(100);
    expect(maximumValidityAt("2029-03-14T23:59:59Z").days).toBe(100);
    expect(maximumValidityAt("2029-03-15T00:00:00Z").days).toBe(47);
    expect(maximumValidityAt("2035-01-01T00:00:00Z").days).toBe(47);
  });

  it("flags a certificate one second longer than the maximum of its not_before, not one of exactly the maximum", () => {
    // Exactly 398 days counted inclusively (notAfter = notBefore + 398 d - 1 s), issued the day before the first step.
    expect(exceedsMaximumValidity(cert("2026-03-14T12:00:00Z", 398).notBefore, cert("2026-03-14T12:00:00Z", 398).notAfter).exceeds).toBe(false);
    const long = cert("2026-03-14T12:00:00Z", 398, 1);
    expect(exceedsMaximumValidity(long.notBefore, long.notAfter)).toEqual({ exceeds: true, maximumDays: 398, since: "2020-09-01T00:00:00Z" });
    // The same 398 days issued on the step's day: the 200-day maximum applies.
    const after = cert("2026-03-15T00:00:00Z", 398);
    expect(exceedsMaximumValidity(after.notBefore, after.notAfter)).toMatchObject({ exceeds: true, maximumDays: 200 });
    const ok200 = cert("2026-03-15T00:00:00Z", 200);
    expect(exceedsMaximumValidity(ok200.notBefore, ok200.notAfter).exceeds).toBe(false);
    const over100 = cert("2027-03-15T00:00:00Z", 101);
    expect(exceedsMaximumValidity(over100.notBefore, over100.notAfter)).toMatchObject({ exceeds: true, maximumDays: 100 });
    const ok47 = cert("2029-06-01T00:00:00Z", 47);
    expect(exceedsMaximumValidity(ok47.notBefore, ok47.notAfter)).toMatchObject({ exceeds: false, maximumDays: 47 });
    const over47 = cert("2029-06-01T00:00:00Z", 47, 1);
    expect(exceedsMaximumValidity(over47.notBefore, over47.notAfter).exceeds).toBe(true);
  });

  it("counts a certificate's days as the Baseline Requirements do (both ends included)", () => {
    const c = cert("2026-11-01T00:00:00Z", 90);
    expect(lifetimeDays(c.notBefore, c.notAfter)).toBe(90);
    expect(lifetimeDays("2026-11-01T00:00:00Z", "2026-11-07T00:00:00Z")).toBe(6);
  });

  it("names the next reduction after a moment, and none after the last", () => {
    expect(nextMaximum(at("2026-11-29T00:00:00Z"))).toEqual({ days: 100, from: "2027-03-15T00:00:00Z" });
    expect(nextMaximum(at("2027-03-15T00:00:00Z"))).toEqual({ days: 47, from: "2029-03-15T00:00:00Z" });
    expect(nextMaximum(at("2029-03-15T00:00:00Z"))).toBeNull();
  });
});

describe("renewal thresholds relative to the lifetime", () => {
  it("is due at two thirds and overdue in the last sixth, for a 90-day, a 47-day and a 6-day certificate", () => {
    for (const [days, dueDay, overdueDay] of [
      [90, 60, 75],
      [47, 31.33, 39.17],
      [6, 4, 5],
    ] as const) {
      const c = cert("2026-11-01T00:00:00Z", days);
      const { dueAt, overdueAt } = renewalThresholds(c.notBefore, c.notAfter);
      const start = Date.parse(c.notBefore);
      expect((Date.parse(dueAt) - start) / DAY).toBeCloseTo(dueDay, 1);
      expect((Date.parse(overdueAt) - start) / DAY).toBeCloseTo(overdueDay, 1);
    }
  });

  it("moves ok → due → overdue → expired as the clock passes each threshold, and is renewed once a successor exists", () => {
    const c = cert("2026-11-01T00:00:00Z", 90);
    const { dueAt, overdueAt } = renewalThresholds(c.notBefore, c.notAfter);
    const before = (iso: string) => new Date(Date.parse(iso) - 1);
    expect(renewalStatus(c, false, at("2026-11-02T00:00:00Z"))).toBe("ok");
    expect(renewalStatus(c, false, before(dueAt))).toBe("ok");
    expect(renewalStatus(c, false, at(dueAt))).toBe("due");
    expect(renewalStatus(c, false, before(overdueAt))).toBe("due");
    expect(renewalStatus(c, false, at(overdueAt))).toBe("overdue");
    expect(renewalStatus(c, false, before(c.notAfter))).toBe("overdue");
    expect(renewalStatus(c, false, at(c.notAfter))).toBe("expired");
    // A successor settles it whatever the clock says.
    expect(renewalStatus(c, true, at(overdueAt))).toBe("renewed");
    expect(renewalStatus(c, true, at("2027-06-01T00:00:00Z"))).toBe("renewed");
    // A fixed "14 days left" would fire for the whole life of a 6-day certificate; two thirds does not.
    const short = cert("2026-11-01T00:00:00Z", 6);
    expect(renewalStatus(short, false, at("2026-11-03T00:00:00Z"))).toBe("ok");
    expect(renewalStatus(short, false, at("2026-11-05T12:00:00Z"))).toBe("due");
    expect(renewalStatus(short, false, at("2026-11-06T12:00:00Z"))).toBe("overdue");
  });
});

describe("the observed renewal cadence", () => {
  it("is the median gap between not_befores, certificates issued within a day of the previous one counting once", () => {
    expect(observedRenewalIntervalDays(["2026-01-01T00:00:00Z"])).toBeNull();
    expect(observedRenewalIntervalDays([])).toBeNull();
    // 60, 90 and 90 days apart; a re-issue 2 hours after the second one is not a renewal
    // (counted as one, the median would be 75).
    expect(
      observedRenewalIntervalDays(["2026-05-31T00:00:00Z", "2026-01-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-02T02:00:00Z", "2026-08-29T00:00:00Z"]),
    ).toBe(90);
    expect(observedRenewalIntervalDays(["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-02-10T12:00:00Z"])).toBe(40.5);
  });
});

describe("readiness for the next maximum", () => {
  const now = at("2026-11-29T00:00:00Z");

  it("is not ready when certificates outlive the 100-day maximum, and says from when it matters (the first renewal on or after 2027-03-15)", () => {
    // 200-day certificates renewed every 120 days, the latest issued 2026-10-01: renewals
    // expected 2027-01-29, then 2027-05-29, the first under the 100-day maximum.
    const r = renewalReadiness(cert("2026-10-01T00:00:00Z", 200), 120, now);
    expect(r.status).toBe("not_ready");
    expect(r).toMatchObject({ next_maximum_days: 100, next_maximum_from: "2027-03-15T00:00:00Z", matters_from: "2027-05-29T00:00:00.000Z" });
    expect(r.reason).toMatch(/issued for 200 days, more than the 100 days allowed from 2027-03-15/);
    expect(r.reason).toMatch(/renewed every 120 days/);
  });

  it("is not ready when renewed less often than the maximum even with short certificates", () => {
    const r = renewalReadiness(cert("2026-11-01T00:00:00Z", 90), 110, now);
    expect(r.status).toBe("not_ready");
    expect(r.reason).not.toMatch(/issued for/);
    expect(r.reason).toMatch(/renewed every 110 days, so a 100-day certificate would expire before the next renewal/);
  });

  it("is ready for 90-day certificates renewed every 60 days (the renewal of 2027-04-30 is the first under it), and without a cadence it matters from the reduction's date", () => {
    expect(renewalReadiness(cert("2026-11-01T00:00:00Z", 90), 60, now)).toMatchObject({ status: "ready", matters_from: "2027-04-30T00:00:00.000Z" });
    expect(renewalReadiness(cert("2026-11-01T00:00:00Z", 90), null, now)).toMatchObject({ status: "ready", matters_from: "2027-03-15T00:00:00.000Z" });
  });

  it("judges against the next step as the clock moves: after 2027-03-15 a 90-day certificate is not ready for 47 days", () => {
    const later = renewalReadiness(cert("2027-06-01T00:00:00Z", 90), 60, at("2027-07-01T00:00:00Z"));
    expect(later).toMatchObject({ status: "not_ready", next_maximum_days: 47, next_maximum_from: "2029-03-15T00:00:00Z" });
    expect(renewalReadiness(cert("2029-06-01T00:00:00Z", 47), 30, at("2029-07-01T00:00:00Z"))).toMatchObject({ status: "unknown", next_maximum_days: null });
    expect(renewalReadiness(null, null, now)).toMatchObject({ status: "unknown", next_maximum_days: 100 });
  });
});
