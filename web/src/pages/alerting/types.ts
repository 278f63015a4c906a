/** The alerting API's shapes, named as the console reads them: aliases of the generated types (web/src/api/schema.d.ts). */
import type { Schemas } from "../../api";

export type Rule = Schemas["AlertRule"];
export type Template = Schemas["AlertTemplate"];
export type Channel = Schemas["NotificationChannel"];
export type Introspection = Schemas["CelIntrospection"];
export type Variable = Introspection["variables"][number];
export type RuleTestResult = Schemas["AlertRuleTestResult"];
export type Alert = Schemas["AlertHistory"]["alerts"][number];
export type Delivery = Alert["deliveries"][number];
export type RuleList = Schemas["RuleList"];

export type Severity = NonNullable<Schemas["AlertRuleInput"]["severity"]>;
export const SEVERITIES: readonly Severity[] = ["info", "low", "medium", "high", "critical"];
