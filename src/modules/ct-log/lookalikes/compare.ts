/**
 * How a lookalike's label differs from the protected label, character by character, for
 * people: an alignment of the two labels' code points (fewest edits, a swap of neighbours
 * counting as one), each character of the lookalike marked `same`, `confusable` (another
 * character with the same skeleton: Cyrillic "і" for "i"), `changed` (another letter),
 * `added`, or `swapped`; the protected label's characters with no counterpart listed as
 * `missing`; and the script of each character (Script_Extensions, UTS #24).
 */
import { skeleton } from "../typosquat/skeleton";
import { COMMON, INHERITED, SCRIPT, scriptExtensions } from "../typosquat/unicode-tables";
import { labelToUnicode } from "../typosquat/punycode";

export type CharacterStatus = "same" | "confusable" | "changed" | "added" | "swapped";

export interface ComparedCharacter {
  char: string;
  /** "U+0456" */
  code_point: string;
  /** The character's script(s) ("Cyrillic"; "Common" for digits and the hyphen). */
  script: string;
  status: CharacterStatus;
  /** The protected label's character it stands for (empty when added). */
  stands_for: string;
}

export interface LabelComparison {
  protected_label: string;
  lookalike_label: string;
  characters: ComparedCharacter[];
  /** Characters of the protected label the lookalike leaves out. */
  missing: string[];
  /** Every script the lookalike label uses. */
  scripts: string[];
}

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

function scriptOf(c: string): string {
  const ext = scriptExtensions(c.codePointAt(0)!);
  if (ext.length === 1 && (ext[0] === COMMON || ext[0] === INHERITED)) return "Common";
  return ext.map((i) => SCRIPT[i] ?? "Unknown").join("/");
}

function decode(label: string): string {
  try {
    return labelToUnicode(label);
  } catch {
    return label;
  }
}

/** Compares the labels below the suffixes of two registrable domains (A-labels or Unicode). */
export function compareLabels(protectedDomain: string, lookalikeDomain: string): LabelComparison {
  const p = [...decode(protectedDomain.split(".")[0])];
  const l = [...decode(lookalikeDomain.split(".")[0])];
  const n = p.length;
  const m = l.length;
  const look = (a: string, b: string) => a === b || skeleton(a) === skeleton(b);
  /** Two lookalike characters that together look like one protected character ("rn" for "m"). */
  const pair = (i: number, j: number) => i < n && j + 1 < m && skeleton(l[j] + l[j + 1]) === skeleton(p[i]);
  const swap = (i: number, j: number) => i + 1 < n && j + 1 < m && p[i] === l[j + 1] && p[i + 1] === l[j] && p[i] !== p[i + 1];
  // d[i][j]: the fewest edits aligning p[i..] with l[j..] (optimal string alignment; a lookalike
  // character or pair for its skeleton twin costs nothing). Suffixes, so the walk below goes
  // from the start and prefers matching early: "paypal-login" is "paypal" and an addition.
  const d: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      if (i === n || j === m) {
        d[i][j] = n - i + (m - j);
        continue;
      }
      let best = Math.min(d[i + 1][j] + 1, d[i][j + 1] + 1, d[i + 1][j + 1] + (look(p[i], l[j]) ? 0 : 1));
      if (swap(i, j)) best = Math.min(best, d[i + 2][j + 2] + 1);
      if (pair(i, j)) best = Math.min(best, d[i + 1][j + 2]);
      d[i][j] = best;
    }
  }
  const characters: ComparedCharacter[] = [];
  const missing: string[] = [];
  const mark = (c: string, status: CharacterStatus, standsFor: string) => characters.push({ char: c, code_point: codePoint(c), script: scriptOf(c), status, stands_for: standsFor });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && look(p[i], l[j]) && d[i][j] === d[i + 1][j + 1]) {
      mark(l[j], p[i] === l[j] ? "same" : "confusable", p[i]);
      i++;
      j++;
    } else if (pair(i, j) && d[i][j] === d[i + 1][j + 2]) {
      mark(l[j], "confusable", p[i]);
      mark(l[j + 1], "confusable", p[i]);
      i++;
      j += 2;
    } else if (swap(i, j) && d[i][j] === d[i + 2][j + 2] + 1) {
      mark(l[j], "swapped", p[i + 1]);
      mark(l[j + 1], "swapped", p[i]);
      i += 2;
      j += 2;
    } else if (j < m && d[i][j] === d[i][j + 1] + 1) {
      // Ties go to an added character before a changed one.
      mark(l[j], "added", "");
      j++;
    } else if (i < n && d[i][j] === d[i + 1][j] + 1) {
      missing.push(p[i]);
      i++;
    } else {
      mark(l[j], "changed", p[i]);
      i++;
      j++;
    }
  }
  return {
    protected_label: p.join(""),
    lookalike_label: l.join(""),
    characters,
    missing,
    scripts: [...new Set(characters.flatMap((c) => c.script.split("/")))],
  };
}
