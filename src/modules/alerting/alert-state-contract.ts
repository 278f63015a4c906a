/**
 * The RPC surface of the AlertState Durable Object (one per organization), declared
 * here so that `src/` depends on the contract, never on the Durable Object class.
 */
import type { ModuleName } from "./cel/variables";
import type { DeliveryRunResult } from "./delivery";

/** A match that was not sent: its history row, why, and the alert it repeats. */
export interface SuppressedMatch {
  rule_id: number;
  history_id: number;
  reason: "duplicate" | "throttled";
  repeats_alert_id: number | null;
}

/** What evaluating one event against the organization's rules did. */
export interface ProcessResult {
  event_id: string;
  /** The producer handed over this event (same id) before: not evaluated again. */
  redelivered: boolean;
  /** Every rule that matched had already alerted on this content for this asset (each match is a suppressed row). */
  duplicate: boolean;
  /** Sent: a new alert, or (`updated`) the open alert of the same key, sent again. */
  fired: { rule_id: number; history_id: number; updated?: boolean }[];
  suppressed: SuppressedMatch[];
  /** Open alerts this event showed ended, resolved automatically. */
  resolved: { rule_id: number; history_id: number; reason: string }[];
  /** Rules whose match was throttled (also in `suppressed`). */
  throttled: number[];
  errors: { rule_id: number; error: string }[];
}

/** What a match of a rule on an event would become now (the rule test endpoint). */
export interface SuppressionPreview {
  asset: string;
  subject: string;
  event_id: string;
  suppression: { reason: "duplicate" | "throttled"; repeats_alert_id: number | null; until: string } | null;
}

/** What evaluating a batch of events did (one call per organization per producer batch). */
export interface BatchProcessResult {
  events: number;
  redelivered: number;
  duplicates: number;
  fired: { rule_id: number; history_id: number; event_id: string; updated?: boolean }[];
  suppressed: (SuppressedMatch & { event_id: string })[];
  resolved: { rule_id: number; history_id: number; reason: string }[];
  throttled: number;
  /** The first error of each rule that failed on some event. */
  errors: { rule_id: number; error: string }[];
}

export interface AlertStateRpc extends Rpc.DurableObjectBranded {
  process(organizationId: number, module: ModuleName, event: Record<string, unknown>, nowMs?: number): Promise<ProcessResult>;
  /** Many events of one module at once: rules and lists loaded once, fired alerts written in bulk. `id`: stable event id for de-duplication. */
  processBatch(organizationId: number, module: ModuleName, events: { id?: string; event: Record<string, unknown> }[], nowMs?: number): Promise<BatchProcessResult>;
  invalidate(what: "lists" | "rules"): Promise<void>;
  /** Schedules delivery now (after an alert was acknowledged or resolved through the API). */
  wake(organizationId: number): Promise<void>;
  /** Whether a match of the rule on the event would be sent now, or suppressed and why; changes nothing. */
  preview(module: ModuleName, rule: { id: number; throttleSeconds: number }, event: Record<string, unknown>, nowMs?: number): Promise<SuppressionPreview>;
  deliverNow(organizationId: number, nowMs?: number): Promise<DeliveryRunResult>;
}

declare module "../../env" {
  interface Bindings {
    /** One AlertState Durable Object per organization (durable-objects/alert-state.ts). */
    ALERT_STATE: DurableObjectNamespace<AlertStateRpc>;
  }
}
