import { certWatcherVariables } from "./cert-watcher";
import { ctLogVariables } from "./ct-log";
import { dnsWatcherVariables } from "./dns-watcher";
import { rdapVariables } from "./rdap";
import type { ModuleName, VariableSpec } from "./types";

export * from "./types";

export const MODULE_VARIABLES: Readonly<Record<ModuleName, readonly VariableSpec[]>> = {
  "ct-log": ctLogVariables,
  rdap: rdapVariables,
  "cert-watcher": certWatcherVariables,
  "dns-watcher": dnsWatcherVariables,
};
