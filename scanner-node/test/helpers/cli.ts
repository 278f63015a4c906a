// The shipped scanner: dist/cli.js, built by `npm test` (build.mjs) before the tests run.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** The compiled CLI's path; a clear failure when it was not built. */
export function builtCli(): string {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm --prefix scanner-node run build\` (npm test does it)`);
  return CLI;
}
