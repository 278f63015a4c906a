// The background D1 handle (src/db/background.ts): the same database statement for
// statement (drizzle on top of it, raw statements, an atomic batch), and a turn of the
// event loop before a statement once background work has held the thread for its
// gate's time, which is what lets waiting requests in.
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { backgroundD1 } from "../../src/db/background";
import { createDb } from "../../src/db/client";
import { organizations } from "../../src/db/schema";

const d1 = (env as any).DB as D1Database;
// A turn before every statement: what the turn does is seen on each statement.
const background = backgroundD1(d1, 0);
const db = createDb(background);
const uid = () => crypto.randomUUID().slice(0, 8);
/** How many organizations are called `name`, read through `handle`. */
const count = (handle: D1Database, name: string) => handle.prepare("SELECT count(*) AS n FROM organizations WHERE name = ?").bind(name).first<number>("n");
/** Inserts an organization called `name` from a timer due now; the returned function gives that insert's promise. */
const insertByTimer = (name: string) => {
  let insert: Promise<unknown> = Promise.resolve();
  setTimeout(() => (insert = d1.prepare("INSERT INTO organizations (name) VALUES (?)").bind(name).run()), 0);
  return () => insert;
};

describe("backgroundD1", () => {
  it("answers like the plain handle: drizzle reads and writes, first, raw, run", async () => {
    const name = `background ${uid()}`;
    const [row] = await db.insert(organizations).values({ name }).returning({ id: organizations.id });
    const viaDrizzle = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, row.id)).get();
    expect(viaDrizzle).toEqual({ name });
    const plain = await d1.prepare("SELECT id, name FROM organizations WHERE id = ?").bind(row.id).first();
    expect(await background.prepare("SELECT id, name FROM organizations WHERE id = ?").bind(row.id).first()).toEqual(plain);
    expect(await background.prepare("SELECT name FROM organizations WHERE id = ?").bind(row.id).first("name")).toBe(name);
    expect(await background.prepare("SELECT id, name FROM organizations WHERE id = ?").bind(row.id).raw()).toEqual([[row.id, name]]);
    expect(await background.prepare("SELECT id, name FROM organizations WHERE id = ?").bind(row.id).raw({ columnNames: true })).toEqual([["id", "name"], [row.id, name]]);
    const renamed = await background.prepare("UPDATE organizations SET name = ? WHERE id = ?").bind(`${name} 2`, row.id).run();
    expect(renamed.meta.changes).toBe(1);
    expect((await db.run(sql`SELECT 1`)).success).toBe(true);
  });

  it("a batch is still one transaction: a failing statement leaves nothing behind", async () => {
    const name = `batch ${uid()}`;
    await expect(
      background.batch([
        background.prepare("INSERT INTO organizations (name) VALUES (?)").bind(name),
        background.prepare("INSERT INTO no_such_table (x) VALUES (1)"),
      ]),
    ).rejects.toThrow(/no_such_table/);
    expect(await count(d1, name)).toBe(0);
    const ok = await background.batch([background.prepare("INSERT INTO organizations (name) VALUES (?)").bind(name), background.prepare("SELECT count(*) AS n FROM organizations WHERE name = ?").bind(name)]);
    expect(ok[1].results).toEqual([{ n: 1 }]);
  });

  it("issues its statement only after the event loop's turn: a write issued by a timer due now comes first", async () => {
    // With the plain handle the read is issued at once and misses the timer's row.
    const name = `turn ${uid()}`;
    const inserted = insertByTimer(name);
    const plainSaw = count(d1, name);
    const backgroundSaw = count(background, name);
    expect(await plainSaw).toBe(0);
    expect(await backgroundSaw).toBe(1);
    await inserted();
  });

  it("with its gate open gives the event loop a turn before each statement", async () => {
    // A timer due now runs before the background statement does; with the plain handle
    // nothing promises that. Each statement type and the batch, one after the other.
    const statements: (() => Promise<unknown>)[] = [
      () => background.prepare("SELECT 1").first(),
      () => background.prepare("SELECT 1").all(),
      () => background.prepare("SELECT 1").raw(),
      () => background.prepare("SELECT 1").run(),
      () => background.batch([background.prepare("SELECT 1")]),
      () => background.exec("SELECT 1"),
    ];
    for (const statement of statements) {
      const order: string[] = [];
      setTimeout(() => order.push("timer"), 0);
      const done = statement().then(() => order.push("statement"));
      // Nothing ran synchronously: the statement waits for its turn.
      expect(order).toEqual([]);
      await done;
      expect(order).toEqual(["timer", "statement"]);
    }
  });

  it("gives no turn while the gate is closed, and one once background work has run for the gate's time", async () => {
    const name = `gate ${uid()}`;
    // Just after a turn, a handle gated at an hour issues its statement at once, like the plain handle.
    await background.prepare("SELECT 1").first();
    let inserted = insertByTimer(name);
    expect(await count(backgroundD1(d1, 3_600_000), name)).toBe(0);
    await inserted();
    // 10 ms later (workerd's clock moves on I/O, a timer included), a 5 ms gate is open: a turn first.
    await new Promise((resolve) => setTimeout(resolve, 10));
    inserted = insertByTimer(name);
    expect(await count(backgroundD1(d1, 5), name)).toBe(2);
    await inserted();
  });
});
