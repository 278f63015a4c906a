/**
 * The declared test runtime groups (test/runtime-groups.ts) and the check that keeps them
 * honest. The signal texts below are spelled in pieces: written whole, they would make this
 * very file look like one that needs a runtime of its own.
 */
import { describe, expect, it } from "vitest";
import { ALONE, misplacedTestFiles, OWN_RUNTIME } from "../runtime-groups";

const runsJobs = ["await run", "Scheduled(env, ctx)"].join("");
const stopsLab = ["await stop", "Lab(lab)"].join("");
const harnessSignal = ['from "./poll', '-helpers"'].join("");
const jobHarness = `import { poll } ${harnessSignal};`;
const declared = { ownRuntime: ["test/a/jobs.test.ts"], alone: ["test/a/lab.test.ts"] };
const files = (extra: { file: string; text: string }[] = []) => [
  { file: "test/a/jobs.test.ts", text: runsJobs },
  { file: "test/a/lab.test.ts", text: `${stopsLab}\n${runsJobs}` },
  { file: "test/a/api.test.ts", text: 'import { api } from "../helpers";' },
  ...extra,
];

describe("test runtime groups", () => {
  it("accepts files that sit in their declared group; a shared file may use test/helpers.ts", () => {
    expect(misplacedTestFiles(files(), declared)).toEqual([]);
  });

  it("names a shared file that runs scheduled work or imports a job harness, with the signal and where to declare it", () => {
    const problems = misplacedTestFiles(files([{ file: "test/a/new.test.ts", text: runsJobs }, { file: "test/b/poll.test.ts", text: jobHarness }]), declared);
    expect(problems).toEqual([
      `test/a/new.test.ts runs scheduled work or its harness ("${runsJobs.slice("await ".length, -"(env, ctx)".length)}") in the shared runtime: declare it in OWN_RUNTIME (test/runtime-groups.ts)`,
      `test/b/poll.test.ts runs scheduled work or its harness ("${harnessSignal}") in the shared runtime: declare it in OWN_RUNTIME (test/runtime-groups.ts)`,
    ]);
  });

  it("names a file that stops the lab outside ALONE, even when it is declared OWN_RUNTIME", () => {
    const problems = misplacedTestFiles([{ file: "test/a/jobs.test.ts", text: stopsLab }, ...files().slice(1)], declared);
    expect(problems).toEqual(["test/a/jobs.test.ts stops a shared counterpart (stopLab): declare it in ALONE (test/runtime-groups.ts)"]);
  });

  it("names a declared file that does not exist and one declared twice", () => {
    const problems = misplacedTestFiles(files(), { ownRuntime: [...declared.ownRuntime, "test/a/gone.test.ts", "test/a/lab.test.ts"], alone: declared.alone });
    expect(problems).toEqual([
      "test/a/gone.test.ts is declared in test/runtime-groups.ts but does not exist",
      "test/a/lab.test.ts is declared both OWN_RUNTIME and ALONE",
    ]);
  });

  it("declares each file once", () => {
    const all = [...OWN_RUNTIME, ...ALONE];
    expect(new Set(all).size).toBe(all.length);
    expect(all.every((f) => f.endsWith(".test.ts"))).toBe(true);
  });
});
