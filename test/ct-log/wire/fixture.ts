/** Helpers shared by the CT wire and client tests: reference data and the local CT log. */
import { env } from "cloudflare:workers";
import { importLogPublicKey, type LogPublicKey } from "../../../src/modules/ct-log/wire/digitally-signed";

export const base = (env as unknown as { FIXTURE_URL: string }).FIXTURE_URL;

export async function dataBytes(path: string): Promise<Uint8Array> {
  const res = await fetch(`${base}/data/ct/${path}`);
  if (!res.ok) throw new Error(`fixture data ${path}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
export async function dataText(path: string): Promise<string> {
  return new TextDecoder().decode(await dataBytes(path));
}
export async function dataJson<T = any>(path: string): Promise<T> {
  return JSON.parse(await dataText(path)) as T;
}

export const logUrl = (name: string) => `${base}/ctlog/${name}/`;

let counter = 0;
/** Creates a fresh log on the fixture server (unique name per call). */
export async function createLog(opts: { from?: string; size?: number; keyType?: "ecdsa" | "rsa"; leafIndexExtension?: boolean } = {}) {
  const name = `t${Date.now().toString(36)}-${++counter}-${Math.floor(Math.random() * 1e6)}`;
  const res = await fetch(`${base}/ctlog/__control/logs`, { method: "POST", body: JSON.stringify({ name, ...opts }) });
  if (!res.ok) throw new Error(`create log: ${res.status} ${await res.text()}`);
  return name;
}

export async function control(name: string, action: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}/ctlog/${name}/__control/${action}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`control ${action}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function logKey(name: string): Promise<{ key: LogPublicKey; origin: string; treeSize: number }> {
  const k = await control(name, "key");
  return { key: await importLogPublicKey(k.spki_b64), origin: k.origin, treeSize: k.tree_size };
}

export async function requests(name: string): Promise<{ path: string; query: string }[]> {
  return control(name, "requests");
}

/** A sleeper that records delays and never waits, plus a clock that moves with it. */
export function fakeTime(start = 1_700_000_000_000) {
  let now = start;
  const slept: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    slept,
    advance: (ms: number) => (now += ms),
  };
}

export const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
