/**
 * SPF (RFC 7208): record selection, parsing, check_host() and the policy analysis the
 * DNS watcher shows and alerts on. Pure: DNS goes through the small `SpfDns` interface
 * (the DoH client in production, an in-memory zone in the RFC 7208 suite).
 *
 *  - `selectSpfRecord`: exactly one `v=spf1` TXT record (§4.5); none, or several (permerror).
 *  - `parseSpfRecord`: terms per the §12 ABNF; any syntax error anywhere is permerror (§4.6).
 *  - `checkHost`: §4-§7 evaluation with the limits of §4.6.4: 10 DNS-querying terms
 *    (include, a, mx, ptr, exists, redirect) over the whole evaluation, 2 void lookups,
 *    10 MX / PTR names; macros (§7); exp= (§6.2).
 *  - `analyzeSpf`: what a domain's policy says without a sending IP, computed by the
 *    same check_host() evaluation (so the same limits) for a sender no address term
 *    matches: the terms, the DNS lookups counted, the effective `all` (following
 *    redirect=), whether it allows every sender (the result is `pass`: +all directly,
 *    through an include or redirect=, +ip4:0.0.0.0/0, +ip6:::/0), and the v=spf1 record
 *    each include/redirect target had (what a later run compares the targets with).
 */

export type SpfResult = "none" | "neutral" | "pass" | "fail" | "softfail" | "temperror" | "permerror";
export type SpfQualifier = "+" | "-" | "~" | "?";
export type SpfLookupType = "TXT" | "A" | "AAAA" | "MX" | "PTR";

/** A DNS failure (SERVFAIL, timeout...) during evaluation: temperror (§4.4, §5). */
export class SpfDnsError extends Error {
  override readonly name = "SpfDnsError";
  constructor(
    message: string,
    /** The question was never put to a resolver (the caller's deadline or circuit breaker): no verdict at all. */
    readonly notAsked = false,
  ) {
    super(message);
  }
}

/**
 * DNS for SPF. Values: TXT = the record's strings glued (§3.3), A/AAAA = addresses,
 * MX = "preference exchange", PTR = names. NXDOMAIN and NODATA are both []; a
 * SERVFAIL or timeout throws SpfDnsError. CNAMEs are followed by the resolver.
 */
export interface SpfDns {
  lookup(name: string, type: SpfLookupType): Promise<string[]>;
}

export type SpfMechanismName = "all" | "include" | "a" | "mx" | "ptr" | "ip4" | "ip6" | "exists";

export interface SpfMechanism {
  kind: "mechanism";
  qualifier: SpfQualifier;
  name: SpfMechanismName;
  /** Target domain-spec (macros unexpanded), or "" for the current domain. */
  domainSpec: string;
  /** ip4/ip6 network address. */
  network?: string;
  cidr4?: number;
  cidr6?: number;
  /** The term as written. */
  text: string;
}
export interface SpfModifier {
  kind: "modifier";
  name: string;
  value: string;
  text: string;
}
export type SpfTerm = SpfMechanism | SpfModifier;

export interface ParsedSpf {
  terms: SpfTerm[];
  mechanisms: SpfMechanism[];
  redirect: string | null;
  exp: string | null;
}

export class SpfSyntaxError extends Error {
  override readonly name = "SpfSyntaxError";
}

const MECHANISMS: ReadonlySet<string> = new Set(["all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists"]);
const DNS_TERMS: ReadonlySet<string> = new Set(["include", "a", "mx", "ptr", "exists"]);
export const SPF_LOOKUP_LIMIT = 10;
export const SPF_VOID_LOOKUP_LIMIT = 2;

/** True when the TXT record is an SPF version 1 record (§4.5: "v=spf1" then a space or the end). */
export function isSpfRecord(txt: string): boolean {
  const t = txt.toLowerCase();
  return t === "v=spf1" || t.startsWith("v=spf1 ");
}

export type SpfSelection = { kind: "none" } | { kind: "one"; record: string } | { kind: "multiple"; records: string[] };

export function selectSpfRecord(txts: readonly string[]): SpfSelection {
  const records = txts.filter(isSpfRecord);
  if (records.length === 0) return { kind: "none" };
  if (records.length > 1) return { kind: "multiple", records };
  return { kind: "one", record: records[0] };
}

// ---------------------------------------------------------------------------------------
// Syntax (§12)

const MACRO_LETTERS = "slodiphcrtv";
const EXP_ONLY_LETTERS = "crt";

interface MacroToken {
  literal?: string;
  macro?: { letter: string; digits: number | null; reverse: boolean; delimiters: string };
}

/** Tokenizes a macro-string; `allowExpOnly` admits %{c} %{r} %{t} (explanation text only). */
function tokenizeMacroString(s: string, allowExpOnly: boolean, literalRange: (c: number) => boolean): MacroToken[] {
  const out: MacroToken[] = [];
  let lit = "";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch !== "%") {
      if (!literalRange(ch.charCodeAt(0))) throw new SpfSyntaxError(`invalid character ${JSON.stringify(ch)}`);
      lit += ch;
      continue;
    }
    const next = s[i + 1];
    if (next === "%") (lit += "%"), i++;
    else if (next === "_") (lit += " "), i++;
    else if (next === "-") (lit += "%20"), i++;
    else if (next === "{") {
      const close = s.indexOf("}", i);
      if (close < 0) throw new SpfSyntaxError("unterminated macro");
      const m = /^([A-Za-z])(\d*)(r?)([.\-+,/_=]*)$/i.exec(s.slice(i + 2, close));
      if (!m || !MACRO_LETTERS.includes(m[1].toLowerCase())) throw new SpfSyntaxError(`invalid macro %{${s.slice(i + 2, close)}}`);
      if (!allowExpOnly && EXP_ONLY_LETTERS.includes(m[1].toLowerCase())) throw new SpfSyntaxError(`macro %{${m[1]}} is only allowed in exp`);
      if (m[2] !== "" && Number(m[2]) === 0) throw new SpfSyntaxError("macro transformer 0 is invalid");
      if (lit) out.push({ literal: lit }), (lit = "");
      out.push({ macro: { letter: m[1], digits: m[2] === "" ? null : Number(m[2]), reverse: m[3].toLowerCase() === "r", delimiters: m[4] || "." } });
      i = close;
    } else throw new SpfSyntaxError(`invalid macro escape %${next ?? ""}`);
  }
  if (lit) out.push({ literal: lit });
  return out;
}

const isMacroLiteral = (c: number) => c >= 0x21 && c <= 0x7e && c !== 0x25;
const isExpLiteral = (c: number) => (c >= 0x20 && c <= 0x7e) && c !== 0x25;

/** domain-spec = macro-string domain-end (§7.1); throws SpfSyntaxError. */
function checkDomainSpec(spec: string): void {
  if (spec === "") throw new SpfSyntaxError("empty domain-spec");
  const tokens = tokenizeMacroString(spec, false, isMacroLiteral);
  const last = tokens[tokens.length - 1];
  if (last.macro) return; // domain-end = macro-expand
  // domain-end = "." toplabel ["."]; the toplabel is in the trailing literal.
  let tail = last.literal!;
  if (tail.endsWith(".")) tail = tail.slice(0, -1);
  const dot = tail.lastIndexOf(".");
  if (dot < 0 && tokens.length === 1) throw new SpfSyntaxError(`domain-spec '${spec}' does not end in a top label`);
  const top = tail.slice(dot + 1);
  if (!/^(?:[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*|[A-Za-z0-9]+-[A-Za-z0-9-]*[A-Za-z0-9])$/.test(top)) {
    throw new SpfSyntaxError(`domain-spec '${spec}' does not end in a valid top label`);
  }
  if (dot < 0) throw new SpfSyntaxError(`domain-spec '${spec}' does not end in "." toplabel`);
}

function parseIpv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const b = m.slice(1).map(Number);
  if (b.some((x, i) => x > 255 || (m[i + 1].length > 1 && m[i + 1][0] === "0"))) return null;
  return b;
}

function parseIpv6(s: string): number[] | null {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || s.split("::").length > 2) return null;
  let text = s;
  let tail4: number[] = [];
  const v4 = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = parseIpv4(v4[1]);
    if (!b) return null;
    tail4 = b;
    text = text.slice(0, v4.index + 1) + "0:0";
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  if ([...h, ...t].some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return null;
  const fill = tail !== undefined ? 8 - h.length - t.length : 0;
  if (tail !== undefined ? fill < 1 : h.length !== 8) return null;
  const groups = [...h, ...Array(fill).fill("0"), ...t].map((g) => parseInt(g, 16));
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (v4) bytes.splice(12, 4, ...tail4);
  return bytes;
}

function parseCidr(value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9]\d*)$/.test(value) || Number(value) > max) throw new SpfSyntaxError(`invalid CIDR length /${value}`);
  return Number(value);
}

function parseMechanism(term: string): SpfMechanism {
  const m = /^([+\-~?]?)([A-Za-z][A-Za-z0-9\-_.]*)(.*)$/s.exec(term);
  if (!m || !MECHANISMS.has(m[2].toLowerCase())) throw new SpfSyntaxError(`unknown mechanism '${term}'`);
  const qualifier = (m[1] || "+") as SpfQualifier;
  const name = m[2].toLowerCase() as SpfMechanismName;
  const rest = m[3];
  const mech: SpfMechanism = { kind: "mechanism", qualifier, name, domainSpec: "", text: term };
  switch (name) {
    case "all":
      if (rest !== "") throw new SpfSyntaxError(`'${term}': all takes no argument`);
      break;
    case "include":
    case "exists":
      if (!rest.startsWith(":")) throw new SpfSyntaxError(`'${term}': ${name} needs ":domain"`);
      mech.domainSpec = rest.slice(1);
      checkDomainSpec(mech.domainSpec);
      break;
    case "ptr":
      if (rest !== "") {
        if (!rest.startsWith(":")) throw new SpfSyntaxError(`'${term}': invalid ptr argument`);
        mech.domainSpec = rest.slice(1);
        checkDomainSpec(mech.domainSpec);
      }
      break;
    case "a":
    case "mx": {
      const c = /^(.*?)(?:\/(\d+))?(?:\/\/(\d+))?$/s.exec(rest)!;
      if (c[1] !== "") {
        if (!c[1].startsWith(":")) throw new SpfSyntaxError(`'${term}': invalid ${name} argument`);
        mech.domainSpec = c[1].slice(1);
        checkDomainSpec(mech.domainSpec);
      }
      mech.cidr4 = parseCidr(c[2], 32);
      mech.cidr6 = parseCidr(c[3], 128);
      break;
    }
    case "ip4": {
      const c = /^:([^/]*)(?:\/(\d+))?$/.exec(rest);
      if (!c || !parseIpv4(c[1])) throw new SpfSyntaxError(`'${term}': invalid ip4 network`);
      mech.network = c[1];
      mech.cidr4 = parseCidr(c[2], 32);
      break;
    }
    case "ip6": {
      const c = /^:([^/]*)(?:\/(\d+))?$/.exec(rest);
      if (!c || !parseIpv6(c[1])) throw new SpfSyntaxError(`'${term}': invalid ip6 network`);
      mech.network = c[1];
      mech.cidr6 = parseCidr(c[2], 128);
      break;
    }
  }
  return mech;
}

/** Parses a selected `v=spf1` record; throws SpfSyntaxError (permerror) for any error anywhere. */
export function parseSpfRecord(record: string): ParsedSpf {
  if (!isSpfRecord(record)) throw new SpfSyntaxError("not a v=spf1 record");
  // Terms are separated by spaces only (§4.6.1): a tab or CR inside is an invalid character.
  const terms: SpfTerm[] = [];
  let redirect: string | null = null;
  let exp: string | null = null;
  for (const text of record.slice(6).split(" ").filter((t) => t !== "")) {
    if (/[^\x21-\x7e]/.test(text)) throw new SpfSyntaxError(`invalid character in '${text}'`);
    const mod = /^([A-Za-z][A-Za-z0-9\-_.]*)=(.*)$/s.exec(text);
    if (mod) {
      const name = mod[1].toLowerCase();
      const value = mod[2];
      if (name === "redirect" || name === "exp") {
        if ((name === "redirect" ? redirect : exp) !== null) throw new SpfSyntaxError(`${name}= given twice`);
        checkDomainSpec(value);
        if (name === "redirect") redirect = value;
        else exp = value;
      } else {
        tokenizeMacroString(value, false, isMacroLiteral); // unknown modifiers are ignored, but must be well-formed
      }
      terms.push({ kind: "modifier", name, value, text });
      continue;
    }
    terms.push(parseMechanism(text));
  }
  return { terms, mechanisms: terms.filter((t): t is SpfMechanism => t.kind === "mechanism"), redirect, exp };
}

// ---------------------------------------------------------------------------------------
// check_host() (§4)

class PermError extends Error {}
class TempError extends Error {}

export interface CheckHostInput {
  /** The SMTP client IP. */
  ip: string;
  /** MAIL FROM address; empty: postmaster@helo (§2.4). */
  sender: string;
  helo: string;
  dns: SpfDns;
  /** %{r}: the receiving host's name. Default "unknown". */
  receiver?: string;
  /** Explanation when exp= is absent or unusable on a fail. */
  defaultExplanation?: string;
  /** %{t}: seconds since the epoch. */
  now?: () => number;
}

export interface CheckHostResult {
  result: SpfResult;
  /** The matching mechanism (as written), when one matched. */
  mechanism?: string;
  /** The explanation of a fail. */
  explanation?: string;
  /** Why: permerror / temperror reason. */
  reason?: string;
  /** When the result came through redirect=: the (outermost) redirect target. */
  redirect?: string;
}

interface ClientIp {
  v6: boolean;
  bytes: number[];
  text: string;
}

function clientIp(text: string): ClientIp {
  const v4 = parseIpv4(text);
  if (v4) return { v6: false, bytes: v4, text };
  const v6 = parseIpv6(text);
  if (!v6) throw new Error(`not an IP address: ${text}`);
  // An IPv4-mapped IPv6 client is an IPv4 client (§5).
  if (v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff) return { v6: false, bytes: v6.slice(12), text: v6.slice(12).join(".") };
  return { v6: true, bytes: v6, text };
}

function inNetwork(ip: number[], net: number[], bits: number): boolean {
  if (ip.length !== net.length) return false;
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i] & mask) !== (net[i] & mask)) return false;
  }
  return true;
}

/** A name that can be queried: labels 1-63 octets, no empty label but a trailing one. */
function queryableName(name: string): boolean {
  const n = name.endsWith(".") ? name.slice(0, -1) : name;
  if (n === "" || n.length > 253) return false;
  return n.split(".").every((l) => l.length > 0 && l.length <= 63);
}

/** §4.3: the <domain> must be a multi-label, well-formed name, else the result is none. */
function validInitialDomain(domain: string): boolean {
  if (domain.startsWith("[")) return false;
  return queryableName(domain) && domain.replace(/\.$/, "").includes(".");
}

/**
 * One check_host() evaluation: the term order, the include/redirect recursion and the
 * §4.6.4 limits (lookups, void lookups, MX/PTR names). `client` null is the policy
 * analysis (analyzeSpf): the same evaluation for a sender that no address term
 * matches, so the result says what every sender gets that the policy does not name,
 * and the limits are counted by this one code path, the one the RFC 7208 suite tests.
 */
class Evaluation {
  lookups = 0;
  voids = 0;
  /** The records evaluated, by lowercase domain (the analysis reads the effective `all` from them). */
  readonly records = new Map<string, ParsedSpf>();
  /** The analysis's include/redirect path, to name a loop (with a client it ends at the lookup limit). */
  private readonly trail: string[] = [];
  constructor(
    readonly input: CheckHostInput,
    private readonly client: ClientIp | null,
    readonly local: string,
    readonly senderDomain: string,
  ) {}

  /** The client IP; the analysis never reaches a use of it (target() does not expand such macros without one). */
  get ip(): ClientIp {
    if (!this.client) throw new Error("the SPF policy analysis has no client IP");
    return this.client;
  }

  countLookup(): void {
    if (++this.lookups > SPF_LOOKUP_LIMIT) throw new PermError(`more than ${SPF_LOOKUP_LIMIT} DNS-querying terms`);
  }

  async query(name: string, type: SpfLookupType, countVoid = true): Promise<string[]> {
    let values: string[];
    try {
      values = await this.input.dns.lookup(name.replace(/\.$/, ""), type);
    } catch (err) {
      if (err instanceof SpfDnsError) throw new TempError(`DNS ${type} lookup of ${name} failed: ${err.message}`);
      throw err;
    }
    if (values.length === 0 && countVoid && ++this.voids > SPF_VOID_LOOKUP_LIMIT) {
      throw new PermError(`more than ${SPF_VOID_LOOKUP_LIMIT} void DNS lookups`);
    }
    return values;
  }

  /** §7: expands a macro-string. `domain` is the current <domain>. */
  async expand(spec: string, domain: string, exp: boolean): Promise<string> {
    const tokens = tokenizeMacroString(spec, exp, exp ? isExpLiteral : isMacroLiteral);
    let out = "";
    for (const t of tokens) {
      if (t.literal !== undefined) {
        out += t.literal;
        continue;
      }
      const m = t.macro!;
      let value: string;
      switch (m.letter.toLowerCase()) {
        case "s": value = `${this.local}@${this.senderDomain}`; break;
        case "l": value = this.local; break;
        case "o": value = this.senderDomain; break;
        case "d": value = domain; break;
        case "i": {
          // IPv6: dotted nibbles, in the letter case the address was given in (the suite's expectation; DNS ignores case).
          const nibbles = this.ip.bytes.flatMap((b) => [b >> 4, b & 15]).map((n) => n.toString(16)).join(".");
          value = this.ip.v6 ? (/[A-F]/.test(this.ip.text) ? nibbles.toUpperCase() : nibbles) : this.ip.bytes.join(".");
          break;
        }
        case "p": value = await this.validatedName(domain); break;
        case "v": value = this.ip.v6 ? "ip6" : "in-addr"; break;
        case "h": value = this.input.helo; break;
        case "c": value = this.ip.v6 ? formatIpv6(this.ip.bytes) : this.ip.bytes.join("."); break;
        case "r": value = this.input.receiver ?? "unknown"; break;
        default: value = String(Math.floor((this.input.now ?? Date.now)() / 1000));
      }
      let parts = value.split(new RegExp(`[${m.delimiters.replace(/[-\]\\/^]/g, "\\$&")}]`));
      if (m.reverse) parts = parts.reverse();
      if (m.digits !== null && m.digits < parts.length) parts = parts.slice(parts.length - m.digits);
      value = parts.join(".");
      if (m.letter !== m.letter.toLowerCase()) value = encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      out += value;
    }
    return out;
  }

  /**
   * An expanded target name, shortened from the left to 253 octets (§7.3). Null in the
   * analysis for a name built from the sender (any macro but %{d} and %{o}): it depends
   * on who sends, so the term is counted but not followed.
   */
  async target(spec: string, domain: string): Promise<string | null> {
    if (spec === "") return domain;
    if (!this.client && /%\{[^dDoO]/.test(spec)) return null;
    let name = await this.expand(spec, domain, false);
    while (name.replace(/\.$/, "").length > 253 && name.includes(".")) name = name.slice(name.indexOf(".") + 1);
    return name;
  }

  /** %{p}: a validated name of the client IP under `domain` if any, else any validated name, else "unknown". */
  async validatedName(domain: string): Promise<string> {
    const names = await this.validatedPtrNames();
    const d = domain.toLowerCase().replace(/\.$/, "");
    return names.find((n) => n === d) ?? names.find((n) => n.endsWith("." + d)) ?? names[0] ?? "unknown";
  }

  private ptrNames: Promise<string[]> | null = null;
  validatedPtrNames(): Promise<string[]> {
    this.ptrNames ??= (async () => {
      const reverse = this.ip.v6
        ? this.ip.bytes.flatMap((b) => [b >> 4, b & 15]).reverse().map((n) => n.toString(16)).join(".") + ".ip6.arpa"
        : [...this.ip.bytes].reverse().join(".") + ".in-addr.arpa";
      let names: string[];
      try {
        names = await this.input.dns.lookup(reverse, "PTR");
      } catch {
        return []; // §5.5: a DNS error on the PTR lookup is no match
      }
      const out: string[] = [];
      for (const name of names.slice(0, 10)) {
        try {
          const addrs = await this.input.dns.lookup(name.replace(/\.$/, ""), this.ip.v6 ? "AAAA" : "A");
          if (addrs.some((a) => sameIp(a, this.ip))) out.push(name.toLowerCase().replace(/\.$/, ""));
        } catch {
          /* an unresolvable name is skipped */
        }
      }
      return out;
    })();
    return this.ptrNames;
  }

  async addressesMatch(name: string | null, cidr4: number | undefined, cidr6: number | undefined, countVoid = true): Promise<boolean> {
    if (name === null || !queryableName(name)) return false;
    if (!this.client) {
      // The analysis: only a /0 prefix lets every sender in, and only if the name has an
      // address. An MX host's address lookups count toward no limit: without /0 they are
      // not even made.
      if (!countVoid && cidr4 !== 0) return false;
      const addrs = await this.query(name, "A", countVoid);
      return cidr4 === 0 && addrs.length > 0;
    }
    const addrs = await this.query(name, this.ip.v6 ? "AAAA" : "A", countVoid);
    const bits = this.ip.v6 ? (cidr6 ?? 128) : (cidr4 ?? 32);
    return addrs.some((a) => {
      const b = this.ip.v6 ? parseIpv6(a) : parseIpv4(a);
      return b !== null && inNetwork(this.ip.bytes, b, bits);
    });
  }

  async matches(m: SpfMechanism, domain: string, depth: number): Promise<boolean> {
    if (DNS_TERMS.has(m.name)) this.countLookup();
    switch (m.name) {
      case "all":
        return true;
      case "ip4":
      case "ip6": {
        if (!this.client) return (m.name === "ip4" ? m.cidr4 : m.cidr6) === 0; // the analysis: only a /0 network matches every sender
        if (this.ip.v6 !== (m.name === "ip6")) return false;
        const net = m.name === "ip4" ? parseIpv4(m.network!)! : parseIpv6(m.network!)!;
        return inNetwork(this.ip.bytes, net, m.name === "ip4" ? (m.cidr4 ?? 32) : (m.cidr6 ?? 128));
      }
      case "a":
        return this.addressesMatch(await this.target(m.domainSpec, domain), m.cidr4, m.cidr6);
      case "mx": {
        const name = await this.target(m.domainSpec, domain);
        if (name === null || !queryableName(name)) return false;
        const mx = await this.query(name, "MX");
        if (mx.length > 10) throw new PermError(`${name} has more than 10 MX records`);
        for (const rr of mx) {
          const exchange = rr.split(" ").pop() ?? "";
          if (await this.addressesMatch(exchange, m.cidr4, m.cidr6, false)) return true;
        }
        return false;
      }
      case "ptr": {
        const spec = await this.target(m.domainSpec, domain);
        if (spec === null || !this.client) return false; // the analysis: no client, no reverse name
        const target = spec.toLowerCase().replace(/\.$/, "");
        return (await this.validatedPtrNames()).some((n) => n === target || n.endsWith("." + target));
      }
      case "exists": {
        const name = await this.target(m.domainSpec, domain);
        if (name === null || !queryableName(name)) return false;
        return (await this.query(name, "A")).length > 0;
      }
      case "include": {
        const name = await this.target(m.domainSpec, domain);
        if (name === null) return false;
        if (!queryableName(name)) throw new PermError(`include target '${name}' is not a valid name`);
        const r = await this.evaluate(name, depth + 1);
        if (r.result === "pass") return true;
        if (r.result === "temperror") throw new TempError(r.reason ?? "temperror in include");
        if (r.result === "permerror" || r.result === "none") throw new PermError(`include:${name} gave ${r.result}${r.reason ? ` (${r.reason})` : ""}`);
        return false;
      }
    }
  }

  async evaluate(domain: string, depth: number): Promise<CheckHostResult> {
    if (depth > 20) throw new PermError("include/redirect nesting too deep");
    if (this.client) return this.evaluateRecord(domain, depth);
    // The analysis matches no sender, so a record met again on the way down would recurse
    // until the lookup limit; name the loop instead (the result, permerror, is the same).
    const key = domain.toLowerCase().replace(/\.$/, "");
    if (this.trail.includes(key)) throw new PermError(`include/redirect loop: ${[...this.trail, key].join(" -> ")}`);
    this.trail.push(key);
    try {
      return await this.evaluateRecord(domain, depth);
    } finally {
      this.trail.pop();
    }
  }

  private async evaluateRecord(domain: string, depth: number): Promise<CheckHostResult> {
    const txt = await this.query(domain, "TXT", false);
    const selected = selectSpfRecord(txt);
    if (selected.kind === "none") return { result: "none" };
    if (selected.kind === "multiple") return { result: "permerror", reason: `${domain} has ${selected.records.length} v=spf1 records` };
    let parsed: ParsedSpf;
    try {
      parsed = parseSpfRecord(selected.record);
    } catch (err) {
      return { result: "permerror", reason: (err as Error).message };
    }
    this.records.set(domain.toLowerCase().replace(/\.$/, ""), parsed);
    for (const m of parsed.mechanisms) {
      if (await this.matches(m, domain, depth)) {
        const result = QUALIFIER_RESULT[m.qualifier];
        return result === "fail" && this.client ? { result, mechanism: m.text, explanation: await this.explanation(parsed, domain) } : { result, mechanism: m.text };
      }
    }
    if (parsed.redirect !== null && !parsed.mechanisms.some((m) => m.name === "all")) {
      this.countLookup();
      const name = await this.target(parsed.redirect, domain);
      if (name === null) return { result: "neutral" };
      if (!queryableName(name)) throw new PermError(`redirect target '${name}' is not a valid name`);
      const r = await this.evaluate(name, depth + 1);
      if (r.result === "none") return { result: "permerror", reason: `redirect=${name} has no SPF record` };
      return { ...r, redirect: name.toLowerCase().replace(/\.$/, "") };
    }
    return { result: "neutral" };
  }

  async explanation(parsed: ParsedSpf, domain: string): Promise<string | undefined> {
    const fallback = this.input.defaultExplanation;
    if (parsed.exp === null) return fallback;
    try {
      const name = await this.target(parsed.exp, domain);
      if (name === null || !queryableName(name)) return fallback;
      const txt = await this.input.dns.lookup(name.replace(/\.$/, ""), "TXT");
      if (txt.length !== 1) return fallback;
      return await this.expand(txt[0], domain, true);
    } catch {
      return fallback;
    }
  }
}

const QUALIFIER_RESULT: Record<SpfQualifier, SpfResult> = { "+": "pass", "-": "fail", "~": "softfail", "?": "neutral" };

function sameIp(text: string, ip: ClientIp): boolean {
  const b = ip.v6 ? parseIpv6(text) : parseIpv4(text);
  return b !== null && b.every((x, i) => x === ip.bytes[i]);
}

function formatIpv6(bytes: number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::").replace(/:{3,}/, "::");
}

/** check_host(<ip>, <domain of the sender or HELO>, <sender>) of RFC 7208 §4. */
export async function checkHost(input: CheckHostInput): Promise<CheckHostResult> {
  const ip = clientIp(input.ip);
  const at = input.sender.lastIndexOf("@");
  let local = at >= 0 ? input.sender.slice(0, at) : "";
  let domain = at >= 0 ? input.sender.slice(at + 1) : input.sender;
  if (input.sender === "") domain = input.helo;
  if (local === "") local = "postmaster";
  if (!validInitialDomain(domain)) return { result: "none", reason: `'${domain}' is not a valid domain` };
  const ev = new Evaluation(input, ip, local, domain);
  try {
    return await ev.evaluate(domain, 0);
  } catch (err) {
    if (err instanceof PermError) return { result: "permerror", reason: err.message };
    if (err instanceof TempError) return { result: "temperror", reason: err.message };
    if (err instanceof SpfSyntaxError) return { result: "permerror", reason: err.message };
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Policy analysis (what the watcher shows)

export interface SpfAnalysis {
  /** none: no v=spf1 record; ok; permerror (syntax, several records, limits); temperror (DNS failed). */
  status: "none" | "ok" | "permerror" | "temperror";
  /** The v=spf1 record of the domain, "" if none (or several). */
  record: string;
  /** Terms of the record as written, in order (mechanisms and modifiers). */
  mechanisms: string[];
  /** include: targets of the record (macros unexpanded). */
  includes: string[];
  /** redirect= target, "" if none. */
  redirect: string;
  /** DNS-querying terms over the whole include/redirect tree (limit 10). */
  lookup_count: number;
  /** Lookups that found nothing (limit 2). */
  void_lookups: number;
  /** The effective `all` with its qualifier (-all, ~all, +all, ?all), following redirect=; "" when absent (neutral). */
  all: string;
  /** The policy lets every sender pass. */
  allows_all: boolean;
  /** How: "+all", "include:x.example", "redirect=x.example", "ip4:0.0.0.0/0"... ("" when not). */
  allows_all_via: string;
  /** Problems found (multiple records, syntax, limits, unresolvable includes). */
  errors: string[];
  /**
   * The v=spf1 record(s) of each include/redirect target the analysis read, by lowercase
   * name ([] = none there). What each scheduled run compares the targets' answers with
   * (run-lookups.ts): kept in the domain's spf_json rather than a table of its own, since
   * it is part of the analysis it was read for, costs no extra row to write or read, and
   * is replaced with it.
   */
  target_records: Record<string, string[]>;
}

export const EMPTY_SPF: SpfAnalysis = {
  status: "none", record: "", mechanisms: [], includes: [], redirect: "", lookup_count: 0, void_lookups: 0, all: "", allows_all: false, allows_all_via: "", errors: [], target_records: {},
};

/** The v=spf1 records among a name's TXT strings, sorted: what an include/redirect target's change is judged by. */
export function spfRecordsOf(txt: readonly string[]): string[] {
  return txt.filter(isSpfRecord).sort();
}

const bareName = (name: string) => name.toLowerCase().replace(/\.$/, "");

/** How a passing mechanism lets every sender in, in the words of the analysis ("+all", "include:x.example", "ip4:0.0.0.0/0"). */
function passVia(mechanism: string | undefined): string {
  if (!mechanism) return "";
  const m = parseMechanism(mechanism);
  if (m.name === "all") return "+all";
  if (m.name === "include") return `include:${bareName(m.domainSpec)}`;
  return m.text.replace(/^\+/, "");
}

/**
 * Analyzes the SPF policy of `domain` whose TXT record set is `txt` (already resolved by
 * the caller); include and redirect= targets are resolved through `dns`.
 *
 * It is check_host() (the Evaluation above, with its 10-lookup, 2-void and MX limits)
 * for a sender no address term matches: the result is what the policy gives every sender
 * it does not name. "Allows all senders" is that result being `pass` (through +all, an
 * include or redirect= that passes everyone, a /0 network, an `exists` that always
 * resolves); a permerror or temperror is never "allows all" (receivers do not pass mail
 * on either). `target_records` keeps the v=spf1 record each include/redirect target had,
 * so a later run can tell when a target changed on its own.
 */
export async function analyzeSpf(domain: string, txt: readonly string[], dns: SpfDns): Promise<SpfAnalysis> {
  const top = bareName(domain);
  const sel = selectSpfRecord(txt);
  if (sel.kind === "none") return { ...EMPTY_SPF, target_records: {} };
  if (sel.kind === "multiple") return { ...EMPTY_SPF, target_records: {}, status: "permerror", errors: [`${sel.records.length} v=spf1 records (exactly one is allowed)`] };
  let parsed: ParsedSpf;
  try {
    parsed = parseSpfRecord(sel.record);
  } catch (err) {
    return { ...EMPTY_SPF, target_records: {}, status: "permerror", record: sel.record, errors: [(err as Error).message] };
  }
  const targetRecords: Record<string, string[]> = {};
  const walkDns: SpfDns = {
    async lookup(name, type) {
      const n = bareName(name);
      if (n === top && type === "TXT") return [...txt];
      const values = await dns.lookup(name, type);
      // In the analysis every TXT lookup but the domain's own is an include/redirect target (exp= is not read).
      if (type === "TXT") targetRecords[n] = spfRecordsOf(values);
      return values;
    },
  };
  const ev = new Evaluation({ ip: "", sender: `postmaster@${top}`, helo: top, dns: walkDns }, null, "postmaster", top);
  let result: CheckHostResult;
  try {
    result = await ev.evaluate(top, 0);
  } catch (err) {
    if (err instanceof PermError || err instanceof SpfSyntaxError) result = { result: "permerror", reason: err.message };
    else if (err instanceof TempError) result = { result: "temperror", reason: err.message };
    else throw err;
  }
  const status = result.result === "permerror" ? "permerror" : result.result === "temperror" ? "temperror" : "ok";
  const allowsAll = status === "ok" && result.result === "pass";

  // The effective `all`: the record's own, else that of its redirect= target (as far as evaluated).
  ev.records.set(top, parsed);
  const effectiveAll = (name: string, seen: Set<string>): string => {
    const p = ev.records.get(name);
    if (!p || seen.has(name)) return "";
    seen.add(name);
    const all = p.mechanisms.find((m) => m.name === "all");
    if (all) return `${all.qualifier}all`;
    return p.redirect !== null && !p.redirect.includes("%") ? effectiveAll(bareName(p.redirect), seen) : "";
  };
  return {
    status,
    record: sel.record,
    mechanisms: parsed.terms.map((t) => t.text),
    includes: parsed.mechanisms.filter((m) => m.name === "include").map((m) => m.domainSpec),
    redirect: parsed.redirect ?? "",
    lookup_count: ev.lookups,
    void_lookups: ev.voids,
    all: effectiveAll(top, new Set()),
    allows_all: allowsAll,
    allows_all_via: allowsAll ? (result.redirect ? `redirect=${result.redirect}` : passVia(result.mechanism)) : "",
    errors: result.reason ? [result.reason] : [],
    target_records: targetRecords,
  };
}
