/** Certificate scan event (spec "Certificate scan event fields"): declared once in src/modules/cert-watcher/events.ts. */
export { certWatcherVariables } from "../../../cert-watcher/events";
