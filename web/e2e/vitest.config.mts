/**
 * The console's browser tests: Node-side vitest (the workers pool cannot drive a
 * browser) running playwright-core against Debian's chromium, against the service
 * started the README way (`npm start` on a free port, fresh local state) by
 * global-setup.ts. One server, one file at a time: the files share its database.
 */
import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["web/e2e/**/*.e2e.ts"],
    globalSetup: ["web/e2e/global-setup.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 90_000,
    // A page's data can take seconds on a busy machine (the API under a Cron run, a
    // chunk loaded on first use): expect.poll waits for it, up to this long.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 180_000,
  },
});
