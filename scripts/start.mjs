#!/usr/bin/env node
/**
 * `npm start`: the whole service locally, the way ADDENDUM 12 describes it.
 *  1. applies the D1 migrations to the local database (.wrangler/state),
 *  2. runs `wrangler dev` on 127.0.0.1:$PORT (default 8787), honouring .dev.vars,
 *  3. fires the Cron Trigger every minute (wrangler dev does not run crons itself).
 * Configuration variables set in the environment (SIGNUP_ENABLED, SMTP_URL, ...)
 * are passed to the Worker too, overriding wrangler.toml and .dev.vars.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const port = process.env.PORT || "8787";
const base = `http://127.0.0.1:${port}`;
const wrangler = new URL("../node_modules/.bin/wrangler", import.meta.url).pathname;
const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

// Every [vars] name of wrangler.toml may be overridden from the environment.
const configNames = [...readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8").matchAll(/^([A-Z][A-Z0-9_]+)\s*=/gm)].map((m) => m[1]);
const varArgs = configNames.filter((n) => process.env[n] !== undefined).flatMap((n) => ["--var", `${n}:${process.env[n]}`]);

console.log("[start] applying D1 migrations (local)");
const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit", env: childEnv });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

console.log(`[start] serving ${base}`);
const dev = spawn(wrangler, ["dev", "--ip", "127.0.0.1", "--port", port, "--show-interactive-dev-session=false", ...varArgs], {
  stdio: "inherit",
  env: childEnv,
});

let stopping = false;
const stop = (signal) => {
  stopping = true;
  clearInterval(cron);
  dev.kill(signal);
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
dev.on("exit", (code) => {
  clearInterval(cron);
  process.exit(stopping ? 0 : (code ?? 1));
});

async function fireCron() {
  try {
    const res = await fetch(`${base}/cdn-cgi/handler/scheduled`);
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
