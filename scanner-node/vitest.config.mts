import { defineConfig } from "vitest/config";

// scanner-node tests run in plain Node against real local servers (openssl s_server,
// gnutls-serv, nginx, Node fakes) that the tests start themselves.
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
