/** PagerDuty Events API v2 as documented: POST /v2/enqueue, 202 {status, message, dedup_key}; 400 for an invalid event; 429 when rate limited. */
import { applyAction, json, type ProviderReceiver } from "../receiver";

const SEVERITIES = ["critical", "error", "warning", "info"];

export const receiver: ProviderReceiver = {
  inboxOf: (req) => req.json?.routing_key,
  reject(req) {
    const e = req.json;
    const errors: string[] = [];
    if (req.method !== "POST" || !req.path.endsWith("/v2/enqueue")) return json(404, { status: "not found" });
    if (!e || typeof e !== "object") errors.push("Event object is invalid");
    else {
      if (!/^[A-Za-z0-9]{32}$/.test(String(e.routing_key ?? ""))) errors.push("'routing_key' is invalid");
      if (!["trigger", "acknowledge", "resolve"].includes(e.event_action)) errors.push("'event_action' is invalid");
      if (e.dedup_key !== undefined && (typeof e.dedup_key !== "string" || e.dedup_key.length > 255)) errors.push("'dedup_key' is invalid");
      if (e.event_action !== "trigger" && !e.dedup_key) errors.push("'dedup_key' is required for acknowledge and resolve");
      if (e.event_action === "trigger") {
        const p = e.payload ?? {};
        if (typeof p.summary !== "string" || !p.summary || p.summary.length > 1024) errors.push("'payload.summary' is missing or longer than 1024");
        if (typeof p.source !== "string" || !p.source) errors.push("'payload.source' is missing");
        if (!SEVERITIES.includes(p.severity)) errors.push("'payload.severity' is invalid");
      }
    }
    return errors.length ? json(400, { status: "invalid event", message: "Event object is invalid", errors }) : null;
  },
  accept(req, incidents) {
    const e = req.json;
    const key = e.dedup_key ?? crypto.randomUUID();
    applyAction(incidents, key, e.event_action);
    return json(202, { status: "success", message: "Event processed", dedup_key: key });
  },
  rateLimited: () => json(429, { status: "throttle event", message: "Requests for this service are arriving too quickly.  Please retry later." }),
};
