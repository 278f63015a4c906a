import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Tests run inside workerd with the real bindings of wrangler.toml. The fixture hub
// (test/global-setup.ts) runs in Node; its URLs reach the worker as bindings.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            FIXTURE_URL: inject<string>("fixtureUrl"),
            SMTP_SINK_PORT: String(inject<number>("smtpSinkPort") ?? ""),
            // External services point at the local counterparts of the fixture hub.
            RDAP_BOOTSTRAP_URL: `${inject<string>("fixtureUrl")}/rdap/bootstrap.json`,
            DOH_RESOLVER_URLS: `${inject<string>("fixtureUrl")}/doh/default/dns-query`,
            // An empty signed log list: cron runs never reach for the public CT logs.
            CT_LOG_LIST_URL: inject<string>("ctLogListUrl"),
            CT_LOG_LIST_PUBLIC_KEY: inject<string>("ctLogListKeyPem"),
          },
        },
      })),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      globalSetup: ["./test/global-setup.ts"],
      setupFiles: ["./test/apply-migrations.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
});
