/**
 * The CT ingest hot path, pure (no D1, no Durable Object): log entries in,
 * observed matches out.
 *
 * Every entry pays only for readCertificateNames + FilterIndex.match (a walk of
 * a reversed-label trie of every organization's filters). Only the rare entry
 * that matches is fully parsed (parseCertificate), fingerprinted, given its
 * final/precert dedup key and checked against CAA through the cursor's DoH
 * client (whose cache is shared by every entry of the log).
 *
 * The same code runs in the CtLogCursor Durable Object and in bench/ct-ingest.ts.
 */
import type { DnsResolver } from "../../platform/dns/doh";
import { evaluateCaa } from "./caa/evaluate";
import { CAA_NOT_EVALUATED, type CaaEvaluation, type CtEventCert } from "./events";
import { certificateNames, parseCertificate, readCertificateNames, subjectPublicKeyInfo, type CertificateInfo } from "./cert/certificate";
import { toHex } from "./cert/der";
import { certificateDedupKeySync, certificateFingerprintSync, sha256HexSync } from "./cert/fast-hash";
import type { FilterIndex } from "./filters/label-index";
import type { LogEntry } from "./log-client/types";
import type { Confidence } from "./typosquat/detect";
import type { TyposquatIndex } from "./typosquat/index";

/** The log an entry came from, as the event names it. */
export interface LogRef {
  /** base64 LogID (SHA-256 of the key): stable identity, used in idempotency keys. */
  logId: string;
  /** The log's description in the log list: cert.log_name. */
  logName: string;
}

/** One filter of one organization that matched an entry, with the names that made it match. */
export interface FilterHit {
  filterId: number;
  organizationId: number;
  names: string[];
}

/** A lookalike of one typosquat-enabled filter's domain among an entry's names. */
export interface TyposquatObservation {
  filterId: number;
  organizationId: number;
  /** The protected registrable domain (the filter's pattern). */
  protectedDomain: string;
  /** The certificate name that is a lookalike. */
  name: string;
  candidateDomain: string;
  evidence: string[];
  editDistance: number | null;
  confidence: Confidence;
}

/** A log entry that matched at least one filter (or is a lookalike of a protected domain), with everything the commit and the event need. */
export interface ObservedEntry {
  logIndex: number;
  isPrecert: boolean;
  sha256: string;
  dedupKey: string;
  cert: CtEventCert;
  caa: CaaEvaluation;
  hits: FilterHit[];
  /** Lookalikes of typosquat-enabled filters. */
  typosquats: TyposquatObservation[];
  /** The entry's timestamp (ms, as the log signed it in the TimestampedEntry). */
  entryTimestamp: number;
}

export interface ObserveStats {
  entries: number;
  /** Entries whose certificate does not parse (counted, skipped, never fatal). */
  unparseable: number;
  matched: number;
}

/** The certificate bytes of an entry: the final certificate, the precertificate, or the precert TBS. */
export function entryCertificate(e: LogEntry): { der: Uint8Array; isPrecert: boolean; bareTbs: boolean } {
  if (e.entry.entryType === "x509_entry") return { der: e.entry.certificate, isPrecert: false, bareTbs: false };
  if (e.preCertificate) return { der: e.preCertificate, isPrecert: true, bareTbs: false };
  return { der: e.entry.tbsCertificate, isPrecert: true, bareTbs: true };
}

/**
 * The SHA-256 of the issuing CA's key, when the entry carries it: a precertificate
 * entry's issuer_key_hash (RFC 6962 §3.2), else the first certificate of its chain (RFC
 * 6962 extra_data; static-ct-api issuers are not fetched, so "" there).
 */
export function issuerKeyHash(e: LogEntry): string {
  if (e.entry.entryType === "precert_entry") return toHex(e.entry.issuerKeyHash);
  const issuer = e.chain[0];
  if (!issuer) return "";
  try {
    return sha256HexSync(subjectPublicKeyInfo(issuer));
  } catch {
    return "";
  }
}

export function ctEventCert(info: CertificateInfo, sha256: string, log: LogRef, logIndex: number, keys: { spki: string; issuerSpki: string } = { spki: "", issuerSpki: "" }): CtEventCert {
  const cert: CtEventCert = {
    subject: info.subjectCn,
    issuer: info.issuer,
    dns_names: info.dnsNames,
    sha256,
    serial: info.serial,
    not_before: info.notBefore,
    not_after: info.notAfter,
    signature_algorithm: info.signatureAlgorithm,
    key_algorithm: info.keyAlgorithm,
    is_precert: info.isPrecert,
    log_name: log.logName,
    log_index: logIndex,
    aia_issuing: info.aiaIssuing,
    ocsp_servers: info.ocspServers,
    scts: info.scts.map((s) => ({
      log_id: s.log_id,
      timestamp: s.timestamp,
      version: s.version,
      hash_algorithm: s.hash_algorithm,
      signature_algorithm: s.signature_algorithm,
    })),
    spki_sha256: keys.spki,
    issuer_spki_sha256: keys.issuerSpki,
  };
  if (info.keySize !== null) cert.key_size = info.keySize;
  return cert;
}

/** CAA lookups per certificate are bounded: a 100-SAN certificate checks its first 50 names. */
export const MAX_CAA_NAMES = 50;
/** Certificates whose CAA records are looked up at once (each climbs its names one query at a time). */
export const CAA_LOOKUPS_AT_ONCE = 8;

/** Runs the tasks, at most `limit` at a time. */
async function inParallel(tasks: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

export interface EntryMatcherOptions {
  log: LogRef;
  index: FilterIndex;
  /** Protected domains of typosquat-enabled filters; none when absent. */
  typosquat?: TyposquatIndex;
  resolver: DnsResolver;
  now?: () => Date;
}

export class EntryMatcher {
  constructor(private readonly opts: EntryMatcherOptions) {}

  /**
   * Matches entries against every filter; fully describes only those that match. The
   * CAA checks of a batch's matches (DNS round trips) run CAA_LOOKUPS_AT_ONCE at a
   * time rather than one after another; the result keeps the entries' order.
   */
  async observe(entries: readonly LogEntry[], stats?: ObserveStats): Promise<ObservedEntry[]> {
    const out: ObservedEntry[] = [];
    const caaOf: (() => Promise<void>)[] = [];
    const now = this.opts.now ?? (() => new Date());
    for (const e of entries) {
      if (stats) stats.entries++;
      const c = entryCertificate(e);
      let raw: string[];
      try {
        const n = readCertificateNames(c.der);
        // The CN nearly always repeats a SAN: match it only when it adds a name.
        raw = n.subjectCn && !n.dnsNames.includes(n.subjectCn) ? [...n.dnsNames, n.subjectCn] : n.dnsNames;
      } catch {
        if (stats) stats.unparseable++;
        continue;
      }
      const found = this.opts.index.match(raw);
      const lookalikes = this.opts.typosquat ? this.opts.typosquat.match(raw) : [];
      if (found.length === 0 && lookalikes.length === 0) continue;
      let info: CertificateInfo;
      try {
        info = parseCertificate(c.der, { precertTbs: c.bareTbs });
      } catch {
        if (stats) stats.unparseable++;
        continue;
      }
      const sha256 = certificateFingerprintSync(c.der);
      const dedupKey = certificateDedupKeySync(c.der);
      if (stats) stats.matched++;
      const observed: ObservedEntry = {
        logIndex: e.index,
        isPrecert: c.isPrecert,
        sha256,
        dedupKey,
        cert: ctEventCert(info, sha256, this.opts.log, e.index, { spki: sha256HexSync(c.der.subarray(info.spkiStart, info.spkiEnd)), issuerSpki: issuerKeyHash(e) }),
        caa: CAA_NOT_EVALUATED,
        hits: found.map((m) => ({ filterId: m.filter.filterId, organizationId: Number(m.filter.organizationId), names: m.names })),
        typosquats: lookalikes.map((t) => ({
          filterId: t.filterId,
          organizationId: t.organizationId,
          protectedDomain: t.pattern,
          name: t.name,
          candidateDomain: t.match.candidate_domain,
          evidence: t.match.evidence,
          editDistance: t.match.edit_distance ?? null,
          confidence: t.match.confidence,
        })),
        entryTimestamp: e.entry.timestamp,
      };
      out.push(observed);
      // A lookalike that no filter names gets no CAA lookup (CAA_NOT_EVALUATED says so).
      if (found.length > 0) {
        const names = certificateNames(info).matchable.slice(0, MAX_CAA_NAMES);
        const issuer = info.issuer;
        caaOf.push(async () => {
          observed.caa = await evaluateCaa(names, issuer, this.opts.resolver, { now });
        });
      }
    }
    await inParallel(caaOf, CAA_LOOKUPS_AT_ONCE);
    return out;
  }
}
