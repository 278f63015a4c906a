/**
 * The RPC surface of the AlertState Durable Object (one per organization), declared
 * here so that `src/` depends on the contract, never on the Durable Object class.
 */
import type { ModuleName } from "./cel/variables";
import type { DeliveryRunResult } from "./delivery";

/** What evaluating one event against the organization's rules did. */
export interface ProcessResult {
  event_id: string;
  duplicate: boolean;
  fired: { rule_id: number; history_id: number }[];
  throttled: number[];
  errors: { rule_id: number; error: string }[];
}

/** What evaluating a batch of events did (one call per organization per producer batch). */
export interface BatchProcessResult {
  events: number;
  duplicates: number;
  fired: { rule_id: number; history_id: number; event_id: string }[];
  throttled: number;
  /** The first error of each rule that failed on some event. */
  errors: { rule_id: number; error: string }[];
}

export interface AlertStateRpc extends Rpc.DurableObjectBranded {
  process(organizationId: number, module: ModuleName, event: Record<string, unknown>, nowMs?: number): Promise<ProcessResult>;
  /** Many events of one module at once: rules and lists loaded once, fired alerts written in bulk. `id`: stable event id for de-duplication. */
  processBatch(organizationId: number, module: ModuleName, events: { id?: string; event: Record<string, unknown> }[], nowMs?: number): Promise<BatchProcessResult>;
  invalidate(what: "lists" | "rules"): Promise<void>;
  deliverNow(organizationId: number, nowMs?: number): Promise<DeliveryRunResult>;
}
