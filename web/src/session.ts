/**
 * Who is logged in: `GET /api/auth/me`, loaded once per page load and after login.
 * Pages ask `can("ct-log:create_monitoring")` and hide what the user may not do;
 * the API enforces the same permissions, this only keeps the page honest.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Schemas } from "./api";

export type MfaStatus = Schemas["MfaStatus"];
export type Me = Schemas["Me"];

export interface Session {
  me: Me;
  can(permission: string): boolean;
  canAny(...permissions: string[]): boolean;
  reload(): Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a logged-in page");
  return s;
}

export function sessionOf(me: Me, reload: () => Promise<void>): Session {
  const held = new Set(me.permissions);
  return {
    me,
    can: (p) => held.has(p),
    canAny: (...ps) => ps.some((p) => held.has(p)),
    reload,
  };
}

export const MONITORING_MODULES = ["ct-log", "dns-watcher", "rdap", "cert-watcher"] as const;
export type ModuleName = (typeof MONITORING_MODULES)[number];
export const MODULE_LABELS: Record<string, string> = {
  "ct-log": "Certificate Transparency",
  "dns-watcher": "DNS watcher",
  rdap: "RDAP",
  "cert-watcher": "Certificates",
  "api-tokens": "API tokens",
  admin: "Administration",
  lists: "Rule lists",
};
