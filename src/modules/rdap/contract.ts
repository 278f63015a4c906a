/**
 * What other modules may use of rdap (.dependency-cruiser.cjs allows them this file and
 * rdap's events.ts, nothing else: the rest of the module is its own to change).
 */
export { registrantOf, registrarOf, registrationDate, type RegistrantIdentity, type RegistrarIdentity } from "./facts";
// An RDAP lookup of one domain outside the module's own polling (lookalike registration checks).
export { findRdapServers } from "./bootstrap";
export { loadBootstrap } from "./bootstrap-store";
export { fetchDomain } from "./client";
export { nameserverNames, statusValues } from "./rdap-json";
export { monitorCollection, type MonitorCollectionColumns } from "./collection";
