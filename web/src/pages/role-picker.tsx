/** The roles of a user, an invitation or an SSO default: one select per module (admin.tsx, admin-identity.tsx). */
import type { Schemas } from "../api";
import { MODULE_LABELS } from "../session";

/** A role of one module, as users, invitations and the SSO default roles carry it. */
export type RoleRef = NonNullable<Schemas["SsoConfigInput"]["default_roles"]>[number];
export type RolesCatalog = Schemas["Roles"];

/** One select per module: no access, or one of the roles it offers. */
export function RolePicker({ catalog, value, onChange, legend = "Roles" }: { catalog: RolesCatalog | undefined; value: RoleRef[]; onChange: (v: RoleRef[]) => void; legend?: string }) {
  if (!catalog) return <div class="loading-bar" role="progressbar" aria-label="Loading roles" />;
  return (
    <fieldset class="field role-picker">
      <legend>{legend}</legend>
      {catalog.modules.map((m) => {
        const current = value.find((r) => r.module_name === m.module)?.role_name ?? "";
        const id = `role-${m.module}`;
        return (
          <div class="role-row">
            <label for={id}>{MODULE_LABELS[m.module] ?? m.module}</label>
            <select
              id={id}
              value={current}
              onChange={(e) => {
                const role = (e.target as HTMLSelectElement).value;
                const rest = value.filter((r) => r.module_name !== m.module);
                onChange(role ? [...rest, { module_name: m.module, role_name: role }] : rest);
              }}
            >
              <option value="">No access</option>
              {m.roles.map((r) => (
                <option value={r.name}>{r.name}</option>
              ))}
            </select>
          </div>
        );
      })}
    </fieldset>
  );
}
