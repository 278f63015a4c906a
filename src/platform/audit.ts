/**
 * The audit log (docs/decisions.md#audit-log): every successful mutating call, with the acting
 * user, the API token (if one was used), action, target and client IP.
 * Written by the route layer (src/platform/route.ts) so no handler can forget it.
 */
import { auditLogs } from "../db/schema/platform";
import type { Db } from "../db/client";

export interface AuditEntry {
  organizationId: number;
  userId: number | null;
  tokenId: number | null;
  action: string;
  targetType: string | null;
  targetId: string | null;
  clientIp: string | null;
  at: Date;
}

export function auditInsert(db: Db, e: AuditEntry) {
  return db.insert(auditLogs).values({
    organizationId: e.organizationId,
    userId: e.userId,
    tokenId: e.tokenId,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId,
    clientIp: e.clientIp,
    createdAt: e.at.toISOString(),
  });
}
