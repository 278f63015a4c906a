/**
 * `npm start` runs the CT log cursors in the ingest Worker (wrangler.ingest.toml), in a
 * workerd process of its own, so reading a log never takes the API Worker's thread
 * (scripts/start.mjs). This checks that it really is so, as a user runs it: the
 * cursors' Durable Object storage is the ingest Worker's, none is the API Worker's,
 * and what they read reaches the API Worker's D1 through the CT_CURSOR_DATA
 * entrypoint (the log states and matches the API serves).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, inject, it } from "vitest";
import { BASE, HUB_SETUP, PASSWORD, unique } from "./helpers";

const stateDir = inject("stateDir");

it("the CT log cursors run in the ingest Worker and publish through the API Worker", async () => {
  const signup = await fetch(`${BASE}/api/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ organization_name: `Topology ${unique()}`, email: `topology-${unique()}@example.com`, password: PASSWORD }),
  });
  expect(signup.status, await signup.clone().text()).toBe(201);
  const { token } = (await signup.json()) as { token: string };
  const get = async (path: string) => {
    const r = await fetch(`${BASE}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status, path).toBe(200);
    return r.json() as Promise<any>;
  };

  // Both hub logs were read to their end: states the cursors saved through CT_CURSOR_DATA.
  await expect
    .poll(async () => (await get("/api/ct-log/logs")).logs.filter((l: any) => l.description.includes(HUB_SETUP.tilesLog) || l.description.includes(HUB_SETUP.rfcLog)).map((l: any) => l.verified_position > 0 && l.last_error === null), { timeout: 90_000 })
    .toEqual([true, true]);

  // One Durable Object per log in the ingest Worker's storage, none in the API Worker's.
  const ingestObjects = join(stateDir, "ingest", "v3", "do", "trust-plane-ingest-CtLogCursor");
  expect(readdirSync(ingestObjects).filter((f) => f.endsWith(".sqlite")).length).toBeGreaterThanOrEqual(2);
  expect(existsSync(join(stateDir, "v3", "do", "trust-plane-CtLogCursor"))).toBe(false);
});
