#!/usr/bin/env node
// Lists the largest functions and methods of the TypeScript sources, by lines:
//   node scripts/function-sizes.mjs [--top N] [dir ...]     (default: src durable-objects scanner-node/src)
// Used to keep an eye on functions that grow into modules (issue 9 measured before/after with it).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 15;
const roots = args.length ? args : ["src", "durable-objects", "scanner-node/src"];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts") && !name.includes(".generated.")) yield p;
  }
}

const found = [];
for (const root of roots) {
  for (const file of files(root)) {
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node, owner) => {
      if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const name = node.name?.getText?.() ?? owner ?? "(anonymous)";
        found.push({ where: `${relative(process.cwd(), file)}:${start}`, name, lines: end - start + 1 });
      }
      const nextOwner = ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node) ? node.name.getText() : owner;
      ts.forEachChild(node, (child) => visit(child, nextOwner));
    };
    visit(sf, undefined);
  }
}
found.sort((a, b) => b.lines - a.lines);
for (const f of found.slice(0, top)) console.log(`${String(f.lines).padStart(5)}  ${f.name}  ${f.where}`);
