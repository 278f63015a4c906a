/**
 * The one rule for splitting work into bounded pieces (src/platform/groups.ts): D1's
 * JSON parameters of the CT publication and the DNS watcher, the CT publication's
 * transactions.
 */
import { describe, expect, it } from "vitest";
import { groupsUnderBudget, jsonArrayChunks } from "../../src/platform/groups";

describe("groupsUnderBudget", () => {
  it("keeps order, fills each group up to the budget exactly, and puts an overweight item alone", () => {
    const groups = groupsUnderBudget([3, 2, 5, 12, 1, 4], (n) => n, 10);
    expect(groups).toEqual([[3, 2, 5], [12], [1, 4]]);
    expect(groups.flat()).toEqual([3, 2, 5, 12, 1, 4]);
    expect(groupsUnderBudget([], (n: number) => n, 10)).toEqual([]);
    // Weightless items never open a new group.
    expect(groupsUnderBudget([0, 0, 0], (n) => n, 1)).toEqual([[0, 0, 0]]);
  });

  it("jsonArrayChunks: every chunk parses back, none is longer than the limit unless one row alone is", () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ i, s: "x".repeat(i % 37) }));
    const chunks = jsonArrayChunks(rows, 500);
    expect(chunks.flatMap((c) => JSON.parse(c))).toEqual(rows);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(500);
    // A chunk is as full as the next row allows.
    for (let k = 0; k + 1 < chunks.length; k++) expect(chunks[k].length + JSON.stringify(JSON.parse(chunks[k + 1])[0]).length + 1).toBeGreaterThan(500);
    const big = { s: "y".repeat(600) };
    expect(jsonArrayChunks([{ a: 1 }, big, { b: 2 }], 500)).toEqual(['[{"a":1}]', `[${JSON.stringify(big)}]`, '[{"b":2}]']);
  });
});
