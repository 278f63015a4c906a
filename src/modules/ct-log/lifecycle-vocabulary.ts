/**
 * A hostname's state in the certificate inventory (docs/modules/inventory.md), the words
 * CT lifecycle events and the inventory share. Dependency-free, so the table schema can
 * import it.
 *
 * `not_scanned` (beside the seven states of the inventory's design) says a name is
 * monitored but no target has returned a certificate yet, rather than calling it current
 * without having looked.
 */
export const HOSTNAME_STATES = ["current", "deploying", "stale_deployment", "not_in_ct", "unmonitored", "expiring_without_successor", "expired", "not_scanned"] as const;
export type HostnameState = (typeof HOSTNAME_STATES)[number];
