// The one place alerting learns each monitoring module's event variables: every module
// declares its event once, in its events.ts (part of its contract, .dependency-cruiser.cjs).
import { CERT_WATCHER_SUGGESTED_RULES, certWatcherOptInEvents, certWatcherVariables } from "../../../cert-watcher/events";
import { CT_LOG_SUGGESTED_RULES, ctLogOptInEvents, ctLogVariables } from "../../../ct-log/events";
import { dnsWatcherVariables } from "../../../dns-watcher/events";
import { rdapVariables } from "../../../rdap/events";
import type { ModuleName, SuggestedRule, VariableSpec } from "./types";

export * from "./types";

export const MODULE_VARIABLES: Readonly<Record<ModuleName, readonly VariableSpec[]>> = {
  "ct-log": ctLogVariables,
  rdap: rdapVariables,
  "cert-watcher": certWatcherVariables,
  "dns-watcher": dnsWatcherVariables,
};

/**
 * Per module, event types a rule sees only when it reads `event_type` or the identifier
 * given (the fields the event is about): types added after rules were written, whose
 * other fields hold empty values a rule written for the module's first events would
 * misread (`!cert.is_precert` on a lookalike event, which has no certificate; a rule on
 * `validity_days` firing again on the not_in_ct event of the same scan).
 */
export const MODULE_OPT_IN_EVENTS: Readonly<Record<ModuleName, Readonly<Record<string, string>>>> = {
  "ct-log": ctLogOptInEvents,
  rdap: {},
  "cert-watcher": certWatcherOptInEvents,
  "dns-watcher": {},
};

/** The rules each module offers an organization that has none (introspection, the console). */
export const MODULE_SUGGESTED_RULES: Readonly<Record<ModuleName, readonly SuggestedRule[]>> = {
  "ct-log": CT_LOG_SUGGESTED_RULES,
  rdap: [],
  "cert-watcher": CERT_WATCHER_SUGGESTED_RULES,
  "dns-watcher": [],
};
