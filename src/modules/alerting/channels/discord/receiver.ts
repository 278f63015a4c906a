/**
 * Discord's Execute Webhook as documented: POST /api/webhooks/{id}/{token}, content or
 * embeds (at most 10; title 256, description 4096, at most 25 fields of name 256 and
 * value 1024); 204 No Content; 400 {code: 50035} for an invalid form; 429 with a JSON
 * body {message, retry_after (seconds), global} and Retry-After.
 */
import { json, type ProviderReceiver } from "../receiver";

export const receiver: ProviderReceiver = {
  reject(req) {
    if (req.method !== "POST" || !/\/api\/webhooks\/[^/]+\/[^/]+$/.test(req.path)) return json(404, { message: "Unknown Webhook", code: 10015 });
    const b = req.json;
    const invalid = (field: string) => json(400, { message: "Invalid Form Body", code: 50035, errors: { [field]: { _errors: [{ code: "BASE_TYPE_BAD_LENGTH", message: "Must be between 1 and the limit in length." }] } } });
    if (!b || (!b.content && !(Array.isArray(b.embeds) && b.embeds.length))) return json(400, { message: "Cannot send an empty message", code: 50006 });
    if ((b.embeds ?? []).length > 10) return invalid("embeds");
    for (const e of b.embeds ?? []) {
      if ((e.title ?? "").length > 256) return invalid("embeds.0.title");
      if ((e.description ?? "").length > 4096) return invalid("embeds.0.description");
      if ((e.fields ?? []).length > 25) return invalid("embeds.0.fields");
      for (const f of e.fields ?? []) if (!f.name || f.name.length > 256 || !f.value || f.value.length > 1024) return invalid("embeds.0.fields.value");
    }
    return null;
  },
  accept: () => ({ status: 204 }),
  rateLimited: (seconds) =>
    json(429, { message: "You are being rate limited.", retry_after: seconds, global: false }, { "retry-after": String(Math.ceil(seconds)), "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": String(seconds) }),
};
