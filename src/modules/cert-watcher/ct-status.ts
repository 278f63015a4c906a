/**
 * Whether the certificate a target serves was seen in Certificate Transparency (the
 * inventory joins the two; docs/modules/inventory.md). Dependency-free, so the table
 * schema can import it.
 *
 *   logged               seen in the organization's CT matches
 *   not_logged           publicly trusted, issued after CT monitoring of the name started,
 *                        never seen in the logs read
 *   predates_monitoring  publicly trusted, issued before CT monitoring of the name started
 *                        (its entry may be older than what was read)
 *   not_watched          publicly trusted; no CT filter of the organization covers the name
 *   private_ca           not publicly trusted: it validates only against the monitor's own
 *                        root CA, or not at all (self-signed, unknown issuer)
 */
export const CT_STATUSES = ["logged", "not_logged", "predates_monitoring", "not_watched", "private_ca"] as const;
export type CtStatus = (typeof CT_STATUSES)[number];
