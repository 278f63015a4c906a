/**
 * What a scheduled run collects for a domain's email checks beside its record sets: the
 * MTA-STS policy (fetched over HTTPS when the `_mta-sts` id changed, otherwise at most
 * once a day) and the TLSA answers of its MX hosts (asked with the run's other DNS
 * questions, run-lookups.ts). The result is the domain's next EmailState.
 *
 * A fetch or lookup that fails at transport level (DNS, connection, timeout, HTTP 429 or
 * 5xx, refused by the egress policy) is a collection error: the last policy or TLSA set
 * stays, the failure is counted with its reason, nothing is a change. An answer that is
 * itself wrong (HTTP 404, a redirect, a certificate that does not validate, an oversize
 * or unparseable policy) is a finding about the domain: the policy becomes `invalid`.
 */
import {
  classifyFailure,
  httpStatusFailure,
  recordAttempt,
  type AttemptOutcome,
  type CollectionError,
  type CollectionErrorClass,
  type CollectionRecord,
  type CollectionTransition,
} from "../../../platform/collection";
import { checkUrl, type EgressPolicy } from "../../../platform/egress";
import { readBodyUpTo } from "../../../platform/http-body";
import type { Observation } from "../observation";
import { MTA_STS_POLICY_MAX_BYTES, parseMtaStsPolicy, policyFingerprint } from "./mta-sts";
import { NEVER_ATTEMPTED, type StoredCollection, type StoredPolicy, type StoredTlsa } from "./view";

/** A day: how often a policy whose id did not change is read again (how a policy edited without a new id is caught). */
export const POLICY_REFETCH_MS = 24 * 3600_000;
/** The first retry of a failed policy fetch; each further failure doubles it, up to POLICY_REFETCH_MS. */
export const POLICY_RETRY_MS = 10 * 60_000;

export interface PolicyFetchSettings {
  /** URL template with `{domain}` (MTA_STS_POLICY_URL). */
  urlTemplate: string;
  timeoutMs: number;
  /** null: no egress check (benchmarks in Node against local servers only). */
  egress: EgressPolicy | null;
  fetch?: typeof fetch;
}

export type PolicyFetchResult =
  /** The server answered with a policy body (200). */
  | { kind: "policy"; body: string; warnings: string[] }
  /** The server answered, but not with a usable policy: a finding. */
  | { kind: "unusable"; problem: string }
  /** The policy could not be looked at: a collection error. */
  | { kind: "failed"; failure: CollectionError };

export function policyUrl(template: string, domain: string): string {
  return template.replaceAll("{domain}", domain);
}

/** Fetches `https://mta-sts.<domain>/.well-known/mta-sts.txt` (or the configured template) as RFC 8461 §3.3 says senders do. */
export async function fetchMtaStsPolicy(domain: string, s: PolicyFetchSettings): Promise<PolicyFetchResult> {
  const what = "MTA-STS policy fetch";
  if (!s.urlTemplate.includes("{domain}")) return { kind: "failed", failure: { class: "internal", message: `${what}: MTA_STS_POLICY_URL has no {domain} placeholder` } };
  const url = policyUrl(s.urlTemplate, domain);
  // http: only when the operator's template says so (a local policy server); the default is https.
  const schemes = s.urlTemplate.startsWith("http:") ? ["http:"] : ["https:"];
  if (s.egress) {
    const v = await checkUrl(s.egress, url, schemes);
    if (!v.allowed) return { kind: "failed", failure: { class: "blocked", message: `${what}: ${url} refused by the egress policy: ${v.reason}` } };
  } else if (!schemes.includes(new URL(url).protocol)) {
    return { kind: "failed", failure: { class: "blocked", message: `${what}: ${url} is not ${schemes[0].replace(":", "")}` } };
  }
  let res: Response;
  try {
    // Redirects are not followed (RFC 8461 §3.3): a sender would not either.
    res = await (s.fetch ?? fetch)(url, { redirect: "manual", signal: AbortSignal.timeout(s.timeoutMs), headers: { accept: "text/plain" } });
  } catch (err) {
    const failure = classifyFailure(err, { url, what });
    // A certificate that does not validate is the domain's problem, not a failure to look.
    if (failure.class === "tls") return { kind: "unusable", problem: `the certificate of ${new URL(url).host} does not validate (${failure.message})` };
    return { kind: "failed", failure };
  }
  if (res.status === 429 || res.status >= 500) {
    await res.body?.cancel();
    return { kind: "failed", failure: httpStatusFailure(res.status, url, what) };
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    return { kind: "unusable", problem: `${url} redirects (HTTP ${res.status}); senders do not follow redirects` };
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    return { kind: "unusable", problem: `${url} answers HTTP ${res.status} instead of the policy` };
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await readBodyUpTo(res, MTA_STS_POLICY_MAX_BYTES);
  } catch (err) {
    return { kind: "failed", failure: classifyFailure(err, { url, what }) };
  }
  if (bytes === null) return { kind: "unusable", problem: `the policy at ${url} is larger than ${MTA_STS_POLICY_MAX_BYTES / 1024} KiB` };
  const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const warnings = type === "text/plain" ? [] : [`served as ${type || "no content type"} instead of text/plain`];
  return { kind: "policy", body: new TextDecoder().decode(bytes), warnings };
}

/** Whether the policy is read this run: the id changed (unless the last try for it failed and waits), or its day is over. */
export function policyDue(stored: StoredPolicy | null, id: string, now: Date): boolean {
  if (!stored) return true;
  const waitOver = stored.next_fetch_at === null || Date.parse(stored.next_fetch_at) <= now.getTime();
  if (waitOver) return true;
  return stored.fetched_for_id !== id && stored.collection.failures === 0;
}

/** The stored collection state (JSON of email_json) as the platform's record, and back. */
export const collectionRecordOf = (c: StoredCollection): CollectionRecord => ({
  lastAttemptAt: c.last_attempt_at,
  lastSuccessAt: c.last_success_at,
  failingSince: c.failing_since,
  consecutiveFailures: c.failures,
  nextAttemptAt: null,
  errorClass: c.error_class as CollectionErrorClass | null,
  errorMessage: c.error,
});
const storedOf = (r: CollectionRecord): StoredCollection => ({
  last_attempt_at: r.lastAttemptAt,
  last_success_at: r.lastSuccessAt,
  failures: r.consecutiveFailures,
  failing_since: r.failingSince,
  error_class: r.errorClass,
  error: r.errorMessage,
});

/** One attempt through the platform's transition (platform/collection recordAttempt): the state after it and the transition it caused. */
function attempted(c: StoredCollection, outcome: AttemptOutcome, at: string): { collection: StoredCollection; transition: CollectionTransition } {
  const r = recordAttempt(collectionRecordOf(c), outcome, at, null);
  return { collection: storedOf(r.record), transition: r.transition };
}
const failedAttempt = (c: StoredCollection, error: CollectionError, at: string) => attempted(c, { ok: false, error }, at);
const succeededAttempt = (at: string) => attempted(NEVER_ATTEMPTED, { ok: true }, at).collection;

/**
 * The stored policy after a fetch for `id` at `now`, and the collection transition the
 * fetch caused: `failing` at the second failed fetch in a row, `recovered` at the first
 * fetch that answered after that (an answer that is a finding, such as HTTP 404, is an answer).
 */
export function policyAfterFetch(stored: StoredPolicy | null, id: string, url: string, r: PolicyFetchResult, now: Date): { policy: StoredPolicy; transition: CollectionTransition } {
  const at = now.toISOString();
  const prior = stored ?? { url, fetched_for_id: "", fetched_at: null, next_fetch_at: null, outcome: null, problem: "", policy: null, fingerprint: "", collection: NEVER_ATTEMPTED };
  if (r.kind === "failed") {
    const { collection, transition } = failedAttempt(prior.collection, r.failure, at);
    const retryMs = Math.min(POLICY_RETRY_MS * 2 ** Math.min(collection.failures - 1, 20), POLICY_REFETCH_MS);
    return { policy: { ...prior, collection, next_fetch_at: new Date(now.getTime() + retryMs).toISOString() }, transition };
  }
  const { collection, transition } = attempted(prior.collection, { ok: true }, at);
  const next = new Date(now.getTime() + POLICY_REFETCH_MS).toISOString();
  const base = { url, fetched_for_id: id, fetched_at: at, next_fetch_at: next, collection };
  if (r.kind === "unusable") return { policy: { ...base, outcome: "invalid", problem: r.problem, policy: null, fingerprint: "" }, transition };
  const policy = parseMtaStsPolicy(r.body);
  policy.warnings.push(...r.warnings);
  const usable = policy.errors.length === 0;
  return {
    policy: { ...base, outcome: usable ? "ok" : "invalid", problem: usable ? "" : `the policy is invalid: ${policy.errors.join("; ")}`, policy, fingerprint: policyFingerprint(policy) },
    transition,
  };
}

/**
 * The TLSA answer of an MX host after this run: a confirmed answer (the first one, or
 * the second when the first differed from what was stored) replaces the stored one; a
 * lookup error keeps it and counts the failure. `collection.last_success_at` is when the
 * values were last written (first read, changed, or read again after failures); while
 * there are no failures, the domain's last check read them again.
 */
export function tlsaAfterLookup(stored: StoredTlsa | undefined, answer: Observation, confirmation: Observation | undefined, at: string): { tlsa: StoredTlsa; unconfirmed: boolean } {
  const prior: StoredTlsa = stored ?? { values: [], validated: false, rcode: "", collection: NEVER_ATTEMPTED };
  if (answer.kind === "error") {
    return { tlsa: { ...prior, collection: failedAttempt(prior.collection, answer.failure, at).collection }, unconfirmed: false };
  }
  const same = (o: Observation | undefined) =>
    o?.kind === "resolved" && o.authenticData === answer.authenticData && o.values.length === answer.values.length && o.values.every((v, i) => v === answer.values[i]);
  const known = stored !== undefined && stored.collection.last_success_at !== null;
  const unchanged = known && stored.validated === answer.authenticData && stored.rcode === answer.rcode && stored.values.join("\n") === answer.values.join("\n");
  // Unchanged and not failing: nothing to write (the domain's last check says when it was read again).
  if (unchanged && prior.collection.failures === 0) return { tlsa: prior, unconfirmed: false };
  if (unchanged) return { tlsa: { ...prior, collection: { ...succeededAttempt(at), last_success_at: at } }, unconfirmed: false };
  if (known && !same(confirmation)) return { tlsa: prior, unconfirmed: true };
  return { tlsa: { values: answer.values, validated: answer.authenticData, rcode: answer.rcode, collection: succeededAttempt(at) }, unconfirmed: false };
}
