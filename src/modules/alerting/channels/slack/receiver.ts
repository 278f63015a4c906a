/** A Slack incoming webhook as documented: 200 "ok"; 400 "invalid_payload" / "no_text"; 429 with Retry-After. */
import type { ProviderReceiver } from "../receiver";

const text = (status: number, body: string, headers: Record<string, string> = {}) => ({ status, headers: { "content-type": "text/plain", ...headers }, body });

export const receiver: ProviderReceiver = {
  reject(req) {
    if (req.json === undefined) return text(400, "invalid_payload");
    if (typeof req.json.text !== "string" || !req.json.text) return text(400, "no_text");
    return null;
  },
  accept: () => text(200, "ok"),
  rateLimited: (seconds) => text(429, "rate_limited", { "retry-after": String(Math.ceil(seconds)) }),
};
