/**
 * What other modules may use of admin (.dependency-cruiser.cjs allows them this file and
 * admin's events.ts, nothing else: the rest of the module is its own to change).
 */
export { assertGrantable, validateRoles, type RoleRequest } from "./service";
