// TLS scanner benchmark: `npx tsx bench/tls-scan.ts` (needs openssl, nginx, gnutls-bin, sslscan, testssl.sh).
// 1. The same local servers scanned by scanner-node, sslscan and `testssl.sh -E`: wall time per
//    target side by side, and where the findings (protocols, suites, groups) agree or differ.
// 2. 100 targets (the servers on many loopback addresses) scanned by the agent loop, concurrency 20,
//    through a local fake of the lease/results API.
// Options: --no-testssl (skip the slow testssl.sh runs), --targets N (default 100).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Agent, type LeasedJob } from "../scanner-node/src/agent";
import { scanTarget, type ScanResult } from "../scanner-node/src/scan";
import { makePki } from "../scanner-node/test/helpers/pki";
import { gnutlsServer, nginxServer, opensslServer, type Running } from "../scanner-node/test/helpers/servers";

const run = promisify(execFile);
const args = process.argv.slice(2);
const withTestssl = !args.includes("--no-testssl");
const nTargets = Number(args[args.indexOf("--targets") + 1]) || 100;

type Findings = { protocols: Set<string>; suites: Set<string>; groups: Set<string> | null };
const key = (p: string, code: number) => `${p}:0x${code.toString(16).toUpperCase().padStart(4, "0")}`;

function ours(r: ScanResult): Findings {
  const suites = new Set<string>();
  for (const d of r.protocols_detail) for (const c of d.cipher_codes) suites.add(key(d.protocol, parseInt(c, 16)));
  return { protocols: new Set(r.protocol), suites, groups: new Set(r.named_groups) };
}

const SSLSCAN_VERSIONS: Record<string, string> = { SSLv3: "SSLv3", "TLSv1.0": "TLSv1.0", "TLSv1.1": "TLSv1.1", "TLSv1.2": "TLSv1.2", "TLSv1.3": "TLSv1.3" };
const SSLSCAN_GROUPS: Record<string, string> = { "25519": "x25519", "448": "x448", x25519: "x25519", x448: "x448", prime256v1: "secp256r1", "P-256": "secp256r1", "P-384": "secp384r1", "P-521": "secp521r1" };

async function sslscan(t: Running, dir: string): Promise<{ ms: number; f: Findings }> {
  const out = join(dir, `sslscan-${t.port}.xml`);
  const t0 = Date.now();
  await run("sslscan", [`--xml=${out}`, "--no-colour", "--sni-name=localhost", `${t.host}:${t.port}`], { timeout: 300_000 }).catch(() => undefined);
  const ms = Date.now() - t0;
  const xml = readFileSync(out, "utf8");
  const f: Findings = { protocols: new Set(), suites: new Set(), groups: new Set() };
  for (const m of xml.matchAll(/<cipher status="(?:accepted|preferred)" sslversion="([^"]+)"[^>]*id="0x([0-9A-Fa-f]+)"/g)) {
    const p = SSLSCAN_VERSIONS[m[1]] ?? m[1];
    f.protocols.add(p);
    f.suites.add(key(p, parseInt(m[2], 16)));
  }
  for (const m of xml.matchAll(/<group [^>]*name="([^"]+)"/g)) { const g = m[1].split(" ")[0]; f.groups!.add(SSLSCAN_GROUPS[g] ?? g); }
  return { ms, f };
}

const TESTSSL_VERSIONS: Record<string, string> = { ssl3: "SSLv3", tls1: "TLSv1.0", tls1_1: "TLSv1.1", tls1_2: "TLSv1.2", tls1_3: "TLSv1.3" };
async function testssl(t: Running, dir: string): Promise<{ ms: number; f: Findings }> {
  const out = join(dir, `testssl-${t.port}.json`);
  const t0 = Date.now();
  await run("testssl", ["-E", "--jsonfile", out, "--warnings", "off", "--quiet", "--sneaky", `${t.host}:${t.port}`], { timeout: 600_000 }).catch(() => undefined);
  const ms = Date.now() - t0;
  const f: Findings = { protocols: new Set(), suites: new Set(), groups: null };
  for (const e of JSON.parse(readFileSync(out, "utf8")) as { id: string }[]) {
    const m = /^cipher-(ssl3|tls1|tls1_1|tls1_2|tls1_3)_x([0-9a-f]+)$/.exec(e.id);
    if (!m) continue;
    const p = TESTSSL_VERSIONS[m[1]];
    f.protocols.add(p);
    f.suites.add(key(p, parseInt(m[2], 16)));
  }
  return { ms, f };
}

function diff(a: Set<string>, b: Set<string>): string {
  const onlyA = [...a].filter((x) => !b.has(x));
  const onlyB = [...b].filter((x) => !a.has(x));
  if (!onlyA.length && !onlyB.length) return `agree (${a.size})`;
  return `DIFFER: only scanner [${onlyA.join(" ")}] only other [${onlyB.join(" ")}]`;
}

async function main() {
  const pki = makePki();
  const dir = mkdtempSync(join(tmpdir(), "tls-bench-"));
  const f = pki.files;
  const servers: { name: string; s: Running }[] = [];
  const add = async (name: string, p: Promise<Running>) => { servers.push({ name, s: await p }); };
  await add("openssl-default", opensslServer({ cert: f.rsa, key: f.rsaKey, chain: f.int }));
  await add("openssl-legacy-1.0-1.2", opensslServer({ cert: f.rsa, key: f.rsaKey, chain: f.int, args: ["-no_tls1_3", "-cipher", "ALL:@SECLEVEL=0", "-serverpref"] }));
  await add("openssl-tls13-ecdsa", opensslServer({ cert: f.ecdsa, key: f.ecdsaKey, chain: f.int, args: ["-tls1_3", "-groups", "x25519:secp384r1"] }));
  await add("nginx-intermediate", nginxServer({ cert: f.rsa, key: f.rsaKey, protocols: "TLSv1.2 TLSv1.3", host: "0.0.0.0",
    ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305" }));
  await add("gnutls-3des-rc4", gnutlsServer({ cert: f.rsa, key: f.rsaKey, priority: "NORMAL:+3DES-CBC:+ARCFOUR-128:+VERS-TLS1.0:+VERS-TLS1.1" }));
  try {
    console.log(`# TLS scan benchmark (${new Date().toISOString()})\n`);
    console.log("| target | scanner-node ms (probes) | sslscan ms | testssl.sh -E ms | protocols vs sslscan | suites vs sslscan | groups vs sslscan | protocols vs testssl | suites vs testssl |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const { name, s } of servers) {
      const r = await scanTarget({ host: "127.0.0.1", port: s.port, sni: "localhost" }, { timeoutMs: 5000 });
      const o = ours(r);
      const ss = await sslscan({ ...s, host: "127.0.0.1" }, dir);
      const ts = withTestssl ? await testssl({ ...s, host: "127.0.0.1" }, dir) : null;
      console.log(`| ${name} | ${r.duration_ms} (${r.probes}) | ${ss.ms} | ${ts?.ms ?? "skipped"} | ${diff(o.protocols, ss.f.protocols)} | ${diff(o.suites, ss.f.suites)} | ${diff(o.groups!, ss.f.groups!)} | ${ts ? diff(o.protocols, ts.f.protocols) : "-"} | ${ts ? diff(o.suites, ts.f.suites) : "-"} |`);
    }

    // 100 targets through the agent loop: nginx on 0.0.0.0 reached via 127.0.0.x, plus the openssl servers.
    const jobs: LeasedJob[] = [];
    for (let i = 0; i < nTargets; i++) {
      const pick = servers[i % 4].s; // not gnutls-serv: it serves connections one at a time
      const host = servers[i % 4].name.startsWith("nginx") ? `127.0.0.${1 + (i % 50)}` : "127.0.0.1";
      jobs.push({ job_id: i + 1, monitor_id: 1, target_id: i + 1, ip_address: host, port: pick.port, sni: "localhost", starttls: null, root_ca: pki.caPem });
    }
    const queue = [...jobs];
    const results: { job_id: number; result: ScanResult }[] = [];
    const api = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const b = JSON.parse(body || "{}");
        res.setHeader("content-type", "application/json");
        if (req.url === "/api/cert-watcher/agents/lease") res.end(JSON.stringify({ jobs: queue.splice(0, b.max_jobs), lease_seconds: 300 }));
        else { results.push(b); res.end("{}"); }
      });
    });
    await new Promise<void>((r) => api.listen(0, "127.0.0.1", () => r()));
    const t0 = Date.now();
    const agent = new Agent({ apiUrl: `http://127.0.0.1:${(api.address() as { port: number }).port}`, token: "bench", concurrency: 20, maxIdleLeases: 1, idleDelayMs: 10, log: () => {} });
    const stats = await agent.run();
    const ms = Date.now() - t0;
    api.close();
    const errors = results.filter((x) => x.result.has_error).length;
    const durations = results.map((x) => x.result.duration_ms).sort((a, b) => a - b);
    console.log(`\n${nTargets} targets, agent loop concurrency 20: ${ms} ms wall, posted ${stats.posted}, errors ${errors}, ` +
      `per-target duration p50 ${durations[Math.floor(durations.length / 2)]} ms, max ${durations[durations.length - 1]} ms`);
  } finally {
    await Promise.all(servers.map((x) => x.s.stop()));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
