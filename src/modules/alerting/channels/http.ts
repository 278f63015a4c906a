/**
 * One HTTP request of a provider, the same way for every provider: the destination
 * through the egress policy again at send time (the policy may have changed, a name may
 * resolve elsewhere today), a timeout, no redirects followed (a receiver cannot send
 * the request on to an internal address), and the answer classified: 2xx delivered;
 * 408, 429 and 5xx retryable, with the wait the receiver asked for (Retry-After, or a
 * provider's own field such as Discord's `retry_after`); other statuses final. Failure
 * messages name the destination with its secrets masked.
 */
import { blockedFailure, classifyFailure, httpStatusFailure } from "../../../platform/collection";
import { checkUrl, egressPolicy } from "../../../platform/egress";
import { shownDestination, type FailureClass, type SendContext, type SendResult } from "./provider";

export const HTTP_SCHEMES = ["http:", "https:"] as const;

/** The longest wait a receiver's Retry-After is honoured for; beyond it, the normal backoff schedule applies. */
const MAX_RETRY_AFTER_SECONDS = 3600;

export interface HttpRequest {
  url: string;
  body: string;
  headers?: Record<string, string>;
  /** The step in words, for failure messages: "PagerDuty event", "Slack message". */
  what: string;
  /** Reads a wait (seconds) from a 429 answer's JSON body, for receivers that put it there. */
  retryAfterFromBody?: (body: unknown) => number | undefined;
}

/** Retry-After: delta-seconds or an HTTP date (RFC 9110 10.2.3), relative to `now`. */
export function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now.getTime()) / 1000);
}

export async function sendHttp(ctx: SendContext, req: HttpRequest): Promise<SendResult> {
  const shown = shownDestination(req.url);
  const verdict = await checkUrl(egressPolicy(ctx.config), req.url, HTTP_SCHEMES);
  if (!verdict.allowed) {
    const f = blockedFailure(verdict.reason, req.what);
    return { ok: false, retryable: false, failure: "blocked", errorClass: f.class, error: f.message };
  }
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: "POST",
      body: req.body,
      headers: { "content-type": "application/json", "user-agent": "Trust-Plane-Alerts/1", ...req.headers },
      signal: AbortSignal.timeout(ctx.config.alerting.deliveryTimeoutMs),
      redirect: "manual",
    });
  } catch (err) {
    const f = classifyFailure(err, { url: shown, what: req.what });
    const failure: FailureClass = f.class === "timeout" ? "timeout" : "unreachable";
    return { ok: false, retryable: true, failure, errorClass: f.class, error: f.message };
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel();
    return { ok: true, retryable: false, status: res.status };
  }
  const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
  let retryAfter = parseRetryAfter(res.headers.get("retry-after"), ctx.now);
  if (res.status === 429 && req.retryAfterFromBody) {
    const fromBody = req.retryAfterFromBody(await res.json().catch(() => undefined));
    if (fromBody !== undefined && Number.isFinite(fromBody) && fromBody >= 0) retryAfter = fromBody;
  } else {
    await res.body?.cancel();
  }
  const retryAfterSeconds = retryable && retryAfter !== undefined ? Math.min(retryAfter, MAX_RETRY_AFTER_SECONDS) : undefined;
  const f = res.status >= 300 && res.status < 400 ? { class: "http_status" as const, message: `${req.what}: ${shown} answered with a redirect (HTTP ${res.status}), which is not followed` } : httpStatusFailure(res.status, shown, req.what, retryAfterSeconds);
  return { ok: false, retryable, status: res.status, failure: "rejected", errorClass: f.class, error: f.message, retryAfterSeconds };
}
