#!/usr/bin/env node
/**
 * `npm run check:bundle` (run by .ci/run): proves each Worker (the API Worker of
 * wrangler.toml and the ingest Worker of wrangler.ingest.toml) builds for deployment and
 * fits Cloudflare's Worker size limit, without an account or network.
 *
 * `wrangler deploy --dry-run --outdir <tmp>` bundles exactly what `wrangler deploy` would
 * upload; the script then measures the upload (every output module, source maps and the
 * README wrangler writes excluded), gzipped as Cloudflare counts it, and fails when it is
 * over the limit.
 *
 * The limit is that of the Workers Free plan, 3 MiB after compression, on purpose: a bundle
 * that passes deploys on any plan (Workers Paid allows 10 MiB). Cloudflare's documentation
 * also names 64 MiB uncompressed as a ceiling; it is checked too. Override with
 *   WORKER_SIZE_LIMIT_KIB=10240 npm run check:bundle        (Workers Paid)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";

const KIB = 1024;
const limitGzipKib = Number(process.env.WORKER_SIZE_LIMIT_KIB || 3 * 1024);
const limitRawKib = 64 * 1024;
if (!(limitGzipKib > 0)) {
  console.error(`check-bundle-size: WORKER_SIZE_LIMIT_KIB must be a positive number of KiB, got ${process.env.WORKER_SIZE_LIMIT_KIB}`);
  process.exit(2);
}

const root = new URL("..", import.meta.url).pathname;
const wrangler = join(root, "node_modules/.bin/wrangler");
for (const config of ["wrangler.toml", "wrangler.ingest.toml"]) checkWorker(config);

function checkWorker(config) {
  const outdir = mkdtempSync(join(tmpdir(), "trust-plane-bundle-"));
  try {
    const t0 = Date.now();
    const build = spawnSync(wrangler, ["deploy", "--dry-run", "--config", config, "--outdir", outdir], {
      cwd: root,
      encoding: "utf8",
      // No login, no metrics, no update check: the dry run works offline.
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    });
    if (build.status !== 0) {
      console.error(`check-bundle-size: wrangler deploy --dry-run failed (exit ${build.status})\n${build.stdout}${build.stderr}`);
      process.exit(1);
    }

    const files = walk(outdir).filter((f) => !f.endsWith(".map") && !f.endsWith("README.md"));
    if (!files.length) throw new Error(`wrangler wrote no module into ${outdir}`);
    let raw = 0;
    const parts = [];
    for (const f of files) {
      const bytes = readFileSync(f);
      raw += bytes.length;
      parts.push(bytes);
    }
    // One gzip stream over the whole upload (what the limit counts), default level like wrangler's report.
    const gzip = gzipSync(Buffer.concat(parts)).length;
    const wranglerLine = /Total Upload: [^\n]+/.exec(build.stdout + build.stderr)?.[0];

    const kib = (n) => (n / KIB).toFixed(1);
    const pct = (n, limit) => ((100 * n) / limit).toFixed(1);
    console.log(
      `Worker bundle (${config}): ${files.map((f) => relative(outdir, f)).join(", ")} — ${kib(raw)} KiB, ${kib(gzip)} KiB gzipped ` +
        `(${pct(gzip, limitGzipKib * KIB)}% of the ${kib(limitGzipKib * KIB)} KiB gzipped limit; ${pct(raw, limitRawKib * KIB)}% of ${limitRawKib / KIB} MiB uncompressed)` +
        `${wranglerLine ? `; wrangler: ${wranglerLine}` : ""}; built in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    const over = [];
    if (gzip > limitGzipKib * KIB) over.push(`gzipped ${kib(gzip)} KiB > ${kib(limitGzipKib * KIB)} KiB`);
    if (raw > limitRawKib * KIB) over.push(`uncompressed ${kib(raw)} KiB > ${kib(limitRawKib * KIB)} KiB`);
    if (over.length) {
      console.error(`check-bundle-size: the Worker of ${config} exceeds the size limit (${over.join("; ")}): Cloudflare would refuse the upload.`);
      process.exit(1);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
