/** The alerting API's shapes as the console reads them (until the client is generated from the OpenAPI document). */

export interface Rule {
  id: number;
  name: string;
  expression: string;
  enabled: boolean;
  severity: string;
  template_id: number | null;
  channel_ids: number[];
  throttle_seconds: number;
  /** Matches of the last 24 h: sent, and not sent (duplicate or throttled). */
  alerts_last_24h: { fired: number; suppressed: number };
  created_at: string;
  updated_at: string;
}

export interface Template {
  id: number;
  name: string;
  subject: string;
  body: string;
  created_at: string;
  updated_at: string;
}

export interface Channel {
  id: number;
  name: string;
  kind: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  created_at: string;
}

export interface Variable {
  path: string;
  type: string;
  description: string;
}

export interface Introspection {
  module: string;
  variables: Variable[];
  functions: { name: string; signature: string; description: string }[];
}

export interface RuleTestResult {
  matched: boolean;
  error: string | null;
  outcome: "no_match" | "error" | "would_fire" | "would_be_suppressed" | "rule_disabled";
  explanation: string;
  suppression: { reason: "duplicate" | "throttled"; repeats_alert_id: number | null; until: string; asset: string; subject: string } | null;
}

export interface Delivery {
  action: "trigger" | "acknowledge" | "resolve";
  channel_id: number;
  channel_name: string | null;
  channel_kind: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  response_status: number | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export interface Alert {
  id: number;
  rule_id: number | null;
  rule_name: string;
  severity: string;
  subject: string;
  asset: string;
  event_summary: string;
  message: { subject: string; body: string };
  fired_at: string;
  status: "fired" | "suppressed";
  suppressed_reason: "duplicate" | "throttled" | null;
  repeats_alert_id: number | null;
  suppressed_until: string | null;
  alert_key: string;
  state: "open" | "acknowledged" | "resolved" | null;
  occurrences: number;
  acknowledged_by: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
  resolution: string | null;
  deliveries: Delivery[];
}

export interface RuleList {
  id: number;
  name: string;
  list_type: string;
  description: string;
  entry_count: number;
  entry_limit: number;
  updated_at: string;
}

export const SEVERITIES = ["info", "low", "medium", "high", "critical"];
