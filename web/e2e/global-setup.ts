/**
 * Starts what the browser tests run against: the fixture hub (local CT logs, RDAP
 * server, DoH resolver: test/fixtures), then the service exactly as the README
 * says (`npm start`), on a free port, with a fresh local state directory and its
 * external URLs pointed at the hub (service.ts). The tests receive the base URL by
 * `inject`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startHub } from "../../test/fixtures/hub.js";
import { assertSharedData } from "../../test/fixtures/shared-data-dir.js";
import { prepareHub, type HubSetup } from "./seed";
import { hubEnv, startService } from "./service";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    hubUrl: string;
    /** The hub's CT logs and DoH namespace the service reads (seed.ts HubSetup). */
    hubSetup: HubSetup;
    /** The service's local state (TRUST_PLANE_STATE_DIR). */
    stateDir: string;
    /** What npm start printed until the service answered (its start-up lines). */
    startLog: string;
  }
}

export default async function setup(project: TestProject) {
  assertSharedData();
  const hub = await startHub();
  // The CT logs, log list and DoH namespace "web" the service reads (seed.ts prepareHub).
  const logs = await prepareHub(hub.url, "web");
  const stateDir = mkdtempSync(join(tmpdir(), "trust-plane-web-"));
  const cleanUp = async () => {
    await hub.close();
    rmSync(stateDir, { recursive: true, force: true });
  };
  let service;
  try {
    service = await startService({ stateDir, env: hubEnv(hub.url, logs) });
  } catch (e) {
    await cleanUp();
    throw e;
  }
  project.provide("baseUrl", service.baseUrl);
  project.provide("hubUrl", hub.url);
  project.provide("hubSetup", logs);
  project.provide("stateDir", stateDir);
  project.provide("startLog", service.log());

  return async () => {
    await service.stop();
    await cleanUp();
  };
}
