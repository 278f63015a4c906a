/**
 * The inventory's scheduled work: names whose state may change by time alone (a newer
 * certificate 24 h old, a renewal threshold, an expiry, a monitor change) are evaluated
 * when due, and certificates long gone are forgotten.
 */
import { and, lt, notExists, sql } from "drizzle-orm";
import type { ScheduledJob } from "../../platform/scheduler";
import { inventoryCertificates, inventoryTargets } from "../../db/schema";
import { existingTargets } from "../cert-watcher/deployment-contract";
import { refreshDue } from "./lifecycle";

/** Names evaluated per run (every Cron run, once a minute: 30,000 an hour across organizations). */
const NAMES_PER_RUN = 500;
/** Certificates are kept until a year after they expired (a renewal cadence needs the previous ones). */
const KEEP_EXPIRED_MS = 366 * 24 * 3600_000;

export const refreshInventoryJob: ScheduledJob = {
  name: "inventory.refresh",
  intervalSeconds: 0,
  async run({ env, db, now }) {
    // Across organizations: the due names of all of them, oldest first.
    return { evaluated: await refreshDue(env, db, null, now, NAMES_PER_RUN) };
  },
};

export const pruneInventoryJob: ScheduledJob = {
  name: "inventory.prune",
  intervalSeconds: 24 * 3600,
  async run({ db, now }) {
    // Targets deleted from the certificate watcher: what they served is forgotten (their deployment history stays).
    const kept = await db.select({ targetId: inventoryTargets.targetId }).from(inventoryTargets).all();
    const live = await existingTargets(db, kept.map((k) => k.targetId));
    const gone = kept.map((k) => k.targetId).filter((id) => !live.has(id));
    if (gone.length) await db.delete(inventoryTargets).where(sql`${inventoryTargets.targetId} IN (SELECT value FROM json_each(${JSON.stringify(gone)}))`).run();
    const cutoff = new Date(now.getTime() - KEEP_EXPIRED_MS).toISOString();
    const served = db.select({ one: sql`1` }).from(inventoryTargets).where(sql`${inventoryTargets.certificateId} = ${inventoryCertificates.id}`);
    const res = await db.delete(inventoryCertificates).where(and(lt(inventoryCertificates.notAfter, cutoff), notExists(served))).run();
    return { forgotten_targets: gone.length, forgotten_certificates: res.meta.changes };
  },
};
