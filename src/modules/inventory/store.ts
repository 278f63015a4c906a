/**
 * The inventory's tables (src/db/schema/inventory.ts): loading what a hostname's
 * evaluation needs, and writing what was learnt. Every statement covers a whole batch
 * (all organizations and names of a CT fan-out batch, or of a due-review run) through
 * one JSON parameter read with json_each: D1 binds at most 100 parameters.
 *
 * These are system reads and writes across organizations (the rows carry theirs); the
 * API's reads go through the organization's Tenant handle (service.ts).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { rawStatement } from "../../db/raw";
import { inventoryCertificateNames, inventoryCertificates, inventoryDeployments, inventoryHostnames, inventoryTargets } from "../../db/schema";
import { monitoredTargets, type MonitoredTarget } from "../cert-watcher/deployment-contract";
import { filtersCovering, type CoveringFilter } from "../ct-log/lifecycle-contract";
import type { HostnameInputs, KnownCertificate, TargetInput, Trust } from "./state";

export type CertificateRow = typeof inventoryCertificates.$inferSelect;
export type HostnameRow = typeof inventoryHostnames.$inferSelect;

/** A certificate as the evaluation and the views read it. */
export type InventoryCertificate = KnownCertificate & Pick<CertificateRow, "subject" | "serial" | "issuerSpkiSha256" | "ctMatchSha256" | "filters" | "authorization" | "firstDeployedAt" | "lastDeployedAt">;

export function certificateOf(r: CertificateRow): InventoryCertificate {
  return {
    id: r.id,
    dedupKey: r.dedupKey,
    sha256: r.sha256,
    servedSha256: r.servedSha256,
    names: r.names,
    issuer: r.issuer,
    spkiSha256: r.spkiSha256,
    notBefore: r.notBefore,
    notAfter: r.notAfter,
    firstSeenCtAt: r.firstSeenCtAt,
    subject: r.subject,
    serial: r.serial,
    issuerSpkiSha256: r.issuerSpkiSha256,
    ctMatchSha256: r.ctMatchSha256,
    filters: r.filters,
    authorization: r.authorization,
    firstDeployedAt: r.firstDeployedAt,
    lastDeployedAt: r.lastDeployedAt,
  };
}

export interface NameRef {
  organizationId: number;
  hostname: string;
}

export const keyOf = (n: NameRef) => `${n.organizationId}:${n.hostname}`;

/** The parent of a name ("www.example.com" -> "example.com"), null for a single label. */
export function parentName(name: string): string | null {
  const i = name.indexOf(".");
  return i < 0 ? null : name.slice(i + 1);
}

/** The name rows that cover `hostname`: itself, and for a concrete name the wildcard of its parent (wildcards cover one label). */
export function coveringNames(hostname: string): string[] {
  if (hostname.startsWith("*.")) return [hostname];
  const parent = parentName(hostname);
  return parent && parent.includes(".") ? [hostname, `*.${parent}`] : [hostname];
}

const pairsJson = (pairs: readonly (readonly [number, string])[]) => JSON.stringify(pairs);
const pairIn = (org: unknown, name: unknown, json: string) => sql`(${org}, ${name}) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${json}))`;

/** Everything the evaluation of these names needs, keyed by keyOf. */
export interface LoadedName {
  inputs: HostnameInputs & { certificates: InventoryCertificate[] };
  filters: CoveringFilter[];
  monitored: MonitoredTarget[];
}

export async function loadNames(db: Db, names: readonly NameRef[]): Promise<Map<string, LoadedName>> {
  const lookups = names.flatMap((n) => coveringNames(n.hostname).map((h) => [n.organizationId, h] as const));
  const [covering, monitored, filters] = await Promise.all([
    lookups.length
      ? db
          .select({ hostname: inventoryCertificateNames.hostname, cert: inventoryCertificates })
          .from(inventoryCertificateNames)
          .innerJoin(inventoryCertificates, eq(inventoryCertificates.id, inventoryCertificateNames.certificateId))
          .where(pairIn(inventoryCertificateNames.organizationId, inventoryCertificateNames.hostname, pairsJson(lookups)))
          .all()
      : Promise.resolve([]),
    monitoredTargets(db, names),
    filtersCovering(db, names),
  ]);
  const served = monitored.length ? await db.select().from(inventoryTargets).where(inArray(inventoryTargets.targetId, monitored.map((m) => m.targetId))).all() : [];
  const certs = new Map<number, InventoryCertificate>();
  for (const c of covering) certs.set(c.cert.id, certificateOf(c.cert));
  const missing = [...new Set(served.map((s) => s.certificateId).filter((id): id is number => id !== null && !certs.has(id)))];
  if (missing.length) for (const r of await db.select().from(inventoryCertificates).where(inJsonArray(inventoryCertificates.id, missing)).all()) certs.set(r.id, certificateOf(r));
  const servedBy = new Map(served.map((s) => [s.targetId, s]));

  const out = new Map<string, LoadedName>();
  for (const n of names) {
    const lookup = new Set(coveringNames(n.hostname));
    const own = [...new Map(covering.filter((c) => c.cert.organizationId === n.organizationId && lookup.has(c.hostname)).map((c) => [c.cert.id, certs.get(c.cert.id)!])).values()];
    const wildcardBase = n.hostname.startsWith("*.") ? n.hostname.slice(2) : null;
    const mine = monitored.filter((m) => m.organizationId === n.organizationId && (wildcardBase === null ? m.hostname === n.hostname : parentName(m.hostname) === wildcardBase));
    const targets: TargetInput[] = mine.map((m) => {
      const s = servedBy.get(m.targetId);
      const cert = s?.certificateId != null ? certs.get(s.certificateId) : undefined;
      return {
        targetId: m.targetId,
        monitorId: m.monitorId,
        ipAddress: m.ipAddress,
        port: m.port,
        enabled: m.enabled,
        lastScanAt: m.lastScanAt,
        error: m.error,
        served: s && cert ? { certificate: cert, scannedAt: s.scannedAt, trust: s.trust as Trust, trustDetail: s.trustDetail } : null,
      };
    });
    const f = filters.get(keyOf(n)) ?? [];
    const watchedSince = f.length ? f.map((x) => x.createdAt).sort()[0] : null;
    out.set(keyOf(n), { inputs: { hostname: n.hostname, certificates: own, targets, watchedSince }, filters: f, monitored: mine });
  }
  return out;
}

export async function hostnameRows(db: Db, names: readonly NameRef[]): Promise<Map<string, HostnameRow>> {
  if (!names.length) return new Map();
  const rows = await db
    .select()
    .from(inventoryHostnames)
    .where(pairIn(inventoryHostnames.organizationId, inventoryHostnames.hostname, pairsJson(names.map((n) => [n.organizationId, n.hostname]))))
    .all();
  return new Map(rows.map((r) => [keyOf(r), r]));
}

type HostnameValues = Omit<HostnameRow, "id">;

/** Writes evaluated hostnames (insert or replace their row) and removes the rows of names nothing covers any more: one transaction. */
export async function saveHostnames(db: Db, rows: readonly HostnameValues[], gone: readonly NameRef[]): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += 200) {
    const json = JSON.stringify(rows.slice(i, i + 200));
    const v = (f: keyof HostnameValues) => sql.raw(`json_extract(j.value, '$.${f}')`);
    statements.push(
      rawStatement(
        db,
        sql`INSERT INTO inventory_hostnames (organization_id, hostname, state, state_reason, state_since, previous_state, renewal_status, renewal_due_at, renewal_overdue_at,
            latest_certificate_id, latest_not_after, renewal_interval_days, readiness, readiness_from, target_count, evaluated_at, next_review_at)
          SELECT ${v("organizationId")}, ${v("hostname")}, ${v("state")}, ${v("stateReason")}, ${v("stateSince")}, ${v("previousState")}, ${v("renewalStatus")}, ${v("renewalDueAt")},
            ${v("renewalOverdueAt")}, ${v("latestCertificateId")}, ${v("latestNotAfter")}, ${v("renewalIntervalDays")}, ${v("readiness")}, ${v("readinessFrom")}, ${v("targetCount")},
            ${v("evaluatedAt")}, ${v("nextReviewAt")}
          FROM json_each(${json}) j WHERE true
          ON CONFLICT (organization_id, hostname) DO UPDATE SET state = excluded.state, state_reason = excluded.state_reason, state_since = excluded.state_since,
            previous_state = excluded.previous_state, renewal_status = excluded.renewal_status, renewal_due_at = excluded.renewal_due_at,
            renewal_overdue_at = excluded.renewal_overdue_at, latest_certificate_id = excluded.latest_certificate_id, latest_not_after = excluded.latest_not_after,
            renewal_interval_days = excluded.renewal_interval_days, readiness = excluded.readiness, readiness_from = excluded.readiness_from,
            target_count = excluded.target_count, evaluated_at = excluded.evaluated_at, next_review_at = excluded.next_review_at`,
      ),
    );
  }
  if (gone.length) {
    statements.push(rawStatement(db, sql`DELETE FROM inventory_hostnames WHERE ${pairIn(sql`organization_id`, sql`hostname`, pairsJson(gone.map((n) => [n.organizationId, n.hostname])))}`));
  }
  if (statements.length) await db.$client.batch(statements);
}

/**
 * Names to evaluate again soon (their monitors changed): an existing row is made due at
 * once; a name not in the inventory yet gets a row, due at once and never evaluated
 * (`evaluated_at` ""), that says so until the evaluation (the next read of the list, or
 * the next scheduled run) replaces it.
 */
export async function markDue(db: Db, names: readonly NameRef[]): Promise<void> {
  if (!names.length) return;
  const json = pairsJson(names.map((n) => [n.organizationId, n.hostname]));
  await db.run(sql`INSERT INTO inventory_hostnames (organization_id, hostname, state, state_reason, state_since, renewal_status, readiness, target_count, evaluated_at, next_review_at)
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 'not_scanned', 'Not evaluated yet: its certificate monitor was just added or changed', '', 'none', 'unknown', 0, '', ''
    FROM json_each(${json}) WHERE true
    ON CONFLICT (organization_id, hostname) DO UPDATE SET next_review_at = ''`);
}

/**
 * The inventory's names a wildcard covers (one label below its base), of each
 * organization: a newly logged wildcard can be the successor of what their targets serve.
 */
export async function namesUnderWildcards(db: Db, wildcards: readonly NameRef[]): Promise<NameRef[]> {
  const bases = wildcards.filter((w) => w.hostname.startsWith("*.")).map((w) => [w.organizationId, w.hostname.slice(2)]);
  if (!bases.length) return [];
  const base = sql`json_extract(b.value, '$[1]')`;
  return db
    .select({ organizationId: inventoryHostnames.organizationId, hostname: inventoryHostnames.hostname })
    .from(inventoryHostnames)
    .where(
      sql`EXISTS (SELECT 1 FROM json_each(${pairsJson(bases as [number, string][])}) AS b WHERE ${inventoryHostnames.organizationId} = json_extract(b.value, '$[0]')
        AND ${inventoryHostnames.hostname} LIKE '%.' || ${base} AND instr(substr(${inventoryHostnames.hostname}, 1, length(${inventoryHostnames.hostname}) - length(${base}) - 1), '.') = 0
        AND substr(${inventoryHostnames.hostname}, 1, 2) <> '*.')`,
    )
    .all();
}

/** Names whose review is due (next_review_at <= now; "" = at once), of one organization or of all, oldest first. */
export async function dueNames(db: Db, organizationId: number | null, now: Date, limit: number): Promise<NameRef[]> {
  const due = sql`${inventoryHostnames.nextReviewAt} <= ${now.toISOString()}`;
  return db
    .select({ organizationId: inventoryHostnames.organizationId, hostname: inventoryHostnames.hostname })
    .from(inventoryHostnames)
    .where(organizationId === null ? due : and(eq(inventoryHostnames.organizationId, organizationId), due))
    .orderBy(inventoryHostnames.nextReviewAt)
    .limit(limit)
    .all();
}

/** A certificate as learnt from CT or from a served leaf, to upsert (by organization and dedup key). */
export interface CertificateFacts {
  organizationId: number;
  dedupKey: string;
  sha256: string;
  servedSha256: string | null;
  names: string[];
  subject: string;
  issuer: string;
  serial: string;
  spkiSha256: string;
  issuerSpkiSha256: string;
  notBefore: string;
  notAfter: string;
  firstSeenCtAt: string | null;
  ctMatchSha256: string | null;
  filters: { id: number; pattern: string }[];
  authorization: CertificateRow["authorization"];
  deployedAt: string | null;
  createdAt: string;
}

/**
 * Upserts certificates and the names they cover, in one transaction. What CT says wins
 * over what a served leaf said (its first sighting, filters, verdict); a deployment only
 * adds the served fingerprint and the deployment times. `names` are the hostnames to
 * index the certificate under.
 */
export async function saveCertificates(db: Db, facts: readonly (CertificateFacts & { hostnames: string[] })[]): Promise<void> {
  if (!facts.length) return;
  const v = (f: string) => sql.raw(`json_extract(j.value, '$.${f}')`);
  const rows = JSON.stringify(facts);
  const certId = sql`(SELECT c.id FROM inventory_certificates c WHERE c.organization_id = ${v("organizationId")} AND c.dedup_key = ${v("dedupKey")})`;
  const nameRows = JSON.stringify(facts.flatMap((f) => f.hostnames.map((h) => ({ organizationId: f.organizationId, dedupKey: f.dedupKey, hostname: h, notBefore: f.notBefore }))));
  await db.$client.batch([
    rawStatement(
      db,
      sql`INSERT INTO inventory_certificates (organization_id, dedup_key, sha256, served_sha256, names, subject, issuer, serial, spki_sha256, issuer_spki_sha256, not_before, not_after,
          first_seen_ct_at, ct_match_sha256, filters, authorization, first_deployed_at, last_deployed_at, created_at)
        SELECT ${v("organizationId")}, ${v("dedupKey")}, ${v("sha256")}, ${v("servedSha256")}, json_extract(j.value, '$.names'), ${v("subject")}, ${v("issuer")}, ${v("serial")},
          ${v("spkiSha256")}, ${v("issuerSpkiSha256")}, ${v("notBefore")}, ${v("notAfter")}, ${v("firstSeenCtAt")}, ${v("ctMatchSha256")}, json_extract(j.value, '$.filters'),
          json_extract(j.value, '$.authorization'), ${v("deployedAt")}, ${v("deployedAt")}, ${v("createdAt")}
        FROM json_each(${rows}) j WHERE true
        ON CONFLICT (organization_id, dedup_key) DO UPDATE SET
          sha256 = CASE WHEN excluded.first_seen_ct_at IS NOT NULL AND inventory_certificates.first_seen_ct_at IS NULL THEN excluded.sha256 ELSE inventory_certificates.sha256 END,
          names = CASE WHEN excluded.first_seen_ct_at IS NOT NULL THEN excluded.names ELSE inventory_certificates.names END,
          spki_sha256 = CASE WHEN inventory_certificates.spki_sha256 = '' THEN excluded.spki_sha256 ELSE inventory_certificates.spki_sha256 END,
          issuer_spki_sha256 = CASE WHEN inventory_certificates.issuer_spki_sha256 = '' THEN excluded.issuer_spki_sha256 ELSE inventory_certificates.issuer_spki_sha256 END,
          served_sha256 = coalesce(excluded.served_sha256, inventory_certificates.served_sha256),
          first_seen_ct_at = coalesce(inventory_certificates.first_seen_ct_at, excluded.first_seen_ct_at),
          ct_match_sha256 = coalesce(inventory_certificates.ct_match_sha256, excluded.ct_match_sha256),
          filters = CASE WHEN excluded.first_seen_ct_at IS NOT NULL THEN excluded.filters ELSE inventory_certificates.filters END,
          authorization = coalesce(excluded.authorization, inventory_certificates.authorization),
          first_deployed_at = coalesce(inventory_certificates.first_deployed_at, excluded.first_deployed_at),
          last_deployed_at = CASE WHEN excluded.last_deployed_at IS NULL THEN inventory_certificates.last_deployed_at
            ELSE max(coalesce(inventory_certificates.last_deployed_at, ''), excluded.last_deployed_at) END`,
    ),
    rawStatement(
      db,
      sql`INSERT OR IGNORE INTO inventory_certificate_names (certificate_id, organization_id, hostname, not_before)
        SELECT ${certId}, ${v("organizationId")}, ${v("hostname")}, ${v("notBefore")} FROM json_each(${nameRows}) j`,
    ),
  ]);
}

/** The certificates of these (organization, dedup key) pairs. */
export async function certificatesByKey(db: Db, keys: readonly { organizationId: number; dedupKey: string }[]): Promise<Map<string, CertificateRow>> {
  if (!keys.length) return new Map();
  const rows = await db
    .select()
    .from(inventoryCertificates)
    .where(pairIn(inventoryCertificates.organizationId, inventoryCertificates.dedupKey, pairsJson(keys.map((k) => [k.organizationId, k.dedupKey]))))
    .all();
  return new Map(rows.map((r) => [`${r.organizationId}:${r.dedupKey}`, r]));
}

/**
 * Where keys of these organizations were seen deployed: for each (organization, SPKI
 * SHA-256), one deployment (its name and address).
 */
export async function deployedKeys(db: Db, keys: readonly { organizationId: number; spki: string }[]): Promise<Map<string, { hostname: string; address: string }>> {
  const wanted = keys.filter((k) => k.spki);
  if (!wanted.length) return new Map();
  const rows = await db
    .select({ organizationId: inventoryCertificates.organizationId, spki: inventoryCertificates.spkiSha256, hostname: inventoryDeployments.hostname, ip: inventoryDeployments.ipAddress, port: inventoryDeployments.port })
    .from(inventoryCertificates)
    .innerJoin(inventoryDeployments, eq(inventoryDeployments.certificateId, inventoryCertificates.id))
    .where(pairIn(inventoryCertificates.organizationId, inventoryCertificates.spkiSha256, pairsJson(wanted.map((k) => [k.organizationId, k.spki]))))
    .all();
  const out = new Map<string, { hostname: string; address: string }>();
  for (const r of rows) out.set(`${r.organizationId}:${r.spki}`, { hostname: r.hostname, address: `${r.ip}:${r.port}` });
  return out;
}

/** The certificates indexed under these names (for "what does it replace"), with the names each covers. */
export async function certificatesNaming(db: Db, names: readonly NameRef[]): Promise<{ organizationId: number; hostname: string; id: number; dedupKey: string; sha256: string; notBefore: string }[]> {
  if (!names.length) return [];
  return db
    .select({
      organizationId: inventoryCertificateNames.organizationId,
      hostname: inventoryCertificateNames.hostname,
      id: inventoryCertificates.id,
      dedupKey: inventoryCertificates.dedupKey,
      sha256: inventoryCertificates.sha256,
      notBefore: inventoryCertificates.notBefore,
    })
    .from(inventoryCertificateNames)
    .innerJoin(inventoryCertificates, eq(inventoryCertificates.id, inventoryCertificateNames.certificateId))
    .where(pairIn(inventoryCertificateNames.organizationId, inventoryCertificateNames.hostname, pairsJson(names.map((n) => [n.organizationId, n.hostname]))))
    .all();
}

/** Records that a target served a certificate at `at` (its deployment row, and the target's current certificate). */
export async function saveDeployment(
  db: Db,
  d: { organizationId: number; targetId: number; monitorId: number; certificateId: number; hostname: string; ipAddress: string; port: number; at: string; trust: Trust; trustDetail: string },
): Promise<void> {
  await db.batch([
    db
      .insert(inventoryDeployments)
      .values({ organizationId: d.organizationId, targetId: d.targetId, monitorId: d.monitorId, certificateId: d.certificateId, hostname: d.hostname, ipAddress: d.ipAddress, port: d.port, firstSeenAt: d.at, lastSeenAt: d.at })
      .onConflictDoUpdate({ target: [inventoryDeployments.targetId, inventoryDeployments.certificateId], set: { lastSeenAt: sql`max(${inventoryDeployments.lastSeenAt}, excluded.last_seen_at)`, hostname: d.hostname } }),
    db
      .insert(inventoryTargets)
      .values({ targetId: d.targetId, organizationId: d.organizationId, certificateId: d.certificateId, scannedAt: d.at, trust: d.trust, trustDetail: d.trustDetail })
      .onConflictDoUpdate({ target: inventoryTargets.targetId, set: { certificateId: d.certificateId, scannedAt: d.at, trust: d.trust, trustDetail: d.trustDetail } }),
  ]);
}

export async function targetRow(db: Db, targetId: number) {
  return db.select().from(inventoryTargets).where(eq(inventoryTargets.targetId, targetId)).get();
}

export async function setCtStatus(db: Db, targetId: number, status: (typeof inventoryTargets.$inferSelect)["ctStatus"]): Promise<void> {
  await db.update(inventoryTargets).set({ ctStatus: status }).where(eq(inventoryTargets.targetId, targetId)).run();
}
