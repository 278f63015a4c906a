/**
 * A Teams Workflows HTTP trigger ("Send webhook alerts to a channel") as it behaves: it
 * takes a message whose attachments are Adaptive Cards and answers 202; 400 for a body
 * that is not one; 429 with Retry-After when throttled.
 */
import { json, type ProviderReceiver } from "../receiver";

export const receiver: ProviderReceiver = {
  reject(req) {
    const b = req.json;
    if (req.method !== "POST") return json(405, { error: { code: "MethodNotAllowed" } });
    const card = b?.attachments?.[0];
    if (b?.type !== "message" || !Array.isArray(b.attachments) || card?.contentType !== "application/vnd.microsoft.card.adaptive" || card?.content?.type !== "AdaptiveCard" || !Array.isArray(card.content.body)) {
      return json(400, { error: { code: "InvalidRequestContent", message: "The request content is not a message with Adaptive Card attachments." } });
    }
    return null;
  },
  accept: () => ({ status: 202 }),
  rateLimited: (seconds) => json(429, { error: { code: "WorkflowTriggerIsThrottled", message: "Too many requests" } }, { "retry-after": String(Math.ceil(seconds)) }),
};
