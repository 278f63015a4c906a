/**
 * The permission catalog: modules, their permissions (= grantable token scopes,
 * `<module>:<permission>`), the roles each module offers and what they grant.
 * docs/decisions.md#roles-and-permissions says why. This file is the only place
 * these names are spelled out; routes, token validation, /api/admin/roles and the
 * OpenAPI document all read it.
 */
import type { RoleAssignment } from "../db/schema/platform";

export const MONITORING_MODULES = ["ct-log", "dns-watcher", "rdap", "cert-watcher"] as const;
export type MonitoringModule = (typeof MONITORING_MODULES)[number];

const MONITORING_PERMISSIONS = [
  "view_monitoring",
  "create_monitoring",
  "update_monitoring",
  "delete_monitoring",
  "view_alerts",
  "view_alert_rules",
  "create_alert_rules",
  "update_alert_rules",
  "delete_alert_rules",
  "view_alert_templates",
  "create_alert_templates",
  "update_alert_templates",
  "delete_alert_templates",
] as const;

export const PERMISSIONS_BY_MODULE = {
  "ct-log": MONITORING_PERMISSIONS,
  "dns-watcher": MONITORING_PERMISSIONS,
  rdap: MONITORING_PERMISSIONS,
  "cert-watcher": MONITORING_PERMISSIONS,
  admin: ["view_users", "manage_users", "manage_permissions", "view_audit_logs", "view_subscription", "manage_subscription"],
  "api-tokens": ["view_own_tokens", "create_tokens", "delete_tokens", "view_all_tokens", "revoke_all_tokens"],
  lists: ["view_lists", "manage_lists"],
} as const;

export type Module = keyof typeof PERMISSIONS_BY_MODULE;
export type Permission = {
  [M in Module]: `${M}:${(typeof PERMISSIONS_BY_MODULE)[M][number]}`;
}[Module];

export const ALL_PERMISSIONS: readonly Permission[] = (Object.keys(PERMISSIONS_BY_MODULE) as Module[]).flatMap((m) =>
  PERMISSIONS_BY_MODULE[m].map((p) => `${m}:${p}` as Permission),
);
const PERMISSION_SET: ReadonlySet<string> = new Set(ALL_PERMISSIONS);

export function isPermission(value: string): value is Permission {
  return PERMISSION_SET.has(value);
}

/** Parses `module:permission`; null when the shape or either name is unknown. */
export function parseScope(scope: string): { module: Module; permission: string } | null {
  if (!isPermission(scope)) return null;
  const i = scope.indexOf(":");
  return { module: scope.slice(0, i) as Module, permission: scope.slice(i + 1) };
}

const perms = (module: Module, names: readonly string[]) => names.map((n) => `${module}:${n}` as Permission);

const viewerOf = (m: MonitoringModule) => [
  ...perms(m, ["view_monitoring", "view_alerts", "view_alert_rules", "view_alert_templates"]),
  "lists:view_lists" as Permission,
];
const editorOf = (m: MonitoringModule) => [
  ...perms(m, MONITORING_PERMISSIONS),
  "lists:view_lists" as Permission,
  "lists:manage_lists" as Permission,
];

export interface RoleDefinition {
  name: string;
  description: string;
  permissions: Permission[];
}

/**
 * Roles an administrator can assign, per module. `admin` offers `Administrator`
 * (every admin permission) so an organization can have more than one
 * administrator; the signup user's blanket Administrator role is implicit.
 */
export const ASSIGNABLE_ROLES: Record<string, RoleDefinition[]> = {
  ...Object.fromEntries(
    MONITORING_MODULES.map((m) => [
      m,
      [
        { name: "Viewer", description: "Read-only access to data, rules and alert history", permissions: viewerOf(m) },
        {
          name: "Editor",
          description: "Full access including filters, monitored assets, rules and templates",
          permissions: editorOf(m),
        },
      ],
    ]),
  ),
  "api-tokens": [
    {
      name: "Token Manager",
      description: "Create tokens, view and revoke own tokens",
      permissions: perms("api-tokens", ["view_own_tokens", "create_tokens", "delete_tokens"]),
    },
    {
      name: "Token Admin",
      description: "Token Manager plus view and revoke all tokens of the organization",
      permissions: perms("api-tokens", PERMISSIONS_BY_MODULE["api-tokens"]),
    },
  ],
  admin: [
    {
      name: "Administrator",
      description: "Users, invitations, roles, audit log and subscription",
      permissions: [
        ...perms("admin", PERMISSIONS_BY_MODULE.admin),
        ...perms("api-tokens", PERMISSIONS_BY_MODULE["api-tokens"]),
        ...perms("lists", PERMISSIONS_BY_MODULE.lists),
      ],
    },
  ],
};

export function findRole(module: string, role: string): RoleDefinition | undefined {
  return ASSIGNABLE_ROLES[module]?.find((r) => r.name === role);
}

/**
 * The permissions a user holds through their roles. The signup user is
 * Administrator of everything. Every user may view rule lists.
 */
export function permissionsOfUser(roles: RoleAssignment[], isSignupUser: boolean): Set<Permission> {
  if (isSignupUser) return new Set(ALL_PERMISSIONS);
  const out = new Set<Permission>(["lists:view_lists"]);
  for (const r of roles) for (const p of findRole(r.module, r.role)?.permissions ?? []) out.add(p);
  return out;
}
