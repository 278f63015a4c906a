/**
 * What other modules may use of ct-log (.dependency-cruiser.cjs allows them this file and
 * ct-log's events.ts, nothing else: the rest of the module is its own to change).
 */
export { storedLogFailure } from "./collection";
export { MONITORED_STATES } from "./loglist";
