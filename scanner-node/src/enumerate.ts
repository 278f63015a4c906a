// Enumeration of a TLS endpoint by elimination, over the whole IANA registry:
// offer a bundle, remove what the server chose, repeat until it refuses. Bundles run in
// parallel within the target's connection budget. Suites the local OpenSSL lacks (RC4, DES,
// 3DES, NULL, EXPORT, anon) are found too, since only the server's choice matters.
import { anatomyOf, IANA_CIPHER_SUITES, IANA_NAMED_GROUPS } from "@trust-plane/tls-frameworks";
import type { ConnectionBudget } from "./budget";
import { probe, type Endpoint, type FaultKind, type ProbeOutcome } from "./tls/probe";
import { protocolName, VERSION, type ProtocolName, type ServerKeyExchange } from "./tls/wire";

export interface ProtocolFindings {
  protocol: ProtocolName;
  /** true accepted, false refused, null unknown (timeouts or faults prevented a decision). */
  accepted: boolean | null;
  /** Accepted suites (IANA codes); in the server's order when it enforces its preference. */
  suites: number[];
  /** false when a probe ended in a timeout/fault, so more suites may exist. */
  complete: boolean;
  cipherPreference: "server" | "client" | null;
  notes: string[];
}

export interface Enumeration {
  protocols: ProtocolFindings[];
  /** Named groups accepted in TLS 1.3 (via HelloRetryRequest) and TLS <= 1.2 (via ServerKeyExchange). */
  groups: { tls13: number[]; tls12: number[]; complete: boolean };
  /** Served chain (DER, as served) and where it came from. */
  chain: Buffer[] | null;
  chainProtocol: ProtocolName | null;
  /** Smallest DHE prime seen (TLS <= 1.2), bits. */
  dhBits: number | null;
  /** Set when the target could not be scanned at all (nothing accepted and a fault seen). */
  fatal: string | null;
  /** What kind of fault `fatal` was. */
  fatalFault: FaultKind | null;
  probes: number;
}

export interface EnumerateOptions {
  /** Suites per ClientHello, at most 128 (some servers choke on longer lists). */
  bundleSize?: number;
  /** Skip SSLv3 (one cheap probe set; on by default). */
  sslv3?: boolean;
  /** Detect server cipher preference and order (2 + n probes per version). */
  preference?: boolean;
}

const LEGACY: ProtocolName[] = ["SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2"];
const SCSV_RENEGO = 0x00ff;

/** Every registry suite usable before TLS 1.3 (SCSVs and 0x13xx excluded). */
export const LEGACY_SUITES: number[] = IANA_CIPHER_SUITES.map((s) => s.code).filter((c) => c >> 8 !== 0x13 && c !== SCSV_RENEGO && c !== 0x5600);
export const TLS13_SUITES: number[] = IANA_CIPHER_SUITES.map((s) => s.code).filter((c) => c >> 8 === 0x13);
/** Every named group of the registry; offered in supported_groups so that no ECDHE suite is refused for lack of a curve. */
export const ALL_GROUPS: number[] = IANA_NAMED_GROUPS.map((g) => g.code).filter((c) => c > 0 && c < 0xfe00);
const ECDHE_SUITES = LEGACY_SUITES.filter((c) => anatomyOf(c).keyExchange === "ECDHE");
const DHE_SUITES = LEGACY_SUITES.filter((c) => anatomyOf(c).keyExchange === "DHE");
/** A broad, common set for the certificate probe: what real servers use, so one hello finds the chain. */
const COMMON_SUITES = LEGACY_SUITES.filter((c) => {
  const a = anatomyOf(c);
  return ["ECDHE", "DHE", "RSA"].includes(a.keyExchange) && ["RSA", "ECDSA", "DSS"].includes(a.authentication) && !a.name.includes("EXPORT");
}).slice(0, 128);

/** Splits codes into bundles by striding, so neighbouring (similar) suites land in different bundles. */
export function bundles(codes: readonly number[], size: number): number[][] {
  const n = Math.max(1, Math.ceil(codes.length / Math.min(128, Math.max(1, size))));
  const out: number[][] = Array.from({ length: n }, () => []);
  codes.forEach((c, i) => out[i % n].push(c));
  return out.filter((b) => b.length);
}

type Pick = (o: ProbeOutcome & { kind: "accepted" }) => number | undefined;

interface Chain { found: number[]; complete: boolean; unknown?: string; lastReject?: string; extra: ServerKeyExchange[] }

/** Elimination loop over one bundle. */
async function eliminate(offer: readonly number[], attempt: (offer: number[]) => Promise<ProbeOutcome>, pick: Pick): Promise<Chain> {
  const left = [...offer];
  const chain: Chain = { found: [], complete: true, extra: [] };
  while (left.length) {
    const o = await attempt(left);
    if (o.kind === "rejected") { chain.lastReject = o.reason; break; }
    if (o.kind === "unknown") { chain.complete = false; chain.unknown = o.reason; break; }
    const chosen = pick(o);
    if (o.serverKeyExchange) chain.extra.push(o.serverKeyExchange);
    const i = chosen === undefined ? -1 : left.indexOf(chosen);
    if (i < 0) break; // answered with another version, or chose something we did not offer: stop here
    chain.found.push(chosen!);
    left.splice(i, 1);
  }
  return chain;
}

export async function enumerate(ep: Endpoint, budget: ConnectionBudget, opts: EnumerateOptions = {}): Promise<Enumeration> {
  const size = Math.min(128, opts.bundleSize ?? 128);
  const startProbes = budget.opened;
  // Circuit breaker: once a probe shows the target unreachable / not TLS and nothing was accepted
  // yet, the remaining probes answer the same without opening connections.
  let anyAccepted = false;
  let fatal: string | null = null;
  let fatalFault: FaultKind | null = null;
  const run = async (spec: Parameters<typeof probe>[1], readUntil: "hello" | "certificate" = "hello"): Promise<ProbeOutcome> => {
    if (fatal && !anyAccepted) return { kind: "unknown", fault: fatalFault ?? "connect", reason: fatal };
    // Checked again once the budget lets us start: queued probes must not outlive the verdict.
    const o = await budget.run(async (): Promise<ProbeOutcome> =>
      fatal && !anyAccepted ? { kind: "unknown", fault: fatalFault ?? "connect", reason: fatal } : probe(ep, spec, { readUntil }));
    if (o.kind === "accepted") anyAccepted = true;
    else if (o.kind === "unknown" && !anyAccepted && fatal === null) {
      fatal = o.reason;
      fatalFault = o.fault;
    }
    return o;
  };
  const versionIs = (v: ProtocolName): Pick => (o) => (o.serverHello.version === VERSION[v] && !(v !== "TLSv1.3" && o.serverHello.isHelloRetryRequest) ? o.serverHello.cipherSuite : undefined);

  const legacyVersions = LEGACY.filter((v) => v !== "SSLv3" || opts.sslv3 !== false);
  const suiteChains = async (v: ProtocolName): Promise<Chain[]> => {
    const pool = v === "TLSv1.3" ? TLS13_SUITES : LEGACY_SUITES;
    return Promise.all(bundles(pool, size).map((b) =>
      eliminate(b, (offer) => run(v === "TLSv1.3"
        ? { version: v, cipherSuites: offer, groups: ALL_GROUPS, keyShares: "none" }
        : { version: v, cipherSuites: v === "SSLv3" ? [...offer, SCSV_RENEGO] : offer, groups: ALL_GROUPS }), versionIs(v))));
  };

  // Certificate: TLS 1.3 (decrypting the server flight) and TLS <= 1.2 (cleartext) in parallel.
  const cert13 = run({ version: "TLSv1.3", cipherSuites: [0x1301, 0x1302, 0x1303], groups: [29, 23], keyShares: "ephemeral" }, "certificate");
  const cert12 = run({ version: "TLSv1.2", cipherSuites: COMMON_SUITES, groups: ALL_GROUPS }, "certificate");
  const groups13 = eliminate(ALL_GROUPS, (offer) => run({ version: "TLSv1.3", cipherSuites: TLS13_SUITES, groups: offer, keyShares: "none" }),
    (o) => (o.serverHello.version === VERSION["TLSv1.3"] && o.serverHello.isHelloRetryRequest ? o.serverHello.selectedGroup : undefined));
  const groups12 = eliminate(ALL_GROUPS, (offer) => run({ version: "TLSv1.2", cipherSuites: ECDHE_SUITES.slice(0, 128), groups: offer }, "certificate"),
    (o) => (o.serverKeyExchange?.kind === "ecdhe" ? o.serverKeyExchange.group : undefined));
  const dhe = run({ version: "TLSv1.2", cipherSuites: DHE_SUITES.slice(0, 128), groups: ALL_GROUPS }, "certificate");

  const versions: ProtocolName[] = [...legacyVersions, "TLSv1.3"];
  const perVersion = await Promise.all(versions.map(async (v): Promise<ProtocolFindings> => {
    const chains = await suiteChains(v);
    const suites = chains.flatMap((c) => c.found);
    const complete = chains.every((c) => c.complete);
    const unknown = chains.find((c) => c.unknown)?.unknown;
    const f: ProtocolFindings = { protocol: v, accepted: suites.length ? true : complete ? false : null, suites, complete, cipherPreference: null, notes: [] };
    if (unknown) f.notes.push(`incomplete: ${unknown}`);
    if (suites.length >= 2 && opts.preference !== false) await detectPreference(v, f, run);
    // Without a server order the bundle interleaving is meaningless: report in code-point order.
    if (f.cipherPreference !== "server") f.suites.sort((a, b) => a - b);
    return f;
  }));

  const [c13, c12, g13, g12, dh] = await Promise.all([cert13, cert12, groups13, groups12, dhe]);
  let chain: Buffer[] | null = null;
  let chainProtocol: ProtocolName | null = null;
  for (const c of [c13, c12]) {
    if (!chain && c.kind === "accepted" && c.certificates?.length) { chain = c.certificates; chainProtocol = protocolName(c.serverHello.version) ?? null; }
  }
  if (!chain) {
    // A server whose only suites are outside the common set: ask again with what it accepted.
    const best = [...perVersion].reverse().find((p) => p.accepted && p.protocol !== "TLSv1.3");
    if (best) {
      const o = await run({ version: best.protocol, cipherSuites: best.suites.slice(0, 128), groups: ALL_GROUPS }, "certificate");
      if (o.kind === "accepted" && o.certificates?.length) { chain = o.certificates; chainProtocol = best.protocol; }
    }
  }
  const dhPrimes = [...g12.extra, ...(dh.kind === "accepted" && dh.serverKeyExchange ? [dh.serverKeyExchange] : [])]
    .flatMap((s) => (s.kind === "dhe" ? [s.primeBits] : []));
  const accepted = perVersion.some((p) => p.accepted);
  return {
    protocols: perVersion,
    groups: { tls13: g13.found, tls12: g12.found, complete: g13.complete && g12.complete },
    chain, chainProtocol,
    dhBits: dhPrimes.length ? Math.min(...dhPrimes) : null,
    fatal: accepted ? null : fatal,
    fatalFault: accepted ? null : fatalFault,
    probes: budget.opened - startProbes,
  };
}

/**
 * Server preference: offer the accepted suites in order and reversed; the same choice both
 * times means the server decides. Then recover its order by elimination over that list.
 */
async function detectPreference(v: ProtocolName, f: ProtocolFindings, run: (spec: Parameters<typeof probe>[1]) => Promise<ProbeOutcome>): Promise<void> {
  const list = f.suites.slice(0, 128);
  const hello = (suites: number[]) => run(v === "TLSv1.3"
    ? { version: v, cipherSuites: suites, groups: ALL_GROUPS, keyShares: "none" }
    : { version: v, cipherSuites: suites, groups: ALL_GROUPS });
  const [a, b] = await Promise.all([hello(list), hello([...list].reverse())]);
  if (a.kind !== "accepted" || b.kind !== "accepted") { f.notes.push("cipher preference undetermined"); return; }
  if (a.serverHello.cipherSuite !== b.serverHello.cipherSuite) { f.cipherPreference = "client"; return; }
  f.cipherPreference = "server";
  const ordered = await eliminate(list, (offer) => hello(offer), (o) => o.serverHello.cipherSuite);
  if (ordered.complete && ordered.found.length === list.length) f.suites = [...ordered.found, ...f.suites.slice(128)];
}
