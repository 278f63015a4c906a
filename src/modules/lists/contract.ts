/**
 * What other modules may use of lists (.dependency-cruiser.cjs allows them this file and
 * lists's events.ts, nothing else: the rest of the module is its own to change).
 */
export { listNames, loadListsForRules } from "./service";
export { normalizeSpkiHash } from "./normalize";
