/**
 * The one vocabulary of collection state, shared by every monitoring module.
 *
 * A monitored asset (a DNS domain and each watched record set, an RDAP domain, a
 * certificate target, each CT log as an organization relies on it) is "collected" when
 * the service asked its outside source and got an answer it could use. What the
 * service says about an asset is only as good as its last collection, so every asset
 * carries its collection state next to its data, in the API, the console, the reports
 * and the alert events.
 *
 *   pending   not collected yet and not failing: never attempted, or the first attempt
 *             failed and the retry is due (one failed attempt is not yet "failing")
 *   ok        the latest attempt succeeded, or one attempt failed after a success (one
 *             missed collection is normal operation; the error is still shown)
 *   failing   FAILING_AFTER_CONSECUTIVE or more attempts in a row failed
 *   paused    the asset is disabled: nothing is attempted
 */
export const COLLECTION_STATES = ["ok", "failing", "pending", "paused"] as const;
export type CollectionState = (typeof COLLECTION_STATES)[number];

/**
 * Why an attempt failed, as a closed set a person (and an alert rule) can act on:
 *
 *   dns_resolution  the source's name did not resolve (NXDOMAIN, no address, resolver down)
 *   connect         no connection: refused, reset, unreachable, closed before an answer
 *   timeout         no complete answer within the time allowed
 *   tls             the TLS handshake or certificate validation failed
 *   http_status     an HTTP answer with an error status (other than 429)
 *   rate_limited    the source asked us to slow down (HTTP 429, Retry-After, a pause)
 *   protocol        an answer that does not parse or does not verify (bad JSON, a tampered
 *                   tile, a signature that does not check, a DNS message that does not decode)
 *   blocked         the egress policy refused the destination (an internal address)
 *   internal        a fault of this service; the message says which step failed
 */
export const COLLECTION_ERROR_CLASSES = ["dns_resolution", "connect", "timeout", "tls", "http_status", "rate_limited", "protocol", "blocked", "internal"] as const;
export type CollectionErrorClass = (typeof COLLECTION_ERROR_CLASSES)[number];

/** What went wrong, in words that name the host and the step ("DNS lookup of rdap.example failed"). */
export interface CollectionError {
  class: CollectionErrorClass;
  message: string;
}

/** An asset enters `failing` at its second consecutive failed attempt. */
export const FAILING_AFTER_CONSECUTIVE = 2;

/** The two events every module emits when an asset goes blind and when it sees again. */
export const COLLECTION_EVENT_TYPES = ["collection_failing", "collection_recovered"] as const;
export type CollectionEventType = (typeof COLLECTION_EVENT_TYPES)[number];
