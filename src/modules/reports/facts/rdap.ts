/**
 * Registration data, read from what the RDAP monitor records: `rdap_change_facts`
 * (one row per stored snapshot: registrar/registrant/nameserver/status changed,
 * the published expiry) and the monitors' last check times.
 *
 * The facts say THAT something changed; the before/after values shown as evidence
 * come from the two snapshots of the change (read with the rdap module's own
 * accessors), so the report names the old and the new registrar.
 */
import { desc, eq, gte, lt, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { rdapChangeFacts, rdapHistory, rdapMonitors, rdapSnapshots } from "../../../db/schema/rdap";
import { registrantOf, registrarOf, type RegistrantIdentity, type RegistrarIdentity } from "../../rdap/facts";
import { nameserverNames, statusValues } from "../../rdap/rdap-json";
import type { MonitoredAsset } from "../document";
import { EXPIRY_WARNING_DAYS } from "../rules";
import { coverageOf, iso, type AuditScope, type ModuleReading } from "./scope";
import type { DomainExpiry, RdapChangeFact } from "./types";

const DAY_MS = 86_400_000;

function parse(body: string | null): unknown {
  if (!body) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

function registrarText(r: RegistrarIdentity | null): string | null {
  if (!r) return null;
  const name = r.name ?? r.handle;
  return r.iana_id ? `${name ?? "registrar"} (IANA ${r.iana_id})` : name;
}

function registrantText(r: RegistrantIdentity | null): string | null {
  if (!r) return null;
  return [r.organization, r.name, r.handle && `handle ${r.handle}`].filter(Boolean).join(", ") || null;
}

export async function readRdap(scope: AuditScope): Promise<ModuleReading<{ rdap_changes: RdapChangeFact[]; expiring_domains: DomainExpiry[] }>> {
  const { t, now } = scope;
  const previous = alias(rdapSnapshots, "previous_snapshot");
  const [changes, monitors] = await Promise.all([
    t.db
      .select({
        domain: rdapChangeFacts.domainName,
        observedAt: rdapChangeFacts.observedAt,
        registrarChanged: rdapChangeFacts.registrarChanged,
        registrantChanged: rdapChangeFacts.registrantChanged,
        nameserversChanged: rdapChangeFacts.nameserversChanged,
        statusChanged: rdapChangeFacts.statusChanged,
        currentBody: rdapSnapshots.body,
        previousBody: sql<string | null>`${previous.body}`,
      })
      .from(rdapChangeFacts)
      .innerJoin(rdapHistory, eq(rdapHistory.id, rdapChangeFacts.historyId))
      .innerJoin(rdapSnapshots, eq(rdapSnapshots.id, rdapHistory.snapshotId))
      .leftJoin(previous, eq(previous.id, rdapHistory.previousSnapshotId))
      .where(
        // Scoped through the history row (the facts table has no id of its own); the
        // facts' own organization_id as well, for its (organization_id, observed_at) index.
        t.where(
          rdapHistory,
          eq(rdapChangeFacts.organizationId, t.organizationId),
          gte(rdapChangeFacts.observedAt, iso(scope.window.start)),
          lt(rdapChangeFacts.observedAt, iso(scope.window.end)),
          or(
            eq(rdapChangeFacts.registrarChanged, true),
            eq(rdapChangeFacts.registrantChanged, true),
            eq(rdapChangeFacts.nameserversChanged, true),
            eq(rdapChangeFacts.statusChanged, true),
          ),
        ),
      )
      .orderBy(desc(rdapChangeFacts.observedAt))
      .limit(1000)
      .all(),
    // Each monitor with the expiry of its newest snapshot (the facts row of its latest history row).
    t.db
      .select({
        domain: rdapMonitors.domainName,
        enabled: rdapMonitors.enabled,
        createdAt: rdapMonitors.createdAt,
        lastCheckedAt: rdapMonitors.lastCheckedAt,
        lastCheckStatus: rdapMonitors.lastCheckStatus,
        lastCheckDetail: rdapMonitors.lastCheckDetail,
        // Qualified by hand: inside a subquery drizzle writes bare column names.
        expiration: sql<string | null>`(SELECT f.expiration_date FROM rdap_change_facts f
          WHERE f.monitor_id = rdap_monitors.id ORDER BY f.observed_at DESC LIMIT 1)`,
      })
      .from(rdapMonitors)
      .where(t.where(rdapMonitors))
      .orderBy(rdapMonitors.domainName)
      .all(),
  ]);

  const rdap_changes: RdapChangeFact[] = changes.map((c) => {
    const cur = parse(c.currentBody);
    const prev = parse(c.previousBody);
    return {
      domain: c.domain,
      observed_at: c.observedAt,
      registrar_changed: c.registrarChanged,
      registrant_changed: c.registrantChanged,
      nameservers_changed: c.nameserversChanged,
      status_changed: c.statusChanged,
      registrar: { old: registrarText(registrarOf(prev)), new: registrarText(registrarOf(cur)) },
      registrant: { old: registrantText(registrantOf(prev)), new: registrantText(registrantOf(cur)) },
      nameservers: { old: nameserverNames(prev), new: nameserverNames(cur) },
      status: { old: statusValues(prev), new: statusValues(cur) },
    };
  });

  const horizon = now.getTime() + EXPIRY_WARNING_DAYS * DAY_MS;
  const expiring_domains: DomainExpiry[] = monitors
    .filter((m) => m.enabled && m.expiration !== null && Date.parse(m.expiration) <= horizon)
    .map((m) => ({ domain: m.domain, expires_at: m.expiration! }));

  const coverage = coverageOf(
    "rdap",
    scope,
    monitors.map((m) => ({ asset: m.domain, enabled: m.enabled, createdAt: m.createdAt, lastCollectedAt: m.lastCheckedAt })),
  );

  const changedDomains = new Set(rdap_changes.map((c) => c.domain));
  const assets: MonitoredAsset[] = scope.withAssets
    ? monitors.map((m): MonitoredAsset => {
        const base = { module: "rdap" as const, asset: m.domain, last_collected_at: m.lastCheckedAt };
        const expiry = m.expiration ? `expires ${m.expiration.slice(0, 10)}` : "no expiry published";
        if (!m.enabled) return { ...base, status: "paused", state: "Paused", detail: expiry };
        if (!m.lastCheckedAt) return { ...base, status: "pending", state: "Not yet checked", detail: "" };
        if (m.lastCheckStatus !== "success") {
          return { ...base, status: "problem", state: `Check ${m.lastCheckStatus?.replace(/_/g, " ") ?? "failed"}`, detail: m.lastCheckDetail ?? "" };
        }
        if (m.expiration && Date.parse(m.expiration) <= horizon) return { ...base, status: "problem", state: "Expiring", detail: expiry };
        if (changedDomains.has(m.domain)) return { ...base, status: "attention", state: "Changed", detail: expiry };
        return { ...base, status: "ok", state: "Unchanged", detail: expiry };
      })
    : [];
  return { facts: { rdap_changes, expiring_domains }, coverage, assets };
}
