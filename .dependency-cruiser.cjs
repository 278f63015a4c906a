/**
 * The dependency rules of the repository (npm run check:deps, part of npm test).
 * docs/architecture.md#dependency-rules says what each rule protects and how to follow it.
 *
 * Layers, from the bottom: packages/ (shared with scanner-node) · src/platform, src/db and
 * src/env.ts (configuration) · src/modules/<name> · the wiring (src/app.ts, src/index.ts,
 * src/jobs.ts, src/queues.ts, src/ct-ingest.ts, src/ct-cursor-data.ts) and durable-objects/.
 * An import points down or sideways within a module, never up; a module reaches another
 * module only through that module's declared contract (its contract.ts, <topic>-contract.ts
 * and events.ts).
 */
const WIRING = "^src/(app|index|jobs|queues|ct-ingest|ct-cursor-data)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Files that import each other (type-only imports included): neither can be read, tested or moved without the other.",
      from: {},
      to: { circular: true },
    },
    {
      name: "platform-not-modules",
      severity: "error",
      comment: "src/platform, src/db and the configuration (src/env.ts) serve every module and know none: a module adds to them (a Bindings entry, a table), they never import it.",
      from: { path: "^src/(platform/|db/|env\\.ts$)" },
      to: { path: ["^src/modules/", "^durable-objects/", WIRING] },
    },
    {
      name: "modules-through-contracts",
      severity: "error",
      comment:
        "A module uses another only through what that module declares for others: contract.ts or <topic>-contract.ts (what other modules may call or read) and events.ts (the events it raises, which alerting reads). The rest is its own to change.",
      from: { path: "^src/modules/([^/]+)/" },
      to: { path: "^src/modules/", pathNot: ["^src/modules/$1/", "^src/modules/[^/]+/(contract|[a-z-]*-contract)\\.ts$", "^src/modules/[^/]+/events\\.ts$"] },
    },
    {
      name: "modules-not-wiring",
      severity: "error",
      comment: "Modules are wired together by src/app.ts, src/jobs.ts, src/queues.ts and the Durable Objects; they never import the wiring or a Durable Object class (they use its RPC contract).",
      from: { path: "^src/modules/" },
      to: { path: ["^durable-objects/", WIRING] },
    },
    {
      name: "packages-stand-alone",
      severity: "error",
      comment: "packages/ are shared by the Worker and scanner-node: they import only each other and npm packages.",
      from: { path: "^packages/" },
      to: { path: ["^src/", "^scanner-node/", "^web/", "^durable-objects/"] },
    },
    {
      name: "scanner-through-packages",
      severity: "error",
      comment: "scanner-node runs on the customer's machines: what it shares with the API comes through packages/, never from the Worker's source.",
      from: { path: "^scanner-node/" },
      to: { path: ["^src/", "^web/", "^durable-objects/"] },
    },
    {
      name: "console-through-http",
      severity: "error",
      comment: "The console talks to the API over HTTP only; it does not import the Worker's code.",
      from: { path: "^web/" },
      to: { path: ["^src/", "^scanner-node/", "^durable-objects/"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a circle of types is still a circle to the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Workspace packages (@trust-plane/*) resolve through node_modules to packages/.
    preserveSymlinks: false,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"] },
    exclude: { path: ["(^|/)node_modules/", "(^|/)dist/", "\\.d\\.ts$"] },
  },
};
