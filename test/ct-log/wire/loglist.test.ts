import { describe, expect, it } from "vitest";
import {
  LogListError,
  loadLogList,
  monitoredLogs,
  parseLogList,
  parseLogListBytes,
  signatureUrlFor,
  verifyLogListSignature,
} from "../../../src/modules/ct-log/loglist";
import { importLogPublicKey } from "../../../src/modules/ct-log/wire/digitally-signed";
import { base, dataBytes, dataJson, dataText } from "./fixture";

const count = <T>(xs: T[], f: (x: T) => boolean) => xs.filter(f).length;

describe("Google log list v3", () => {
  it("v3-80.14 signature verifies with Google's key (default and from the PEM file); a flipped byte does not", async () => {
    const list = await dataBytes("loglist/log_list.v3-80.14.json");
    const sig = await dataBytes("loglist/log_list.v3-80.14.sig");
    const pem = await dataText("loglist/google_log_list_signing_pubkey.pem");
    expect(await verifyLogListSignature(list, sig)).toBe(true);
    expect(await verifyLogListSignature(list, sig, pem)).toBe(true);
    const tampered = list.slice();
    tampered[1000] ^= 1;
    expect(await verifyLogListSignature(tampered, sig, pem)).toBe(false);
    const badSig = sig.slice();
    badSig[10] ^= 1;
    expect(await verifyLogListSignature(list, badSig)).toBe(false);
    await expect(verifyLogListSignature(list, sig, "not a pem")).rejects.toThrow(LogListError);
  });

  it("v3-81.14: every log and state parsed, both protocols, readonly final tree heads", async () => {
    const list = parseLogList(await dataJson("loglist/log_list.v3-81.14.json"));
    expect(list.version).toBe("81.14");
    const rfc = list.logs.filter((l) => l.protocol === "rfc6962");
    const tiled = list.logs.filter((l) => l.protocol === "static-ct");
    expect(rfc).toHaveLength(49);
    expect(count(rfc, (l) => l.state?.name === "usable")).toBe(36);
    expect(count(rfc, (l) => l.state?.name === "readonly")).toBe(9);
    expect(count(rfc, (l) => l.state?.name === "retired")).toBe(4);
    expect(tiled).toHaveLength(26);
    expect(count(tiled, (l) => l.state?.name === "usable")).toBe(25);
    expect(count(tiled, (l) => l.state?.name === "qualified")).toBe(1);
    expect(monitoredLogs(list)).toHaveLength(36 + 9 + 25 + 1);
    const sabre = list.logs.find((l) => l.description === "Sectigo 'Sabre2025h2'")!;
    expect(sabre.state?.finalTreeHead).toEqual({ treeSize: 1213760846, sha256RootHash: "eJj4IHvdYpljVsW/YCery+QsSRHbuYBME7H912a5P2Y=" });
    const luoshu = list.logs.find((l) => l.description === "TrustAsia Luoshu2027")!;
    expect(luoshu.readUrl).toBe("https://luoshu2027.trustasia.com/luoshu2027/");
    expect(luoshu.submissionUrl).toBe("https://luoshu2027.trustasia.com/luoshu2027/");
    // Every key imports and its SHA-256 is the list's log_id.
    for (const l of list.logs) {
      const k = await importLogPublicKey(l.key);
      expect(btoa(String.fromCharCode(...k.logId))).toBe(l.logId);
    }
  });

  it("all_logs_list v3-53.34 parses pending, rejected, stateless logs and log_type", async () => {
    const list = parseLogList(await dataJson("loglist/all_logs_list.v3-53.34.json"));
    expect(list.isAllLogs).toBe(true);
    const states = new Set<string>(list.logs.map((l) => l.state?.name ?? "none"));
    for (const s of ["pending", "rejected", "usable", "readonly", "retired", "none"]) expect(states.has(s)).toBe(true);
    expect(list.logs.some((l) => l.logType !== undefined)).toBe(true);
    expect(monitoredLogs(list).every((l) => ["qualified", "usable", "readonly"].includes(l.state!.name))).toBe(true);
    expect(count(list.logs, (l) => l.key.startsWith("MIIBIjAN"))).toBeGreaterThan(0); // RSA logs exist
  });

  it("malformed lists are LogListError", () => {
    expect(() => parseLogListBytes(new TextEncoder().encode("{"))).toThrow(LogListError);
    expect(() => parseLogList({ operators: 1 })).toThrow(LogListError);
    expect(() => parseLogList({ operators: [{ name: "x", logs: [{ description: "d" }] }] })).toThrow(LogListError);
    expect(() =>
      parseLogList({ operators: [{ name: "x", logs: [{ description: "d", log_id: btoa("x".repeat(32)), key: "AA==", url: "u", mmd: 1, state: { frozen: { timestamp: "t" } } }] }] }),
    ).toThrow(/unknown state/);
  });

  it("loads the remote list when its signature verifies, else the bundled copy", async () => {
    const bundled = await dataJson("loglist/log_list.v3-81.14.json");
    const url = `${base}/data/ct/loglist/log_list.v3-80.14.json`;
    expect(signatureUrlFor(url)).toBe(`${base}/data/ct/loglist/log_list.v3-80.14.sig`);
    const ok = await loadLogList({ url, bundled });
    expect(ok.source).toBe("remote");
    expect(ok.list.version).toBe("80.14");
    // 81.14 has no .sig next to it: not trusted, bundled copy used.
    const noSig = await loadLogList({ url: `${base}/data/ct/loglist/log_list.v3-81.14.json`, bundled });
    expect(noSig.source).toBe("bundled");
    expect(noSig.remoteError).toMatch(/404/);
    // A wrong key: signature fails, bundled copy used.
    const pair = (await crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
    const pem = `-----BEGIN PUBLIC KEY-----\n${btoa(String.fromCharCode(...spki))}\n-----END PUBLIC KEY-----`;
    const wrongKey = await loadLogList({ url, bundled, publicKeyPem: pem });
    expect(wrongKey.source).toBe("bundled");
    expect(wrongKey.remoteError).toMatch(/does not verify/);
  });
});
