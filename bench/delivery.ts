/**
 * Alert delivery benchmark: 10,000 alerts over 100 channels of every provider kind,
 * delivered by the service's delivery run (src/modules/alerting/delivery.ts `deliverDue`,
 * what each organization's AlertState alarm runs: 100 due deliveries at a time, each
 * rendered for its medium, its secrets unsealed, egress-checked and posted, its outcome
 * written back to D1) to the providers' local receivers (the fixture hub's
 * test/fixtures/servers/providers.ts and webhook.ts, each following its provider's
 * documented contract). Next to it, in the same run, the baseline: a bare loop of the
 * very same HTTP requests (recorded from the delivery run: URL, headers, body), 100 at a
 * time, with nothing around them.
 *
 * Figures per run: deliveries per second and the delay from the moment the 10,000 alerts
 * were due to each one's receipt (p50, p99), for both; and the ratio delivery/baseline.
 * Over BENCH_RUNS runs (default 3): median and p90 of each. Every run checks that no
 * delivery was lost or duplicated: each alert's marker is counted at the receivers (and,
 * for email, in the outbox) exactly once, and every delivery row is `delivered`.
 *
 * Email: without SMTP_URL the email provider writes the outbox (the development mailbox);
 * an SMTP send needs `cloudflare:sockets`, which this Node process does not have, so the
 * email channels (12 of 100) measure the outbox path. D1 is wrangler's platform proxy
 * (miniflare), as in bench:reports.
 *
 *   npm run bench:delivery      (BENCH_RUNS=5 for more runs, BENCH_ALERTS / BENCH_CHANNELS to resize)
 */
import { readdirSync, readFileSync } from "node:fs";
import { getPlatformProxy } from "wrangler";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createDb } from "../src/db/client";
import { loadConfig, type Bindings } from "../src/env";
import { deliverDue } from "../src/modules/alerting/delivery";
import { createChannel } from "../src/modules/alerting/channels/service";
import { PROVIDERS } from "../src/modules/alerting/channels/registry";
import { tenantDb } from "../src/platform/tenant";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ALERTS = Number(process.env.BENCH_ALERTS ?? 10_000);
const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 100);
const CONCURRENCY = 100; // what one delivery run sends at once (DELIVERIES_PER_RUN)
const root = new URL("..", import.meta.url).pathname;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const median = (xs: number[]) => pct(xs, 50);

interface RecordedPost {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

// The receivers in a process of their own (bench/lib/delivery-receivers.ts): the fixture
// hub's two counterparts this needs (the hub itself would also start the DNS lab and the CT logs).
const receiverProcess = spawn(process.execPath, ["--import", "tsx", `${root}bench/lib/delivery-receivers.ts`], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
process.on("exit", () => receiverProcess.kill());
const HUB = await new Promise<string>((resolve, reject) => {
  receiverProcess.once("exit", (code) => reject(new Error(`receivers exited (${code})`)));
  createInterface({ input: receiverProcess.stdout! }).once("line", (line) => resolve((JSON.parse(line) as { url: string }).url));
});
const hubHost = new URL(HUB).host;
const proxy = await getPlatformProxy<{ DB: D1Database }>({ configPath: `${root}wrangler.toml`, persist: false });

/** The receiver's inbox of a channel: key-addressed providers are found by their key. */
const inboxOf = (kind: string, box: string) => (kind === "pagerduty" ? box.padEnd(32, "0").slice(0, 32) : kind === "opsgenie" ? box.padEnd(24, "0") : box);

/** The settings of a channel of `kind` pointing at its local receiver (inbox `box`). */
function settingsOf(kind: string, box: string): Record<string, unknown> {
  switch (kind) {
    case "webhook":
      return { url: `${HUB}/webhook/${box}` };
    case "slack":
      return { url: `${HUB}/providers/slack/${box}/services/T000/B000/XXXX` };
    case "msteams":
      return { url: `${HUB}/providers/msteams/${box}/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=S1g` };
    case "discord":
      return { url: `${HUB}/providers/discord/${box}/api/webhooks/1234567890/T0k3n` };
    case "splunk_hec":
      return { url: `${HUB}/providers/splunk_hec/${box}`, token: "11111111-2222-3333-4444-555555555555", index: "security", sourcetype: "trust-plane:alert" };
    case "pagerduty":
      return { routing_key: inboxOf(kind, box) };
    case "opsgenie":
      return { api_key: inboxOf(kind, box) };
    case "email":
      return { recipients: [`${box}@example.com`] };
    default:
      throw new Error(`bench: no settings for provider ${kind}`);
  }
}

/** Every alert's marker in what the receivers (and the outbox) got: `benchalert<i>r<run>z`. */
async function receipts(boxes: { kind: string; box: string }[], run: number, db: D1Database, since: number) {
  const seen = new Map<number, number>();
  const at: number[] = [];
  const marker = new RegExp(`benchalert(\\d+)r${run}z`, "g");
  const count = (text: string) => {
    for (const m of new Set([...text.matchAll(marker)].map((x) => x[1]))) seen.set(Number(m), (seen.get(Number(m)) ?? 0) + 1);
  };
  for (const { kind, box } of boxes) {
    if (kind === "email") continue;
    const inbox = inboxOf(kind, box);
    const url = kind === "webhook" ? `${HUB}/webhook/__control/${inbox}` : `${HUB}/providers/__control/${inbox}`;
    const { received } = (await (await fetch(url)).json()) as { received: { body: string; at: number }[] };
    for (const r of received) {
      count(r.body);
      at.push(r.at - since);
    }
  }
  const mails = await db.prepare("SELECT subject, created_at FROM mail_outbox WHERE kind = 'alert' AND subject LIKE ?").bind(`%r${run}z%`).all<{ subject: string; created_at: string }>();
  for (const m of mails.results) {
    count(m.subject);
    at.push(Date.parse(m.created_at) - since);
  }
  return { seen, at };
}

async function oneRun(run: number, d1: D1Database) {
  const env = { ...(proxy.env as object), EGRESS_ALLOWLIST: hubHost, PAGERDUTY_EVENTS_URL: `${HUB}/providers/pagerduty/v2/enqueue`, OPSGENIE_API_URL: `${HUB}/providers/opsgenie`,
    // A loaded machine (2 cores shared with other work) can keep a local answer past the 10 s default: a timeout
    // here would be a retry, and a late answer a duplicate at the receiver, which the bench counts as a failure.
    ALERT_DELIVERY_TIMEOUT_MS: process.env.ALERT_DELIVERY_TIMEOUT_MS ?? "60000" } as unknown as Bindings;
  const config = loadConfig(env);
  const db = createDb(d1);
  const org = (await d1.prepare("INSERT INTO organizations (name, tier) VALUES (?, 'enterprise') RETURNING id").bind(`Bench delivery ${run}`).first<{ id: number }>())!.id;
  const t = tenantDb(db, org);
  const kinds = PROVIDERS.map((p) => p.kind);
  const boxes: { kind: string; box: string; id: number }[] = [];
  for (let i = 0; i < CHANNELS; i++) {
    const kind = kinds[i % kinds.length];
    const box = `b${run}x${i}k${kind.replace(/_/g, "")}`;
    const ch = await createChannel(t, config, { name: `${kind} ${i}`, kind, ...settingsOf(kind, box) }, new Date());
    boxes.push({ kind, box, id: ch.id });
  }
  // The alerts as the processor stores them (one history row, one delivery to one channel each).
  const now = new Date().toISOString();
  const lit = (v: string | number | null) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${v.replace(/'/g, "''")}'`);
  for (let start = 0; start < ALERTS; start += 50) {
    const rows: string[] = [];
    for (let i = start; i < Math.min(ALERTS, start + 50); i++) {
      const subject = `shop${i}.example.com:443 benchalert${i}r${run}z`;
      const event = JSON.stringify({ event_type: "scan_completed", monitor_cn: `shop${i}.example.com`, ip_address: "192.0.2.10", validity_days: 5, certificate: { subject: `CN=shop${i}.example.com`, sha256: "ab".repeat(32) } });
      const message = JSON.stringify({ subject: `[high] expiring: ${subject}`, body: `The certificate of ${subject} expires in 5 days.` });
      rows.push(
        `(${[org, "cert-watcher", null, "expiring", "high", subject, `bench-${run}-${i}`, `certificate of ${subject} expires in 5 days`, message, event, now, "fired", `monitor:${i}|192.0.2.10`, `trust-plane:${org}:bench:${i}`, "open"].map(lit).join(", ")})`,
      );
    }
    await d1
      .prepare(`INSERT INTO alert_history (organization_id, module, rule_id, rule_name, severity, subject, event_id, event_summary, message, event, fired_at, status, asset, alert_key, state) VALUES ${rows.join(", ")}`)
      .run();
  }
  const first = (await d1.prepare("SELECT min(id) AS id FROM alert_history WHERE organization_id = ?").bind(org).first<{ id: number }>())!.id;
  for (let start = 0; start < ALERTS; start += 500) {
    const rows: string[] = [];
    for (let i = start; i < Math.min(ALERTS, start + 500); i++) rows.push(`(${org}, ${first + i}, ${boxes[i % CHANNELS].id}, 'trigger', 'pending', '${now}', '[]', '${now}')`);
    await d1.prepare(`INSERT INTO alert_deliveries (organization_id, history_id, channel_id, action, status, next_attempt_at, attempt_log, updated_at) VALUES ${rows.join(", ")}`).run();
  }

  // The delivery runs, recording the HTTP requests they make (for the baseline).
  const recorded: RecordedPost[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    recorded.push({ url, method: init?.method ?? "GET", headers: Object.fromEntries(new Headers(init?.headers).entries()), body: String(init?.body ?? "") });
    return realFetch(input, init).catch((err) => {
      if (process.env.BENCH_DEBUG) console.error("fetch failed", url, err, (err as any)?.cause);
      throw err;
    });
  }) as typeof fetch;
  const t0 = Date.now();
  let runs = 0;
  try {
    for (;;) {
      const r = await deliverDue(db, config, org, new Date());
      runs++;
      if (r.retrying || r.failed) {
        const why = await d1.prepare("SELECT DISTINCT last_error FROM alert_deliveries WHERE organization_id = ? AND status IN ('retrying', 'failed') LIMIT 5").bind(org).all();
        throw new Error(`delivery run ${runs}: ${r.retrying} retrying, ${r.failed} failed: ${JSON.stringify(why.results)}`);
      }
      if (!r.nextDueAt) break;
    }
  } finally {
    globalThis.fetch = realFetch;
  }
  const deliveryMs = Date.now() - t0;
  const states = await d1.prepare("SELECT status, count(*) AS n FROM alert_deliveries WHERE organization_id = ? GROUP BY status").bind(org).all<{ status: string; n: number }>();
  const got = await receipts(boxes, run, d1, t0);
  const lost = ALERTS - got.seen.size;
  const duplicated = [...got.seen.values()].filter((n) => n > 1).length;
  if (lost || duplicated || states.results.length !== 1 || states.results[0].status !== "delivered") {
    throw new Error(`run ${run}: ${lost} alerts lost, ${duplicated} duplicated at the receivers; deliveries ${JSON.stringify(states.results)}`);
  }

  // The baseline: the same requests to fresh inboxes (so the receivers' work is the same), 100 at a time.
  // URL-addressed receivers get other inboxes; PagerDuty and Opsgenie the same keys again (their receipts were counted).
  const base = recorded.map((p) => ({ ...p, url: p.url.replace(/\/b(\d+)x/, "/base$1x") }));
  const baseAt: number[] = [];
  const b0 = Date.now();
  for (let i = 0; i < base.length; i += CONCURRENCY) {
    await Promise.all(
      base.slice(i, i + CONCURRENCY).map(async (p) => {
        const res = await fetch(p.url, { method: p.method, headers: p.headers, body: p.body, redirect: "manual" });
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`baseline: HTTP ${res.status} from ${p.url}`);
        baseAt.push(Date.now() - b0);
      }),
    );
  }
  const baseMs = Date.now() - b0;
  const httpAlerts = recorded.length;
  return {
    delivery: { perSecond: (ALERTS / deliveryMs) * 1000, p50: pct(got.at, 50), p99: pct(got.at, 99), runs },
    baseline: { perSecond: (httpAlerts / baseMs) * 1000, p50: pct(baseAt, 50), p99: pct(baseAt, 99) },
    httpAlerts,
  };
}

try {
  const d1 = proxy.env.DB;
  for (const f of readdirSync(`${root}migrations`).filter((x) => x.endsWith(".sql")).sort()) {
    for (const stmt of readFileSync(`${root}migrations/${f}`, "utf8").split("--> statement-breakpoint")) if (stmt.trim()) await d1.prepare(stmt).run();
  }
  console.log(`bench:delivery: ${ALERTS} alerts over ${CHANNELS} channels (${PROVIDERS.map((p) => p.kind).join(", ")}), ${RUNS} runs`);
  const results = [];
  for (let run = 1; run <= RUNS; run++) {
    const r = await oneRun(run, d1);
    results.push(r);
    console.log(
      `run ${run}: delivery ${r.delivery.perSecond.toFixed(0)}/s (p50 ${r.delivery.p50} ms, p99 ${r.delivery.p99} ms from due to receipt, ${r.delivery.runs} delivery runs)` +
        ` | bare loop of the same ${r.httpAlerts} HTTP posts ${r.baseline.perSecond.toFixed(0)}/s (p50 ${r.baseline.p50} ms, p99 ${r.baseline.p99} ms)` +
        ` | ratio ${(r.delivery.perSecond / r.baseline.perSecond).toFixed(2)} | none lost or duplicated`,
    );
  }
  const row = (label: string, xs: number[], unit: string, digits = 0) => console.log(`  ${label.padEnd(34)} median ${median(xs).toFixed(digits)}${unit}  p90 ${pct(xs, 90).toFixed(digits)}${unit}`);
  console.log(`over ${RUNS} runs:`);
  row("delivery, deliveries/s", results.map((r) => r.delivery.perSecond), "/s");
  row("baseline (bare loop), posts/s", results.map((r) => r.baseline.perSecond), "/s");
  row("ratio delivery / baseline", results.map((r) => r.delivery.perSecond / r.baseline.perSecond), "", 2);
  row("delivery p99 delay due->receipt", results.map((r) => r.delivery.p99), " ms");
  row("baseline p99 delay start->receipt", results.map((r) => r.baseline.p99), " ms");
} finally {
  await proxy.dispose();
  receiverProcess.kill();
}
