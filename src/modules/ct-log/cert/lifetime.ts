/**
 * Certificate lifetime rules: the maximum validity of publicly-trusted TLS certificates
 * in force at a certificate's not_before (CA/Browser Forum Baseline Requirements, ballot
 * SC-081), and renewal thresholds relative to a certificate's own lifetime.
 *
 * Why relative thresholds: a fixed "14 days left" rule is silent for a 398-day
 * certificate until the last two weeks and fires for the whole life of a 6-day one. A
 * certificate is due for renewal once two thirds of its lifetime have passed (the point
 * ACME clients such as certbot and the ACME Renewal Information defaults renew at) and
 * overdue in the last sixth of it: 15 days before the end of a 90-day certificate,
 * 8 days of a 47-day one, 1 day of a 6-day one.
 *
 * Validity is counted as the Baseline Requirements count it: from notBefore to notAfter
 * inclusive, i.e. notAfter - notBefore + 1 second. Pure: times in, verdicts out.
 */

const DAY_MS = 86_400_000;

/** The maximum validity of a publicly-trusted TLS certificate, by the not_before it applies from (SC-081). */
export const MAXIMUM_VALIDITY_SCHEDULE: readonly { from: string; days: number }[] = [
  { from: "2020-09-01T00:00:00Z", days: 398 },
  { from: "2026-03-15T00:00:00Z", days: 200 },
  { from: "2027-03-15T00:00:00Z", days: 100 },
  { from: "2029-03-15T00:00:00Z", days: 47 },
];

/** The validity of a certificate in milliseconds, counted as the Baseline Requirements do (both ends included). */
export function validityMs(notBefore: string, notAfter: string): number {
  return Date.parse(notAfter) - Date.parse(notBefore) + 1000;
}

/** Whole days of validity (a 90-day certificate whose notAfter is 90 days minus one second after its notBefore is 90). */
export function lifetimeDays(notBefore: string, notAfter: string): number {
  return Math.round(validityMs(notBefore, notAfter) / DAY_MS);
}

/** The maximum in force for a certificate with this not_before (398 days for anything before the schedule's first step). */
export function maximumValidityAt(notBefore: string): { days: number; since: string } {
  const at = Date.parse(notBefore);
  let current = { days: MAXIMUM_VALIDITY_SCHEDULE[0].days, since: MAXIMUM_VALIDITY_SCHEDULE[0].from };
  for (const step of MAXIMUM_VALIDITY_SCHEDULE) if (Date.parse(step.from) <= at) current = { days: step.days, since: step.from };
  return current;
}

/** Whether a certificate's validity exceeds the maximum in force at its not_before, and by how much. */
export function exceedsMaximumValidity(notBefore: string, notAfter: string): { exceeds: boolean; maximumDays: number; since: string } {
  const max = maximumValidityAt(notBefore);
  return { exceeds: validityMs(notBefore, notAfter) > max.days * DAY_MS, maximumDays: max.days, since: max.since };
}

/** The next reduction of the maximum after `now` (none after the last step). */
export function nextMaximum(now: Date): { days: number; from: string } | null {
  const step = MAXIMUM_VALIDITY_SCHEDULE.find((s) => Date.parse(s.from) > now.getTime());
  return step ? { days: step.days, from: step.from } : null;
}

export const RENEWAL_STATUSES = ["ok", "due", "overdue", "renewed", "expired"] as const;
export type RenewalStatus = (typeof RENEWAL_STATUSES)[number];

/** When a certificate is due for renewal (two thirds of its lifetime) and overdue (the last sixth). */
export function renewalThresholds(notBefore: string, notAfter: string): { dueAt: string; overdueAt: string } {
  const start = Date.parse(notBefore);
  const span = Date.parse(notAfter) - start;
  return { dueAt: new Date(start + Math.round((span * 2) / 3)).toISOString(), overdueAt: new Date(start + Math.round((span * 5) / 6)).toISOString() };
}

/**
 * The renewal status of a certificate in use at `now`: `renewed` once a successor was
 * issued (whatever the clock says), else `expired` after not_after, `overdue` in its last
 * sixth, `due` past two thirds, `ok` before.
 */
export function renewalStatus(cert: { notBefore: string; notAfter: string }, hasSuccessor: boolean, now: Date): RenewalStatus {
  if (hasSuccessor) return "renewed";
  const t = now.getTime();
  if (t >= Date.parse(cert.notAfter)) return "expired";
  const { dueAt, overdueAt } = renewalThresholds(cert.notBefore, cert.notAfter);
  if (t >= Date.parse(overdueAt)) return "overdue";
  if (t >= Date.parse(dueAt)) return "due";
  return "ok";
}

/**
 * The observed renewal interval of a name: the median gap, in days, between the
 * not_before of consecutive certificates (certificates issued within a day of the one
 * before are one renewal: a precertificate re-issued, a second certificate for another
 * server of the same name). Null with fewer than two renewals' worth of certificates.
 */
export function observedRenewalIntervalDays(notBefores: readonly string[]): number | null {
  const times = [...new Set(notBefores.map((t) => Date.parse(t)))].filter(Number.isFinite).sort((a, b) => a - b);
  const gaps: number[] = [];
  let last: number | null = null;
  for (const t of times) {
    if (last !== null) {
      if (t - last < DAY_MS) continue;
      gaps.push((t - last) / DAY_MS);
    }
    last = t;
  }
  if (!gaps.length) return null;
  return Math.round(median(gaps) * 10) / 10;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export interface Readiness {
  /** `ready`: the cadence fits the next maximum; `not_ready`: it does not; `unknown`: nothing to judge (no certificate, or no reduction ahead). */
  status: "ready" | "not_ready" | "unknown";
  /** The next maximum and the date it applies from (null when no reduction is scheduled after now). */
  next_maximum_days: number | null;
  next_maximum_from: string | null;
  /** When it starts to matter for this name: the first renewal expected on or after the reduction (the reduction's date without an observed interval). */
  matters_from: string | null;
  reason: string;
}

/**
 * Will the name's renewal cadence fit the next maximum? It does not when its
 * certificates are issued for longer than that maximum, or renewed less often than it
 * (a certificate of the new maximum would then expire before the next renewal).
 */
export function renewalReadiness(latest: { notBefore: string; notAfter: string } | null, intervalDays: number | null, now: Date): Readiness {
  const next = nextMaximum(now);
  if (!next) return { status: "unknown", next_maximum_days: null, next_maximum_from: null, matters_from: null, reason: "No further reduction of the maximum validity is scheduled" };
  const base = { next_maximum_days: next.days, next_maximum_from: next.from };
  if (!latest) return { status: "unknown", ...base, matters_from: null, reason: "No certificate of this name is known yet" };
  const lifetime = lifetimeDays(latest.notBefore, latest.notAfter);
  const problems: string[] = [];
  if (lifetime > next.days) problems.push(`its certificates are issued for ${lifetime} days, more than the ${next.days} days allowed from ${next.from.slice(0, 10)}`);
  if (intervalDays !== null && intervalDays > next.days) problems.push(`it is renewed every ${intervalDays} days, so a ${next.days}-day certificate would expire before the next renewal`);
  // The first renewal expected on or after the reduction takes the new maximum.
  let matters = Date.parse(next.from);
  if (intervalDays !== null && intervalDays > 0) {
    let expected = Date.parse(latest.notBefore);
    while (expected < matters) expected += intervalDays * DAY_MS;
    matters = expected;
  }
  const mattersFrom = new Date(matters).toISOString();
  if (!problems.length) {
    const cadence = intervalDays === null ? `${lifetime}-day certificates (no renewal observed yet)` : `${lifetime}-day certificates renewed every ${intervalDays} days`;
    return { status: "ready", ...base, matters_from: mattersFrom, reason: `${cadence} fit the ${next.days}-day maximum` };
  }
  return { status: "not_ready", ...base, matters_from: mattersFrom, reason: `Not ready for the ${next.days}-day maximum: ${problems.join("; ")}` };
}
