/** Certificate scan event: declared once in src/modules/cert-watcher/events.ts. */
export { certWatcherVariables } from "../../../cert-watcher/events";
