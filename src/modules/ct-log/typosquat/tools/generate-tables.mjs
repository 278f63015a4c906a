#!/usr/bin/env node
/**
 * Generates ../unicode-tables.generated.ts from the Unicode 17.0.0 data files
 * (UTS #39 confusables.txt and IdentifierStatus.txt, UCD Scripts.txt,
 * ScriptExtensions.txt, extracted/DerivedNumericType.txt).
 *
 *   node src/modules/ct-log/typosquat/tools/generate-tables.mjs [unicode dir]
 *
 * Default data dir: /work/shared/data/ct/unicode/17.0.0 (provenance: see
 * /work/shared/data/ct/PROVENANCE.md, "unicode/17.0.0": unicode-org/unicodetools
 * @ 2c1309ab2ac1de5c62f09089c8ed6bf6f1d37920, Unicode License v3).
 *
 * Encoding (compact, parsed once at module load by unicode-tables.ts):
 *   CONFUSABLES  "src:t1.t2;..."          hex code points, the whole table (6,565 mappings)
 *   CLOSURE      "proto:ascii;..."        prototypes that are themselves lookalikes of one ASCII letter (derived, see below)
 *   SCRIPT_NAMES script short names (index = position)
 *   SCRIPTS      "start-end:idx;..."      hex ranges (end omitted when equal to start), base-36 index
 *   SCRIPT_EXT   "start-end:i.j.k;..."    Script_Extensions sets for the code points that have one
 *   ALLOWED      "start-end;..."          Identifier_Status=Allowed
 *   DECIMAL      "start-end;..."          Numeric_Type=Decimal (blocks of ten digits, zero first)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir =
  process.argv[2] ??
  (process.env.TRUST_PLANE_SHARED_DATA
    ? join(process.env.TRUST_PLANE_SHARED_DATA, "ct/unicode/17.0.0")
    : new URL("../../../../../../shared/data/ct/unicode/17.0.0", import.meta.url).pathname);
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "unicode-tables.generated.ts");

function rows(file) {
  return readFileSync(join(dir, file), "utf8")
    .split("\n")
    .map((l) => l.replace(/#.*/, "").trim())
    .filter(Boolean)
    .map((l) => l.split(";").map((f) => f.trim()));
}
const hex = (n) => n.toString(16);
function range(field) {
  const [a, b] = field.split("..");
  return [parseInt(a, 16), parseInt(b ?? a, 16)];
}
const enc = ([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`);

// Merge adjacent ranges with the same value.
function merged(list) {
  list.sort((x, y) => x[0] - y[0]);
  const outList = [];
  for (const r of list) {
    const last = outList[outList.length - 1];
    if (last && last[1] + 1 === r[0] && last[2] === r[2]) last[1] = r[1];
    else outList.push([...r]);
  }
  return outList;
}

const confusableRows = rows("confusables.txt");
const confusables = confusableRows.map(([src, target]) => `${src.toLowerCase().replace(/^0+/, "")}:${target.split(/\s+/).map((t) => t.toLowerCase().replace(/^0+/, "")).join(".")}`);

/**
 * The transitive closure onto ASCII letters. UTS #39 maps some lowercase letters to a
 * prototype that is no ASCII letter although it looks like one: Cyrillic "ь" -> "ƅ"
 * (tone six), "к" -> "ĸ" (kra), "т" -> "ᴛ" (small capital T), "ԍ" -> "ɢ", "м" -> "ʍ".
 * Their capitals map to ASCII letters in the same data ("Ь" -> "b", "К" -> "K",
 * "Т" -> "T", "Ԍ" -> "G", "М" -> "M"), and DNS labels are case-insensitive: the
 * lowercase form is what a browser shows. So a prototype class (every code point
 * whose skeleton is that one non-ASCII character, and the character itself) whose
 * members' other-case forms map to exactly one ASCII letter or digit is mapped to
 * that letter. Classes reaching two different ASCII characters, or none, are left as
 * the data has them. Derived from confusables.txt alone, nothing is picked by hand.
 */
const proto = new Map(confusableRows.map(([src, target]) => [parseInt(src, 16), String.fromCodePoint(...target.split(/\s+/).map((t) => parseInt(t, 16)))]));
const MARKS = /\p{M}/gu;
/** The skeleton as skeleton.ts computes it (lowercase, NFD, marks dropped, prototypes, until stable). */
function skel(s, lower) {
  let cur = s;
  for (let i = 0; i < 4; i++) {
    let out = "";
    const prep = (x) => (lower ? x.toLowerCase() : x).normalize("NFD").replace(MARKS, "");
    for (const ch of prep(cur)) out += proto.get(ch.codePointAt(0)) ?? ch;
    out = prep(out);
    if (out === cur) break;
    cur = out;
  }
  return cur;
}
const isAsciiLetter = (s) => /^[a-z0-9]$/.test(s);
const classes = new Map(); // non-ASCII one-character skeleton -> members
for (const cp of new Set([...proto.keys(), ...[...proto.values()].flatMap((t) => [...t].map((c) => c.codePointAt(0)))])) {
  const ch = String.fromCodePoint(cp);
  const s = skel(ch, true);
  if ([...s].length !== 1 || s.charCodeAt(0) < 128) continue;
  if (!classes.has(s)) classes.set(s, new Set([s]));
  classes.get(s).add(ch);
}
const closure = [];
const closureNotes = [];
for (const [x, members] of [...classes].sort((a, b) => a[0].codePointAt(0) - b[0].codePointAt(0))) {
  const reached = new Set();
  for (const m of members) {
    for (const other of [m.toUpperCase(), m.toLowerCase()]) {
      if (other === m || [...other].length !== 1) continue;
      const s = skel(other, false).toLowerCase();
      if (isAsciiLetter(s)) reached.add(s);
    }
  }
  if (reached.size === 1) {
    const [letter] = reached;
    closure.push(`${x.codePointAt(0).toString(16)}:${letter.codePointAt(0).toString(16)}`);
    closureNotes.push(`${x}->${letter}`);
  }
}

const confusablesDate = readFileSync(join(dir, "confusables.txt"), "utf8").match(/^# Date: (\d{4}-\d{2}-\d{2})/m)?.[1] ?? "";
const scriptNames = [];
const scriptIdx = (name) => {
  let i = scriptNames.indexOf(name);
  if (i < 0) i = scriptNames.push(name) - 1;
  return i;
};
// Scripts.txt uses long names; ScriptExtensions uses short ones. Map long -> short via the aliases we need.
const scripts = merged(rows("Scripts.txt").map(([f, name]) => [...range(f), scriptIdx(name)]));
const ext = merged(
  rows("ScriptExtensions.txt").map(([f, names]) => [...range(f), names.split(/\s+/).map((n) => n).join(" ")]),
);
// ScriptExtensions.txt names scripts by ISO 15924 code, Scripts.txt by long name (PropertyValueAliases.txt is
// not in the data set): codes whose long name does not start with them are listed; the rest match on the
// first four letters ("Adlm" -> "Adlam"). An unresolved code stays a name of its own.
const CODE_TO_LONG = {
  Latn: "Latin", Grek: "Greek", Cyrl: "Cyrillic", Arab: "Arabic", Hani: "Han", Hira: "Hiragana", Kana: "Katakana",
  Hang: "Hangul", Bopo: "Bopomofo", Hebr: "Hebrew", Armn: "Armenian", Geor: "Georgian", Deva: "Devanagari",
  Beng: "Bengali", Guru: "Gurmukhi", Gujr: "Gujarati", Orya: "Oriya", Taml: "Tamil", Telu: "Telugu", Knda: "Kannada",
  Mlym: "Malayalam", Sinh: "Sinhala", Laoo: "Lao", Tibt: "Tibetan", Mymr: "Myanmar", Ethi: "Ethiopic", Khmr: "Khmer",
  Mong: "Mongolian", Syrc: "Syriac", Thaa: "Thaana", Copt: "Coptic", Glag: "Glagolitic", Yiii: "Yi", Zyyy: "Common", Zinh: "Inherited",
};
const longOf = (code) => CODE_TO_LONG[code] ?? scriptNames.find((n) => n.slice(0, 4).toLowerCase() === code.toLowerCase()) ?? code;
const allowed = merged(rows("IdentifierStatus.txt").filter((r) => r[1] === "Allowed").map(([f]) => [...range(f), 0]));
const decimal = merged(rows("DerivedNumericType.txt").filter((r) => r[1] === "Decimal").map(([f]) => [...range(f), 0]));

const scriptExtText = ext.map((r) => `${enc(r)}:${r[2].split(" ").map((n) => scriptIdx(longOf(n)).toString(36)).join(".")}`).join(";");
const text = `// GENERATED by tools/generate-tables.mjs from Unicode 17.0.0 (confusables.txt, IdentifierStatus.txt,
// Scripts.txt, ScriptExtensions.txt, DerivedNumericType.txt). Do not edit. Unicode License v3:
// https://www.unicode.org/terms_of_use.html  (data: /work/shared/data/ct/PROVENANCE.md)
/* eslint-disable */
export const UNICODE_VERSION = "17.0.0";
export const CONFUSABLES_DATE = ${JSON.stringify(confusablesDate)};
export const CONFUSABLES = ${JSON.stringify(confusables.join(";"))};
/** Derived by tools/generate-tables.mjs: ${closureNotes.join(" ")} */
export const CLOSURE = ${JSON.stringify(closure.join(";"))};
export const SCRIPT_NAMES = ${JSON.stringify(scriptNames.join(" "))};
export const SCRIPTS = ${JSON.stringify(scripts.map((r) => `${enc(r)}:${r[2].toString(36)}`).join(";"))};
export const SCRIPT_EXT = ${JSON.stringify(scriptExtText)};
export const ALLOWED = ${JSON.stringify(allowed.map(enc).join(";"))};
export const DECIMAL = ${JSON.stringify(decimal.map(enc).join(";"))};
`;
writeFileSync(out, text);
console.log(`closure onto ASCII: ${closureNotes.join(" ")}`);
console.log(`wrote ${out}: ${text.length} bytes (${confusables.length} confusables, ${closure.length} closure mappings, ${scripts.length} script ranges, ${ext.length} extension ranges, ${allowed.length} allowed ranges, ${decimal.length} decimal ranges)`);
