import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ALONE, misplacedTestFiles, OWN_RUNTIME } from "./test/runtime-groups";

/** Workers test files: under test/, and beside the code where a plug-in keeps its own (src/modules/alerting/channels/<kind>/). */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
  );
}
// The runtime groups are declared in test/runtime-groups.ts (what each group is for is
// written there). Checked against the files before anything runs: a shared file that runs
// scheduled work, stops the DNS lab, or a declared file that is gone stops the run here.
const misplaced = misplacedTestFiles(
  [...testFiles("test"), ...testFiles("src")].map((file) => ({ file, text: readFileSync(file, "utf8") })),
  { ownRuntime: OWN_RUNTIME, alone: ALONE },
);
if (misplaced.length) throw new Error(`Test runtime groups (test/runtime-groups.ts) do not match the files:\n- ${misplaced.join("\n- ")}`);
const ownRuntime = [...OWN_RUNTIME];
const alone = [...ALONE];

// Tests run inside workerd with the real bindings of wrangler.toml. The fixture hub
// (test/global-setup.ts) runs in Node; its URLs reach the worker as bindings.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  /** The local counterparts tests deliver to (fixture hub, SMTP sink, a refusing port): exactly these pass the egress policy. */
  const egressAllowlist = (inject: <T>(key: string) => T) =>
    [new URL(inject<string>("fixtureUrl")).host, `127.0.0.1:${inject<number>("smtpSinkPort")}`, `127.0.0.1:${inject<number>("refusingPort")}`].join(",");
  // wrangler.toml serves dist/web as static assets; the API tests do not need the built
  // console (npm test builds it first), only the directory to exist.
  mkdirSync("./dist/web", { recursive: true });
  return {
    plugins: [
      cloudflareTest(({ inject: provided }) => {
        // The hub's values by name: test/global-setup.ts provides whatever its counterparts return.
        const inject = provided as unknown as <T>(key: string) => T;
        return {
          wrangler: { configPath: "./wrangler.toml" },
          miniflare: {
            bindings: {
              TEST_MIGRATIONS: migrations,
              // Tests move a request's clock with the X-Trust-Plane-Now header (src/platform/clock.ts).
              ALLOW_CLOCK_OVERRIDE: "true",
              // The tests stand in for Cloudflare's edge: each call sets CF-Connecting-IP
              // (test/helpers.ts), as the edge would. A test checks it is ignored without this.
              TRUST_CF_CONNECTING_IP: "true",
              EGRESS_ALLOWLIST: egressAllowlist(inject),
              REFUSING_PORT: String(inject<number>("refusingPort") ?? ""),
              FIXTURE_URL: inject<string>("fixtureUrl"),
              SMTP_SINK_PORT: String(inject<number>("smtpSinkPort") ?? ""),
              // External services point at the local counterparts of the fixture hub.
              RDAP_BOOTSTRAP_URL: `${inject<string>("fixtureUrl")}/rdap/bootstrap.json`,
              DOH_RESOLVER_URLS: `${inject<string>("fixtureUrl")}/doh/default/dns-query`,
              // Incident tools' endpoints: the providers' local receivers (test/fixtures/servers/providers.ts).
              PAGERDUTY_EVENTS_URL: `${inject<string>("fixtureUrl")}/providers/pagerduty/v2/enqueue`,
              PAGERDUTY_EU_EVENTS_URL: `${inject<string>("fixtureUrl")}/providers/pagerduty/eu/v2/enqueue`,
              OPSGENIE_API_URL: `${inject<string>("fixtureUrl")}/providers/opsgenie`,
              OPSGENIE_EU_API_URL: `${inject<string>("fixtureUrl")}/providers/opsgenie/eu`,
              // An empty signed log list: cron runs never reach for the public CT logs.
              CT_LOG_LIST_URL: inject<string>("ctLogListUrl"),
              CT_LOG_LIST_PUBLIC_KEY: inject<string>("ctLogListKeyPem"),
            },
          },
        };
      }),
    ],
    test: {
      projects: [
        { extends: true as const, test: { name: "shared-runtime", include: ["test/**/*.test.ts", "src/**/*.test.ts"], exclude: [...ownRuntime, ...alone], isolate: false } },
        { extends: true as const, test: { name: "own-runtime", include: ownRuntime } },
        // A later group: vitest starts it once both groups above are done, one file at a
        // time (two files stopping the same lab's resolvers must not overlap either).
        { extends: true as const, test: { name: "alone", include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } } },
      ],
      globalSetup: ["./test/global-setup.ts"],
      setupFiles: ["./test/apply-migrations.ts"],
      // Two test files at once even on a 2-core machine (vitest would take cores - 1 = 1):
      // most of a file's time is its runtime starting and waiting on local servers, so the
      // second file fills the idle core (measured: 14.5 min with another test suite running
      // beside it, against 15.3 min one file at a time on a quieter machine).
      maxWorkers: 2,
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
});
