/**
 * What other modules may use of alerting (.dependency-cruiser.cjs allows them this file and
 * alerting's events.ts, nothing else: the rest of the module is its own to change).
 */
export { emitEvent, emitEvents, notifyAlertState, organizationsWithRules } from "./emit";
