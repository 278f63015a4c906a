/** DNS watcher change event (ADDENDUM 8): declared once in src/modules/dns-watcher/events.ts. */
export { dnsWatcherVariables } from "../../../dns-watcher/events";
