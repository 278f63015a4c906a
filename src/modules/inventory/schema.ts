/** Request/response schemas of the inventory endpoints (docs/modules/inventory.md). */
import { z } from "@hono/zod-openapi";
import { orNull } from "../../platform/openapi-document";
import { pageQuery, sortOrder } from "../../platform/paging";
import { CT_STATUSES } from "../cert-watcher/events";
import { AuthorizationSchema, HOSTNAME_STATES, MatchedFilter, RENEWAL_STATUSES, Sha256Param } from "../ct-log/lifecycle-contract";

export { Sha256Param };

const STATE_WORDS =
  "current (every scanned target serves the latest logged certificate or a newer one), deploying (a newer certificate issued less than 24 h ago is not yet served everywhere), " +
  "stale_deployment (the same after 24 h), not_in_ct (a target serves a certificate not seen in CT, or a private CA's: see the target's ct_status), " +
  "unmonitored (logged in CT, no monitored target: a certificate-monitor proposal is offered), expiring_without_successor (the certificate in use has less than a third of its lifetime left and no successor was logged), " +
  "expired, not_scanned (monitored, but no target returned a certificate yet)";

export const HostnameState = z.enum(HOSTNAME_STATES).openapi({ description: STATE_WORDS });

export const HostnameParam = z.object({
  hostname: z
    .string()
    .min(1)
    .max(253)
    .openapi({ param: { name: "hostname", in: "path" }, example: "www.example.com", description: "A name of the inventory (a wildcard as *.example.com; URL-encode the *)" }),
});

export const HOSTNAME_SORTS = ["hostname", "state", "not_after", "renewal_due_at"] as const;
export const HostnamesQuery = pageQuery({ defaultPageSize: 20 }).extend({
  state: HostnameState.optional(),
  readiness: z.enum(["ready", "not_ready", "unknown"]).optional().openapi({ description: "not_ready: names whose renewal cadence will not fit the next CA/Browser Forum maximum" }),
  q: z.string().trim().max(253).optional().openapi({ description: "Part of the hostname, case-insensitive" }),
  sort_by: z.enum(HOSTNAME_SORTS).default("hostname"),
  sort_order: sortOrder("asc"),
});

const lifetimeFields = {
  lifetime_days: z.number().int().openapi({ description: "Validity in days (notAfter - notBefore + 1 s)" }),
  exceeds_max_validity: z.boolean().openapi({ description: "Longer than the CA/Browser Forum maximum in force at its not_before (public certificates)" }),
  maximum_validity_days: z.number().int().openapi({ description: "That maximum: 398 days, 200 from 2026-03-15, 100 from 2027-03-15, 47 from 2029-03-15" }),
  renewal_due_at: z.string().openapi({ description: "Two thirds of its lifetime" }),
  renewal_overdue_at: z.string().openapi({ description: "The start of its last sixth" }),
};

export const IssuedCertificate = z
  .object({
    sha256: z.string().openapi({ description: "Fingerprint of its first CT entry (precertificate or certificate)" }),
    served_sha256: z.string().nullable().openapi({ description: "Fingerprint of the certificate as served, once a target served it" }),
    issuer: z.string(),
    not_before: z.string(),
    not_after: z.string(),
    spki_sha256: z.string().openapi({ description: "SHA-256 of its SubjectPublicKeyInfo: its key" }),
    ...lifetimeFields,
  })
  .openapi("InventoryIssuedCertificate");

export const Renewal = z
  .object({
    status: z.enum([...RENEWAL_STATUSES, "none"]).openapi({
      description: "Of the certificate in use (the soonest-expiring one served, else the latest logged): ok, due (past two thirds of its lifetime), overdue (its last sixth), renewed (a successor was logged), expired, none",
    }),
    due_at: z.string().nullable(),
    overdue_at: z.string().nullable(),
  })
  .openapi("InventoryRenewal");

export const ReadinessSchema = z
  .object({
    status: z.enum(["ready", "not_ready", "unknown"]),
    next_maximum_days: z.number().int().nullable(),
    next_maximum_from: z.string().nullable(),
    matters_from: z.string().nullable().openapi({ description: "The first renewal expected on or after the next maximum applies (its date without an observed interval)" }),
    reason: z.string(),
  })
  .openapi("InventoryReadiness");

const hostnameFields = {
  hostname: z.string(),
  state: HostnameState,
  state_reason: z.string(),
  state_since: z.string().nullable(),
  previous_state: HostnameState.nullable(),
  latest_issued: IssuedCertificate.nullable().openapi({ description: "The newest logged certificate covering the name (a wildcard covers one label)" }),
  renewal: Renewal,
  renewal_interval_days: z.number().nullable().openapi({ description: "Observed: the median gap between the issuance of its consecutive certificates" }),
  target_count: z.number().int(),
  evaluated_at: z.string().nullable().openapi({ description: "When this state was evaluated; null: not yet (a monitor was just added)" }),
  next_review_at: z.string().nullable().openapi({ description: "When the state may change by time alone (it is evaluated again then)" }),
};

export const HostnameRowSchema = z
  .object({ ...hostnameFields, readiness: z.object({ status: z.enum(["ready", "not_ready", "unknown"]), matters_from: z.string().nullable() }) })
  .openapi("InventoryHostname");

export const HostnamesResponse = z
  .object({
    hostnames: z.array(HostnameRowSchema),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    sort_by: z.enum(HOSTNAME_SORTS),
    sort_order: z.enum(["asc", "desc"]),
    state_counts: z
      .partialRecord(HostnameState, z.number().int())
      .openapi({ description: "Names of the organization per state (whatever the filters); a state no name is in is left out" }),
  })
  .openapi("InventoryHostnameList");

export const DeployedTarget = z
  .object({
    target_id: z.number().int(),
    monitor_id: z.number().int(),
    address: z.string().openapi({ description: "ip:port" }),
    standing: z.enum(["current", "behind", "not_in_ct", "expired", "not_scanned", "disabled"]),
    note: z.string(),
    ct_status: z.enum(CT_STATUSES).nullable(),
    ct_reason: z.string(),
    trust: z.enum(["public", "private_ca", "untrusted"]).nullable(),
    scanned_at: z.string().nullable().openapi({ description: "The latest scan that returned a certificate" }),
    certificate: z
      .object({ sha256: z.string(), served_sha256: z.string().nullable(), issuer: z.string(), not_before: z.string(), not_after: z.string(), in_ct: z.boolean() })
      .nullable(),
  })
  .openapi("InventoryDeployedTarget");

export const TimelineEntry = z
  .object({
    sha256: z.string(),
    served_sha256: z.string().nullable(),
    issuer: z.string(),
    not_before: z.string(),
    not_after: z.string(),
    ...lifetimeFields,
    first_seen_ct_at: z.string().nullable().openapi({ description: "null: never seen in the CT logs read" }),
    first_deployed_at: z.string().nullable(),
    last_deployed_at: z.string().nullable(),
    deployments: z.array(z.object({ address: z.string(), target_id: z.number().int(), first_seen_at: z.string(), last_seen_at: z.string() })),
    authorization: orNull(AuthorizationSchema),
  })
  .openapi("InventoryTimelineEntry");

export const HostnameDetail = z
  .object({
    ...hostnameFields,
    readiness: ReadinessSchema,
    deployed: z.array(DeployedTarget).openapi({ description: "Per monitored target, the certificate it served at its latest scan" }),
    timeline: z.array(TimelineEntry).openapi({ description: "Every certificate of the name, newest first: issued (first seen in CT) -> deployed (first/last seen served) -> expiring" }),
    watched_since: z.string().nullable().openapi({ description: "Since when the CT logs are searched for the name (its oldest covering filter); null: no filter covers it" }),
    filters: z.array(MatchedFilter),
    proposal: z
      .object({ id: z.number().int(), status: z.string(), cert_monitor_id: z.number().int().nullable() })
      .nullable()
      .openapi({ description: "The certificate-monitor proposal of an unmonitored name (accept it with POST /api/ct-log/proposals/{id}/accept)" }),
  })
  .openapi("InventoryHostnameDetail");

export const CertificateDetail = z
  .object({
    sha256: z.string(),
    served_sha256: z.string().nullable(),
    names: z.array(z.string()),
    subject: z.string(),
    issuer: z.string(),
    serial: z.string(),
    spki_sha256: z.string(),
    issuer_spki_sha256: z.string(),
    not_before: z.string(),
    not_after: z.string(),
    ...lifetimeFields,
    first_seen_ct_at: z.string().nullable(),
    ct_match_sha256: z.string().nullable().openapi({ description: "Open the CT match with GET /api/ct-log/matches/{sha256} (kept 30 days)" }),
    filters: z.array(MatchedFilter).openapi({ description: "The filters whose matches it came from" }),
    authorization: orNull(AuthorizationSchema).openapi({ description: "null: never seen in CT" }),
    deployed: z.array(
      z.object({
        target_id: z.number().int(),
        monitor_id: z.number().int(),
        hostname: z.string(),
        address: z.string(),
        first_seen_at: z.string(),
        last_seen_at: z.string(),
        current: z.boolean().openapi({ description: "Still served at the target's latest scan" }),
      }),
    ),
    hostnames: z.array(z.object({ hostname: z.string(), state: HostnameState.nullable() })),
  })
  .openapi("InventoryCertificate");
