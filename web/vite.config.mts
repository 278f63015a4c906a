/**
 * The web console's build: Preact (JSX through Vite's own oxc transform, no plugin),
 * one entry, output in dist/web, which wrangler.toml serves as Workers Static Assets.
 * Run through scripts/build-web.mjs (npm start and npm test call it).
 */
import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // Everything ships from this origin: no CDN, no external font or script.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  logLevel: "warn",
});
