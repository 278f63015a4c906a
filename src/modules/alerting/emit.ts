/**
 * The one entry point every module uses to raise an event:
 *   await emitEvent(env, "rdap", organizationId, event)
 * It hands the event to the organization's AlertState Durable Object, which
 * evaluates the enabled rules of that module and dispatches notifications.
 */
import type { Bindings } from "../../env";
import type { ModuleName } from "./cel/variables";
import type { ProcessResult } from "../../../durable-objects/alert-state";

export function alertStateOf(env: Bindings, organizationId: number) {
  return env.ALERT_STATE.get(env.ALERT_STATE.idFromName(`org:${organizationId}`));
}

export async function emitEvent(env: Bindings, module: ModuleName, organizationId: number, event: Record<string, unknown>): Promise<ProcessResult> {
  return alertStateOf(env, organizationId).process(organizationId, module, event);
}

/** Tells the organization's alert state that lists or rules changed (best effort: it also re-reads on a timer). */
export async function notifyAlertState(env: Bindings, organizationId: number, what: "lists" | "rules"): Promise<void> {
  try {
    await alertStateOf(env, organizationId).invalidate(what);
  } catch (err) {
    console.error(`alert state invalidate(${what}) failed; it refreshes within 60 s: ${String(err)}`);
  }
}
