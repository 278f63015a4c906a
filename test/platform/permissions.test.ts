/**
 * The permission catalog and scope parser (docs/decisions.md#roles-and-permissions).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, ASSIGNABLE_ROLES, isPermission, parseScope, permissionsOfUser } from "../../src/platform/permissions";

const MONITORING = ["ct-log", "dns-watcher", "rdap", "cert-watcher"];
const MONITORING_PERMS = [
  "view_monitoring", "create_monitoring", "update_monitoring", "delete_monitoring",
  "view_alerts", "view_alert_rules", "create_alert_rules", "update_alert_rules", "delete_alert_rules",
  "view_alert_templates", "create_alert_templates", "update_alert_templates", "delete_alert_templates",
];
const ADMIN = ["view_users", "manage_users", "manage_permissions", "view_audit_logs", "view_subscription", "manage_subscription"];
const TOKENS = ["view_own_tokens", "create_tokens", "delete_tokens", "view_all_tokens", "revoke_all_tokens"];
const LISTS = ["view_lists", "manage_lists"];

/** The documented scopes, spelled out independently of the implementation. */
const SPEC_SCOPES = [
  ...MONITORING.flatMap((m) => MONITORING_PERMS.map((p) => `${m}:${p}`)),
  ...ADMIN.map((p) => `admin:${p}`),
  ...TOKENS.map((p) => `api-tokens:${p}`),
  ...LISTS.map((p) => `lists:${p}`),
];

describe("scope catalog", () => {
  it("is exactly the documented scopes: 4 x 13 monitoring + 6 admin + 5 api-tokens + 2 lists = 65", () => {
    expect(SPEC_SCOPES).toHaveLength(65);
    expect([...ALL_PERMISSIONS].sort()).toEqual([...SPEC_SCOPES].sort());
    expect(new Set(ALL_PERMISSIONS).size).toBe(65);
  });

  it("every catalog permission parses and round-trips", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ALL_PERMISSIONS), (p) => {
        expect(isPermission(p)).toBe(true);
        const parsed = parseScope(p);
        expect(parsed).not.toBeNull();
        expect(`${parsed!.module}:${parsed!.permission}`).toBe(p);
      }),
    );
    for (const p of SPEC_SCOPES) expect(parseScope(p)).toEqual({ module: p.split(":")[0], permission: p.split(":")[1] });
  });

  it("random strings not in the catalog are null, never a throw", () => {
    const catalog = new Set<string>(ALL_PERMISSIONS);
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        fc.pre(!catalog.has(s));
        expect(parseScope(s)).toBeNull();
        expect(isPermission(s)).toBe(false);
      }),
      { numRuns: 2000 },
    );
    // Near misses: another module's permission, case, whitespace, missing parts.
    const mod = fc.constantFrom("ct-log", "dns-watcher", "rdap", "cert-watcher", "admin", "api-tokens", "lists", "foo", "");
    const perm = fc.constantFrom(...MONITORING_PERMS, ...ADMIN, ...TOKENS, ...LISTS, "", "x");
    fc.assert(
      fc.property(mod, perm, fc.constantFrom(":", "::", " :", ": ", "/"), (m, p, sep) => {
        const s = `${m}${sep}${p}`;
        expect(parseScope(s) !== null).toBe(catalog.has(s));
      }),
      { numRuns: 1000 },
    );
    for (const s of ["RDAP:view_monitoring", "rdap:View_Monitoring", "rdap:view_lists", "lists:view_monitoring", "admin:view_monitoring", "rdap:", ":view_monitoring", "rdap:view_monitoring ", "*"]) {
      expect(parseScope(s)).toBeNull();
    }
  });
});

describe("roles", () => {
  const role = (m: string, r: string) => ASSIGNABLE_ROLES[m]?.find((d) => d.name === r)?.permissions.slice().sort();

  it("monitoring Viewer: the four view permissions plus lists:view_lists", () => {
    for (const m of MONITORING) {
      expect(role(m, "Viewer")).toEqual(
        [`${m}:view_monitoring`, `${m}:view_alerts`, `${m}:view_alert_rules`, `${m}:view_alert_templates`, "lists:view_lists"].sort(),
      );
    }
  });

  it("monitoring Editor: every permission of the module plus lists view and manage", () => {
    for (const m of MONITORING) {
      expect(role(m, "Editor")).toEqual([...MONITORING_PERMS.map((p) => `${m}:${p}`), "lists:view_lists", "lists:manage_lists"].sort());
    }
  });

  it("token roles: Token Manager and Token Admin", () => {
    expect(role("api-tokens", "Token Manager")).toEqual(["api-tokens:create_tokens", "api-tokens:delete_tokens", "api-tokens:view_own_tokens"]);
    expect(role("api-tokens", "Token Admin")).toEqual(TOKENS.map((p) => `api-tokens:${p}`).sort());
  });

  it("permissionsOfUser: signup user holds all 65; everyone else holds lists:view_lists plus their roles", () => {
    expect(permissionsOfUser([], true).size).toBe(65);
    expect([...permissionsOfUser([], false)]).toEqual(["lists:view_lists"]);
    const p = permissionsOfUser([{ module: "rdap", role: "Viewer" }, { module: "nope", role: "Editor" }], false);
    expect([...p].sort()).toEqual(role("rdap", "Viewer"));
  });
});
