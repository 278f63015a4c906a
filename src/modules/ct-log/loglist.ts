/**
 * Google's CT log list v3 (https://www.gstatic.com/ct/log_list/v3/log_list.json,
 * schema log_list_schema.json): parsing, signature verification and the choice
 * of logs to monitor.
 *
 * The list is signed (log_list.sig next to it) with Google's RSA-4096 key,
 * PKCS#1 v1.5 over SHA-256 of the exact JSON bytes; a list whose signature does
 * not verify is never used, the bundled copy is used instead.
 *
 * Both RFC 6962 logs (`logs`, read through `url`) and static-ct-api logs
 * (`tiled_logs`, read through `monitoring_url`) are returned. We monitor logs in
 * the qualified, usable and readonly states; a readonly log has a final tree head
 * and is read up to it and no further.
 */
import { CtWireError, fromBase64, pemToDer } from "./wire/bytes";
import { classifyFailure, CollectionFailure, httpStatusFailure, type CollectionErrorClass } from "../../platform/collection";

/** Google's log-list signing key (public), used when CT_LOG_LIST_PUBLIC_KEY is empty. */
export const GOOGLE_LOG_LIST_PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEAsu0BHGnQ++W2CTdyZyxv
HHRALOZPlnu/VMVgo2m+JZ8MNbAOH2cgXb8mvOj8flsX/qPMuKIaauO+PwROMjiq
fUpcFm80Kl7i97ZQyBDYKm3MkEYYpGN+skAR2OebX9G2DfDqFY8+jUpOOWtBNr3L
rmVcwx+FcFdMjGDlrZ5JRmoJ/SeGKiORkbbu9eY1Wd0uVhz/xI5bQb0OgII7hEj+
i/IPbJqOHgB8xQ5zWAJJ0DmG+FM6o7gk403v6W3S8qRYiR84c50KppGwe4YqSMkF
bLDleGQWLoaDSpEWtESisb4JiLaY4H+Kk0EyAhPSb+49JfUozYl+lf7iFN3qRq/S
IXXTh6z0S7Qa8EYDhKGCrpI03/+qprwy+my6fpWHi6aUIk4holUCmWvFxZDfixox
K0RlqbFDl2JXMBquwlQpm8u5wrsic1ksIv9z8x9zh4PJqNpCah0ciemI3YGRQqSe
/mRRXBiSn9YQBUPcaeqCYan+snGADFwHuXCd9xIAdFBolw9R9HTedHGUfVXPJDiF
4VusfX6BRR/qaadB+bqEArF/TzuDUr6FvOR4o8lUUxgLuZ/7HO+bHnaPFKYHHSm+
+z1lVDhhYuSZ8ax3T0C3FZpb7HMjZtpEorSV5ElKJEJwrhrBCMOD8L01EoSPrGlS
1w22i9uGHMn/uGQKo28u7AsCAwEAAQ==
-----END PUBLIC KEY-----`;

export const DEFAULT_LOG_LIST_URL = "https://www.gstatic.com/ct/log_list/v3/log_list.json";

/** The log list is malformed or its signature did not verify. */
export class LogListError extends Error {
  override readonly name = "LogListError";
  /** A list that does not parse or verify (platform/collection). */
  readonly collectionClass = "protocol";
}

export type { CtLogDescriptor, FinalTreeHead, LogList, LogProtocol, LogState, LogStateName } from "../../db/schema/ct-log-list";
import type { CtLogDescriptor, LogList, LogProtocol, LogState, LogStateName } from "../../db/schema/ct-log-list";
const STATE_NAMES: readonly LogStateName[] = ["pending", "qualified", "usable", "readonly", "retired", "rejected"];

function str(o: Record<string, unknown>, k: string, where: string): string {
  const v = o[k];
  if (typeof v !== "string") throw new LogListError(`${where}: "${k}" must be a string`);
  return v;
}
function obj(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new LogListError(`${where}: not an object`);
  return v as Record<string, unknown>;
}

function parseState(v: unknown, where: string): LogState | undefined {
  if (v === undefined) return undefined;
  const o = obj(v, where + ".state");
  const keys = Object.keys(o);
  if (keys.length === 0) return undefined;
  if (keys.length !== 1) throw new LogListError(`${where}.state: has ${keys.length} states`);
  const name = keys[0] as LogStateName;
  if (!STATE_NAMES.includes(name)) throw new LogListError(`${where}.state: unknown state "${keys[0]}"`);
  const s = obj(o[name], `${where}.state.${name}`);
  const state: LogState = { name, timestamp: str(s, "timestamp", `${where}.state.${name}`) };
  if (name === "readonly") {
    const f = obj(s.final_tree_head, `${where}.state.readonly.final_tree_head`);
    const treeSize = f.tree_size;
    if (typeof treeSize !== "number" || !Number.isSafeInteger(treeSize) || treeSize < 0) {
      throw new LogListError(`${where}: bad final_tree_head.tree_size`);
    }
    state.finalTreeHead = { treeSize, sha256RootHash: str(f, "sha256_root_hash", `${where}.final_tree_head`) };
  }
  return state;
}

function withSlash(u: string): string {
  return u.endsWith("/") ? u : u + "/";
}

function parseLog(v: unknown, operator: string, protocol: LogProtocol, where: string): CtLogDescriptor {
  const o = obj(v, where);
  const description = str(o, "description", where);
  const logId = str(o, "log_id", where);
  const key = str(o, "key", where);
  try {
    if (fromBase64(logId).length !== 32) throw new LogListError(`${where}: log_id is not 32 bytes`);
    fromBase64(key);
  } catch (err) {
    if (err instanceof LogListError) throw err;
    throw new LogListError(`${where}: log_id/key is not base64`);
  }
  const mmd = o.mmd;
  if (typeof mmd !== "number") throw new LogListError(`${where}: mmd must be a number`);
  const log: CtLogDescriptor = {
    operator,
    description,
    logId,
    key,
    protocol,
    readUrl: withSlash(str(o, protocol === "rfc6962" ? "url" : "monitoring_url", where)),
    mmd,
    state: parseState(o.state, where),
  };
  if (protocol === "static-ct") log.submissionUrl = withSlash(str(o, "submission_url", where));
  if (o.temporal_interval !== undefined) {
    const t = obj(o.temporal_interval, where + ".temporal_interval");
    log.temporalInterval = {
      startInclusive: str(t, "start_inclusive", where + ".temporal_interval"),
      endExclusive: str(t, "end_exclusive", where + ".temporal_interval"),
    };
  }
  if (typeof o.log_type === "string") log.logType = o.log_type;
  return log;
}

/** Parses log_list.json or all_logs_list.json (v3) from its JSON value. */
export function parseLogList(json: unknown): LogList {
  const root = obj(json, "log list");
  const operators = root.operators;
  if (!Array.isArray(operators)) throw new LogListError("log list: operators must be an array");
  const logs: CtLogDescriptor[] = [];
  operators.forEach((opv, i) => {
    const op = obj(opv, `operators[${i}]`);
    const name = str(op, "name", `operators[${i}]`);
    for (const [field, protocol] of [
      ["logs", "rfc6962"],
      ["tiled_logs", "static-ct"],
    ] as const) {
      const list = op[field] ?? [];
      if (!Array.isArray(list)) throw new LogListError(`operators[${i}].${field} must be an array`);
      list.forEach((l, j) => logs.push(parseLog(l, name, protocol, `${name}.${field}[${j}]`)));
    }
  });
  return {
    version: String(root.version ?? ""),
    logListTimestamp: String(root.log_list_timestamp ?? ""),
    isAllLogs: root.is_all_logs === true,
    logs,
  };
}

/** Parses the raw bytes of a log list (JSON syntax errors become LogListError). */
export function parseLogListBytes(bytes: Uint8Array): LogList {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch (err) {
    throw new LogListError(`log list is not JSON: ${(err as Error).message}`);
  }
  return parseLogList(json);
}

/**
 * Verifies log_list.sig over the exact bytes of log_list.json (RSA PKCS#1 v1.5,
 * SHA-256). Returns false for a wrong signature; throws LogListError for an
 * unusable key.
 */
export async function verifyLogListSignature(
  listBytes: Uint8Array,
  signature: Uint8Array,
  publicKeyPem: string = GOOGLE_LOG_LIST_PUBLIC_KEY_PEM,
): Promise<boolean> {
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("spki", pemToDer(publicKeyPem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"]);
  } catch (err) {
    throw new LogListError(`log list public key unusable: ${err instanceof CtWireError ? err.message : (err as Error).message}`);
  }
  return crypto.subtle.verify({ name: "RSASSA-PKCS1-v1_5" }, key, signature, listBytes);
}

/** States whose logs we read: qualified, usable and readonly (the latter up to its final tree head). */
export const MONITORED_STATES: readonly LogStateName[] = ["qualified", "usable", "readonly"];

export function isMonitored(log: CtLogDescriptor): boolean {
  return log.state !== undefined && MONITORED_STATES.includes(log.state.name);
}

/** The logs to monitor, both protocols. */
export function monitoredLogs(list: LogList): CtLogDescriptor[] {
  return list.logs.filter(isMonitored);
}

/** URL of the signature that accompanies a list URL: ".json" replaced by ".sig" (docs/configuration.md). */
export function signatureUrlFor(listUrl: string): string {
  const u = new URL(listUrl);
  if (!u.pathname.endsWith(".json")) throw new LogListError(`log list URL ${listUrl} does not end in .json`);
  u.pathname = u.pathname.slice(0, -".json".length) + ".sig";
  return u.toString();
}

export interface LoadLogListOptions {
  url?: string;
  /** PEM; empty or absent means Google's key. */
  publicKeyPem?: string;
  /** The bundled copy used when the remote list cannot be fetched or does not verify. */
  bundled: unknown;
  fetch?: typeof fetch;
}

/** The step a failure to get the signed list is said with. */
export const LOG_LIST_STEP = "fetching the signed CT log list";

export interface LoadedLogList {
  list: LogList;
  source: "remote" | "bundled";
  /** Why the remote list was not used (source "bundled"), classified: names the host and the step. */
  remoteError?: string;
  remoteErrorClass?: CollectionErrorClass;
}

/**
 * Fetches the list and its signature, verifies, parses; falls back to the
 * bundled copy on any failure (network, HTTP status, bad signature, bad JSON).
 */
export async function loadLogList(opts: LoadLogListOptions): Promise<LoadedLogList> {
  const doFetch = opts.fetch ?? fetch;
  const url = opts.url || DEFAULT_LOG_LIST_URL;
  try {
    const sigUrl = signatureUrlFor(url);
    const [listRes, sigRes] = await Promise.all([doFetch(url), doFetch(sigUrl)]);
    for (const [res, at] of [[listRes, url], [sigRes, sigUrl]] as const) {
      if (res.ok) continue;
      const f = httpStatusFailure(res.status, at, LOG_LIST_STEP);
      throw new CollectionFailure(f.class, f.message);
    }
    const listBytes = new Uint8Array(await listRes.arrayBuffer());
    const sig = new Uint8Array(await sigRes.arrayBuffer());
    if (!(await verifyLogListSignature(listBytes, sig, opts.publicKeyPem || GOOGLE_LOG_LIST_PUBLIC_KEY_PEM))) {
      throw new LogListError("log list signature does not verify");
    }
    return { list: parseLogListBytes(listBytes), source: "remote" };
  } catch (err) {
    const failure = classifyFailure(err, { url, what: LOG_LIST_STEP });
    return { list: parseLogList(opts.bundled), source: "bundled", remoteError: failure.message, remoteErrorClass: failure.class };
  }
}
