// Builds the shipped JavaScript: dist/cli.js, run with plain `node` (Node 20), and
// dist/agent.js, which `cli.js agent` loads on demand (it carries zod for the contract's
// runtime checks, which a one-shot scan does without). Each is one CommonJS bundle: a
// one-shot scan reads one file instead of resolving ~20 modules, and CommonJS spares
// it the ES module loader's work for every built-in it imports (measured: less start-up
// CPU than the same bundle as ESM). The Worker's shared framework tables and the agent
// contract are bundled in, so dist/ needs nothing else at run time.
// Run by `prepare` (npm ci / npm install), by `npm test`, and by hand after editing src/:
// `npm run build`.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const root = new URL(".", import.meta.url).pathname;
rmSync(`${root}dist`, { recursive: true, force: true });
mkdirSync(`${root}dist`);
// The package is ESM ("type": "module"); the bundles in dist/ are CommonJS.
writeFileSync(`${root}dist/package.json`, '{ "type": "commonjs" }\n');
await build({
  absWorkingDir: root,
  entryPoints: { cli: "src/cli.ts", agent: "src/agent.ts" },
  outdir: "dist",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // cli.js loads the agent bundle only in agent mode (a require at that point).
  external: ["./agent.js"],
  supported: { "dynamic-import": false },
  // The sources are ESM: their import.meta.url is this file's URL in the bundle.
  define: { "import.meta.url": "__importMetaUrl" },
  banner: { js: '#!/usr/bin/env node\nconst __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  // Smaller to parse; identifiers kept, so stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  logLevel: "warning",
});
