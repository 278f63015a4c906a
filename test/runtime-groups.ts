/**
 * Which Workers test files share a runtime: declared here, read by vitest.config.mts.
 *
 * - **shared-runtime** (every file not listed below): the files of a vitest worker share
 *   one runtime (`isolate: false`), which loads the Worker's module graph once instead of
 *   once per file (about 12 s each). They must not depend on what other files leave in
 *   the shared D1.
 * - **own-runtime** (`OWN_RUNTIME`): files that run the service's scheduled work, which
 *   acts on every organization's data (due domains, job intervals, outboxes), or use the
 *   harnesses that do: what another file left in a shared D1 would change their outcome.
 * - **alone** (`ALONE`): files that take a shared counterpart away for a while (stop the
 *   DNS lab's resolver processes). Every other file using it would fail meanwhile, so they
 *   run after all others, one at a time.
 *
 * A new file is shared unless it is listed. `misplacedTestFiles()` keeps the list honest:
 * vitest.config.mts refuses to start when a shared file shows the signals of scheduled
 * work, a file that is not `ALONE` stops the lab, or a listed file does not exist.
 * (No Node imports here: test/platform/runtime-groups.test.ts runs this inside workerd.)
 */
export const OWN_RUNTIME: readonly string[] = [
  "test/admin/heartbeat.test.ts",
  "test/alerting/delivery.test.ts",
  "test/alerting/evaluation.test.ts",
  "test/alerting/suppression.test.ts",
  "test/cert-watcher/agents.test.ts",
  "test/cert-watcher/collection.test.ts",
  "test/cert-watcher/contract.test.ts",
  "test/cert-watcher/monitors.test.ts",
  "test/cert-watcher/pure.test.ts",
  "test/ct-log/collection.test.ts",
  "test/ct-log/cursor-run.test.ts",
  "test/ct-log/ingest-backlog.test.ts",
  "test/ct-log/ingest-e2e.test.ts",
  "test/ct-log/ingest-faults.test.ts",
  "test/ct-log/ingest-store.test.ts",
  "test/ct-log/lookalikes-ct-e2e.test.ts",
  "test/ct-log/lookalikes-lifecycle.test.ts",
  "test/ct-log/proposals.test.ts",
  "test/ct-log/typosquat-e2e.test.ts",
  "test/dns-watcher/domain-api.test.ts",
  "test/dns-watcher/email-servers.test.ts",
  "test/dns-watcher/run-cost.test.ts",
  "test/dns-watcher/run-faults.test.ts",
  "test/dns-watcher/run-schedule.test.ts",
  "test/dns-watcher/spf-watch.test.ts",
  "test/inventory/lifecycle-e2e.test.ts",
  "test/platform/scheduler.test.ts",
  "test/rdap/api.test.ts",
  "test/rdap/collection.test.ts",
  "test/rdap/faults.test.ts",
  "test/rdap/poll.test.ts",
  "test/reports/api.test.ts",
  "test/reports/category-status.test.ts",
  "test/reports/email.test.ts",
  "test/reports/freshness.test.ts",
  "test/reports/period-end.test.ts",
  "test/reports/plans.test.ts",
  "test/reports/scenario.test.ts",
  "test/reports/weekly.test.ts",
];

export const ALONE: readonly string[] = ["test/dns-watcher/collection.test.ts", "test/dns-watcher/email-watch.test.ts", "test/dns-watcher/watch.test.ts"];

/**
 * What gives a file away as one that needs a runtime of its own: it runs scheduled work
 * (the handler, a job, the weekly report, an outbox), deletes rows wholesale, or imports a
 * module test harness that does (a `helpers`, `lab`, `ingest-helpers` or `poll-helpers`
 * of its own directory or a sibling one; not `test/helpers.ts`).
 */
export const RUNS_SHARED_JOBS =
  /scheduled\(|runScheduled|createScheduledController|runDnsWatch|pollRdap|generateWeekly|weeklyReportJob|deliverPending|forgetWatchedDomains|DELETE FROM|cron|from "(?:\.\/|\.\.\/[\w-]+\/)(?:helpers|lab|ingest-helpers|poll-helpers)"/;
/** What gives a file away as one that takes a counterpart away from the others. */
export const TAKES_COUNTERPARTS_AWAY = /stopLab\(/;

export interface DeclaredGroups {
  ownRuntime: readonly string[];
  alone: readonly string[];
}

/**
 * Every disagreement between the declaration and the files, one sentence each (empty: the
 * declaration holds). Pure over (file, text) pairs, so it is tested without a file system.
 */
export function misplacedTestFiles(files: readonly { file: string; text: string }[], declared: DeclaredGroups): string[] {
  const problems: string[] = [];
  const present = new Set(files.map((f) => f.file));
  const own = new Set(declared.ownRuntime);
  const alone = new Set(declared.alone);
  for (const f of [...own, ...alone]) if (!present.has(f)) problems.push(`${f} is declared in test/runtime-groups.ts but does not exist`);
  for (const f of own) if (alone.has(f)) problems.push(`${f} is declared both OWN_RUNTIME and ALONE`);
  for (const { file, text } of files) {
    if (TAKES_COUNTERPARTS_AWAY.test(text) && !alone.has(file)) {
      problems.push(`${file} stops a shared counterpart (stopLab): declare it in ALONE (test/runtime-groups.ts)`);
    } else if (RUNS_SHARED_JOBS.test(text) && !own.has(file) && !alone.has(file)) {
      const signal = text.match(RUNS_SHARED_JOBS)![0];
      problems.push(`${file} runs scheduled work or its harness ("${signal}") in the shared runtime: declare it in OWN_RUNTIME (test/runtime-groups.ts)`);
    }
  }
  return problems;
}
