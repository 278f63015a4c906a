/** vitest globalSetup: starts the fixture hub in Node and provides its URLs to the pool. */
import type { TestProject } from "vitest/node";
import { startHub } from "./fixtures/hub.js";
import { assertSharedData } from "./fixtures/shared-data-dir.js";

export default async function setup(project: TestProject) {
  assertSharedData();
  const hub = await startHub();
  for (const [k, v] of Object.entries(hub.provided)) project.provide(k as never, v as never);
  return async () => hub.close();
}
