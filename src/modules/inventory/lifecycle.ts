/**
 * The inventory at work: what it learns from CT publications and from scans, the
 * re-evaluation of the hostnames concerned, and the events their state changes raise.
 *
 *   CT fan-out (ct-log/fanout.ts) ── describe() ─ deployed? known key? what it replaces
 *                                 └─ record()   ─ certificates + names, then refresh
 *   accepted scan (cert-watcher)  ── scanAccepted() ─ the served leaf's identity, the
 *                                    deployment, the target's CT standing, then refresh
 *   monitors changed              ── monitorsChanged() ─ the names are due at once
 *   due names (time-driven)       ── refreshDue() ─ the scheduled job, and every read
 *
 * Events, each once per change (stable ids: AlertState drops an id it has seen):
 *   ct-log      stale_deployment  a name enters stale_deployment
 *               renewal_overdue   a name's certificate in use enters its last sixth
 *   cert-watcher not_in_ct        a target's served certificate is (newly) not seen in CT
 */
import type { Bindings } from "../../env";
import type { Db } from "../../db/client";
import { emitEvents, organizationsWithRules } from "../alerting/contract";
import { buildNotInCtEvent, type CertScanEvent } from "../cert-watcher/events";
import type { AcceptedScan, DeploymentObserver } from "../cert-watcher/deployment-contract";
import type { CtStatus } from "../cert-watcher/events";
import {
  buildLifecycleEvent,
  certificateDedupKeySync,
  exceedsMaximumValidity,
  lifetimeDays,
  parseCertificate,
  proposeCertMonitors,
  sha256HexSync,
  type CtEventCert,
  type CtLogEvent,
  type IssuanceFacts,
  type IssuanceLifecycle,
  type OrganizationCertificate,
} from "../ct-log/lifecycle-contract";
import type { Authorization } from "../ct-log/lifecycle-contract";
import { evaluateHostname, type HostnameEvaluation, type Trust } from "./state";
import {
  certificatesByKey,
  certificatesNaming,
  deployedKeys,
  dueNames,
  hostnameRows,
  keyOf,
  loadNames,
  markDue,
  namesUnderWildcards,
  parentName,
  saveCertificates,
  saveDeployment,
  saveHostnames,
  setCtStatus,
  targetRow,
  type HostnameRow,
  type InventoryCertificate,
  type LoadedName,
  type NameRef,
} from "./store";

/** Names evaluated per statement group; a due-review run takes at most this many. */
export const REFRESH_BATCH = 200;

/** What a scan adds to the refresh of its name: the target it was, and its event (for not_in_ct). */
interface ScanContext {
  organizationId: number;
  targetId: number;
  event: CertScanEvent;
  previousCtStatus: CtStatus | null;
  previousCertificateId: number | null;
  certificateId: number | null;
}

/** The cert.* of a lifecycle event, from what the inventory keeps of the certificate. */
function eventCertOf(c: InventoryCertificate): CtEventCert {
  return {
    subject: c.subject, issuer: c.issuer, dns_names: c.names, sha256: c.servedSha256 ?? c.sha256, serial: c.serial, not_before: c.notBefore, not_after: c.notAfter,
    signature_algorithm: "", key_algorithm: "", is_precert: false, log_name: "", log_index: 0, aia_issuing: [], ocsp_servers: [], scts: [],
    spki_sha256: c.spkiSha256, issuer_spki_sha256: c.issuerSpkiSha256,
  };
}

function judgedOf(c: InventoryCertificate) {
  return {
    authorization: c.authorization?.verdict ?? ("" as const),
    authorization_reason: c.authorization?.reason ?? "Not seen in CT: no authorization verdict",
    deployed: c.firstDeployedAt !== null,
    replaces: "",
    lifetime_days: lifetimeDays(c.notBefore, c.notAfter),
    exceeds_max_validity: exceedsMaximumValidity(c.notBefore, c.notAfter).exceeds,
  };
}

interface Refreshed {
  loaded: LoadedName;
  evaluation: HostnameEvaluation;
  row: Omit<HostnameRow, "id">;
}

/**
 * Re-evaluates these names: loads their certificates, targets and filters, evaluates
 * each, raises the events of their changes (before saving: a failure leaves the change
 * to be seen again, and the events' ids make a repeat harmless), offers a certificate
 * monitor for names seen in CT that no target watches, and saves the rows. A name
 * nothing covers any more (no certificate, no monitor) leaves the inventory.
 */
export async function refreshNames(env: Bindings, db: Db, names: readonly NameRef[], now: Date, scan?: ScanContext): Promise<Map<string, Refreshed>> {
  const unique = [...new Map(names.map((n) => [keyOf(n), n])).values()];
  const out = new Map<string, Refreshed>();
  for (let i = 0; i < unique.length; i += REFRESH_BATCH) {
    const part = unique.slice(i, i + REFRESH_BATCH);
    const [loaded, previous] = await Promise.all([loadNames(db, part), hostnameRows(db, part)]);
    const at = now.toISOString();
    const rows: Omit<HostnameRow, "id">[] = [];
    const gone: NameRef[] = [];
    const ctEvents = new Map<number, { id: string; event: CtLogEvent }[]>();
    const proposals: { organizationId: number; hostname: string; filterId: number; sha256: string }[] = [];
    for (const n of part) {
      const l = loaded.get(keyOf(n))!;
      // A wildcard is a name of certificates only: without one covering it, it is not in the inventory.
      if (!l.inputs.certificates.length && (n.hostname.startsWith("*.") || !l.monitored.length)) {
        if (previous.has(keyOf(n))) gone.push(n);
        continue;
      }
      const e = evaluateHostname(l.inputs, now);
      // A row markDue() added for a new name was never evaluated: it has no state to leave.
      const stored = previous.get(keyOf(n));
      const prev = stored && stored.evaluatedAt !== "" ? stored : undefined;
      const entersStale = e.state === "stale_deployment" && prev?.state !== "stale_deployment";
      const entersOverdue = e.renewal.status === "overdue" && prev?.renewalStatus !== "overdue";
      {
        const filter = l.filters[0] ? { id: l.filters[0].id, pattern: l.filters[0].pattern } : { id: 0, pattern: "" };
        const lifecycle = (type: "renewal_overdue" | "stale_deployment", cert: InventoryCertificate, targets: string[]) => ({
          id: `ct-log:${type}:${n.hostname}:${cert.servedSha256 ?? cert.sha256}`,
          event: buildLifecycleEvent({
            type,
            cert: eventCertOf(cert),
            judged: judgedOf(cert),
            filter,
            at,
            lifecycle: {
              hostname: n.hostname,
              state: e.state,
              previous_state: prev?.state ?? "",
              reason: e.reason,
              renewal_status: e.renewal.status,
              renewal_due_at: e.renewal.dueAt ?? "",
              renewal_overdue_at: e.renewal.overdueAt ?? "",
              targets,
            },
          }),
        });
        const list = ctEvents.get(n.organizationId) ?? [];
        if (entersStale && e.pendingSuccessor) list.push(lifecycle("stale_deployment", e.pendingSuccessor as InventoryCertificate, e.behind));
        if (entersOverdue && e.inUse) list.push(lifecycle("renewal_overdue", e.inUse as InventoryCertificate, e.targets.filter((x) => x.certificate?.id === e.inUse!.id).map((x) => x.address)));
        if (list.length) ctEvents.set(n.organizationId, list);
      }
      if (e.state === "unmonitored" && !n.hostname.startsWith("*.") && e.latestIssued && l.filters[0]) {
        proposals.push({ organizationId: n.organizationId, hostname: n.hostname, filterId: l.filters[0].id, sha256: e.latestIssued.sha256 });
      }
      const row: Omit<HostnameRow, "id"> = {
        organizationId: n.organizationId,
        hostname: n.hostname,
        state: e.state,
        stateReason: e.reason,
        stateSince: prev?.state === e.state ? prev.stateSince : at,
        previousState: prev && prev.state !== e.state ? prev.state : (prev?.previousState ?? null),
        renewalStatus: e.renewal.status,
        renewalDueAt: e.renewal.dueAt,
        renewalOverdueAt: e.renewal.overdueAt,
        latestCertificateId: e.latestIssued?.id ?? null,
        latestNotAfter: (e.latestIssued ?? e.inUse)?.notAfter ?? null,
        renewalIntervalDays: e.renewalIntervalDays === null ? null : Math.round(e.renewalIntervalDays),
        readiness: e.readiness.status,
        readinessFrom: e.readiness.matters_from,
        // A wildcard counts the targets serving it, not every name one label below.
        targetCount: n.hostname.startsWith("*.") ? e.targets.length : l.monitored.length,
        evaluatedAt: at,
        nextReviewAt: e.nextReviewAt,
      };
      rows.push(row);
      out.set(keyOf(n), { loaded: l, evaluation: e, row });
    }
    await emitLifecycleEvents(env, db, ctEvents);
    if (scan) await notInCtOnScan(env, db, scan, out.get(keyOf({ organizationId: scan.organizationId, hostname: scan.event.monitor_cn })));
    await proposeCertMonitors(db, proposals, now);
    await saveHostnames(db, rows, gone);
  }
  return out;
}

async function emitLifecycleEvents(env: Bindings, db: Db, byOrg: Map<number, { id: string; event: CtLogEvent }[]>): Promise<void> {
  if (!byOrg.size) return;
  const withRules = await organizationsWithRules(db, "ct-log", [...byOrg.keys()]);
  for (const [org, events] of byOrg) if (withRules.has(org)) await emitEvents(env, "ct-log", org, events);
}

/**
 * A scanned target's CT standing, recorded from scans only (so a change is seen by the
 * scan that shows it): when the served certificate is not (or no longer) seen in CT, or
 * is a private CA's, the not_in_ct event is raised once for that certificate and standing.
 */
async function notInCtOnScan(env: Bindings, db: Db, scan: ScanContext, refreshed: Refreshed | undefined): Promise<void> {
  const target = refreshed?.evaluation.targets.find((x) => x.targetId === scan.targetId);
  if (!target?.ctStatus || scan.certificateId === null) return;
  const changed = target.ctStatus !== scan.previousCtStatus || scan.certificateId !== scan.previousCertificateId;
  if (!changed) return;
  await setCtStatus(db, scan.targetId, target.ctStatus);
  if (target.ctStatus === "logged") return;
  const event = buildNotInCtEvent(scan.event, { status: target.ctStatus, reason: target.ctReason, hostname: refreshed!.loaded.inputs.hostname });
  const withRules = await organizationsWithRules(db, "cert-watcher", [scan.organizationId]);
  if (withRules.has(scan.organizationId)) {
    await emitEvents(env, "cert-watcher", scan.organizationId, [{ id: `cert-watcher:not_in_ct:${scan.targetId}:${scan.certificateId}:${target.ctStatus}`, event }]);
  }
}

/** Re-evaluates the names due for review (of one organization, or of all), up to `limit`. */
export async function refreshDue(env: Bindings, db: Db, organizationId: number | null, now: Date, limit = REFRESH_BATCH): Promise<number> {
  const due = await dueNames(db, organizationId, now, limit);
  if (due.length) await refreshNames(env, db, due, now);
  return due.length;
}

// ---- what CT publications tell the inventory ---------------------------------------------

const NOT_KNOWN: IssuanceFacts = { deployed: false, replaces: "", key: { known: false, source: "" } };

/**
 * "What does it replace": the newest certificate issued before it that names the same
 * names (its first matched name at least), preferring one with exactly its names.
 */
function replacedBy(cert: OrganizationCertificate, candidates: readonly { hostname: string; id: number; dedupKey: string; sha256: string; notBefore: string }[]): string {
  const earlier = candidates.filter((c) => c.dedupKey !== cert.dedupKey && c.notBefore < cert.cert.not_before);
  const names = new Set(cert.names);
  const byId = new Map<number, { sha256: string; notBefore: string; shared: Set<string> }>();
  for (const c of earlier) {
    if (!names.has(c.hostname)) continue;
    const e = byId.get(c.id) ?? { sha256: c.sha256, notBefore: c.notBefore, shared: new Set<string>() };
    e.shared.add(c.hostname);
    byId.set(c.id, e);
  }
  const ranked = [...byId.values()]
    .filter((e) => e.shared.has(cert.names[0]))
    .sort((a, b) => Number(b.shared.size === names.size) - Number(a.shared.size === names.size) || b.shared.size - a.shared.size || (a.notBefore < b.notBefore ? 1 : -1));
  return ranked[0]?.sha256 ?? "";
}

export const issuanceLifecycle: IssuanceLifecycle = {
  async describe(db, certs) {
    const [known, keys, naming] = await Promise.all([
      certificatesByKey(db, certs),
      deployedKeys(db, certs.map((c) => ({ organizationId: c.organizationId, spki: c.cert.spki_sha256 ?? "" }))),
      certificatesNaming(db, certs.flatMap((c) => c.names.map((h) => ({ organizationId: c.organizationId, hostname: h })))),
    ]);
    const out = new Map<string, IssuanceFacts>();
    for (const c of certs) {
      const key = `${c.organizationId}:${c.dedupKey}`;
      const row = known.get(key);
      const seen = c.cert.spki_sha256 ? keys.get(`${c.organizationId}:${c.cert.spki_sha256}`) : undefined;
      out.set(key, {
        ...NOT_KNOWN,
        deployed: row?.firstDeployedAt != null,
        replaces: replacedBy(c, naming.filter((n) => n.organizationId === c.organizationId)),
        key: seen ? { known: true, source: `seen deployed on ${seen.hostname} (${seen.address})` } : NOT_KNOWN.key,
      });
    }
    return out;
  },

  async record(env, db, certs, now) {
    const at = now.toISOString();
    await saveCertificates(
      db,
      certs.map((c) => ({
        organizationId: c.organizationId,
        dedupKey: c.dedupKey,
        sha256: c.cert.sha256,
        servedSha256: c.cert.is_precert ? null : c.cert.sha256,
        names: c.cert.dns_names,
        subject: c.cert.subject,
        issuer: c.cert.issuer,
        serial: c.cert.serial,
        spkiSha256: c.cert.spki_sha256 ?? "",
        issuerSpkiSha256: c.cert.issuer_spki_sha256 ?? "",
        notBefore: c.cert.not_before,
        notAfter: c.cert.not_after,
        firstSeenCtAt: c.firstMatchedAt,
        ctMatchSha256: c.cert.sha256,
        filters: c.filters,
        authorization: c.authorization as Authorization,
        deployedAt: null,
        createdAt: at,
        hostnames: c.names,
      })),
    );
    const named = certs.flatMap((c) => c.names.map((h) => ({ organizationId: c.organizationId, hostname: h })));
    await refreshNames(env, db, [...named, ...(await namesUnderWildcards(db, named))], now);
  },
};

// ---- what scans tell the inventory -------------------------------------------------------

function base64Bytes(b64: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** How the served chain stands: publicly trusted (the scanner's system store), a private CA's (the monitor's root only), or not trusted. */
function trustOf(scan: AcceptedScan): { trust: Trust; detail: string } {
  const v = scan.validation;
  if (v?.trusted && v.anchor === "system") return { trust: "public", detail: "" };
  if (v?.trusted) return { trust: "private_ca", detail: "validates against the monitor's root CA" };
  if (scan.selfSigned) return { trust: "untrusted", detail: "self-signed" };
  return { trust: "untrusted", detail: v?.error || "chain not validated" };
}

export const deploymentObserver: DeploymentObserver = {
  name: "inventory",
  async scanAccepted(env, db, scan, now) {
    const names: NameRef[] = [{ organizationId: scan.organizationId, hostname: scan.hostname }];
    const parent = parentName(scan.hostname);
    if (parent?.includes(".")) names.push({ organizationId: scan.organizationId, hostname: `*.${parent}` });
    const leaf = scan.certificate;
    if (!leaf) {
      // Nothing served: the last certificate seen stays the target's, the failure shows in its note.
      await refreshNames(env, db, names, now);
      return;
    }
    // The served leaf's identity: its CT dedup key from the DER (a precertificate's entry
    // has another fingerprint); without the DER (an older agent), its fingerprint only.
    const der = leaf.der ? base64Bytes(leaf.der) : null;
    let parsed: ReturnType<typeof parseCertificate> | null = null;
    try {
      parsed = der ? parseCertificate(der) : null;
    } catch {
      parsed = null;
    }
    const dedupKey = parsed && der ? certificateDedupKeySync(der) : `sha256:${leaf.sha256}`;
    const spki = parsed && der ? sha256HexSync(der.subarray(parsed.spkiStart, parsed.spkiEnd)) : (leaf.spki_sha256 ?? "");
    const { trust, detail } = trustOf(scan);
    await saveCertificates(db, [
      {
        organizationId: scan.organizationId,
        dedupKey,
        sha256: leaf.sha256,
        servedSha256: leaf.sha256,
        names: parsed?.dnsNames ?? leaf.dns_names,
        subject: parsed?.subject ?? leaf.subject,
        issuer: parsed?.issuer ?? leaf.issuer,
        serial: parsed?.serial ?? leaf.serial,
        spkiSha256: spki,
        issuerSpkiSha256: "",
        notBefore: parsed?.notBefore ?? leaf.not_before,
        notAfter: parsed?.notAfter ?? leaf.not_after,
        firstSeenCtAt: null,
        ctMatchSha256: null,
        filters: [],
        authorization: null,
        deployedAt: scan.scannedAt,
        createdAt: scan.scannedAt,
        hostnames: [scan.hostname],
      },
    ]);
    const cert = (await certificatesByKey(db, [{ organizationId: scan.organizationId, dedupKey }])).get(`${scan.organizationId}:${dedupKey}`)!;
    const previous = await targetRow(db, scan.targetId);
    await saveDeployment(db, {
      organizationId: scan.organizationId,
      targetId: scan.targetId,
      monitorId: scan.monitorId,
      certificateId: cert.id,
      hostname: scan.hostname,
      ipAddress: scan.ipAddress,
      port: scan.port,
      at: scan.scannedAt,
      trust,
      trustDetail: detail,
    });
    await refreshNames(env, db, names, now, {
      organizationId: scan.organizationId,
      targetId: scan.targetId,
      event: scan.event,
      previousCtStatus: previous?.ctStatus ?? null,
      previousCertificateId: previous?.certificateId ?? null,
      certificateId: cert.id,
    });
  },

  async monitorsChanged(db, organizationId, hostnames) {
    const names = hostnames.map((h) => ({ organizationId, hostname: h }));
    await markDue(db, names);
  },
};
