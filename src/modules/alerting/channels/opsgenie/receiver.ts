/**
 * Opsgenie Alert API v2 as documented: `Authorization: GenieKey <key>`; POST /v2/alerts
 * (message <= 130, alias <= 512), POST /v2/alerts/{alias}/acknowledge|close
 * ?identifierType=alias; 202 {result, took, requestId}; 401 without a key; 422 for an
 * invalid request; 429 when rate limited.
 */
import { applyAction, json, type ProviderReceiver } from "../receiver";

const accepted = () => json(202, { result: "Request will be processed", took: 0.01, requestId: crypto.randomUUID() });

export const receiver: ProviderReceiver = {
  inboxOf: (req) => /^GenieKey (.+)$/.exec(req.headers.authorization ?? "")?.[1],
  reject(req) {
    if (!/^GenieKey .+$/.test(req.headers.authorization ?? "")) return json(401, { message: "Could not authenticate", took: 0, requestId: crypto.randomUUID() });
    if (req.method !== "POST") return json(405, { message: "Method not allowed" });
    const b = req.json ?? {};
    if (req.path === "/v2/alerts") {
      if (typeof b.message !== "string" || !b.message || b.message.length > 130) return json(422, { message: "Request body is not processable. Please check the errors.", errors: { message: "Message can not be empty or longer than 130 characters." } });
      if (b.alias !== undefined && (typeof b.alias !== "string" || b.alias.length > 512)) return json(422, { message: "Request body is not processable.", errors: { alias: "Alias can not be longer than 512 characters." } });
      if (b.description !== undefined && String(b.description).length > 15000) return json(422, { message: "Request body is not processable.", errors: { description: "Description can not be longer than 15000 characters." } });
      if (b.priority !== undefined && !/^P[1-5]$/.test(b.priority)) return json(422, { message: "Request body is not processable.", errors: { priority: "Priority should be one of [P1, P2, P3, P4, P5]" } });
      return null;
    }
    const m = /^\/v2\/alerts\/([^/]+)\/(acknowledge|close)$/.exec(req.path);
    if (!m) return json(404, { message: "Not found" });
    if (req.query.identifierType !== "alias") return json(422, { message: "identifierType must be alias for an alias" });
    return null;
  },
  accept(req, incidents) {
    if (req.path === "/v2/alerts") {
      applyAction(incidents, req.json.alias, "trigger");
      return accepted();
    }
    const [, alias, verb] = /^\/v2\/alerts\/([^/]+)\/(acknowledge|close)$/.exec(req.path)!;
    applyAction(incidents, decodeURIComponent(alias), verb === "close" ? "resolve" : "acknowledge");
    return accepted();
  },
  rateLimited: (seconds) => json(429, { message: "You are making too many requests! To avoid errors, we recommend you limit requests.", took: 0, requestId: crypto.randomUUID() }, { "retry-after": String(Math.ceil(seconds)) }),
};
