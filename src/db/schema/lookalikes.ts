/**
 * Lookalike domains as assets (src/modules/ct-log/lookalikes/): one row per lookalike
 * registrable domain of an organization, whoever found it (a CT certificate or the
 * registered-permutation discovery), with what was last seen of it in DNS, HTTPS and
 * RDAP, its lifecycle state and the collection state of those checks; its timeline;
 * the discovery's query budget spent on demand.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { collectionColumns, id, organizationId } from "./columns";

/**
 * The words of the lookalike lifecycle, declared once: states, sources, timeline kinds
 * and the DNS a check records. The API schemas, the CEL event schema, the D1 columns and
 * the console derive from these.
 *
 * States, from what the latest check saw (stateAfterCheck in src/modules/ct-log/lookalikes/lifecycle.ts):
 *   new           found, not checked yet
 *   registered    delegated (NS at the name) but no address
 *   resolving     has an A or AAAA address
 *   mail_capable  has an MX: it can receive mail (the phishing and invoice-fraud one)
 *   serving       accepts connections on the HTTPS port at one of its addresses
 *   gone          no longer registered (NXDOMAIN)
 *   dismissed     a person dismissed it (a defensive registration, a known partner):
 *                 never checked nor alerted again
 * A lookalike that is serving and has an MX is `serving`; `has_mx` says the rest.
 */
export const LOOKALIKE_STATES = ["new", "registered", "resolving", "mail_capable", "serving", "gone", "dismissed"] as const;
export type LookalikeState = (typeof LOOKALIKE_STATES)[number];

/**
 *   ct           a certificate in a CT log named it
 *   permutation  the discovery generated it from a protected domain and found it registered
 */
export const LOOKALIKE_SOURCES = ["ct", "permutation"] as const;
export type LookalikeSource = (typeof LOOKALIKE_SOURCES)[number];

/**
 *   detected           first found (by its source)
 *   certificate        a (new) certificate named it
 *   state_changed      a check moved it to another state
 *   confidence_raised  corroborating evidence made a low-confidence candidate high
 *   registration       RDAP told its registration date and registrar
 *   dismissed          a person dismissed it, with the reason
 */
export const LOOKALIKE_TIMELINE_KINDS = ["detected", "certificate", "state_changed", "confidence_raised", "registration", "dismissed"] as const;
export type LookalikeTimelineKind = (typeof LOOKALIKE_TIMELINE_KINDS)[number];

/** DNS of a lookalike as a check saw it (names lowercase without the final dot; MX as "preference host"). */
export interface LookalikeDns {
  registered: boolean;
  ns: string[];
  a: string[];
  aaaa: string[];
  mx: string[];
}


export const ctLookalikes = sqliteTable(
  "ct_lookalikes",
  {
    id: id(),
    organizationId: organizationId(),
    /** Registrable domain of the lookalike (A-labels). */
    domain: text("domain").notNull(),
    /** The protected registrable domain it imitates (the filter's pattern when found). */
    protectedDomain: text("protected_domain").notNull(),
    /** The typosquat-enabled filter that protects it; kept when that filter is deleted (no foreign key). */
    filterId: integer("filter_id"),
    /** Who found it first. */
    source: text("source").$type<LookalikeSource>().notNull(),
    /** Evidence ids (typosquat/detect.ts EVIDENCE), corroboration included. */
    evidence: text("evidence", { mode: "json" }).$type<string[]>().notNull(),
    editDistance: integer("edit_distance"),
    confidence: text("confidence").$type<"low" | "high">().notNull(),
    state: text("state").$type<LookalikeState>().notNull().default("new"),
    stateChangedAt: text("state_changed_at").notNull(),
    dismissedReason: text("dismissed_reason"),
    dismissedAt: text("dismissed_at"),
    /** The user who dismissed it. */
    dismissedBy: integer("dismissed_by"),
    firstSeenAt: text("first_seen_at").notNull(),
    /** The latest certificate naming it (CT); null when none was seen. */
    certificateSeenAt: text("certificate_seen_at"),
    /** DNS as last resolved; null before the first successful check. */
    dns: text("dns", { mode: "json" }).$type<LookalikeDns>(),
    /** Accepted a connection on the HTTPS port at the last check; null when not checked (see servingDetail). */
    serving: integer("serving", { mode: "boolean" }),
    /** What the HTTPS check saw or why it was not made, in words. */
    servingDetail: text("serving_detail"),
    /** RDAP: the registration event's date and the registrar's name; null when not known (see rdapError). */
    registeredAt: text("registered_at"),
    registrar: text("registrar"),
    rdapCheckedAt: text("rdap_checked_at"),
    rdapError: text("rdap_error"),
    /** Collection state of the DNS/HTTPS checks (platform/collection). */
    lastCheckedAt: text("last_checked_at"),
    lastSuccessAt: text("last_success_at"),
    ...collectionColumns(),
    /** When its lookalike_detected event went to the alert rules; null until then. */
    detectedEventAt: text("detected_event_at"),
  },
  (t) => [
    uniqueIndex("ct_lookalikes_org_domain").on(t.organizationId, t.domain),
    index("ct_lookalikes_org_state").on(t.organizationId, t.state),
    index("ct_lookalikes_org_first_seen").on(t.organizationId, t.firstSeenAt),
    index("ct_lookalikes_next_check").on(t.collectionNextAttemptAt),
  ],
);

/** What happened to a lookalike, in order: the timeline of the API and the console. */
export const ctLookalikeTimeline = sqliteTable(
  "ct_lookalike_timeline",
  {
    id: id(),
    organizationId: organizationId(),
    lookalikeId: integer("lookalike_id")
      .notNull()
      .references(() => ctLookalikes.id, { onDelete: "cascade" }),
    at: text("at").notNull(),
    kind: text("kind").$type<LookalikeTimelineKind>().notNull(),
    fromState: text("from_state").$type<LookalikeState>(),
    toState: text("to_state").$type<LookalikeState>(),
    /** In words: what was seen ("MX mx1.evil.example added"), the dismissal reason. */
    detail: text("detail").notNull().default(""),
  },
  (t) => [index("ct_lookalike_timeline_lookalike").on(t.lookalikeId, t.at)],
);

/** Discovery queries an organization spent on demand per UTC day (scheduled runs derive theirs, see discovery.ts). */
export const ctLookalikeDiscoveryUsage = sqliteTable(
  "ct_lookalike_discovery_usage",
  {
    organizationId: organizationId(),
    /** UTC day, YYYY-MM-DD. */
    day: text("day").notNull(),
    queries: integer("queries").notNull().default(0),
    /** Of those, spent before the day's scheduled run. */
    queriesBeforeScheduled: integer("queries_before_scheduled").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.day] })],
);
