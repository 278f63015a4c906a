// The hostname state function of src/modules/inventory/state.ts, pure: certificates,
// targets and a clock in, the state and its reason out. Each state is reached, the order
// between them (the first that applies wins) is checked where two apply at once, and the
// clock is moved across the 24-hour deployment grace, the renewal thresholds and expiry
// (never slept). The end-to-end path with real certificates is lifecycle-e2e.test.ts.
import { describe, expect, it } from "vitest";
import { DEPLOYMENT_GRACE_MS, evaluateHostname, type HostnameInputs, type KnownCertificate, type TargetInput } from "../../src/modules/inventory/state";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const at = (ms: number) => new Date(ms);
const NAME = "www.example.com";

let nextId = 1;
/** A certificate for `names` valid `days` from `from`; logged in CT unless `logged` is false. */
function certificate(names: string[], from: number, days: number, opts: { logged?: boolean; issuer?: string } = {}): KnownCertificate {
  const id = nextId++;
  return {
    id,
    dedupKey: `dedup-${id}`,
    sha256: id.toString(16).padStart(64, "0"),
    servedSha256: null,
    names,
    issuer: opts.issuer ?? "C=US, O=Test Public CA A, CN=Test Public CA A",
    spkiSha256: "ab".repeat(32),
    notBefore: iso(from),
    notAfter: iso(from + days * DAY - 1000),
    firstSeenCtAt: opts.logged === false ? null : iso(from + HOUR),
  };
}

let nextTarget = 1;
function target(served: KnownCertificate | null, opts: { trust?: "public" | "private_ca" | "untrusted"; enabled?: boolean; scannedAt?: number; error?: string } = {}): TargetInput {
  const n = nextTarget++;
  const scannedAt = iso(opts.scannedAt ?? T0);
  return {
    targetId: n,
    monitorId: 100 + n,
    ipAddress: `192.0.2.${n}`,
    port: 443,
    enabled: opts.enabled ?? true,
    lastScanAt: served || opts.error ? scannedAt : null,
    error: opts.error ?? null,
    served: served ? { certificate: served, scannedAt, trust: opts.trust ?? "public", trustDetail: "" } : null,
  };
}

const inputs = (certificates: KnownCertificate[], targets: TargetInput[], over: Partial<HostnameInputs> = {}): HostnameInputs => ({
  hostname: NAME,
  certificates,
  targets,
  watchedSince: iso(T0 - 30 * DAY),
  ...over,
});

describe("a hostname's state", () => {
  it("is current while every target serves the latest logged certificate, with the renewal thresholds and the next review", () => {
    const c = certificate([NAME], T0 - 10 * DAY, 90);
    const e = evaluateHostname(inputs([c], [target(c)]), at(T0));
    expect(e.state).toBe("current");
    expect(e.reason).toMatch(/^Every scanned target serves a logged certificate/);
    expect(e.renewal).toEqual({ status: "ok", dueAt: iso(T0 - 10 * DAY + 60 * DAY - 667), overdueAt: iso(T0 - 10 * DAY + 75 * DAY - 833) });
    // Nothing changes by time alone before the renewal threshold.
    expect(e.nextReviewAt).toBe(e.renewal.dueAt);
  });

  it("is deploying for 24 hours after a successor is logged and a target still serves the previous one, then stale_deployment", () => {
    const old = certificate([NAME], T0 - 60 * DAY, 90);
    const renewal = certificate([NAME], T0, 90);
    const i = inputs([old, renewal], [target(old), target(renewal)]);
    const deploying = evaluateHostname(i, at(T0 + 2 * HOUR));
    expect(deploying.state).toBe("deploying");
    expect(deploying.behind).toEqual([deploying.targets[0].address]);
    expect(deploying.pendingSuccessor?.id).toBe(renewal.id);
    expect(deploying.renewal.status).toBe("renewed");
    // The next review is the end of the grace: the state changes then with no new data.
    expect(deploying.nextReviewAt).toBe(iso(T0 + DEPLOYMENT_GRACE_MS));
    expect(evaluateHostname(i, at(T0 + DEPLOYMENT_GRACE_MS - 1)).state).toBe("deploying");
    const stale = evaluateHostname(i, at(T0 + DEPLOYMENT_GRACE_MS));
    expect(stale.state).toBe("stale_deployment");
    expect(stale.reason).toMatch(new RegExp(`not served after 24 h by ${stale.targets[0].address.replace(/\./g, "\\.")}$`));
    // Deployed everywhere: current again.
    expect(evaluateHostname(inputs([old, renewal], [target(renewal), target(renewal)]), at(T0 + 2 * DAY)).state).toBe("current");
  });

  it("is not_in_ct for a served certificate never logged, saying whether it predates the CT search, is not watched, or is a private CA's", () => {
    const logged = certificate([NAME], T0 - 10 * DAY, 90);
    const shadow = certificate([NAME], T0 - 5 * DAY, 90, { logged: false, issuer: "O=Test Public CA B, CN=Test Public CA B" });
    const notLogged = evaluateHostname(inputs([logged, shadow], [target(shadow)]), at(T0));
    expect(notLogged.state).toBe("not_in_ct");
    expect(notLogged.targets[0].ctStatus).toBe("not_logged");
    expect(notLogged.reason).toMatch(/Test Public CA B, issued 2026-10-27, never seen in the CT logs read \(searched for www\.example\.com since 2026-10-02\)/);
    expect(evaluateHostname(inputs([logged, shadow], [target(shadow)], { watchedSince: iso(T0) }), at(T0)).targets[0].ctStatus).toBe("predates_monitoring");
    expect(evaluateHostname(inputs([shadow], [target(shadow)], { watchedSince: null }), at(T0)).targets[0].ctStatus).toBe("not_watched");
    const intranet = certificate([NAME], T0 - 5 * DAY, 365, { logged: false, issuer: "O=Intranet, CN=Intranet CA" });
    const priv = evaluateHostname(inputs([intranet], [target(intranet, { trust: "private_ca" })]), at(T0));
    expect(priv.state).toBe("not_in_ct");
    expect(priv.reason).toMatch(/Issued by Intranet, a private CA: it validates only against the monitor's own root CA/);
    // The CA/Browser Forum maximum does not bind a private CA: no readiness verdict.
    expect(priv.readiness.status).toBe("unknown");
  });

  it("is expiring_without_successor from two thirds of the lifetime, overdue in its last sixth, then expired", () => {
    const c = certificate([NAME], T0, 90);
    const i = inputs([c], [target(c)]);
    expect(evaluateHostname(i, at(T0 + 60 * DAY - HOUR)).state).toBe("current");
    const due = evaluateHostname(i, at(T0 + 60 * DAY));
    expect(due.state).toBe("expiring_without_successor");
    expect(due.renewal.status).toBe("due");
    expect(due.reason).toMatch(/30 days left\), past two thirds of its lifetime, and no successor was logged/);
    const overdue = evaluateHostname(i, at(T0 + 76 * DAY));
    expect(overdue.renewal.status).toBe("overdue");
    expect(overdue.reason).toMatch(/past the last sixth/);
    const expired = evaluateHostname(i, at(T0 + 90 * DAY));
    expect(expired.state).toBe("expired");
    expect(expired.reason).toBe(`${expired.targets[0].address} serves a certificate that expired ${c.notAfter}`);
    // A successor logged in time: renewed, deploying rather than expiring.
    const next = certificate([NAME], T0 + 60.5 * DAY, 90);
    expect(evaluateHostname(inputs([c, next], [target(c)]), at(T0 + 61 * DAY)).state).toBe("deploying");
  });

  it("is unmonitored when logged and no enabled target watches it, expired when that certificate ran out", () => {
    const c = certificate([NAME], T0, 90);
    const e = evaluateHostname(inputs([c], []), at(T0 + DAY));
    expect(e.state).toBe("unmonitored");
    expect(e.reason).toBe("Logged in CT, but no monitored target serves www.example.com");
    const disabled = evaluateHostname(inputs([c], [target(c, { enabled: false })]), at(T0 + DAY));
    expect(disabled.state).toBe("unmonitored");
    expect(disabled.reason).toMatch(/\(1 target disabled\)$/);
    expect(evaluateHostname(inputs([c], []), at(T0 + 91 * DAY)).state).toBe("expired");
  });

  it("is not_scanned while watched targets returned nothing yet, with each target's cause", () => {
    const c = certificate([NAME], T0, 90);
    const e = evaluateHostname(inputs([c], [target(null), target(null, { error: "TLS handshake with 192.0.2.9:443 failed: no shared cipher" })]), at(T0));
    expect(e.state).toBe("not_scanned");
    expect(e.reason).toMatch(/: Not scanned yet; .*: No certificate obtained yet: TLS handshake with 192\.0\.2\.9:443 failed/);
  });

  it("applies the first state that holds: expired over stale, stale over not_in_ct, not_in_ct over expiring", () => {
    const old = certificate([NAME], T0 - 80 * DAY, 90);
    const renewal = certificate([NAME], T0 - 3 * DAY, 90);
    const shadow = certificate([NAME], T0 - 80 * DAY, 90, { logged: false });
    const expiredOne = certificate([NAME], T0 - 100 * DAY, 90);
    expect(evaluateHostname(inputs([old, renewal, expiredOne], [target(old), target(expiredOne)]), at(T0)).state).toBe("expired");
    expect(evaluateHostname(inputs([old, renewal, shadow], [target(old), target(shadow)]), at(T0)).state).toBe("stale_deployment");
    // shadow is at 80 of 90 days (past the last sixth) and not in CT: not_in_ct is said first.
    expect(evaluateHostname(inputs([shadow], [target(shadow)]), at(T0)).state).toBe("not_in_ct");
  });

  it("does not call a name's own certificate replaced by a newer wildcard beside it (successors keep the form of coverage)", () => {
    const own = certificate([NAME], T0 - 10 * DAY, 90);
    const wildcard = certificate(["*.example.com"], T0 - DAY, 90);
    const e = evaluateHostname(inputs([own, wildcard], [target(own)]), at(T0 + 2 * DAY));
    expect(e.state).toBe("current");
    expect(e.latestIssued?.id).toBe(wildcard.id);
    // A newer certificate of the name itself does replace it.
    const ownRenewal = certificate([NAME, "example.com"], T0, 90);
    expect(evaluateHostname(inputs([own, wildcard, ownRenewal], [target(own)]), at(T0 + 2 * DAY)).state).toBe("stale_deployment");
  });

  it("keeps the observed cadence of the name's own line of certificates and judges readiness for the 100-day maximum from it", () => {
    // 200-day certificates renewed every 150 days (allowed in 2026), the last on 2026-11-01.
    const line = [certificate([NAME], T0 - 300 * DAY, 200), certificate([NAME], T0 - 150 * DAY, 200), certificate([NAME], T0, 200)];
    const e = evaluateHostname(inputs(line, [target(line[2])]), at(T0 + DAY));
    expect(e.renewalIntervalDays).toBe(150);
    expect(e.readiness).toMatchObject({ status: "not_ready", next_maximum_days: 100, matters_from: iso(T0 + 150 * DAY) });
    expect(e.readiness.reason).toMatch(/issued for 200 days, more than the 100 days allowed from 2027-03-15; it is renewed every 150 days/);
  });
});
