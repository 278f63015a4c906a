/**
 * Time, injected. A request reads its clock once (`c.get("now")`), a scheduled job
 * gets `now` in its context; services take it as a parameter and never call
 * `new Date()` themselves, so behaviour that depends on time (expiry, windows,
 * schedules) is tested by moving the clock, not by sleeping or ageing rows.
 *
 * Tests move a request's clock with the `X-Trust-Plane-Now: <ISO 8601>` header. The
 * header is honoured only when the `ALLOW_CLOCK_OVERRIDE` binding is "true", which
 * only the test configuration (vitest.config.mts) sets: a deployed service ignores it.
 */
export const CLOCK_HEADER = "x-trust-plane-now";

export function requestNow(allowOverride: string | undefined, header: string | undefined, real: Date = new Date()): Date {
  if (allowOverride !== "true" || !header) return real;
  const t = Date.parse(header);
  return Number.isNaN(t) ? real : new Date(t);
}
