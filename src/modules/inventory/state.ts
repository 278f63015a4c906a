/**
 * A hostname's state, from what is known of it: the certificates that cover it (logged
 * in CT, or only seen served), what each monitored target served at its latest scan,
 * and since when the CT logs are searched for it. Pure: data and a clock in, the state,
 * its reason, renewal health and the next time it may change by time alone out.
 *
 * States, the first that applies wins (docs/modules/inventory.md):
 *   expired                     a target serves an expired certificate (unmonitored: the latest one expired)
 *   stale_deployment            a successor was issued more than 24 h ago and a target still serves the certificate it replaces
 *   not_in_ct                   a target serves a certificate not seen in CT, or a private CA's (ct status says which)
 *   expiring_without_successor  the certificate in use has less than a third of its lifetime left and no successor was logged
 *   deploying                   a successor was issued less than 24 h ago and a target still serves the certificate it replaces
 *   unmonitored                 logged in CT, no enabled target watches the name
 *   not_scanned                 watched, but no target has returned a certificate yet
 *   current                     every scanned target serves a logged certificate no successor replaces
 *
 * A successor of a certificate, for a name: logged later and covering the name the same
 * way (by the name itself, or by the wildcard of its parent; see coverage()).
 */
import type { CtStatus } from "../cert-watcher/events";
import {
  exceedsMaximumValidity,
  lifetimeDays,
  nextMaximum,
  observedRenewalIntervalDays,
  renewalReadiness,
  renewalStatus,
  renewalThresholds,
  type HostnameState,
  type Readiness,
  type RenewalStatus,
} from "../ct-log/lifecycle-contract";

/** A newer certificate not yet served is "deploying" for this long, then "stale". */
export const DEPLOYMENT_GRACE_MS = 24 * 3600_000;

export interface KnownCertificate {
  id: number;
  dedupKey: string;
  sha256: string;
  servedSha256: string | null;
  names: string[];
  issuer: string;
  spkiSha256: string;
  notBefore: string;
  notAfter: string;
  /** Null: never seen in the organization's CT matches. */
  firstSeenCtAt: string | null;
}

export type Trust = "public" | "private_ca" | "untrusted";

export interface TargetInput {
  targetId: number;
  monitorId: number;
  ipAddress: string;
  port: number;
  enabled: boolean;
  lastScanAt: string | null;
  /** The latest attempt's failure, if it failed. */
  error: string | null;
  /** What it served at its latest scan that returned a certificate. */
  served: { certificate: KnownCertificate; scannedAt: string; trust: Trust; trustDetail: string } | null;
}

export interface HostnameInputs {
  hostname: string;
  /** The certificates covering the name (a wildcard of its parent included). */
  certificates: KnownCertificate[];
  targets: TargetInput[];
  /** Creation of the oldest live CT filter covering the name; null: none covers it. */
  watchedSince: string | null;
}

export type TargetStanding = "current" | "behind" | "not_in_ct" | "expired" | "not_scanned" | "disabled";

export interface TargetEvaluation {
  targetId: number;
  monitorId: number;
  address: string;
  standing: TargetStanding;
  ctStatus: CtStatus | null;
  /** ct status in words (which CA, since when CT watches the name). */
  ctReason: string;
  certificate: KnownCertificate | null;
  scannedAt: string | null;
  trust: Trust | null;
  note: string;
  /** For a target behind: the logged certificate that succeeds the one it serves. */
  successor?: KnownCertificate;
}

export interface HostnameEvaluation {
  state: HostnameState;
  reason: string;
  latestIssued: KnownCertificate | null;
  /** The certificate renewal health is judged on: the soonest-expiring one served, else the latest logged. */
  inUse: KnownCertificate | null;
  renewal: { status: RenewalStatus | "none"; dueAt: string | null; overdueAt: string | null };
  renewalIntervalDays: number | null;
  readiness: Readiness;
  targets: TargetEvaluation[];
  /** Addresses still serving a certificate whose successor was logged. */
  behind: string[];
  /** The newest of those successors (the certificate a stale_deployment event names). */
  pendingSuccessor: KnownCertificate | null;
  /** The next instant the state may change by time alone; null: only new data changes it. */
  nextReviewAt: string | null;
}

const addressOf = (t: { ipAddress: string; port: number }) => (t.ipAddress.includes(":") ? `[${t.ipAddress}]:${t.port}` : `${t.ipAddress}:${t.port}`);
const day = (iso: string) => iso.slice(0, 10);
const issuerName = (dn: string) => /(?:^|,\s*)O=([^,]+)/.exec(dn)?.[1] ?? /(?:^|,\s*)CN=([^,]+)/.exec(dn)?.[1] ?? dn;
const fp = (c: KnownCertificate) => (c.servedSha256 ?? c.sha256).slice(0, 12);

/** Why a served certificate is (not) in CT. */
export function ctStanding(served: NonNullable<TargetInput["served"]>, watchedSince: string | null, hostname: string): { status: CtStatus; reason: string } {
  const c = served.certificate;
  if (c.firstSeenCtAt) return { status: "logged", reason: `Logged in CT, first seen ${c.firstSeenCtAt}` };
  if (served.trust !== "public") {
    const how = served.trust === "private_ca" ? "it validates only against the monitor's own root CA" : `it does not validate against the public trust store (${served.trustDetail || "unknown issuer"})`;
    return { status: "private_ca", reason: `Issued by ${issuerName(c.issuer)}, a private CA: ${how}` };
  }
  if (!watchedSince) return { status: "not_watched", reason: `Publicly trusted certificate from ${issuerName(c.issuer)} not seen in CT: no CT filter of the organization covers ${hostname}, so the logs are not searched for it` };
  if (c.notBefore < watchedSince) {
    return {
      status: "predates_monitoring",
      reason: `Publicly trusted certificate from ${issuerName(c.issuer)} not seen in CT: issued ${day(c.notBefore)}, before the logs were searched for ${hostname} (since ${day(watchedSince)}), so its entry may be older than what was read`,
    };
  }
  return { status: "not_logged", reason: `Publicly trusted certificate from ${issuerName(c.issuer)}, issued ${day(c.notBefore)}, never seen in the CT logs read (searched for ${hostname} since ${day(watchedSince)})` };
}

const byNotBeforeDesc = (a: KnownCertificate, b: KnownCertificate) => (a.notBefore < b.notBefore ? 1 : a.notBefore > b.notBefore ? -1 : b.id - a.id);

/**
 * How a certificate covers the name: by the name itself, or by a wildcard of its parent.
 * A renewal keeps the form; an organization that has both a certificate of its own for
 * www.example.com and a wildcard *.example.com deploys each where it belongs, so a newer
 * wildcard does not make the name's own certificate outdated (nor the reverse).
 */
function coverage(c: KnownCertificate, hostname: string): "name" | "wildcard" {
  return c.names.some((n) => n.toLowerCase() === hostname) ? "name" : "wildcard";
}

/** The newest logged certificate that succeeds `c` for the name: issued later, covering the name the same way. */
function successorOf(c: KnownCertificate, issued: readonly KnownCertificate[], hostname: string): KnownCertificate | null {
  const form = coverage(c, hostname);
  return issued.find((x) => x.dedupKey !== c.dedupKey && x.notBefore > c.notBefore && coverage(x, hostname) === form) ?? null;
}

export function evaluateHostname(input: HostnameInputs, now: Date): HostnameEvaluation {
  const t = now.getTime();
  const issued = input.certificates.filter((c) => c.firstSeenCtAt !== null).sort(byNotBeforeDesc);
  const latest = issued[0] ?? null;
  // A wildcard name is deployed where a target serves a certificate naming it; the other
  // targets one label below serve their own names (their own rows judge them).
  if (input.hostname.startsWith("*.")) {
    input = { ...input, targets: input.targets.filter((x) => x.served?.certificate.names.some((n) => n.toLowerCase() === input.hostname)) };
  }
  const reviews: number[] = [];
  const later = (iso: string | null | undefined) => {
    if (!iso) return;
    const at = Date.parse(iso);
    if (at > t) reviews.push(at);
  };

  const targets: TargetEvaluation[] = input.targets.map((target) => {
    const base = { targetId: target.targetId, monitorId: target.monitorId, address: addressOf(target), scannedAt: target.served?.scannedAt ?? null, trust: target.served?.trust ?? null };
    if (!target.enabled) return { ...base, standing: "disabled" as const, ctStatus: null, ctReason: "", certificate: target.served?.certificate ?? null, note: "Target or monitor disabled" };
    if (!target.served) {
      const note = target.error ? `No certificate obtained yet: ${target.error}` : target.lastScanAt ? "The latest scans returned no certificate" : "Not scanned yet";
      return { ...base, standing: "not_scanned" as const, ctStatus: null, ctReason: "", certificate: null, note };
    }
    const c = target.served.certificate;
    const ct = ctStanding(target.served, input.watchedSince, input.hostname);
    later(c.notAfter);
    const stale = target.error ? ` (its latest scan failed: ${target.error}; as of ${target.served.scannedAt})` : "";
    if (Date.parse(c.notAfter) <= t) return { ...base, standing: "expired" as const, ctStatus: ct.status, ctReason: ct.reason, certificate: c, note: `Serves a certificate that expired ${c.notAfter}${stale}` };
    const successor = successorOf(c, issued, input.hostname);
    if (successor) {
      later(new Date(Date.parse(successor.notBefore) + DEPLOYMENT_GRACE_MS).toISOString());
      return { ...base, standing: "behind" as const, ctStatus: ct.status, ctReason: ct.reason, certificate: c, successor, note: `Serves ${fp(c)}… (issued ${day(c.notBefore)}); its successor ${fp(successor)}… was issued ${day(successor.notBefore)}${stale}` };
    }
    if (ct.status !== "logged") return { ...base, standing: "not_in_ct" as const, ctStatus: ct.status, ctReason: ct.reason, certificate: c, note: `${ct.reason}${stale}` };
    return { ...base, standing: "current" as const, ctStatus: ct.status, ctReason: ct.reason, certificate: c, note: `Serves a logged certificate with no successor logged${stale}` };
  });

  const active = targets.filter((x) => x.standing !== "disabled");
  const scanned = active.filter((x) => x.certificate && x.standing !== "not_scanned");
  const served = scanned.map((x) => x.certificate!);
  const inUse = served.length ? [...served].sort((a, b) => (a.notAfter < b.notAfter ? -1 : a.notAfter > b.notAfter ? 1 : 0))[0] : latest;
  const hasSuccessor = inUse !== null && successorOf(inUse, issued, input.hostname) !== null;
  let renewal: HostnameEvaluation["renewal"] = { status: "none", dueAt: null, overdueAt: null };
  if (inUse) {
    const th = renewalThresholds(inUse.notBefore, inUse.notAfter);
    renewal = { status: renewalStatus(inUse, hasSuccessor, now), ...th };
    if (!hasSuccessor) [th.dueAt, th.overdueAt, inUse.notAfter].forEach(later);
  }
  // Renewal cadence: public certificates only (the CA/Browser Forum maximum does not bind a private CA).
  // The cadence of one line of certificates: those covering the name as the one in use does.
  const form = inUse ? coverage(inUse, input.hostname) : null;
  const publicCerts = input.certificates.filter(
    (c) => (c.firstSeenCtAt !== null || scanned.some((x) => x.certificate?.id === c.id && x.trust === "public")) && (form === null || coverage(c, input.hostname) === form),
  );
  const interval = observedRenewalIntervalDays(publicCerts.map((c) => c.notBefore));
  const judged = latest ?? (inUse && publicCerts.some((c) => c.id === inUse.id) ? inUse : null);
  const readiness: Readiness = judged
    ? renewalReadiness(judged, interval, now)
    : { status: "unknown", next_maximum_days: nextMaximum(now)?.days ?? null, next_maximum_from: nextMaximum(now)?.from ?? null, matters_from: null, reason: inUse ? "Only private-CA certificates: the CA/Browser Forum maximum does not apply" : "No certificate of this name is known yet" };
  later(nextMaximum(now)?.from);

  const behind = scanned.filter((x) => x.standing === "behind");
  // Stale once the oldest successor still waiting is 24 h old; the newest is the one to deploy.
  const successors = behind.map((x) => x.successor!).sort(byNotBeforeDesc);
  const pendingSuccessor = successors[0] ?? null;
  const behindSince = successors.length ? Date.parse(successors[successors.length - 1].notBefore) : 0;
  const pick = (): { state: HostnameState; reason: string } => {
    const expired = scanned.filter((x) => x.standing === "expired");
    if (expired.length) return { state: "expired", reason: `${expired.map((x) => x.address).join(", ")} ${expired.length > 1 ? "serve" : "serves"} a certificate that expired ${expired[0].certificate!.notAfter}` };
    if (!active.length && latest && Date.parse(latest.notAfter) <= t) return { state: "expired", reason: `The latest logged certificate expired ${latest.notAfter}; no target watches the name` };
    if (behind.length && t - behindSince >= DEPLOYMENT_GRACE_MS) {
      return { state: "stale_deployment", reason: `A newer certificate (${fp(pendingSuccessor!)}…, issued ${pendingSuccessor!.notBefore}) is not served after 24 h by ${behind.map((x) => x.address).join(", ")}` };
    }
    const notInCt = scanned.filter((x) => x.standing === "not_in_ct");
    if (notInCt.length) return { state: "not_in_ct", reason: notInCt.map((x) => `${x.address}: ${x.ctReason}`).join("; ") };
    if (renewal.status === "due" || renewal.status === "overdue") {
      const left = Math.max(0, Math.round((Date.parse(inUse!.notAfter) - t) / 3600_000 / 24));
      return {
        state: "expiring_without_successor",
        reason: `The certificate in use (${fp(inUse!)}…, ${lifetimeDays(inUse!.notBefore, inUse!.notAfter)} days) expires ${inUse!.notAfter} (${left} days left), past ${renewal.status === "overdue" ? "the last sixth" : "two thirds"} of its lifetime, and no successor was logged`,
      };
    }
    if (behind.length) return { state: "deploying", reason: `A newer certificate (${fp(pendingSuccessor!)}…, issued ${pendingSuccessor!.notBefore}) is not yet served by ${behind.map((x) => x.address).join(", ")}` };
    if (!active.length && latest) {
      const disabled = targets.length ? ` (${targets.length} target${targets.length > 1 ? "s" : ""} disabled)` : "";
      return { state: "unmonitored", reason: `Logged in CT, but no monitored target serves ${input.hostname}${disabled}` };
    }
    if (!scanned.length) {
      if (!active.length) return { state: "not_scanned", reason: "The certificate monitor has no enabled IP target" };
      return { state: "not_scanned", reason: active.map((x) => `${x.address}: ${x.note}`).join("; ") };
    }
    const waiting = active.filter((x) => x.standing === "not_scanned");
    const rest = waiting.length ? `; not scanned yet: ${waiting.map((x) => x.address).join(", ")}` : "";
    return { state: "current", reason: `Every scanned target serves a logged certificate that no later one of the same name replaces${rest}` };
  };
  const { state, reason } = pick();
  return {
    state,
    reason,
    latestIssued: latest,
    inUse,
    renewal,
    renewalIntervalDays: interval,
    readiness,
    targets,
    behind: behind.map((x) => x.address),
    pendingSuccessor,
    nextReviewAt: reviews.length ? new Date(Math.min(...reviews)).toISOString() : null,
  };
}

/** Lifetime facts of one certificate for the timeline. */
export function lifetimeOf(c: { notBefore: string; notAfter: string }) {
  const max = exceedsMaximumValidity(c.notBefore, c.notAfter);
  return { lifetime_days: lifetimeDays(c.notBefore, c.notAfter), exceeds_max_validity: max.exceeds, maximum_validity_days: max.maximumDays, ...renewalThresholds(c.notBefore, c.notAfter) };
}
