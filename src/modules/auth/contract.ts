/**
 * What other modules may use of auth (.dependency-cruiser.cjs allows them this file and
 * auth's events.ts, nothing else: the rest of the module is its own to change).
 */
export { displayedRoles, normalizeEmail } from "./service";
export { usersWithFactor } from "./mfa/factors";
