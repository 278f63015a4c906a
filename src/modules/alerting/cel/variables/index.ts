import { CERT_WATCHER_IMPLICIT_EVENT_TYPES, CERT_WATCHER_SUGGESTED_RULES } from "../../../cert-watcher/events";
import { CT_LOG_IMPLICIT_EVENT_TYPES, CT_LOG_SUGGESTED_RULES } from "../../../ct-log/events";
import { certWatcherVariables } from "./cert-watcher";
import { ctLogVariables } from "./ct-log";
import { dnsWatcherVariables } from "./dns-watcher";
import { rdapVariables } from "./rdap";
import type { ModuleName, SuggestedRule, VariableSpec } from "./types";

export * from "./types";

export const MODULE_VARIABLES: Readonly<Record<ModuleName, readonly VariableSpec[]>> = {
  "ct-log": ctLogVariables,
  rdap: rdapVariables,
  "cert-watcher": certWatcherVariables,
  "dns-watcher": dnsWatcherVariables,
};

/**
 * The event types a rule sees without naming `event_type` (engine.ts): a module's
 * original events; types added later (and collection events) must be asked for. null:
 * every type of the module but the collection events.
 */
export const IMPLICIT_EVENT_TYPES: Readonly<Record<ModuleName, readonly string[] | null>> = {
  "ct-log": CT_LOG_IMPLICIT_EVENT_TYPES,
  rdap: null,
  "cert-watcher": CERT_WATCHER_IMPLICIT_EVENT_TYPES,
  "dns-watcher": null,
};

/** The rules each module offers an organization that has none (introspection, the console). */
export const MODULE_SUGGESTED_RULES: Readonly<Record<ModuleName, readonly SuggestedRule[]>> = {
  "ct-log": CT_LOG_SUGGESTED_RULES,
  rdap: [],
  "cert-watcher": CERT_WATCHER_SUGGESTED_RULES,
  "dns-watcher": [],
};
