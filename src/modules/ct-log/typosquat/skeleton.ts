/**
 * Confusable skeletons of domain labels: two labels with the same skeleton look
 * alike ("paypa1" / "paypal", "аррӏе" / "apple").
 *
 * The UTS #39 skeleton (NFD, replace every code point by its confusables.txt
 * prototype, NFD) with two changes for DNS labels, which are case-insensitive
 * and where accents are hard to see at URL-bar sizes:
 *   - lowercase before and after mapping ("0" -> "O" -> "o", "I" -> "l")
 *   - combining marks are dropped after NFD ("pàypal", "ƥ" -> "p̔" -> "p")
 * The mapping is applied until it no longer changes the string (at most 5
 * rounds), so prototypes that are themselves confusable settle: with the
 * data's closure onto ASCII letters (unicode-tables.ts), Cyrillic "т" -> "ᴛ"
 * -> "t" and "м" -> "ʍ" -> "m" -> "rn", as "m" itself.
 *
 * ASCII labels (nearly every certificate name) take a table-driven fast path:
 * the skeleton of every ASCII character is precomputed, and a label without a
 * mapped character is returned as is, without allocating.
 */
import { confusablePrototype } from "./unicode-tables";

const MARKS = /\p{M}/gu;
const ROUNDS = 5;

function round(s: string): string {
  let out = "";
  for (const ch of s.toLowerCase().normalize("NFD").replace(MARKS, "")) {
    out += confusablePrototype(ch.codePointAt(0)!) ?? ch;
  }
  return out.normalize("NFD").replace(MARKS, "").toLowerCase();
}

/** The skeleton of any Unicode string (the general path). */
export function unicodeSkeleton(s: string): string {
  let cur = s;
  for (let i = 0; i < ROUNDS; i++) {
    const next = round(cur);
    if (next === cur) break;
    cur = next;
  }
  return cur;
}

/** Skeleton of each ASCII code unit (undefined: maps to itself). */
let asciiTable: (string | undefined)[] | undefined;
function table(): (string | undefined)[] {
  if (!asciiTable) {
    asciiTable = [];
    for (let c = 0; c < 128; c++) {
      const ch = String.fromCharCode(c);
      const sk = unicodeSkeleton(ch);
      asciiTable.push(sk === ch ? undefined : sk);
    }
  }
  return asciiTable;
}

/** The skeleton of a label (Unicode or ASCII; A-labels must be decoded first). */
export function skeleton(label: string): string {
  const t = table();
  let out: string | null = null;
  for (let i = 0; i < label.length; i++) {
    const c = label.charCodeAt(i);
    if (c >= 128) return unicodeSkeleton(label);
    const m = t[c];
    if (out === null) {
      if (m === undefined) continue;
      out = label.slice(0, i) + m;
    } else out += m ?? label[i];
  }
  return out ?? label;
}

/** Whether a string is all ASCII. */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 128) return false;
  return true;
}
