/** RDAP change event (spec "RDAP event fields"). */
import type { VariableSpec } from "./types";

export const rdapVariables: readonly VariableSpec[] = [
  { path: "domain", type: "string", description: "The monitored domain" },
  { path: "tld", type: "string", description: "Its top-level domain" },
  { path: "rdap", type: "object", description: "The new and the previous RDAP snapshot" },
  {
    path: "rdap.current",
    type: "map<string, dyn>",
    description:
      "Full RDAP response (RFC 9083): ldhName, status list, nameservers (objects with ldhName), events (eventAction/eventDate), entities. Fields the registry does not return are absent (test with has())",
  },
  { path: "rdap.previous", type: "map<string, dyn>", description: "The previous snapshot, same shape" },
  { path: "metadata", type: "object", description: "How the snapshot was fetched" },
  { path: "metadata.fetched_at", type: "string", description: "Fetch time, ISO 8601" },
  { path: "metadata.rdap_server", type: "string", description: "URL queried" },
  { path: "metadata.http_status", type: "int", description: "HTTP status from the RDAP server" },
];
