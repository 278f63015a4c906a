/**
 * Splitting work into bounded pieces, in order: rows into JSON parameters under D1's
 * value and statement limits, observations into short transactions. One rule for all
 * of them, declared once.
 */

/**
 * Splits `items`, keeping their order, into groups whose weights sum to at most
 * `budget`. An item heavier than the budget alone is a group of its own (never split,
 * never dropped).
 */
export function groupsUnderBudget<T>(items: Iterable<T>, weight: (item: T) => number, budget: number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const w = weight(item);
    if (current.length > 0 && size + w > budget) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += w;
  }
  if (current.length) groups.push(current);
  return groups;
}

/** Rows as JSON arrays of at most `maxChars` characters each (the brackets and commas counted). */
export function jsonArrayChunks(rows: readonly unknown[], maxChars: number): string[] {
  const texts = rows.map((r) => JSON.stringify(r));
  // "[" + "]" once per array, one comma (or the closing bracket) per row.
  return groupsUnderBudget(texts, (s) => s.length + 1, maxChars - 2).map((g) => `[${g.join(",")}]`);
}
