/**
 * The audit's statements as SQLite plans them (EXPLAIN QUERY PLAN through D1, on the
 * migrated schema): every fact table is reached through an index, never scanned, so
 * the overview's cost follows the organization's own rows in the window, not every
 * organization's history. In particular each RDAP monitor's expiry is one seek in
 * rdap_change_facts_monitor_idx (without it: a scan of all facts and a temp B-tree per
 * monitor). And the whole reading is one batch of a fixed handful of statements.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { signup } from "../helpers";
import { createDb } from "../../src/db/client";
import { loadConfig } from "../../src/env";
import { tenantDb, type Tenant } from "../../src/platform/tenant";
import { readAudit, type AuditScope } from "../../src/modules/reports/facts";
import { readCertificates } from "../../src/modules/reports/facts/certificates";
import { readCt } from "../../src/modules/reports/facts/ct";
import { readDns } from "../../src/modules/reports/facts/dns";
import { readRdap } from "../../src/modules/reports/facts/rdap";
import { E } from "./helpers";

const DAY = 86_400_000;
const READERS = { dns: readDns, ct: readCt, certificates: readCertificates, rdap: readRdap };

/** The fact and history tables (and the aliases the readers give them): never scanned. */
const FACT_TABLES = /^SCAN (rdap_change_facts|rdap_history|rdap_snapshots|dns_change_facts|ct_match_occurrences|ct_matches|cert_scans|f|h|o|m|s|c|cur|prev)\b/;

let t: Tenant;
const scopeOf = (mode: AuditScope["mode"]): AuditScope => {
  const now = new Date();
  return { t, mode, window: { start: new Date(now.getTime() - 7 * DAY), end: now }, asOf: now, now, config: loadConfig(E as never), withAssets: true, evidenceLimit: 10 };
};

async function planOf(statement: unknown): Promise<string[]> {
  const q = (statement as { toSQL(): { sql: string; params: unknown[] } }).toSQL();
  const { results } = await E.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).bind(...q.params).all<{ detail: string }>();
  return results.map((r) => r.detail);
}

beforeAll(async () => {
  t = tenantDb(createDb(E.DB), (await signup("Plans")).organizationId);
});

describe("the audit's query plans", () => {
  it("reads each RDAP monitor's expiry with one index seek, not a scan and a temp B-tree per monitor", async () => {
    for (const mode of ["live", "period"] as const) {
      const statements = readRdap(scopeOf(mode)).statements;
      const monitors = await planOf(statements[statements.length - 1]);
      expect(monitors).toContain("CORRELATED SCALAR SUBQUERY 1");
      expect(monitors).toContain("SEARCH f USING INDEX rdap_change_facts_monitor_idx (monitor_id=? AND observed_at<?)");
      expect(monitors.filter((d) => /^SCAN|TEMP B-TREE/.test(d))).toEqual([]);
      // The window's changes: the organization's monitors, then their facts by the same index.
      const changes = await planOf(statements[0]);
      expect(changes).toContain("SEARCH f USING INDEX rdap_change_facts_monitor_idx (monitor_id=? AND observed_at>? AND observed_at<?)");
      expect(changes.filter((d) => /^SEARCH rdap_monitors/.test(d)).every((d) => d.includes("(organization_id=?)"))).toBe(true);
    }
  });

  it("never scans a fact table: every statement of the overview and of a report goes through an index", async () => {
    for (const mode of ["live", "period"] as const) {
      for (const [module, read] of Object.entries(READERS)) {
        for (const statement of read(scopeOf(mode)).statements) {
          const plan = await planOf(statement);
          expect([mode, module, plan.filter((d) => FACT_TABLES.test(d))]).toEqual([mode, module, []]);
        }
      }
    }
  });

  it("sends one batch of 11 statements for the overview, 13 for a report (with the appendix)", async () => {
    expect((await readAudit({ ...scopeOf("live"), withAssets: false })).statements).toBe(11);
    expect((await readAudit(scopeOf("period"))).statements).toBe(13);
  });
});
