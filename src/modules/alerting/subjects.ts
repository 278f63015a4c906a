/**
 * Per-module facts about events that alerting needs: which of the organization's
 * monitored things it concerns (the asset: with the rule and the content, the
 * de-duplication key), what it is about (the throttling subject), a one-line summary
 * for history and messages, and a stable event id (its content) for de-duplication.
 */
import { isCollectionEventType } from "../../platform/collection/event";
import { sha256Hex } from "../../platform/secrets";
import type { ModuleName } from "./cel/variables";

type Ev = Record<string, any>;

const get = (e: Ev, path: string): any => path.split(".").reduce<any>((o, k) => (o == null ? undefined : o[k]), e);

/**
 * Several CT logs announced in one collection event (no `log.log_id`: ct-log/collection.ts):
 * the monitored logs as a whole, one asset and subject whichever logs the event names, so
 * the events of one outage are one alert, updated, then resolved.
 */
const MONITORED_CT_LOGS = "logs:monitored";
const ctLogsAsset = (e: Ev) => (get(e, "log.log_id") ? `log:${get(e, "log.log_id")}` : MONITORED_CT_LOGS);

/**
 * The organization's monitored thing the event concerns: the CT filter that matched (or
 * the CT log a collection event is about), the DNS or RDAP domain, the certificate
 * monitor and the address it scanned. Two monitors of one endpoint are two assets, so
 * identical scan results of both each alert.
 */
export function eventAsset(module: ModuleName, e: Ev): string {
  switch (module) {
    case "ct-log":
      // A lookalike domain is an asset of its own (its lifecycle and collection events).
      if (get(e, "lookalike.domain")) return `lookalike:${get(e, "lookalike.domain")}`;
      return isCollectionEventType(e.event_type) ? ctLogsAsset(e) : `filter:${e.filter_id ?? ""}`;
    case "rdap":
    case "dns-watcher":
      return `domain:${e.domain ?? ""}`;
    case "cert-watcher":
      return `monitor:${e.monitor_id ?? e.monitor_cn ?? ""}|${e.ip_address ?? ""}`;
  }
}

export function eventSubject(module: ModuleName, e: Ev): string {
  switch (module) {
    case "ct-log":
      if (get(e, "lookalike.domain")) return `lookalike:${get(e, "lookalike.domain")}`;
      // A collection event is about a log (or the monitored logs as a whole), a lifecycle event about a hostname, the others about a certificate.
      if (isCollectionEventType(e.event_type)) return get(e, "log.log_id") ? `log:${get(e, "log.url") || get(e, "log.name") || ""}` : MONITORED_CT_LOGS;
      if (e.kind === "lifecycle") return `hostname:${get(e, "lifecycle.hostname") ?? ""}`;
      return String(get(e, "cert.sha256") ?? "");
    case "rdap":
      return String(e.domain ?? "");
    case "cert-watcher":
      return `${e.monitor_cn ?? ""}|${e.ip_address ?? ""}`;
    case "dns-watcher":
      return String(e.domain ?? "");
  }
}

/** The asset a collection event is about, in words. */
function collectionAsset(module: ModuleName, e: Ev): string {
  switch (module) {
    case "ct-log":
      if (get(e, "lookalike.domain")) return `Lookalike ${get(e, "lookalike.domain_unicode") || get(e, "lookalike.domain")}`;
      // One log, or several announced together ("3 CT logs: ...", no log_id: ct-log/collection.ts).
      return get(e, "log.log_id") ? `CT log ${get(e, "log.name") || get(e, "log.url") || "?"}` : get(e, "log.name") || "CT logs";
    case "rdap":
      return `RDAP of ${e.domain ?? "?"}`;
    case "cert-watcher":
      return `Certificate of ${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"}`;
    case "dns-watcher":
      return `DNS of ${e.domain ?? "?"}`;
  }
}

export function eventSummary(module: ModuleName, e: Ev): string {
  if (e.event_type === "collection_failing") {
    const since = get(e, "collection.failing_since");
    return `${collectionAsset(module, e)} cannot be collected${since ? ` since ${since}` : ""}: ${get(e, "collection.error_message") || get(e, "collection.error_class") || "?"}`;
  }
  if (e.event_type === "collection_recovered") return `${collectionAsset(module, e)} is collected again`;
  switch (module) {
    case "ct-log": {
      if (e.event_type === "stale_deployment") return `${get(e, "lifecycle.hostname") ?? "?"}: renewed certificate not deployed after 24 h on ${((get(e, "lifecycle.targets") as string[] | undefined) ?? []).join(", ") || "?"}`;
      if (e.event_type === "renewal_overdue") return `${get(e, "lifecycle.hostname") ?? "?"}: renewal overdue, the certificate in use expires ${get(e, "cert.not_after") ?? "?"}`;
      if (e.kind === "lookalike") {
        const name = `Lookalike ${get(e, "lookalike.domain_unicode") || get(e, "lookalike.domain") || "?"} of ${get(e, "lookalike.protected_domain") || "?"}`;
        const change = get(e, "lookalike.change") ? ` (${get(e, "lookalike.change")})` : "";
        if (e.event_type === "lookalike_detected") return `${name} found (${get(e, "lookalike.source") === "ct" ? "in a certificate" : "registered"}): ${get(e, "lookalike.state")}`;
        return `${name}: ${get(e, "lookalike.previous_state")} -> ${get(e, "lookalike.state")}${change}`;
      }
      const names = (get(e, "cert.dns_names") as string[] | undefined) ?? [];
      const shown = names.slice(0, 3).join(", ") + (names.length > 3 ? ` (+${names.length - 3})` : "");
      return `Certificate for ${shown || get(e, "cert.subject") || "?"} in ${get(e, "cert.log_name") ?? "a CT log"}`;
    }
    case "rdap":
      return `RDAP registration of ${e.domain ?? "?"} changed`;
    case "cert-watcher":
      if (e.event_type === "not_in_ct") return `${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"} serves a certificate not seen in CT (${get(e, "ct.status") ?? "?"}): ${get(e, "ct.reason") ?? ""}`;
      return e.has_error
        ? `Scan of ${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"} failed: ${e.error ?? ""}`
        : `Scan of ${e.monitor_cn ?? "?"} at ${e.ip_address ?? "?"}: ${e.validity_days ?? "?"} days left`;
    case "dns-watcher": {
      // What got worse first (DNSSEC failure, DMARC verdict, SPF open to all), then what changed.
      const changed = ((e.changed_records as Ev[] | undefined) ?? []).map((r) => `${r.name} ${r.type}`);
      const worse = [
        get(e, "dnssec.status") === "bogus" && get(e, "dnssec.previous_status") !== "bogus" ? "DNSSEC validation failed" : "",
        String(get(e, "dmarc.verdict") ?? ""),
        get(e, "spf.became_permissive") ? "SPF allows all senders" : "",
      ].filter(Boolean);
      if (worse.length) return `${e.domain ?? "?"}: ${worse.join("; ")}`;
      return `DNS of ${e.domain ?? "?"} changed${changed.length ? `: ${changed.slice(0, 3).join(", ")}` : ""}`;
    }
  }
}

/** JSON with sorted keys, so the same event always hashes the same. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
    .join(",")}}`;
}

/**
 * The key of an alert, stable per rule, asset and subject: while an alert of this key is
 * open, a new match updates it; PagerDuty's dedup_key and Opsgenie's alias. Readable
 * for whoever meets it in their incident tool, and bounded (the subject is hashed).
 */
export async function alertKeyOf(organizationId: number, ruleId: number, asset: string, subject: string): Promise<string> {
  const digest = await sha256Hex(`${asset}\n${subject}`);
  return `trust-plane:${organizationId}:rule-${ruleId}:${digest.slice(0, 32)}`;
}

/** The event's own `event_id` when it has one, else SHA-256 of its canonical JSON. */
export async function eventId(module: ModuleName, e: Ev): Promise<string> {
  if (typeof e.event_id === "string" && e.event_id) return e.event_id;
  return sha256Hex(`${module}\n${stableStringify(e)}`);
}
