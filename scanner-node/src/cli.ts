// scanner-node command line.
//   scan <host>:<port> [--sni <name>] [--starttls smtp|imap|pop3|ftp|ldap|xmpp|postgres] [--root-ca <file>]
//        [--cn <monitor cn>] [--timeout <ms>] [--per-target <n>] [--interval <ms>] [--mozilla 5.7|5.8|6.0]
//   agent --api <url> --token <agent token> [--concurrency 20] [same scan tuning flags]
//        (or TRUST_PLANE_API_URL / TRUST_PLANE_AGENT_TOKEN)
import { readFileSync } from "node:fs";
import { runAgentProcess } from "./agent";
import { scanTarget, type ScanOptions } from "./scan";
import { STARTTLS_PROTOCOLS, type StartTlsProtocol } from "./tls/starttls";

const USAGE = `usage:
  scan <host>:<port> [--sni <name>] [--starttls ${STARTTLS_PROTOCOLS.join("|")}] [--root-ca <file>] [--cn <name>]
       [--timeout <ms>] [--per-target <n>] [--interval <ms>] [--mozilla <version>]
  agent --api <url> --token <token> [--concurrency <n>] [--timeout <ms>] [--per-target <n>] [--interval <ms>]`;

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

function scanOptions(flags: Record<string, string>): ScanOptions {
  const num = (k: string) => (flags[k] !== undefined ? Number(flags[k]) : undefined);
  return {
    timeoutMs: num("timeout"),
    budget: { maxConcurrent: num("per-target"), minIntervalMs: num("interval") },
    mozillaVersion: flags.mozilla,
  };
}

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  const { positional, flags } = parseArgs(rest);
  if (mode === "scan") {
    if (positional.length !== 1) { console.error(USAGE); return 2; }
    const { host, port } = parseHostPort(positional[0]);
    const starttls = flags.starttls as StartTlsProtocol | undefined;
    if (starttls && !STARTTLS_PROTOCOLS.includes(starttls)) { console.error(`unknown --starttls ${starttls}\n${USAGE}`); return 2; }
    const rootCaPem = flags["root-ca"] ? readFileSync(flags["root-ca"], "utf8") : null;
    const result = await scanTarget({ host, port, sni: flags.sni ?? null, starttls: starttls ?? null, rootCaPem, monitorCn: flags.cn }, scanOptions(flags));
    process.stdout.write(JSON.stringify(result, null, 2) + "\n");
    return 0;
  }
  if (mode === "agent") {
    const apiUrl = flags.api ?? process.env.TRUST_PLANE_API_URL;
    const token = flags.token ?? process.env.TRUST_PLANE_AGENT_TOKEN;
    if (!apiUrl || !token) { console.error(`agent needs --api and --token\n${USAGE}`); return 2; }
    const stats = await runAgentProcess({
      apiUrl, token, concurrency: flags.concurrency ? Number(flags.concurrency) : undefined, scan: scanOptions(flags),
      log: (m) => console.error(`[scanner-agent] ${m}`),
    });
    console.error(`[scanner-agent] stopped: ${JSON.stringify(stats)}`);
    return 0;
  }
  console.error(USAGE);
  return 2;
}

if (process.argv[1] && /cli\.[mc]?[jt]s$/.test(process.argv[1])) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => { console.error(`error: ${(e as Error).message}`); process.exit(1); });
}
