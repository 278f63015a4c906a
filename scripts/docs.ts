/**
 * `npm run docs:generate` writes the parts of docs/ that are derived from the code;
 * `npm run check:docs` (part of `npm test`) fails when they are stale, and also when
 * a document cites a file the repository does not contain, when a relative link in
 * the docs points nowhere, or when a configuration variable of src/env.ts is missing
 * from docs/configuration.md.
 *
 * Derived parts, each between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`:
 *   endpoints  in docs/modules/<folder>.md: one row per route declared in
 *              src/modules/<folder>/routes.ts: method, path, permission, the route's
 *              export, the service functions its handler calls, the tests that call
 *              the path.
 *   variables  in docs/modules/<module>.md of the four monitoring modules: the CEL
 *              variables of the module's event (the list introspection serves).
 *
 * Route files are read as text (they cannot be imported outside workerd), so this
 * relies on the one shape every route file has: `export const x = defineRoute({
 * method, path, ... })` and `app.openapi(x, handler)`. The check compares everything
 * but the tests column, which moves whenever a test is added.
 */
import { readdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MODULES_DIR = join(ROOT, "src/modules");
const DOCS = join(ROOT, "docs");
const MONITORING_MODULES = ["ct-log", "dns-watcher", "rdap", "cert-watcher"] as const;

const read = (p: string) => readFileSync(p, "utf8");
const rel = (p: string) => relative(ROOT, p).split("\\").join("/");

function walk(dir: string, keep: (p: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, keep, out);
    else if (keep(p)) out.push(p);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Routes, read from the route files.

interface Route {
  folder: string;
  method: string;
  path: string;
  permission: string;
  exportName: string;
  routeFile: string;
  services: string[];
  tests: string[];
}

/** The text of the balanced `(...)`/`{...}` group that starts at `open`. */
function balanced(text: string, open: number): string {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    else if (pairs[ch]) stack.push(pairs[ch]!);
    else if (ch === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return text.slice(open, i + 1);
    }
  }
  throw new Error(`unbalanced group at ${open}`);
}

/** `const NAME = <literal or template>` of the file, for path and access references. */
function constants(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/const (\w+) = ("[^"]*"|`[^`]*`|\{[^;\n]*\})(?: as const)?;/g)) out.set(m[1]!, m[2]!);
  return out;
}

function resolvePath(expr: string, consts: Map<string, string>): string {
  const e = expr.trim();
  if (e.startsWith('"')) return e.slice(1, -1);
  if (e.startsWith("`")) {
    return e.slice(1, -1).replace(/\$\{(\w+)\}/g, (_, name: string) => (name === "m" ? "{module}" : resolvePath(consts.get(name) ?? `"{${name}}"`, consts)));
  }
  const c = consts.get(e);
  if (c) return resolvePath(c, consts);
  if (/^\w+\.path$/.test(e)) return `{${e}}`;
  throw new Error(`cannot read the path expression ${e}`);
}

function describeAccess(block: string, consts: Map<string, string>): string {
  const m = /access:\s*(\{[^}]*\}|\w+(?:\("[^"]*"\))?)/.exec(block);
  if (!m) return "?";
  let a = m[1]!;
  const call = /^p\("([^"]+)"\)$/.exec(a);
  if (call) return `\`{module}:${call[1]}\``;
  if (/^\w+$/.test(a)) a = consts.get(a) ?? a;
  if (a.includes("public")) return "none";
  if (a.includes("authenticated")) return "any bearer";
  if (a.includes("session")) return "a login session";
  const anyOf = /anyOf:\s*\[([^\]]*)\]/.exec(a);
  if (anyOf) return [...anyOf[1]!.matchAll(/"([^"]+)"/g)].map((x) => `\`${x[1]}\``).join(" or ");
  const perm = /permission:\s*"([^"]+)"/.exec(a);
  return perm ? `\`${perm[1]}\`` : a;
}

/** Local imports of a route file: namespace (`import * as x from "./f"`) and named ones. */
function localImports(text: string, dir: string): Map<string, { file: string; named: boolean }> {
  const out = new Map<string, { file: string; named: boolean }>();
  for (const m of text.matchAll(/import \* as (\w+) from "(\.\/[^"]+)";/g)) out.set(m[1]!, { file: rel(join(dir, `${m[2]}.ts`)), named: false });
  for (const m of text.matchAll(/import \{([^}]+)\} from "(\.\/[^"]+)";/g)) {
    for (const part of m[1]!.split(",")) {
      const name = part.trim().replace(/^type\s+.*/, "").split(/\s+as\s+/).pop()!.trim();
      if (name) out.set(name, { file: rel(join(dir, `${m[2]}.ts`)), named: true });
    }
  }
  return out;
}

function handlerCalls(handler: string, imports: Map<string, { file: string; named: boolean }>): string[] {
  const found: string[] = [];
  for (const m of handler.matchAll(/\b(\w+)(?:\.(\w+))?\(/g)) {
    const imp = imports.get(m[1]!);
    if (!imp || imp.file.endsWith("/schema.ts")) continue;
    const label = imp.named ? `${imp.file} \`${m[1]}\`` : m[2] ? `${imp.file} \`${m[2]}\`` : null;
    if (label && !found.includes(label)) found.push(label);
  }
  return found;
}

/** Every route of a module: its routes.ts and those of its sub-folders (e.g. auth/mfa/routes.ts). */
function routesOf(folder: string): Route[] {
  return walk(join(MODULES_DIR, folder), (p) => p.endsWith("/routes.ts"))
    .sort()
    .flatMap((file) => routesOfFile(folder, file));
}

function routesOfFile(folder: string, file: string): Route[] {
  const text = read(file);
  const consts = constants(text);
  const imports = localImports(text, dirname(file));
  // Handlers: `app.openapi(NAME, ...)` up to the next registration or the end.
  const handlers = new Map<string, string>();
  const regs = [...text.matchAll(/app\.openapi\(\s*(?:\w+\.)?(\w+),/g)];
  regs.forEach((m, i) => handlers.set(m[1]!, text.slice(m.index!, regs[i + 1]?.index ?? text.length)));
  const routes: Route[] = [];
  for (const m of text.matchAll(/(\w+)\s*[:=]\s*defineRoute\(/g)) {
    const block = balanced(text, m.index! + m[0].length - 1);
    const method = /method:\s*"(\w+)"/.exec(block)?.[1];
    const pathExpr = /path:\s*("[^"]*"|`[^`]*`|\w+(?:\.path)?)/.exec(block)?.[1];
    if (!method || !pathExpr) throw new Error(`${rel(file)}: ${m[1]} has no literal method/path`);
    routes.push({
      folder, method: method.toUpperCase(), path: resolvePath(pathExpr, consts), permission: describeAccess(block, consts),
      exportName: m[1]!, routeFile: rel(file), services: handlerCalls(handlers.get(m[1]!) ?? "", imports), tests: [],
    });
  }
  // Plain Hono routes and the OpenAPI document (no defineRoute declaration).
  for (const m of text.matchAll(/app\.(get|doc31)\(\s*"(\/api\/[^"]+)"/g)) {
    routes.push({ folder, method: "GET", path: m[2]!, permission: "none", exportName: "(inline)", routeFile: rel(file), services: [], tests: [] });
  }
  return routes;
}

function pathPattern(path: string): RegExp {
  const segment = String.raw`(?:\$\{[^}]*\}|\{\w+\}|[\w.%:@-]+)`;
  const body = path
    .split(/(\{[^}]+\})/)
    .map((part) =>
      part === "{module}"
        ? `(?:${MONITORING_MODULES.join("|")}|\\$\\{[^}]*\\})`
        : part.startsWith("{")
          ? segment
          : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"),
    )
    .join("");
  return new RegExp(`${body}(?=["'\`?#]|$)`, "m");
}

/** A test file's text with its path constants (`const M = "/api/..."`) written out. */
function expandPathConstants(text: string): string {
  const consts = new Map<string, string>();
  for (const m of text.matchAll(/const (\w+) = ["`](\/api\/[^"`]*)["`]/g)) consts.set(m[1]!, m[2]!);
  return consts.size === 0 ? text : text.replace(/\$\{(\w+)\}/g, (all, name: string) => consts.get(name) ?? all);
}

/** The test files that call each route's path, those of the route's own module first. */
function attachTests(routes: Route[]) {
  const files = [
    ...walk(join(ROOT, "test"), (p) => /\.test\.ts$/.test(p) && !p.includes("/test/security/")),
    ...walk(join(ROOT, "web/e2e"), (p) => p.endsWith(".e2e.ts")),
    ...walk(join(ROOT, "scanner-node/test"), (p) => p.endsWith(".test.ts")),
  ].map((p) => ({ p: rel(p), text: expandPathConstants(read(p)) }));
  for (const r of routes) {
    const re = new RegExp(pathPattern(r.path).source, "gm");
    const own = (p: string) => (p.startsWith(`test/${r.folder}/`) ? 0 : 1);
    r.tests = files
      .map((f) => ({ p: f.p, hits: f.text.match(re)?.length ?? 0 }))
      .filter((f) => f.hits > 0)
      .sort((a, b) => own(a.p) - own(b.p) || b.hits - a.hits || a.p.localeCompare(b.p))
      .slice(0, 3)
      .map((f) => f.p);
  }
}

function endpointTable(routes: Route[], withTests: boolean): string {
  const head = withTests
    ? "| Method | Path | Permission | Route | Service | Tests |\n|---|---|---|---|---|---|"
    : "| Method | Path | Permission | Route | Service |\n|---|---|---|---|---|";
  const rows = routes.map((r) => {
    const cells = [r.method, `\`${r.path}\``, r.permission, `${r.routeFile} \`${r.exportName}\``, r.services.join("<br>") || "(in the route)"];
    if (withTests) cells.push(r.tests.join("<br>") || "only the generic suites");
    return `| ${cells.join(" | ")} |`;
  });
  return [head, ...rows].join("\n");
}

// ---------------------------------------------------------------------------
// CEL variables, from the one declaration the engine and introspection use.

async function variablesTable(module: string): Promise<string> {
  const { MODULE_VARIABLES } = (await import(join(ROOT, "src/modules/alerting/cel/variables/index.ts"))) as {
    MODULE_VARIABLES: Record<string, { path: string; type: string; description: string }[]>;
  };
  const vars = MODULE_VARIABLES[module];
  if (!vars) throw new Error(`no CEL variables for ${module}`);
  const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
  return ["| Variable | Type | Meaning |", "|---|---|---|", ...vars.map((v) => `| \`${v.path}\` | ${cell(v.type)} | ${cell(v.description)} |`)].join("\n");
}

// ---------------------------------------------------------------------------

function replaceGenerated(text: string, name: string, content: string, file: string): string {
  const re = new RegExp(`(<!-- generated:${name} [^>]*-->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
  if (!re.test(text)) throw new Error(`${file} has no <!-- generated:${name} ... --> block`);
  return text.replace(re, (_, a: string, b: string) => `${a}\n${content}\n${b}`);
}

function generatedBlock(text: string, name: string): string | null {
  const m = new RegExp(`<!-- generated:${name} [^>]*-->([\\s\\S]*?)<!-- /generated:${name} -->`).exec(text);
  return m ? m[1]!.replace(/^\n|\n$/g, "") : null;
}

/** The table without its tests column, for the staleness check. */
const withoutTests = (table: string) => table.split("\n").map((l) => l.replace(/ \| [^|]*\|$/, " |")).join("\n");

async function derived(): Promise<Map<string, Map<string, string>>> {
  const byDoc = new Map<string, Map<string, string>>();
  const folders = readdirSync(MODULES_DIR).filter((f) => statSync(join(MODULES_DIR, f)).isDirectory());
  for (const folder of folders) {
    const routes = routesOf(folder);
    if (routes.length === 0) continue;
    attachTests(routes);
    byDoc.set(`docs/modules/${folder}.md`, new Map([["endpoints", endpointTable(routes, true)]]));
  }
  for (const m of MONITORING_MODULES) {
    const doc = `docs/modules/${m}.md`;
    if (!byDoc.has(doc)) byDoc.set(doc, new Map());
    byDoc.get(doc)!.set("variables", await variablesTable(m));
  }
  return byDoc;
}

// ---------------------------------------------------------------------------
// Checks that need no generation.

/** Documents this repository does not contain, which nothing may cite. */
const FOREIGN_CITATION =
  /ADDENDUM|[Aa]ddendum|trust-plane-api|\b[Ss]pec(?:ification)? "|\b[Tt]he spec(?:ification)?\b|\b[Ss]pec(?:ification)?'s\b|(?:^|\s)\([Ss]pec(?:\)|,| [A-Z0-9])|\b[Ss]pec (?:Limits|tables?|permission)\b/;

function citationProblems(): string[] {
  const exts = /\.(ts|tsx|mts|mjs|js|md|toml|json|sh|css|html)$/;
  const files = [
    ...walk(ROOT, (p) => exts.test(p) && !/package-lock\.json$/.test(p) && !p.includes("/migrations/meta/") && !p.endsWith("/scripts/docs.ts")),
  ];
  const problems: string[] = [];
  for (const f of files) {
    read(f).split("\n").forEach((line, i) => {
      if (FOREIGN_CITATION.test(line)) problems.push(`${rel(f)}:${i + 1}: cites a document outside the repository: ${line.trim().slice(0, 120)}`);
    });
  }
  return problems;
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");

function anchorsOf(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

function linkProblems(): string[] {
  const files = [join(ROOT, "README.md"), ...walk(DOCS, (p) => p.endsWith(".md"))];
  const problems: string[] = [];
  for (const f of files) {
    const text = read(f).replace(/```[\s\S]*?```/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [path, anchor] = m[1]!.split("#") as [string, string | undefined];
      if (/^[a-z]+:/i.test(path)) continue;
      const target = path ? resolve(dirname(f), path) : f;
      if (!existsSync(target)) problems.push(`${rel(f)}: link to ${m[1]} points nowhere`);
      else if (anchor && target.endsWith(".md") && !anchorsOf(target).has(anchor)) problems.push(`${rel(f)}: link to ${m[1]}: no such heading`);
    }
  }
  return problems;
}

function configurationProblems(): string[] {
  const env = read(join(ROOT, "src/env.ts"));
  const bindings = /export interface Bindings \{([\s\S]*?)\n\}/.exec(env)?.[1] ?? "";
  const vars = [...bindings.matchAll(/^\s+([A-Z][A-Z0-9_]+)\?: string;/gm)].map((m) => m[1]!);
  const doc = existsSync(join(DOCS, "configuration.md")) ? read(join(DOCS, "configuration.md")) : "";
  return vars.filter((v) => !doc.includes(`\`${v}\``)).map((v) => `docs/configuration.md: the variable ${v} (src/env.ts) is not documented`);
}

async function main() {
  const check = process.argv.includes("--check");
  const problems: string[] = [];
  for (const [doc, blocks] of await derived()) {
    const file = join(ROOT, doc);
    if (!existsSync(file)) {
      problems.push(`${doc} is missing (src/modules has routes or CEL variables for it): write the guide, then run npm run docs:generate`);
      continue;
    }
    const text = read(file);
    if (check) {
      for (const [name, content] of blocks) {
        const current = generatedBlock(text, name);
        const same = name === "endpoints" ? current !== null && withoutTests(current) === withoutTests(content) : current === content;
        if (!same) problems.push(`${doc}: the ${name} table is stale: run npm run docs:generate`);
      }
    } else {
      let next = text;
      for (const [name, content] of blocks) next = replaceGenerated(next, name, content, doc);
      if (next !== text) {
        writeFileSync(file, next);
        console.log(`wrote ${doc}`);
      }
    }
  }
  if (check) problems.push(...citationProblems(), ...linkProblems(), ...configurationProblems());
  if (problems.length) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
  if (check) console.log("docs: generated tables current, links resolve, every variable documented, no foreign citation");
}

await main();
