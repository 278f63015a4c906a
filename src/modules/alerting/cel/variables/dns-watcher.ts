/** DNS watcher change event: declared once in src/modules/dns-watcher/events.ts. */
export { dnsWatcherVariables } from "../../../dns-watcher/events";
