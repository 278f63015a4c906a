/**
 * The browser side shared by the browser tests (helpers.ts) and `npm run bench:web`:
 * Debian's chromium with the same flags, and the API called as the console calls it.
 * Plain Node, no vitest.
 */
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import type { Api } from "./seed";

/** The password of every account the tests and the benchmark create. */
export const PASSWORD = "correct horse battery staple";
/** The header the console sends with every API call (its session is a cookie). */
export const CONSOLE = { "X-TrustPlane-Console": "1" };

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Debian's chromium (CHROMIUM_PATH to use another); playwright gives every launch a fresh profile directory of its own. */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
}

/** The API as the console calls it, with the session cookie of `context`; a body that is not JSON comes back as text. */
export function contextApi(context: BrowserContext): Api {
  return async (method, path, body) => {
    const r = await context.request.fetch(path, { method, headers: CONSOLE, data: body === undefined ? undefined : body });
    const text = await r.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: r.status(), body: parsed };
  };
}
