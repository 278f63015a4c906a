/**
 * A provider's documented contract, as a local receiver: what it accepts, what it
 * answers (to a good request, a malformed one, when rate limited), and the state a
 * stateful provider keeps (PagerDuty's and Opsgenie's alerts by key). Pure functions of
 * a request, so the fixture hub (test/fixtures/servers/providers.ts) serves them to the
 * tests and bench:delivery serves them to the benchmark. Never imported by the Worker.
 */
export interface ReceivedRequest {
  method: string;
  /** The path below /providers/<kind>/<inbox>. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  /** The body as JSON, or undefined. */
  json: any;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** What a stateful provider keeps per key (dedup_key, alias): the actions in order and where that left the alert. */
export interface IncidentState {
  status: "triggered" | "acknowledged" | "resolved";
  actions: string[];
}

export interface ProviderReceiver {
  /** The inbox a request belongs to, when the provider's URL does not carry one (a routing key, an API key). */
  inboxOf?(req: ReceivedRequest): string | undefined;
  /** The provider's answer to a request its documentation calls malformed or unauthorized, else null. */
  reject(req: ReceivedRequest): ReceiverAnswer | null;
  /** The answer to a good request; `incidents` is the inbox's state for stateful providers. */
  accept(req: ReceivedRequest, incidents: Map<string, IncidentState>): ReceiverAnswer;
  /** The answer when rate limited, asking to wait `seconds`. */
  rateLimited(seconds: number): ReceiverAnswer;
}

export const json = (status: number, value: unknown, headers: Record<string, string> = {}): ReceiverAnswer => ({ status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(value) });

/** Moves an incident by an action (trigger/acknowledge/resolve), as PagerDuty and Opsgenie do: a resolved one is opened anew by a trigger. */
export function applyAction(incidents: Map<string, IncidentState>, key: string, action: "trigger" | "acknowledge" | "resolve") {
  const i = incidents.get(key);
  if (action === "trigger") {
    if (!i || i.status === "resolved") incidents.set(key, { status: "triggered", actions: [...(i?.actions ?? []), "trigger"] });
    else i.actions.push("trigger");
    return;
  }
  if (!i || i.status === "resolved") return; // ignored, as the providers do for an unknown or closed key
  i.actions.push(action);
  i.status = action === "acknowledge" ? "acknowledged" : "resolved";
}
