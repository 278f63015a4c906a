/**
 * The names a DNS watcher user types, as the service stores them: a watched domain, a
 * record set's owner name (read like a zone file written for the domain), a DKIM
 * selector. Each refusal is a 400 naming the field.
 */
import { parse } from "tldts";
import { invalidField } from "../../platform/errors";
import { normalizeDomain } from "../../platform/net/domain";

/** A DKIM selector as RFC 6376 §3.1 writes it (labels of letters, digits, hyphens; underscores as found in practice), lowercased; 400 naming the field otherwise. */
export function dkimSelector(raw: string, domain: string, field = "dkim_selectors"): string {
  const s = raw.trim().toLowerCase();
  const label = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
  if (s === "" || !s.split(".").every((l) => label.test(l))) throw invalidField(field, `'${raw.slice(0, 80)}' is not a DKIM selector (labels of letters, digits, hyphens and underscores, separated by dots)`, "Invalid DKIM selector");
  if (`${s}._domainkey.${domain}`.length > 253) throw invalidField(field, `'${raw.slice(0, 80)}' makes a name longer than 253 characters`, "Invalid DKIM selector");
  return s;
}
/** A wildcard is a zone-file construct, not a name a resolver can be asked about. */
function refuseWildcard(raw: string, field: string): void {
  if (raw.includes("*")) throw invalidField(field, `'${raw}' contains a wildcard: DNS is asked about one name at a time; watch the names in use instead`, "Invalid domain name");
}

/** The stored form of a watched domain (lowercase A-label, no trailing dot), or a 400 naming `field`. */
export function watchedDomainName(raw: string, field = "domain_name"): string {
  refuseWildcard(raw, field);
  const r = normalizeDomain(raw);
  if (!r.ok) throw invalidField(field, r.message, "Invalid domain name");
  return r.value;
}

/** A label holding an underscore: a service or selector label (`_dmarc`, `_tcp`, `s1_2024`), not a host name. */
const SERVICE_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const isServiceLabel = (label: string) => label.includes("_");

/**
 * A record set's owner name, read like a zone file written for the domain: `@` (or
 * empty) is the domain; a name with a trailing dot, or ending in the domain, is a full
 * name; otherwise a single label (`www`) or a name with underscore labels anywhere
 * (`_mta-sts`, `s1._domainkey`, `default._bimi`, `_25._tcp.mail`) is relative to the
 * domain, unless it ends in a public top-level domain (`_dmarc.example.com`: a full
 * name, outside); several ordinary labels (`mail.elsewhere.test`) are a full name.
 * Labels with an underscore are kept as written, lowercased (letters, digits, hyphens
 * and underscores, 1-63 characters); the others are normalized like a domain (IDN to
 * A-labels). A wildcard, or a name outside the domain: 400 naming `field`.
 */
export function recordSetName(raw: string, domain: string, field = "name"): string {
  refuseWildcard(raw, field);
  // The full stops UTS #46 maps to "." are dots here too, so labels are split once.
  const trimmed = raw.trim().replace(/[\u3002\uff0e\uff61]/g, ".");
  const absolute = trimmed.endsWith(".");
  const text = trimmed.replace(/\.$/, "");
  if (text === "@" || (text === "" && !absolute)) return domain;
  const labels = text.split(".");
  if (labels.some((l) => l === "")) throw invalidField(field, `'${raw}' has an empty label`, "Invalid record name");
  const lower = text.toLowerCase();
  const endsInDomain = lower === domain || lower.endsWith(`.${domain}`);
  const last = labels[labels.length - 1].toLowerCase();
  const relative = !absolute && !endsInDomain && (labels.length === 1 || (labels.some(isServiceLabel) && !parse(`x.${last}`).isIcann));
  const full = relative ? [...labels, ...domain.split(".")] : labels;

  // Underscore labels as written; the rest through UTS #46, a placeholder standing in for each underscore label.
  for (const l of full.filter(isServiceLabel)) {
    if (!SERVICE_LABEL.test(l.toLowerCase())) throw invalidField(field, `'${raw}': '${l}' is not a valid label`, "Invalid record name");
  }
  const r = normalizeDomain(full.map((l) => (isServiceLabel(l) ? "x" : l)).join("."));
  if (!r.ok) throw invalidField(field, r.message.replace(/'[^']*'/, `'${raw}'`), "Invalid record name");
  const normalized = r.value.split(".");
  if (normalized.length !== full.length) throw invalidField(field, `'${raw}' is not a valid record name`, "Invalid record name");
  const name = normalized.map((l, i) => (isServiceLabel(full[i]) ? full[i].toLowerCase() : l)).join(".");
  if (name !== domain && !name.endsWith(`.${domain}`)) {
    throw invalidField(field, `'${raw}' is outside the watched domain ${domain} (a single label such as 'www', or a name with underscore labels such as 's1._domainkey', is read below ${domain}; write other names in full)`, "Record set outside the domain");
  }
  if (name.length > 253) throw invalidField(field, `'${raw}' is longer than 253 characters`, "Invalid record name");
  return name;
}
