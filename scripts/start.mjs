#!/usr/bin/env node
/**
 * `npm start`: the whole service locally (docs/decisions.md#running-it).
 *  1. builds the web console into dist/web (scripts/build-web.mjs),
 *  2. applies the D1 migrations to the local database (.wrangler/state, or
 *     $TRUST_PLANE_STATE_DIR: the browser tests and benchmarks start on a fresh one),
 *  3. runs wrangler's dev server (what `wrangler dev` runs, started through wrangler's
 *     `unstable_startWorker` API) on an internal loopback port, honouring .dev.vars,
 *     WITHOUT the DevTools inspector: the `wrangler dev` CLI always enables it, and its
 *     proxy then forwards every network event of every subrequest to its controller
 *     over a new loopback connection. A CT backlog or a DNS run (thousands of fetches
 *     a minute) then slows every request several-fold and finally exhausts workerd's
 *     file descriptors ("Too many open files"): measured with bench:ct-e2e and bench:dns.
 *  4. serves 127.0.0.1:$PORT (default 8787) through a small local edge (local-edge.mjs);
 *     PUBLIC_BASE_URL (the base of links in mail) defaults to that address and the
 *     start-up log states the one in effect;
 *     that forwards to the Worker's runtime directly (startWorker below says why not
 *     through wrangler's own proxy) and plays the part Cloudflare's edge plays when
 *     deployed: it sets
 *     CF-Connecting-IP from the socket (a client cannot choose its own address for the
 *     rate limits and the audit log), and it answers GET /cdn-cgi/handler/scheduled by
 *     firing the Cron Trigger. (With Workers Static Assets in front of the Worker,
 *     wrangler dev hands that path to the asset router, which has no scheduled
 *     handler and answers 500; `--test-scheduled` offers /__scheduled instead.)
 *  5. fires the Cron Trigger every minute (wrangler dev does not run crons itself).
 *  6. runs the CT log cursors in the ingest Worker (wrangler.ingest.toml), a second
 *     dev server with its own workerd process: workerd runs every isolate of a process
 *     on one thread, and reading a log's backlog (thousands of certificates a second)
 *     would otherwise take that thread from the API (measured with bench:ct-e2e). The
 *     two Workers find each other through wrangler's dev registry, in a directory of
 *     this process's own (two services started side by side, as the tests and
 *     benchmarks do, never bind to each other's Workers). TRUST_PLANE_ONE_WORKER=true
 *     runs the cursors inside the API Worker instead, as a one-Worker deployment does.
 * Configuration variables set in the environment (SIGNUP_ENABLED, SMTP_URL, ...)
 * are passed to the Worker too, overriding wrangler.toml and .dev.vars.
 * workerd's own report of each DNS lookup that fails (an ERROR block with a native stack,
 * printed even when the Worker handles the failure) is counted and summarized every ten
 * minutes instead of printed (runtime-log.mjs): the service says each failing source
 * itself, once per interval.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_DevEnv, unstable_startWorker } from "wrangler";
import { freePort, startLocalEdge } from "./local-edge.mjs";
import { quietRuntimeLog } from "./runtime-log.mjs";

const runtimeLog = quietRuntimeLog();

/** The KEY=VALUE lines of a .dev.vars file (dotenv syntax, as wrangler reads it); {} when there is none. */
function readDevVars(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  const out = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const quoted = /^(["'])(.*)\1$/.exec(m[2]);
    out[m[1]] = quoted ? quoted[2] : m[2].replace(/\s+#.*$/, "");
  }
  return out;
}

const port = process.env.PORT || "8787";
const base = `http://127.0.0.1:${port}`;
const workerPort = String(await freePort());
// wrangler's proxy in front of the API Worker's runtime: used only if the runtime's own
// address cannot be learnt (startWorker).
const workerBase = `http://127.0.0.1:${workerPort}`;
const wrangler = new URL("../node_modules/.bin/wrangler", import.meta.url).pathname;
// No metrics and no prompts, for the wrangler commands run below and the dev server
// started in this process alike (child processes inherit this environment).
Object.assign(process.env, { WRANGLER_SEND_METRICS: "false", CI: "true" });

// Every [vars] name of wrangler.toml may be overridden from the environment.
const configNames = [...readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8").matchAll(/^([A-Z][A-Z0-9_]+)\s*=/gm)].map((m) => m[1]);
const vars = Object.fromEntries(configNames.filter((n) => process.env[n] !== undefined).map((n) => [n, process.env[n]]));
// The local edge overwrites CF-Connecting-IP with the socket's address, as Cloudflare does.
vars.TRUST_CF_CONNECTING_IP ??= "true";
// Links in mail (invitations, weekly reports) point at PUBLIC_BASE_URL. Unless it is set
// (in the environment or in .dev.vars, which wrangler reads), it is the address served
// here: wrangler.toml's default names port 8787, so `PORT=8790 npm start` would otherwise
// mail links to a port nobody listens on.
const devVars = readDevVars(new URL("../.dev.vars", import.meta.url).pathname);
const baseUrlSource = vars.PUBLIC_BASE_URL !== undefined ? "from the environment" : devVars.PUBLIC_BASE_URL !== undefined ? "from .dev.vars" : "the address served";
if (vars.PUBLIC_BASE_URL === undefined && devVars.PUBLIC_BASE_URL === undefined) vars.PUBLIC_BASE_URL = base;
const publicBaseUrl = vars.PUBLIC_BASE_URL ?? devVars.PUBLIC_BASE_URL;
// Test-only (not a wrangler.toml var, never set when deployed): lets a request move its own
// clock with X-Trust-Plane-Now (src/platform/clock.ts). The browser tests use it to make an
// organization that existed last week, which is the only kind a weekly report is due for.
if (process.env.ALLOW_CLOCK_OVERRIDE === "true") vars.ALLOW_CLOCK_OVERRIDE = "true";

// Local state (D1, Durable Objects) lives in .wrangler/state unless told otherwise.
const persistArgs = process.env.TRUST_PLANE_STATE_DIR ? ["--persist-to", process.env.TRUST_PLANE_STATE_DIR] : [];

const built = spawnSync(process.execPath, [new URL("./build-web.mjs", import.meta.url).pathname], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

console.log("[start] applying D1 migrations (local)");
const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", ...persistArgs], { stdio: "inherit" });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const persist = process.env.TRUST_PLANE_STATE_DIR || new URL("../.wrangler/state", import.meta.url).pathname;
const oneWorker = process.env.TRUST_PLANE_ONE_WORKER === "true";
const registry = mkdtempSync(join(tmpdir(), "trust-plane-registry-"));
// What `wrangler dev` and `wrangler deploy` derive from wrangler.toml's nodejs_compat flag;
// this API leaves it unset, so its bundle would differ from the deployed one (and wrangler
// warns about every node: import).
const build = { nodejsCompatMode: "v2" };

let ingest = null;
if (!oneWorker) {
  console.log("[start] starting the ingest Worker (CT log cursors)");
  ingest = await unstable_startWorker({
    config: new URL("../wrangler.ingest.toml", import.meta.url).pathname,
    build,
    dev: {
      inspector: false,
      // Its Durable Objects' storage, beside the API Worker's state.
      persist: join(persist, "ingest"),
      server: { hostname: "127.0.0.1", port: await freePort() },
      registry,
      logLevel: "log",
    },
  });
  await ingest.ready;
}

/**
 * What `unstable_startWorker(options)` does (`new unstable_DevEnv().startWorker(options)`),
 * also keeping the address of the Worker's runtime, which wrangler announces to its proxy
 * controller with every (re)load. wrangler serves a dev Worker through a proxy Worker in
 * a workerd process of its own, which holds requests while a changed Worker reloads and
 * injects the live-reload script into HTML pages. `npm start` needs neither: should a
 * source change reload the Worker, the local edge answers 502 for that moment and then
 * follows the runtime to its new address. Through that proxy every request cost about
 * 2 ms more CPU (GET /api/health: 7.5 instead of 3.9 ms over wrangler's processes and
 * the local edge) and one more process to wait for on a busy machine: with the local
 * edge forwarding to the runtime directly, bench:ct-e2e's /api/health p99 during
 * ingestion fell from 88-111 ms to 68-91 ms, and the idle service answers twice the
 * requests.
 */
async function startWorker(options) {
  const devEnv = new unstable_DevEnv();
  let runtime;
  let announced;
  const firstAnnounced = new Promise((resolve) => (announced = resolve));
  const onReloadComplete = devEnv.proxy.onReloadComplete.bind(devEnv.proxy);
  devEnv.proxy.onReloadComplete = (event) => {
    const { protocol, hostname, port } = event.proxyData.userWorkerUrl;
    runtime = `${protocol}//${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
    announced();
    return onReloadComplete(event);
  };
  const worker = await devEnv.startWorker(options);
  await worker.ready;
  await Promise.race([firstAnnounced, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (!runtime) console.warn("[start] wrangler did not announce the Worker's runtime; serving through its proxy");
  return { worker, runtime: () => runtime };
}

console.log(`[start] serving ${base}`);
console.log(`[start] PUBLIC_BASE_URL ${publicBaseUrl} (${baseUrlSource}): links in invitations and mails point there`);
const api = await startWorker({
  config: new URL("../wrangler.toml", import.meta.url).pathname,
  bindings: {
    // The overrides as plain-text vars, above .dev.vars (which wrangler reads as usual).
    ...Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text", value }])),
    // The log cursors live in the ingest Worker.
    ...(oneWorker ? {} : { CT_LOG_CURSOR: { type: "durable_object_namespace", class_name: "CtLogCursor", script_name: "trust-plane-ingest" } }),
  },
  build,
  dev: {
    inspector: false,
    testScheduled: true,
    persist,
    server: { hostname: "127.0.0.1", port: Number(workerPort) },
    registry,
    logLevel: "log",
  },
});
const worker = api.worker;
/** Where requests go: the API Worker's runtime (wrangler's proxy if it is unknown). */
const apiTarget = () => api.runtime() ?? workerBase;

const edge = await startLocalEdge({ port: Number(port), worker: apiTarget });

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  clearInterval(cron);
  runtimeLog.summarize();
  edge.close();
  await worker.dispose().catch(() => {});
  await ingest?.dispose().catch(() => {});
  rmSync(registry, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());

async function fireCron() {
  try {
    const res = await fetch(`${apiTarget()}/__scheduled`);
    if (!res.ok) console.error(`[start] scheduled run answered ${res.status}`);
  } catch {
    /* server not up yet */
  }
}

// Fire once as soon as the server answers, then every minute on the minute.
(async () => {
  for (let i = 0; i < 120 && !stopping; i++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  await fireCron();
})();
const cron = setInterval(fireCron, 60_000);
