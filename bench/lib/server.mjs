/** Starts the service the README way (`npm start`) on a free port for a benchmark. */
import { spawn } from "node:child_process";

export async function startService({ port, env = {} }) {
  const child = spawn("npm", ["start"], {
    cwd: new URL("../..", import.meta.url).pathname,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  // The service's output, bounded: its first and its latest MAX_LOG characters (a long run's
  // per-request lines must not outgrow a string).
  const MAX_LOG = 4_000_000;
  let head = "";
  let log = "";
  let dropped = 0;
  const keep = (d) => {
    if (head.length < MAX_LOG) head += d;
    else log += d;
    if (log.length > 2 * MAX_LOG) {
      dropped += log.length - MAX_LOG;
      log = log.slice(-MAX_LOG);
    }
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  // A benchmark that dies does not leave the service running.
  process.on("exit", () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
  });
  const output = () => head + (dropped ? `\n[... ${dropped} characters left out ...]\n` : "") + log;
  const base = `http://127.0.0.1:${port}`;
  // Up to 3 minutes: on a loaded shared machine workerd takes well over one to start.
  for (let i = 0; i < 720; i++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) return { base, stop: () => process.kill(-child.pid, "SIGTERM"), log: output };
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  process.kill(-child.pid, "SIGTERM");
  throw new Error("service did not start:\n" + output());
}

/** Closed-loop load: `concurrency` workers issue requests back to back for `seconds`. */
export async function load({ url, headers = {}, concurrency, seconds }) {
  const latencies = [];
  let errors = 0;
  const statuses = {};
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (!res.ok) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: pct(50), p99: pct(99), errors, statuses };
}
