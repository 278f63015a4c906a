import type { MonitoringModule } from "../../../../platform/permissions";

export type { SuggestedRule, VariableSpec, VariableType } from "../../../../platform/event-variables";

/** The modules whose events alert rules read: the monitoring modules (declared once in platform/permissions.ts). */
export type ModuleName = MonitoringModule;
export { MONITORING_MODULES as MODULE_NAMES } from "../../../../platform/permissions";
