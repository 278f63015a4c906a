/**
 * Quiet logs for `npm start` (docs/development.md, "Running it locally").
 *
 * The service logs an outside source's failure itself, classified, one line per source and
 * error class per ten minutes (`[source] ...`, src/platform/collection/log.ts). Below it,
 * workerd reports every outbound connection whose name does not resolve as an ERROR block
 * with a native stack ("kj/async-io-unix.c++: failed: DNS lookup failed.; params.host =
 * ..."), even when the Worker catches the failure: with no internet, every CT log and
 * resolver the service reads printed one, hundreds an hour. workerd has no option to
 * lower that message alone (only --verbose raises everything), and catching it in the
 * Worker does not stop it; wrangler prints it through `console.error`. So the launcher
 * counts those blocks instead of printing them, and says every ten minutes how many it
 * did not print and for which hosts: nothing is dropped silently. Every other line passes
 * unchanged.
 *
 * wrangler also fetches the `Request.cf` object from workers.cloudflare.com at each start
 * (a warning with a stack when offline); the service never reads `request.cf`, so the
 * fetch is off unless CLOUDFLARE_CF_FETCH_ENABLED says otherwise.
 */

const RUNTIME_DNS_FAILURE = /kj\/async-io-unix\.c\+\+:\d+: failed: DNS lookup failed\.; params\.host = ([^;\s]+)/;
const ANSI = /\x1b\[[0-9;]*m/g;
export const RUNTIME_SUMMARY_INTERVAL_MS = 10 * 60_000;

/**
 * Installs the filter on `console.error`; returns a function that prints the summary of
 * what was held back (also called every RUNTIME_SUMMARY_INTERVAL_MS) and one that removes it.
 */
export function quietRuntimeLog({ log = console.log, intervalMs = RUNTIME_SUMMARY_INTERVAL_MS } = {}) {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const held = new Map();
  const original = console.error;
  console.error = (...args) => {
    const m = RUNTIME_DNS_FAILURE.exec(args.map(String).join(" ").replace(ANSI, ""));
    if (!m) return original.apply(console, args);
    held.set(m[1], (held.get(m[1]) ?? 0) + 1);
  };
  const summarize = () => {
    if (!held.size) return;
    const total = [...held.values()].reduce((a, b) => a + b, 0);
    const hosts = [...held.entries()].sort((a, b) => b[1] - a[1]);
    const shown = hosts.slice(0, 10).map(([h, n]) => `${h} (${n})`).join(", ") + (hosts.length > 10 ? ` and ${hosts.length - 10} more hosts` : "");
    log(`[start] workerd reported ${total} failed DNS lookups since the last summary, not printed one by one: ${shown}. The service's own [source] lines say which of its sources failed and why.`);
    held.clear();
  };
  const timer = setInterval(summarize, intervalMs);
  timer.unref?.();
  return {
    summarize,
    restore() {
      clearInterval(timer);
      console.error = original;
    },
  };
}
