#!/usr/bin/env node
/**
 * Builds the web console into dist/web (served by the Worker as static assets,
 * wrangler.toml [assets]) and puts the API reference's script beside it, taken from
 * the @scalar/api-reference package, so /api/docs works without the internet.
 * Called by `npm start` and `npm test`; `npm run build:web` runs it alone.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "web");
const started = Date.now();

await build({ configFile: join(root, "web", "vite.config.mts") });

const require = createRequire(import.meta.url);
const scalar = require.resolve("@scalar/api-reference/browser/standalone.js");
mkdirSync(join(out, "vendor"), { recursive: true });
copyFileSync(scalar, join(out, "vendor", "scalar-api-reference.js"));

console.log(`[build-web] web console built into dist/web in ${((Date.now() - started) / 1000).toFixed(1)} s`);
