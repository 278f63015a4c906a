/**
 * What other modules may use of cert-watcher (.dependency-cruiser.cjs allows them this file and
 * cert-watcher's events.ts, nothing else: the rest of the module is its own to change).
 */
export { createMonitor } from "./monitor-service";
export { LEGACY_PROTOCOLS, validityStatus } from "./indicators";
export { scanTargetName, targetRecord } from "./collection";
