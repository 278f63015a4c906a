// ClientHello construction and ServerHello / HelloRetryRequest / alert / record parsing.
import { describe, expect, it } from "vitest";
import {
  buildClientHello, HRR_RANDOM, parseAlert, parseCertificateMessage, parseServerHello, parseServerKeyExchange,
  Reader, splitHandshakes, splitRecords, TlsParseError,
} from "../src/tls/wire";
import { bundles, LEGACY_SUITES, TLS13_SUITES } from "../src/enumerate";

function serverHello(opts: { version?: number; random?: Buffer; suite: number; exts?: Buffer }): Buffer {
  const exts = opts.exts ?? Buffer.alloc(0);
  const body = Buffer.concat([Buffer.from([3, 3]), opts.random ?? Buffer.alloc(32, 7), Buffer.from([0]),
    Buffer.from([opts.suite >> 8, opts.suite & 0xff, 0]), Buffer.from([exts.length >> 8, exts.length & 0xff]), exts]);
  return body;
}

describe("ClientHello", () => {
  it("TLS 1.2 hello: record/handshake framing, suites, SNI, groups", () => {
    const rec = buildClientHello({ version: "TLSv1.2", cipherSuites: [0xc02f, 0x0035], serverName: "example.org", groups: [29, 23] });
    expect(rec[0]).toBe(22);
    expect(rec.readUInt16BE(1)).toBe(0x0301);
    expect(rec.readUInt16BE(3)).toBe(rec.length - 5);
    const { records } = splitRecords(rec);
    const { messages } = splitHandshakes(records[0].payload);
    expect(messages[0].type).toBe(1);
    const r = new Reader(messages[0].body);
    expect(r.u16()).toBe(0x0303);
    r.bytes(32);
    expect(r.vec8().length).toBe(32);
    const suites = r.vec16();
    expect(suites.toString("hex")).toBe("c02f0035");
    expect(r.vec8().toString("hex")).toBe("00");
    const exts = new Reader(r.vec16());
    const types: number[] = [];
    let sni = "";
    while (exts.left) {
      const t = exts.u16();
      const d = exts.vec16();
      types.push(t);
      if (t === 0) sni = d.subarray(5).toString();
      if (t === 10) expect(d.toString("hex")).toBe("0004001d0017");
    }
    expect(sni).toBe("example.org");
    expect(types).toContain(13); // signature_algorithms from TLS 1.2 on
    expect(types).not.toContain(43);
  });
  it("TLS 1.3 hello: legacy version 0x0303, supported_versions, empty key_share; no SNI for IP literals", () => {
    const rec = buildClientHello({ version: "TLSv1.3", cipherSuites: TLS13_SUITES, serverName: "127.0.0.1", groups: [29], keyShares: [] });
    const body = splitHandshakes(splitRecords(rec).records[0].payload).messages[0].body;
    expect(body.readUInt16BE(0)).toBe(0x0303);
    const hex = body.toString("hex");
    expect(hex).toContain("002b00030203040"); // supported_versions: [0x0304]
    expect(hex).toContain("003300020000"); // key_share with an empty list
    expect(hex).not.toContain(Buffer.from("127.0.0.1").toString("hex"));
  });
  it("SSLv3 hello has no extensions", () => {
    const rec = buildClientHello({ version: "SSLv3", cipherSuites: [0x000a] });
    const body = splitHandshakes(splitRecords(rec).records[0].payload).messages[0].body;
    expect(body.length).toBe(2 + 32 + 1 + 2 + 2 + 2);
  });
  it("bundles hold at most 128 suites and cover the registry exactly once", () => {
    const b = bundles(LEGACY_SUITES, 128);
    expect(b.every((x) => x.length <= 128)).toBe(true);
    expect(b.flat().sort((x, y) => x - y)).toEqual([...LEGACY_SUITES].sort((x, y) => x - y));
    expect(LEGACY_SUITES).toContain(0x0005); // RC4 from the IANA registry
    expect(LEGACY_SUITES).not.toContain(0x1301);
  });
});

describe("server messages", () => {
  it("ServerHello of TLS 1.2", () => {
    const sh = parseServerHello(serverHello({ suite: 0xc02f }));
    expect(sh).toMatchObject({ version: 0x0303, cipherSuite: 0xc02f, isHelloRetryRequest: false });
  });
  it("HelloRetryRequest: random, supported_versions and selected group", () => {
    const exts = Buffer.from("002b00020304" + "00330002001d", "hex");
    const sh = parseServerHello(serverHello({ suite: 0x1302, random: HRR_RANDOM, exts }));
    expect(sh).toMatchObject({ version: 0x0304, cipherSuite: 0x1302, isHelloRetryRequest: true, selectedGroup: 29 });
    expect(sh.keyShare).toBeUndefined();
  });
  it("alerts", () => {
    expect(parseAlert(Buffer.from([2, 40]))).toEqual({ level: 2, description: 40, name: "handshake_failure" });
    expect(parseAlert(Buffer.from([2, 70])).name).toBe("protocol_version");
    expect(() => parseAlert(Buffer.from([2]))).toThrow(TlsParseError);
  });
  it("Certificate and ServerKeyExchange", () => {
    const c1 = Buffer.from("3003020101", "hex");
    const list = Buffer.concat([Buffer.from([0, 0, c1.length]), c1, Buffer.from([0, 0, c1.length]), c1]);
    expect(parseCertificateMessage(Buffer.concat([Buffer.from([0, 0, list.length]), list]))).toHaveLength(2);
    expect(parseServerKeyExchange(Buffer.from("03001d20", "hex"), "ECDHE")).toEqual({ kind: "ecdhe", group: 29 });
    const p = Buffer.concat([Buffer.from([0x01, 0x00]), Buffer.alloc(256, 0xff)]);
    expect(parseServerKeyExchange(p, "DHE")).toMatchObject({ kind: "dhe", primeBits: 2048 });
  });
  it("truncated and malformed input raise TlsParseError", () => {
    expect(() => parseServerHello(Buffer.from([3, 3, 1, 2]))).toThrow(/truncated ServerHello/);
    expect(() => splitRecords(Buffer.from("HTTP/1.1 200 OK\r\n"))).toThrow(/not a TLS record: "HTTP\/1.1 200 OK"/);
    expect(() => splitRecords(Buffer.from([22, 3, 3, 0xff, 0xff]))).toThrow(/oversized/);
    expect(splitRecords(Buffer.from([22, 3, 3, 0, 10, 2])).records).toEqual([]); // incomplete: wait for more
  });
});
