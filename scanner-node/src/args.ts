// Command-line parsing of scanner-node: pure, no I/O.
import type { ScanOptions } from "./scan";

export function parseArgs(argv: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const [k, v] = a.slice(2).split("=", 2);
      if (v !== undefined) flags[k] = v;
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[k] = argv[++i];
      else flags[k] = "true";
    } else positional.push(a);
  }
  return { positional, flags };
}

/** "host:port", "[v6]:port", or "host" (port 443). */
export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
  if (!m) throw new Error(`bad target ${JSON.stringify(s)}: expected host:port`);
  const port = m[2] ? Number(m[2]) : 443;
  if (!(port >= 1 && port <= 65535)) throw new Error(`bad port in ${JSON.stringify(s)}`);
  return { host: m[1], port };
}

/** The scan tuning flags shared by `scan` and `agent`. */
export function scanOptions(flags: Record<string, string>): ScanOptions {
  const num = (k: string) => (flags[k] !== undefined ? Number(flags[k]) : undefined);
  return {
    timeoutMs: num("timeout"),
    budget: { maxConcurrent: num("per-target"), minIntervalMs: num("interval") },
    mozillaVersion: flags.mozilla,
  };
}
