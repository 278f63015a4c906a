// scanner-node command line (shipped compiled: dist/cli.js, built by build.mjs).
//   scan <host>:<port> [--sni <name>] [--starttls smtp|imap|pop3|ftp|ldap|xmpp|postgres] [--root-ca <file>]
//        [--cn <monitor cn>] [--timeout <ms>] [--per-target <n>] [--interval <ms>] [--mozilla 5.7|5.8|6.0]
//   agent --api <url> --token <agent token> [--concurrency 20] [same scan tuning flags]
//        (or TRUST_PLANE_API_URL / TRUST_PLANE_AGENT_TOKEN)
//   --version
// A one-shot scan loads only what scanning needs; the agent (and the contract's runtime
// schemas with it) is imported on demand, so `scan` starts as fast as node itself allows.
import { readFileSync, writeSync } from "node:fs";
import { parseArgs, parseHostPort, scanOptions } from "./args";
import { scanTarget } from "./scan";
import { STARTTLS_PROTOCOLS, type StartTlsProtocol } from "./tls/starttls";

const USAGE = `usage:
  scan <host>:<port> [--sni <name>] [--starttls ${STARTTLS_PROTOCOLS.join("|")}] [--root-ca <file>] [--cn <name>]
       [--timeout <ms>] [--per-target <n>] [--interval <ms>] [--mozilla <version>]
  agent --api <url> --token <token> [--concurrency <n>] [--timeout <ms>] [--per-target <n>] [--interval <ms>]
  --version`;

/**
 * Writes to stdout synchronously on the file descriptor: setting up process.stdout as a
 * stream costs a one-shot run more than the write itself. A non-blocking pipe that is
 * full (EAGAIN) gets the rest through the stream.
 */
function writeOut(text: string): void {
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(1, bytes, done);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
    process.stdout.write(bytes.subarray(done));
  }
}

/** The package version (package.json sits one level above src/ and dist/ alike). */
function version(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

async function scan(rest: string[]): Promise<number> {
  const { positional, flags } = parseArgs(rest);
  if (positional.length !== 1) { console.error(USAGE); return 2; }
  const { host, port } = parseHostPort(positional[0]);
  const starttls = flags.starttls as StartTlsProtocol | undefined;
  if (starttls && !STARTTLS_PROTOCOLS.includes(starttls)) { console.error(`unknown --starttls ${starttls}\n${USAGE}`); return 2; }
  const rootCaPem = flags["root-ca"] ? readFileSync(flags["root-ca"], "utf8") : null;
  const result = await scanTarget({ host, port, sni: flags.sni ?? null, starttls: starttls ?? null, rootCaPem, monitorCn: flags.cn }, scanOptions(flags));
  writeOut(JSON.stringify(result, null, 2) + "\n");
  return 0;
}

async function agent(rest: string[]): Promise<number> {
  const { flags } = parseArgs(rest);
  const apiUrl = flags.api ?? process.env.TRUST_PLANE_API_URL;
  const token = flags.token ?? process.env.TRUST_PLANE_AGENT_TOKEN;
  if (!apiUrl || !token) { console.error(`agent needs --api and --token\n${USAGE}`); return 2; }
  const { runAgentProcess } = await import("./agent.js");
  const stats = await runAgentProcess({
    apiUrl, token, concurrency: flags.concurrency ? Number(flags.concurrency) : undefined, scan: scanOptions(flags),
    log: (m) => console.error(`[scanner-agent] ${m}`),
  });
  console.error(`[scanner-agent] stopped: ${JSON.stringify(stats)}`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === "--version" || mode === "version") { writeOut(`${version()}\n`); return 0; }
  if (mode === "scan") return scan(rest);
  if (mode === "agent") return agent(rest);
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => { console.error(`error: ${(e as Error).message}`); process.exit(1); });
