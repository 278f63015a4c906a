// The agent loop against a local fake of the lease/results contract and a real TLS server.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Agent, type LeasedJob } from "../src/agent";
import type { ScanReport } from "../src/scan";
import { makePki, type TestPki } from "./helpers/pki";
import { hangServer, opensslServer, type Running } from "./helpers/servers";

let pki: TestPki;
let tls: Running;
let hang: Running;
beforeAll(async () => {
  pki = makePki();
  tls = await opensslServer({ cert: pki.files.rsa, key: pki.files.rsaKey, chain: pki.files.int, args: ["-tls1_2"] });
  hang = await hangServer();
});
afterAll(async () => { await tls.stop(); await hang.stop(); });

function fakeApi(jobs: LeasedJob[], conflictIds: Set<number | string>) {
  const posted: { job_id: number | string; result: ScanReport }[] = [];
  const auth: string[] = [];
  const leaseSizes: number[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      auth.push(String(req.headers.authorization));
      const b = JSON.parse(body);
      if (req.url === "/api/cert-watcher/agents/lease") {
        leaseSizes.push(b.max_jobs);
        res.end(JSON.stringify({ jobs: jobs.splice(0, b.max_jobs), lease_seconds: 120 }));
      } else if (req.url === "/api/cert-watcher/agents/results") {
        if (conflictIds.has(b.job_id)) { res.statusCode = 409; res.end("{}"); return; }
        posted.push(b);
        res.end("{}");
      } else { res.statusCode = 404; res.end(); }
    });
  });
  return new Promise<{ url: string; posted: typeof posted; auth: string[]; leaseSizes: number[]; close: () => void }>((r) =>
    server.listen(0, "127.0.0.1", () => r({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, posted, auth, leaseSizes, close: () => server.close() })));
}

const job = (id: number, port: number, extra: Partial<LeasedJob> = {}): LeasedJob =>
  ({ job_id: id, monitor_id: 7, target_id: id, monitor_cn: "localhost", ip_address: "127.0.0.1", port, sni: "localhost", starttls: null, root_ca: null, attempt: 1, ...extra });

it("leases with bounded concurrency, posts results, treats 409 as done, survives failing targets", async () => {
  const jobs = [job(1, tls.port, { root_ca: pki.caPem }), job(2, tls.port), job(3, 1), job(4, tls.port)];
  const api = await fakeApi(jobs, new Set([4]));
  const agent = new Agent({ apiUrl: api.url + "/", token: "agent-secret", concurrency: 2, idleDelayMs: 10, maxIdleLeases: 1, log: () => {}, scan: { timeoutMs: 2000 } });
  const stats = await agent.run();
  api.close();
  expect(stats).toMatchObject({ leased: 4, posted: 3, conflicts: 1, failedPosts: 0 });
  expect(api.leaseSizes.every((n) => n >= 1 && n <= 2)).toBe(true);
  expect(api.auth.every((a) => a === "Bearer agent-secret")).toBe(true);
  const byId = new Map(api.posted.map((p) => [p.job_id, p.result]));
  expect(byId.get(1)).toMatchObject({ has_error: false, protocol: ["TLSv1.2"], validation: { trusted: true } });
  expect(byId.get(3)).toMatchObject({ has_error: true, error: "connect to 127.0.0.1:1 failed: ECONNREFUSED" });
});

it("a leased job that does not conform to the contract is skipped and logged; the others are scanned", async () => {
  const malformed = { ...job(21, tls.port), port: "443" } as unknown as LeasedJob;
  const api = await fakeApi([malformed, job(22, tls.port)], new Set());
  const logs: string[] = [];
  const agent = new Agent({ apiUrl: api.url, token: "t", concurrency: 2, idleDelayMs: 10, maxIdleLeases: 1, log: (m) => logs.push(m), scan: { timeoutMs: 2000 } });
  const stats = await agent.run();
  api.close();
  expect(stats).toMatchObject({ leased: 1, posted: 1 });
  expect(api.posted.map((p) => p.job_id)).toEqual([22]);
  expect(logs.find((l) => l.startsWith("skipping leased job 21"))).toMatch(/port/);
});

it("stop(): no further leases; a hung in-flight scan is abandoned after the grace period", async () => {
  const jobs = [job(10, hang.port), job(11, tls.port)];
  const api = await fakeApi(jobs, new Set());
  const agent = new Agent({ apiUrl: api.url, token: "t", concurrency: 1, idleDelayMs: 10, shutdownGraceMs: 200, log: () => {}, scan: { timeoutMs: 5000 } });
  const done = agent.run();
  await new Promise((r) => setTimeout(r, 150));
  agent.stop();
  const t = Date.now();
  const stats = await done;
  api.close();
  expect(Date.now() - t).toBeLessThan(1500);
  expect(stats.leased).toBe(1);
  expect(api.leaseSizes).toEqual([1]);
  expect(api.posted).toEqual([]);
});

it("a result refused with 429 is posted again after Retry-After, not dropped", async () => {
  const attempts: number[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      attempts.push(Date.now());
      if (attempts.length <= 2) {
        res.writeHead(429, { "retry-after": "1" }).end("{}");
        return;
      }
      res.end("{}");
    });
  });
  const url = await new Promise<string>((r) => server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
  const agent = new Agent({ apiUrl: url, token: "t", log: () => {} });
  await agent.postResult(job(9, 1), { has_error: true, error: "x" } as unknown as ScanReport);
  server.close();
  expect(attempts.length).toBe(3);
  // Each retry waited for the Retry-After second.
  expect(attempts[1] - attempts[0]).toBeGreaterThanOrEqual(950);
  expect(attempts[2] - attempts[1]).toBeGreaterThanOrEqual(950);
  expect((agent as unknown as { stats: { posted: number; failedPosts: number } }).stats).toMatchObject({ posted: 1, failedPosts: 0 });
});
