/**
 * What other modules may use of dns-watcher (.dependency-cruiser.cjs allows them this file and
 * dns-watcher's events.ts, nothing else: the rest of the module is its own to change).
 */
export { watchProposedName } from "./proposal-service";
export { domainCollection, type DomainCollectionColumns } from "./collection";
