// The one place alerting learns each monitoring module's event variables: every module
// declares its event once, in its events.ts (part of its contract, .dependency-cruiser.cjs).
import { certWatcherVariables } from "../../../cert-watcher/events";
import { ctLogVariables } from "../../../ct-log/events";
import { dnsWatcherVariables } from "../../../dns-watcher/events";
import { rdapVariables } from "../../../rdap/events";
import type { ModuleName, VariableSpec } from "./types";

export * from "./types";

export const MODULE_VARIABLES: Readonly<Record<ModuleName, readonly VariableSpec[]>> = {
  "ct-log": ctLogVariables,
  rdap: rdapVariables,
  "cert-watcher": certWatcherVariables,
  "dns-watcher": dnsWatcherVariables,
};
