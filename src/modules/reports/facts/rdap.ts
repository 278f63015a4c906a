/**
 * Registration data, read from what the RDAP monitor records: `rdap_change_facts`
 * (one row per stored snapshot: registrar/registrant/nameserver/status changed,
 * the published expiry) and the monitors' last successful check.
 *
 * The facts say THAT something changed; the before/after values shown as evidence
 * come from the two snapshots of the change (read with the rdap module's own
 * accessors), so the report names the old and the new registrar. Snapshot bodies are
 * read only for the changes shown: the newest `evidenceLimit` of each rule; a third
 * statement counts them all.
 *
 * Every statement starts from the organization's monitors (scoped by the Tenant handle)
 * and reaches the facts through their (monitor_id, observed_at) index.
 */
import { sql } from "drizzle-orm";
import { rdapChangeFacts, rdapHistory, rdapMonitors, rdapSnapshots, type RdapCheckStatus } from "../../../db/schema/rdap";
import {
  monitorCollection,
  nameserverNames,
  registrantOf,
  registrarOf,
  statusValues,
  type MonitorCollectionColumns,
  type RegistrantIdentity,
  type RegistrarIdentity,
} from "../../rdap/contract";
import type { MonitoredAsset } from "../document";
import { EXPIRY_WARNING_DAYS, type RuleId } from "../rules";
import { coverageOf, enabledAt, iso, num, rawSelect, type AuditScope, type ReaderPlan } from "./scope";
import type { AuditFacts, DomainExpiry, RdapChangeFact } from "./types";

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

interface ChangeRow {
  domain: string;
  observed_at: string;
  registrar_changed: number;
  registrant_changed: number;
  nameservers_changed: number;
  status_changed: number;
  current_body: string | null;
  previous_body: string | null;
}

const CHANGE_COLUMNS = ["domain", "observed_at", "registrar_changed", "registrant_changed", "nameservers_changed", "status_changed", "current_body", "previous_body"] as const;

interface CountRow {
  ownership_evidence: number | null;
  ownership_assets: number;
  nameserver_evidence: number | null;
  nameserver_assets: number;
}

const COUNT_COLUMNS = ["ownership_evidence", "ownership_assets", "nameserver_evidence", "nameserver_assets"] as const;

interface MonitorRow extends MonitorCollectionColumns {
  domain: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  lastCheckedAt: string | null;
  lastSuccessAt: string | null;
  lastCheckStatus: RdapCheckStatus | null;
  lastCheckDetail: string | null;
  expiration: string | null;
}

const OWNERSHIP = sql`(f.registrar_changed = 1 OR f.registrant_changed = 1)`;
const NAMESERVER_OR_STATUS = sql`(f.nameservers_changed = 1 OR f.status_changed = 1)`;

export function readRdap(scope: AuditScope): ReaderPlan<{ rdap_changes: RdapChangeFact[]; expiring_domains: DomainExpiry[] }> {
  const { t, asOf } = scope;
  const db = t.db;
  /** The organization's change facts in the window (its monitors' rows of the (monitor_id, observed_at) index). */
  const changed = sql`SELECT f.history_id, f.domain_name, f.observed_at, f.registrar_changed, f.registrant_changed, f.nameservers_changed, f.status_changed
    FROM ${rdapMonitors} JOIN ${rdapChangeFacts} f ON f.monitor_id = ${rdapMonitors.id}
    WHERE ${t.where(rdapMonitors)} AND f.observed_at >= ${iso(scope.window.start)} AND f.observed_at < ${iso(scope.window.end)}`;
  const newest = (rule: typeof OWNERSHIP) =>
    sql`SELECT history_id FROM (SELECT f.history_id FROM changed f WHERE ${rule} ORDER BY f.observed_at DESC, f.history_id DESC LIMIT ${scope.evidenceLimit})`;

  const statements = [
    // The changes shown (newest of each rule), with their two snapshots: bodies are read for these rows only.
    rawSelect<ChangeRow>(db, CHANGE_COLUMNS, sql`WITH changed AS (${changed}),
      shown AS (${newest(OWNERSHIP)} UNION ${newest(NAMESERVER_OR_STATUS)})
      SELECT c.domain_name AS domain, c.observed_at, c.registrar_changed, c.registrant_changed, c.nameservers_changed, c.status_changed,
             cur.body AS current_body, prev.body AS previous_body
      FROM shown JOIN ${rdapChangeFacts} c ON c.history_id = shown.history_id
      JOIN ${rdapHistory} h ON h.id = c.history_id
      JOIN ${rdapSnapshots} cur ON cur.id = h.snapshot_id
      LEFT JOIN ${rdapSnapshots} prev ON prev.id = h.previous_snapshot_id
      ORDER BY c.observed_at DESC, c.history_id DESC`),
    // Every change of the window, counted per rule: evidence items (one per attribute changed) and domains.
    rawSelect<CountRow>(db, COUNT_COLUMNS, sql`WITH changed AS (${changed})
      SELECT sum(f.registrar_changed) + sum(f.registrant_changed) AS ownership_evidence,
             count(DISTINCT CASE WHEN ${OWNERSHIP} THEN f.domain_name END) AS ownership_assets,
             sum(f.nameservers_changed) + sum(f.status_changed) AS nameserver_evidence,
             count(DISTINCT CASE WHEN ${NAMESERVER_OR_STATUS} THEN f.domain_name END) AS nameserver_assets
      FROM changed f`),
    // Each monitor with the expiry published in its newest snapshot observed by `asOf`: one
    // seek in rdap_change_facts_monitor_idx per monitor. Qualified by hand: inside a
    // subquery drizzle writes bare column names.
    db
      .select({
        domain: rdapMonitors.domainName,
        enabled: rdapMonitors.enabled,
        createdAt: rdapMonitors.createdAt,
        updatedAt: rdapMonitors.updatedAt,
        lastCheckedAt: rdapMonitors.lastCheckedAt,
        lastSuccessAt: rdapMonitors.lastSuccessAt,
        lastCheckStatus: rdapMonitors.lastCheckStatus,
        lastCheckDetail: rdapMonitors.lastCheckDetail,
        collectionFailingSince: rdapMonitors.collectionFailingSince,
        collectionFailures: rdapMonitors.collectionFailures,
        collectionNextAttemptAt: rdapMonitors.collectionNextAttemptAt,
        collectionErrorClass: rdapMonitors.collectionErrorClass,
        collectionError: rdapMonitors.collectionError,
        expiration: sql<string | null>`(SELECT f.expiration_date FROM rdap_change_facts f
          WHERE f.monitor_id = rdap_monitors.id AND f.observed_at <= ${iso(asOf)} ORDER BY f.observed_at DESC LIMIT 1)`,
      })
      .from(rdapMonitors)
      .where(t.where(rdapMonitors))
      .orderBy(rdapMonitors.domainName),
  ];

  return {
    statements,
    read(results) {
      const [changes, [totals], monitors] = results as [ChangeRow[], CountRow[], MonitorRow[]];
      const rdap_changes: RdapChangeFact[] = changes.map((c) => {
        const cur = parse(c.current_body);
        const prev = parse(c.previous_body);
        return {
          domain: c.domain,
          observed_at: c.observed_at,
          registrar_changed: c.registrar_changed === 1,
          registrant_changed: c.registrant_changed === 1,
          nameservers_changed: c.nameservers_changed === 1,
          status_changed: c.status_changed === 1,
          registrar: { old: registrarText(registrarOf(prev)), new: registrarText(registrarOf(cur)) },
          registrant: { old: registrantText(registrantOf(prev)), new: registrantText(registrantOf(cur)) },
          nameservers: { old: nameserverNames(prev), new: nameserverNames(cur) },
          status: { old: statusValues(prev), new: statusValues(cur) },
        };
      });
      const counts: AuditFacts["counts"] = {};
      const ruleCounts: [RuleId, number, number][] = [
        ["rdap.ownership_or_registrar_change", num(totals?.ownership_evidence), num(totals?.ownership_assets)],
        ["rdap.nameserver_or_status_change", num(totals?.nameserver_evidence), num(totals?.nameserver_assets)],
      ];
      for (const [rule, evidence, assets] of ruleCounts) if (evidence > 0) counts[rule] = { evidence, assets };

      const enabled = (m: MonitorRow) => enabledAt(scope, m);
      const horizon = asOf.getTime() + EXPIRY_WARNING_DAYS * DAY_MS;
      const expiring_domains: DomainExpiry[] = monitors
        .filter((m) => enabled(m) && m.expiration !== null && Date.parse(m.expiration) <= horizon)
        .map((m) => ({ domain: m.domain, expires_at: m.expiration! }));

      // The monitor's own collection record (the poll classifies each failed check).
      const collection = (m: MonitorRow) => monitorCollection(m);
      const coverage = coverageOf(
        "rdap",
        scope,
        monitors.map((m) => ({ asset: m.domain, enabled: enabled(m), createdAt: m.createdAt, collection: collection(m) })),
      );

      // The appendix: each monitor's state at generation, its expiry as the rule judged it.
      const changedDomains = new Set(rdap_changes.map((c) => c.domain));
      const assets: MonitoredAsset[] = scope.withAssets
        ? monitors.map((m): MonitoredAsset => {
            const base = { module: "rdap" as const, asset: m.domain, last_collected_at: m.lastSuccessAt };
            const expiry = m.expiration ? `expires ${m.expiration.slice(0, 10)}` : "no expiry published";
            if (!m.enabled) return { ...base, status: "paused", state: "Paused", detail: expiry };
            if (!m.lastCheckedAt) return { ...base, status: "pending", state: "Not yet checked", detail: "" };
            if (m.lastCheckStatus !== "success") {
              return { ...base, status: "problem", state: `Check ${m.lastCheckStatus?.replace(/_/g, " ") ?? "failed"}`, detail: collection(m).errorMessage ?? "" };
            }
            if (m.expiration && Date.parse(m.expiration) <= horizon) return { ...base, status: "problem", state: "Expiring", detail: expiry };
            if (changedDomains.has(m.domain)) return { ...base, status: "attention", state: "Changed", detail: expiry };
            return { ...base, status: "ok", state: "Unchanged", detail: expiry };
          })
        : [];
      return { facts: { rdap_changes, expiring_domains }, counts, coverage, assets };
    },
  };
}
