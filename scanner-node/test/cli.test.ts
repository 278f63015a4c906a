// The shipped command line (dist/cli.js) run as a user runs it: plain `node`, no TypeScript
// tooling. Its JSON output is exactly the agent contract's scan result (packages/scan-contract).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ScanResult } from "@trust-plane/scan-contract";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtCli } from "./helpers/cli";
import { makePki, type TestPki } from "./helpers/pki";
import { opensslServer, type Running } from "./helpers/servers";

const run = promisify(execFile);
const cli = (...args: string[]) => run(process.execPath, [builtCli(), ...args], { timeout: 30_000 });

let pki: TestPki;
let tls: Running;
beforeAll(async () => {
  pki = makePki();
  tls = await opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, args: ["-tls1_2"] });
});
afterAll(async () => { await tls?.stop(); });

it("--version prints the package version", async () => {
  const { stdout } = await cli("--version");
  expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
});

it("usage errors exit 2 with the usage text", async () => {
  for (const args of [[], ["scan"], ["scan", "a:1", "b:2"], ["scan", "127.0.0.1:443", "--starttls", "telnet"], ["agent"]]) {
    const err = await cli(...args).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(err?.code, args.join(" ")).toBe(2);
    expect(err?.stderr).toMatch(/usage:/);
  }
});

it("a one-shot scan prints a result the API accepts unchanged", async () => {
  const { stdout } = await cli("scan", `127.0.0.1:${tls.port}`, "--sni", "localhost", "--root-ca", pki.files.ca, "--cn", "localhost");
  const printed = JSON.parse(stdout);
  expect(printed).toMatchObject({ has_error: false, protocol: ["TLSv1.2"], monitor_cn: "localhost", validation: { trusted: true, anchor: "root_ca" } });
  expect(printed.frameworks).toHaveLength(5);
  const { frameworks: _f, weak_suites: _w, legacy_suites: _l, ...contractPart } = printed;
  const parsed = ScanResult.safeParse(printed);
  expect(parsed.success, parsed.error?.message).toBe(true);
  expect(parsed.data).toEqual(contractPart);
});
