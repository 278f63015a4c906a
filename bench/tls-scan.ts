// TLS scanner benchmark: `npm run bench:tls` (builds scanner-node; needs openssl, nginx, gnutls-bin,
// sslscan, testssl.sh). Every figure is printed next to its baseline measured in the same run:
// 1. Start-up as a process: `node scanner-node/dist/cli.js --version` next to bare `node -e 0`.
// 2. A one-shot scan as a process, per local server: `node scanner-node/dist/cli.js scan host:port`
//    next to `sslscan host:port` (its default scan), run in turn, medians and the median of the
//    per-pair ratios (scanner/sslscan; below 1 = faster). Unless --no-tsx, also the former way
//    of running the CLI (`tsx src/cli.ts scan`), to show what shipping JavaScript changed.
// 3. The same servers scanned in-process by scanner-node, by sslscan and by `testssl.sh -E`:
//    time per target and where the findings (protocols, suites, groups) agree or differ.
// 4. 100 targets (the servers on many loopback addresses) scanned by the agent loop, concurrency 20,
//    through a local fake of the lease/results API.
// Options: --runs N (pairs per target, default 5), --no-testssl, --no-tsx, --targets N (default 100).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Agent, type LeasedJob } from "../scanner-node/src/agent";
import { scanTarget, type ScanReport } from "../scanner-node/src/scan";
import { makePki } from "../scanner-node/test/helpers/pki";
import { gnutlsServer, nginxServer, opensslServer, type Running } from "../scanner-node/test/helpers/servers";
import { compare, fmt, fmtRatio } from "./lib/process-timing";

const run = promisify(execFile);
const args = process.argv.slice(2);
const withTestssl = !args.includes("--no-testssl");
const withTsx = !args.includes("--no-tsx");
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) || fallback : fallback);
const nTargets = option("--targets", 100);
const runs = option("--runs", 5);

const repo = new URL("..", import.meta.url).pathname;
const scannerDir = join(repo, "scanner-node");
const cli = join(scannerDir, "dist/cli.js");
const tsx = join(repo, "node_modules/.bin/tsx");

type Findings = { protocols: Set<string>; suites: Set<string>; groups: Set<string> | null };
const key = (p: string, code: number) => `${p}:0x${code.toString(16).toUpperCase().padStart(4, "0")}`;

function ours(r: ScanReport): Findings {
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

/** 1. Start-up: the compiled CLI against bare node (what node itself costs on this machine now). */
async function startupFigures() {
  const c = await compare({ name: "cli --version", argv: [process.execPath, cli, "--version"] }, { name: "node -e 0", argv: [process.execPath, "-e", "0"] }, { runs: runs * 2, warmup: 1 });
  console.log("## Start-up as a process\n");
  console.log("| command | median ms (min-max) |\n|---|---|");
  console.log(`| \`node scanner-node/dist/cli.js --version\` | ${fmt(c.a.median)} (${fmt(c.a.min)}-${fmt(c.a.max)}) |`);
  console.log(`| baseline: bare \`node -e 0\` | ${fmt(c.b.median)} (${fmt(c.b.min)}-${fmt(c.b.max)}) |`);
  console.log(`\nratio cli/bare node ${fmtRatio(c.ratio)} (${fmtRatio(c.ratioMin)}-${fmtRatio(c.ratioMax)}); the scanner's own start-up cost over node: ${fmt(c.a.median - c.b.median)} ms\n`);
}

/** 2. A one-shot scan of each server as a whole process: scanner-node (compiled) vs sslscan. */
async function processFigures(servers: { name: string; s: Running }[]) {
  console.log("## One-shot scan as a process (wall time)\n");
  console.log(`| target | scanner-node ms | sslscan ms | ratio scanner/sslscan (min-max) |${withTsx ? " former `tsx src/cli.ts` ms | ratio tsx/compiled |" : ""}`);
  console.log(`|---|---|---|---|${withTsx ? "---|---|" : ""}`);
  let slower = 0;
  for (const { name, s } of servers) {
    const target = `127.0.0.1:${s.port}`;
    const c = await compare(
      { name: "scanner-node", argv: [process.execPath, cli, "scan", target, "--sni", "localhost"] },
      { name: "sslscan", argv: ["sslscan", "--no-colour", "--sni-name=localhost", target] },
      { runs, warmup: 1 },
    );
    if (c.ratio >= 1) slower++;
    let tsxCells = "";
    if (withTsx) {
      const t = await compare(
        { name: "tsx", argv: [tsx, "src/cli.ts", "scan", target, "--sni", "localhost"] },
        { name: "compiled", argv: [process.execPath, cli, "scan", target, "--sni", "localhost"] },
        { runs: Math.max(3, Math.ceil(runs / 2)), warmup: 1, cwd: scannerDir },
      );
      tsxCells = ` ${fmt(t.a.median)} | ${fmtRatio(t.ratio)} |`;
    }
    const codes = [...c.a.exitCodes, ...c.b.exitCodes].filter((x) => x !== 0);
    console.log(`| ${name}${codes.length ? ` (exit ${codes.join(",")})` : ""} | ${fmt(c.a.median)} | ${fmt(c.b.median)} | ${fmtRatio(c.ratio)} (${fmtRatio(c.ratioMin)}-${fmtRatio(c.ratioMax)}) |${tsxCells}`);
  }
  console.log(`\n${slower === 0 ? "scanner-node was faster than sslscan on every target" : `scanner-node was NOT faster than sslscan on ${slower} target(s)`} (median of per-pair ratios)`);
}

async function main() {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: npm --prefix scanner-node run build`);
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
    console.log(`# TLS scan benchmark (${new Date().toISOString()}, ${runs} alternating runs per figure after 1 warm-up)\n`);
    await startupFigures();
    await processFigures(servers);
    console.log("\n## In-process scan and agreement of findings\n");
    console.log("| target | scanner-node in-process ms (probes) | sslscan ms | testssl.sh -E ms | protocols vs sslscan | suites vs sslscan | groups vs sslscan | protocols vs testssl | suites vs testssl |");
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
      jobs.push({ job_id: i + 1, monitor_id: 1, target_id: i + 1, monitor_cn: "localhost", ip_address: host, port: pick.port, sni: "localhost", starttls: null, root_ca: pki.caPem, attempt: 1 });
    }
    const queue = [...jobs];
    const results: { job_id: number; result: ScanReport }[] = [];
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
    const durations = results.map((x) => x.result.duration_ms ?? 0).sort((a, b) => a - b);
    console.log(`\n${nTargets} targets, agent loop concurrency 20: ${ms} ms wall, posted ${stats.posted}, errors ${errors}, ` +
      `per-target duration p50 ${durations[Math.floor(durations.length / 2)]} ms, max ${durations[durations.length - 1]} ms`);
  } finally {
    await Promise.all(servers.map((x) => x.s.stop()));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
