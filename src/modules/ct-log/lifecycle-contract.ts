/**
 * The seam between CT matching and the certificate inventory (src/modules/inventory/,
 * docs/modules/inventory.md), declared on this side so the CT module never imports the
 * inventory: the inventory depends on the CT module, not the other way round.
 *
 * The CT event fan-out (fanout.ts) asks the inventory, per organization and batch of
 * newly visible certificates, what it knows of them (deployed? known key? which
 * certificate does it replace?), judges their authorization with that, and hands them
 * back with their verdicts to be recorded; the inventory then re-evaluates the hostnames
 * they name and raises the lifecycle events. Without an inventory connected (a unit test
 * of the fan-out), nothing is deployed, no key is known from deployments and nothing is
 * recorded.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Bindings } from "../../env";
import type { Db } from "../../db/client";
import { inJsonArray } from "../../db/in-json";
import { rawStatement } from "../../db/raw";
import { jsonArrayChunks } from "../../platform/groups";
import { ctFilters, ctMatches, ctMatchOccurrences, ctProposals } from "../../db/schema";
import type { Authorization, KnownKey } from "./authorization";
import { normalizeCertificateName } from "./cert/names";
import type { CtEventCert } from "./events";
import { parseFilterPattern } from "./filters/pattern";
import { filterMatchesName } from "./filters/semantics";

export { HOSTNAME_STATES, type HostnameState } from "../../db/schema/inventory";
/** What the inventory's API shows of CT: a match's authorization and matched filters, a certificate's SHA-256 and renewal status, in the CT module's words. */
export { AuthorizationSchema, MatchedFilter, Sha256Param } from "./schema";
export { RENEWAL_STATUSES } from "./cert/lifetime";

/** A certificate that became visible in the organization's CT matches. */
export interface IssuedCertificate {
  matchId: number;
  /** The certificate/precertificate identity (cert/dedup.ts). */
  dedupKey: string;
  /** The cert.* fields of its first matched entry. */
  cert: CtEventCert;
  /** The certificate names the organization's filters matched. */
  names: string[];
  /** The filters that matched it. */
  filters: { id: number; pattern: string }[];
  /** When the match became visible (CT publication clock). */
  firstMatchedAt: string;
}

/** What the inventory knows of an issued certificate when its event is raised. */
export interface IssuanceFacts {
  deployed: boolean;
  /** SHA-256 of the certificate it replaces (the newest earlier one of the same names), "" when none. */
  replaces: string;
  /** Its key seen deployed on one of the organization's endpoints. */
  key: KnownKey;
}

/** A certificate of one organization, as the fan-out hands it over (every organization of a batch at once). */
export type OrganizationCertificate = IssuedCertificate & { organizationId: number };

export interface IssuanceLifecycle {
  /** What is known of these certificates, keyed `${organizationId}:${dedupKey}`, before their events are built. */
  describe(db: Db, certs: readonly OrganizationCertificate[]): Promise<Map<string, IssuanceFacts>>;
  /** Records them with their verdicts, re-evaluates the hostnames they name and raises the lifecycle events. */
  record(env: Bindings, db: Db, certs: readonly (OrganizationCertificate & { authorization: Authorization })[], now: Date): Promise<void>;
}

let connected: IssuanceLifecycle | null = null;

/** The inventory, connected when the app is built (src/app.ts `connectModules`). */
export function connectIssuanceLifecycle(lifecycle: IssuanceLifecycle): void {
  connected = lifecycle;
}

export function issuanceLifecycle(): IssuanceLifecycle | null {
  return connected;
}

// ---- what the inventory reads and writes of the CT module ------------------------------

/** A live filter of an organization, as far as the inventory needs it. */
export interface CoveringFilter {
  id: number;
  pattern: string;
  createdAt: string;
}

/**
 * For each (organization, name): the organization's enabled, not deleted filters that
 * match the name (the CT logs are searched for it since the oldest one's creation).
 * One query for every organization named.
 */
export async function filtersCovering(db: Db, names: readonly { organizationId: number; hostname: string }[]): Promise<Map<string, CoveringFilter[]>> {
  const out = new Map<string, CoveringFilter[]>();
  const orgs = [...new Set(names.map((n) => n.organizationId))];
  if (!orgs.length) return out;
  const rows = await db
    .select({ id: ctFilters.id, organizationId: ctFilters.organizationId, pattern: ctFilters.pattern, matchType: ctFilters.matchType, createdAt: ctFilters.createdAt })
    .from(ctFilters)
    .where(and(inJsonArray(ctFilters.organizationId, orgs), eq(ctFilters.enabled, true), isNull(ctFilters.deletedAt)))
    .all();
  const parsed = rows.flatMap((r) => {
    const p = parseFilterPattern(r.pattern);
    return p.ok ? [{ ...r, parsed: p.value }] : [];
  });
  for (const n of names) {
    const name = normalizeCertificateName(n.hostname);
    const covering = name === null ? [] : parsed.filter((f) => f.organizationId === n.organizationId && filterMatchesName(f.parsed, f.matchType, name));
    out.set(`${n.organizationId}:${n.hostname}`, covering.map((f) => ({ id: f.id, pattern: f.pattern, createdAt: f.createdAt })));
  }
  return out;
}

/** Characters of one statement's JSON parameter (D1 takes a value of up to 2 MB). */
const PROPOSAL_JSON_CHARS = 500_000;

/**
 * Offers a certificate monitor for each name seen in CT that no target watches, as the
 * filters' `certs` feed does (a name is proposed once per organization: one already
 * dismissed stays dismissed). Idempotent. The rows are one JSON parameter read with
 * json_each: D1 binds at most 100 parameters per statement, and a multi-row VALUES list
 * (7 a row) failed from the 15th name on, which failed the whole fan-out message.
 */
export async function proposeCertMonitors(db: Db, rows: readonly { organizationId: number; hostname: string; filterId: number; sha256: string }[], now: Date): Promise<void> {
  if (!rows.length) return;
  const at = now.toISOString();
  const v = (i: number) => sql.raw(`json_extract(j.value, '$[${i}]')`);
  await db.$client.batch(
    jsonArrayChunks(rows.map((r) => [r.organizationId, r.hostname, r.filterId, r.sha256]), PROPOSAL_JSON_CHARS).map((json) =>
      rawStatement(
        db,
        sql`INSERT INTO ${ctProposals} (organization_id, kind, hostname, filter_id, source_sha256, created_at)
          SELECT ${v(0)}, 'certs', ${v(1)}, ${v(2)}, ${v(3)}, ${at} FROM json_each(${json}) j WHERE true
          ON CONFLICT DO NOTHING`,
      ),
    ),
  );
}

/** The `certs` proposals of these names of one organization (id and status), by hostname. */
export async function certProposals(db: Db, organizationId: number, hostnames: readonly string[]): Promise<Map<string, { id: number; status: string; certMonitorId: number | null }>> {
  if (!hostnames.length) return new Map();
  const rows = await db
    .select({ id: ctProposals.id, hostname: ctProposals.hostname, status: ctProposals.status, certMonitorId: ctProposals.certMonitorId })
    .from(ctProposals)
    .where(and(eq(ctProposals.organizationId, organizationId), eq(ctProposals.kind, "certs"), inJsonArray(ctProposals.hostname, hostnames)))
    .all();
  return new Map(rows.map((r) => [r.hostname, { id: r.id, status: r.status, certMonitorId: r.certMonitorId }]));
}

/** The CT occurrences of one organization's certificate with this fingerprint (any entry: precertificate or final): its dedup key, if matched in the 30-day window. */
export async function dedupKeyOfFingerprint(db: Db, organizationId: number, sha256: string): Promise<string | null> {
  const row = await db
    .select({ dedupKey: ctMatches.dedupKey })
    .from(ctMatchOccurrences)
    .innerJoin(ctMatches, eq(ctMatches.id, ctMatchOccurrences.matchId))
    .where(and(eq(ctMatchOccurrences.organizationId, organizationId), eq(ctMatchOccurrences.sha256, sha256)))
    .get();
  return row?.dedupKey ?? null;
}

// The pure parts of the CT module the inventory uses: certificate parsing and identity,
// lifetime rules, the lifecycle event, authorization verdicts.
export { parseCertificate } from "./cert/certificate";
export { certificateDedupKeySync, sha256HexSync } from "./cert/fast-hash";
export { normalizeCertificateName } from "./cert/names";
export * from "./cert/lifetime";
export { buildLifecycleEvent, NOT_JUDGED, type CtEventCert, type CtEventCertLifecycle, type CtLogEvent } from "./events";
export { worstAuthorization, type Authorization } from "./authorization";
