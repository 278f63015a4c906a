/**
 * What other modules may use of rdap (.dependency-cruiser.cjs allows them this file and
 * rdap's events.ts, nothing else: the rest of the module is its own to change).
 */
export { registrantOf, registrarOf, type RegistrantIdentity, type RegistrarIdentity } from "./facts";
export { nameserverNames, statusValues } from "./rdap-json";
