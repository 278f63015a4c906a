/**
 * Edit operations between two labels, for the typosquatting evidence:
 * the bounded optimal-string-alignment distance (Damerau–Levenshtein where a
 * transposed pair is not edited again) and the single-edit kinds that have
 * their own evidence category.
 */

/** OSA distance of a and b, or max + 1 as soon as it must exceed max. */
export function boundedDamerauLevenshtein(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= m; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[m], max + 1);
}

export type SingleEdit = "omission" | "repetition" | "transposition" | "insertion" | "substitution";

/** How `candidate` is one edit away from `original`, or null when it is not. */
export function singleEdit(original: string, candidate: string): SingleEdit | null {
  const n = original.length;
  const m = candidate.length;
  let i = 0;
  while (i < n && i < m && original.charCodeAt(i) === candidate.charCodeAt(i)) i++;
  if (m === n - 1) return original.slice(i + 1) === candidate.slice(i) ? "omission" : null;
  if (m === n + 1) {
    if (candidate.slice(i + 1) !== original.slice(i)) return null;
    // The inserted character doubles a neighbour: "ppaypal", "paypaal". Any duplicate of the
    // same run counts, wherever the first difference shows up.
    const c = candidate.charCodeAt(i);
    return (i > 0 && candidate.charCodeAt(i - 1) === c) || (i + 1 < m && candidate.charCodeAt(i + 1) === c) ? "repetition" : "insertion";
  }
  if (m !== n || i === n) return null;
  if (original.slice(i + 1) === candidate.slice(i + 1)) return "substitution";
  if (i + 1 < n && original.charCodeAt(i) === candidate.charCodeAt(i + 1) && original.charCodeAt(i + 1) === candidate.charCodeAt(i) && original.slice(i + 2) === candidate.slice(i + 2)) {
    return "transposition";
  }
  return null;
}
