/**
 * What other modules may ask the reports about the organization's collection: whether
 * every monitored asset was collected within its window, and why not (the heartbeat of
 * src/modules/admin/heartbeat.ts pings only when it was).
 */
export { collectionHealth } from "./overview-service";
