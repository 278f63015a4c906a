/**
 * Splunk's HTTP Event Collector as documented: POST /services/collector/event with
 * `Authorization: Splunk <token>`; 200 {"text":"Success","code":0}; 401 code 2 without a
 * token; 400 code 12 without an `event`; 503 code 9 "Server is busy" (its answer to
 * too much load, with Retry-After).
 */
import { json, type ProviderReceiver } from "../receiver";

export const receiver: ProviderReceiver = {
  reject(req) {
    if (req.method !== "POST" || !req.path.endsWith("/services/collector/event")) return json(404, { text: "The requested URL was not found on this server.", code: 404 });
    if (!/^Splunk \S+$/.test(req.headers.authorization ?? "")) return json(401, { text: "Token is required", code: 2 });
    if (req.json === undefined) return json(400, { text: "Invalid data format", code: 6 });
    if (req.json.event === undefined || req.json.event === null) return json(400, { text: "Event field is required", code: 12 });
    return null;
  },
  accept: () => json(200, { text: "Success", code: 0 }),
  rateLimited: (seconds) => json(503, { text: "Server is busy", code: 9 }, { "retry-after": String(Math.ceil(seconds)) }),
};
