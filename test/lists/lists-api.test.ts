/**
 * Rule lists through the HTTP API (docs/modules/lists.md, docs/decisions.md#rule-lists):
 * one test per rule, each reading the list back to prove what
 * was (or was not) stored.
 */
import { describe, expect, it } from "vitest";
import { addMember, call, createToken, expectError, signup, unique, type CallResult } from "../helpers";

/** Every success body of a rule-list endpoint carries `success: true` (docs/decisions.md#errors-and-validation). */
function ok<T = any>(r: CallResult<T>, status: number): T {
  if (r.status !== status || (r.body as any)?.success !== true) {
    throw new Error(`expected ${status} with success:true, got ${r.status} ${JSON.stringify(r.body)}`);
  }
  return r.body;
}

async function createList(token: string, body: Record<string, unknown>) {
  return call("POST", "/api/lists", { token, body: { description: "", ...body } });
}

/** The stored values of a list, in insertion order. */
async function valuesOf(token: string, listId: number): Promise<string[]> {
  const r = ok(await call("GET", `/api/lists/${listId}`, { token }), 200);
  return r.entries.map((e: any) => e.value);
}

/** The detail messages of an error body joined, so a test can look for a named value. */
const detailText = (r: CallResult) => (r.body?.error?.details ?? []).map((d: any) => `${d.path}: ${d.message}`).join("\n");

describe("entry rule 1: ip lists accept IPv4, IPv6 and CIDR, normalized", () => {
  it("stores a single address as /32 or /128 and IPv6 in canonical compressed form", async () => {
    const { session } = await signup();
    const created = ok(
      await createList(session, {
        name: "dmz",
        list_type: "ip",
        entries: ["192.0.2.1", "2001:DB8:0:0:0:0:0:1", "198.51.100.0/24", "2001:0db8:0000:0000:0000:0000:0000:0000/32", "::FFFF:192.0.2.9", "10.0.0.0/8"],
      }),
      201,
    );
    expect(created.id).toBeGreaterThan(0);
    expect(created.entry_limit).toBe(10);
    expect(created.entry_count).toBe(6);
    expect(await valuesOf(session, created.id)).toEqual([
      "192.0.2.1/32",
      "2001:db8::1/128",
      "198.51.100.0/24",
      "2001:db8::/32",
      "::ffff:192.0.2.9/128",
      "10.0.0.0/8",
    ]);
  });

  it("a CIDR with host bits set is a 400 naming the network address (IPv4 and IPv6)", async () => {
    const { session } = await signup();
    const r4 = await createList(session, { name: "hostbits4", list_type: "ip", entries: ["10.1.2.3/8"] });
    expectError(r4, 400, "validation_error");
    expect(detailText(r4)).toContain("10.0.0.0/8");
    expect(r4.body.error.message).toContain("10.0.0.0/8");
    expect(r4.body.error.details[0].path).toBe("entries.0");
    const r6 = await createList(session, { name: "hostbits6", list_type: "ip", entries: ["2001:db8::/64", "2001:db8::1/32"] });
    expectError(r6, 400, "validation_error");
    expect(detailText(r6)).toContain("2001:db8::/32");
    expect(r6.body.error.details.map((d: any) => d.path)).toEqual(["entries.1"]);
    // Nothing of either batch was saved: not even the lists.
    expect(ok(await call("GET", "/api/lists", { token: session }), 200).lists).toEqual([]);
  });

  it("IPv4 with leading zeros is a 400", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "lz", list_type: "ip" }), 201);
    for (const bad of ["010.0.0.1", "192.168.001.1", "10.0.0.01/32"]) {
      const r = await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: [bad] } });
      expectError(r, 400, "validation_error");
      expect(detailText(r)).toContain(bad);
    }
    for (const bad of ["256.1.1.1", "10.0.0.0/33", "2001:db8::/129", "not-an-ip", "example.com", ""]) {
      expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: [bad] } }), 400, "validation_error");
    }
    expect(await valuesOf(session, list.id)).toEqual([]);
  });
});

describe("entry rule 2: domain lists", () => {
  it("lowercases, drops the trailing dot, stores IDNs as A-labels, keeps parent and subdomain apart", async () => {
    const { session } = await signup();
    const list = ok(
      await createList(session, { name: "vip_domains", list_type: "domain", entries: ["WWW.Example.COM.", "example.com", "bücher.example", "xn--mnchen-3ya.de"] }),
      201,
    );
    expect(await valuesOf(session, list.id)).toEqual(["www.example.com", "example.com", "xn--bcher-kva.example", "xn--mnchen-3ya.de"]);
  });

  it("wildcards and URLs are invalid (400), nothing saved", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "doms", list_type: "domain", entries: ["keep.example.com"] }), 201);
    for (const bad of ["*.example.com", "https://example.com/", "example.com/path", "http://example.com", "exa mple.com", "-bad-.example.com", "10.0.0.1"]) {
      const r = await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["new.example.com", bad] } });
      expectError(r, 400, "validation_error");
      expect(r.body.error.details.map((d: any) => d.path)).toEqual(["entries.1"]);
    }
    expect(await valuesOf(session, list.id)).toEqual(["keep.example.com"]);
  });
});

describe("entry rule 4: duplicates are 409, nothing of the batch saved", () => {
  it("duplicates inside one batch (after normalization)", async () => {
    const { session } = await signup();
    const r = await createList(session, { name: "dups", list_type: "ip", entries: ["192.0.2.1", "192.0.2.1/32"] });
    expectError(r, 409, "conflict");
    expect(r.body.error.details.map((d: any) => d.path)).toEqual(["entries.1"]);
    expect(ok(await call("GET", "/api/lists", { token: session }), 200).lists).toEqual([]);

    const list = ok(await createList(session, { name: "doms", list_type: "domain" }), 201);
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["a.example.com", "A.Example.com."] } }), 409, "conflict");
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["x.example.com", "X.EXAMPLE.COM."] } }), 409, "conflict");
    expect(await valuesOf(session, list.id)).toEqual([]);
  });

  it("a value already stored", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "stored", list_type: "ip", entries: ["2001:db8::1"] }), 201);
    const r = await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["192.0.2.7", "2001:DB8:0::1/128"] } });
    expectError(r, 409, "conflict");
    expect(r.body.error.details.map((d: any) => d.path)).toEqual(["entries.1"]);
    expect(await valuesOf(session, list.id)).toEqual(["2001:db8::1/128"]);
  });
});

describe("bulk add and replace are all-or-nothing", () => {
  it("a failing add changes nothing; a good add adds all", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "bulk", list_type: "ip", entries: ["10.0.0.0/8"] }), 201);
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["192.0.2.1", "192.0.2.2", "bogus", "192.0.2.3"] } }), 400, "validation_error");
    expect(await valuesOf(session, list.id)).toEqual(["10.0.0.0/8"]);
    const added = ok(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["192.0.2.1", "192.0.2.2"] } }), 201);
    expect(added.entries.map((e: any) => e.value)).toEqual(["192.0.2.1/32", "192.0.2.2/32"]);
    expect(added.entries.every((e: any) => typeof e.id === "number" && typeof e.created_at === "string")).toBe(true);
    expect(await valuesOf(session, list.id)).toEqual(["10.0.0.0/8", "192.0.2.1/32", "192.0.2.2/32"]);
  });

  it("a failing replace keeps the old set; a good replace swaps it; [] empties it", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "repl", list_type: "domain", entries: ["a.example.com", "b.example.com"] }), 201);
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["c.example.com", "*.example.com"] } }), 400, "validation_error");
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["c.example.com", "C.example.com"] } }), 409, "conflict");
    expect(await valuesOf(session, list.id)).toEqual(["a.example.com", "b.example.com"]);
    const r = ok(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["b.example.com", "C.Example.com"] } }), 200);
    expect(r.entry_count).toBe(2);
    expect(await valuesOf(session, list.id)).toEqual(["b.example.com", "c.example.com"]);
    ok(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: [] } }), 200);
    expect(await valuesOf(session, list.id)).toEqual([]);
  });

  it("every entry change bumps the list's updated_at; created_at stays", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "times", list_type: "ip" }), 201);
    const read = async () => ok(await call("GET", `/api/lists/${list.id}`, { token: session }), 200);
    const t0 = await read();
    await new Promise((r) => setTimeout(r, 5));
    ok(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["192.0.2.1"] } }), 201);
    const t1 = await read();
    expect(t1.created_at).toBe(t0.created_at);
    expect(Date.parse(t1.updated_at)).toBeGreaterThan(Date.parse(t0.updated_at));
    await new Promise((r) => setTimeout(r, 5));
    ok(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: [] } }), 200);
    expect(Date.parse((await read()).updated_at)).toBeGreaterThan(Date.parse(t1.updated_at));
  });

  it("removes one entry; an unknown entry is 404", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "one", list_type: "ip", entries: ["192.0.2.1", "192.0.2.2"] }), 201);
    const entries = ok(await call("GET", `/api/lists/${list.id}`, { token: session }), 200).entries;
    ok(await call("DELETE", `/api/lists/${list.id}/entries/${entries[0].id}`, { token: session }), 200);
    expect(await valuesOf(session, list.id)).toEqual(["192.0.2.2/32"]);
    expectError(await call("DELETE", `/api/lists/${list.id}/entries/${entries[0].id}`, { token: session }), 404, "not_found");
  });
});

describe("quotas (tier free: 2 lists, 10 entries per list)", () => {
  it("a third list on free is 403 quota_exceeded (empty lists count)", async () => {
    const { session } = await signup();
    ok(await createList(session, { name: "l1", list_type: "ip" }), 201);
    ok(await createList(session, { name: "l2", list_type: "domain" }), 201);
    expectError(await createList(session, { name: "l3", list_type: "ip" }), 403, "quota_exceeded");
    expect(ok(await call("GET", "/api/lists", { token: session }), 200).lists.map((l: any) => l.name)).toEqual(["l1", "l2"]);
  });

  it("the 11th entry on free is 403 quota_exceeded, on create, add and replace; nothing saved", async () => {
    const { session } = await signup();
    const ten = Array.from({ length: 10 }, (_, i) => `192.0.2.${i + 1}`);
    expectError(await createList(session, { name: "big", list_type: "ip", entries: [...ten, "192.0.2.99"] }), 403, "quota_exceeded");
    expect(ok(await call("GET", "/api/lists", { token: session }), 200).lists).toEqual([]);
    const list = ok(await createList(session, { name: "big", list_type: "ip", entries: ten.slice(0, 8) }), 201);
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["198.51.100.1", "198.51.100.2", "198.51.100.3"] } }), 403, "quota_exceeded");
    expect((await valuesOf(session, list.id)).length).toBe(8);
    ok(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["198.51.100.1", "198.51.100.2"] } }), 201);
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["198.51.100.3"] } }), 403, "quota_exceeded");
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: [...ten, "198.51.100.3"] } }), 403, "quota_exceeded");
    expect((await valuesOf(session, list.id)).length).toBe(10);
    const listing = ok(await call("GET", "/api/lists", { token: session }), 200).lists[0];
    expect(listing).toMatchObject({ name: "big", entry_count: 10, entry_limit: 10 });
  });

  it("a downgrade pro -> free keeps 3 lists and their entries but blocks new lists and entries", async () => {
    const { session } = await signup();
    expect((await call("PUT", "/api/admin/subscription", { token: session, body: { tier: "pro" } })).status).toBe(200);
    const twelve = Array.from({ length: 12 }, (_, i) => `203.0.113.${i + 1}`);
    const a = ok(await createList(session, { name: "a", list_type: "ip", entries: twelve }), 201);
    expect(a.entry_limit).toBe(500);
    const b = ok(await createList(session, { name: "b", list_type: "ip", entries: ["192.0.2.1"] }), 201);
    ok(await createList(session, { name: "c", list_type: "domain" }), 201);
    expect((await call("PUT", "/api/admin/subscription", { token: session, body: { tier: "free" } })).status).toBe(200);

    const lists = ok(await call("GET", "/api/lists", { token: session }), 200).lists;
    expect(lists.map((l: any) => [l.name, l.entry_count, l.entry_limit])).toEqual([
      ["a", 12, 10],
      ["b", 1, 10],
      ["c", 0, 10],
    ]);
    expect((await valuesOf(session, a.id)).length).toBe(12);
    expectError(await createList(session, { name: "d", list_type: "ip" }), 403, "quota_exceeded");
    expectError(await call("POST", `/api/lists/${a.id}/entries`, { token: session, body: { entries: ["198.51.100.1"] } }), 403, "quota_exceeded");
    // A list under the new limit still takes entries up to it.
    ok(await call("POST", `/api/lists/${b.id}/entries`, { token: session, body: { entries: ["192.0.2.2"] } }), 201);
    // Reducing usage below the limit allows a new list again: 3 -> 1 lists.
    ok(await call("DELETE", `/api/lists/${b.id}`, { token: session }), 200);
    expectError(await createList(session, { name: "d", list_type: "ip" }), 403, "quota_exceeded");
    ok(await call("DELETE", `/api/lists/${a.id}`, { token: session }), 200);
    ok(await createList(session, { name: "d", list_type: "ip" }), 201);
  });
});

describe("names, immutability, existence", () => {
  it("invalid list names are 400, a duplicate name 409", async () => {
    const { session } = await signup();
    for (const name of ["VIP", "has space", "dot.name", "", "x".repeat(65)]) {
      expectError(await createList(session, { name, list_type: "ip" }), 400, "validation_error");
    }
    expectError(await createList(session, { name: "ok", list_type: "url" }), 400, "validation_error");
    ok(await createList(session, { name: "ok_name-1", list_type: "ip" }), 201);
    expectError(await createList(session, { name: "ok_name-1", list_type: "domain" }), 409, "conflict");
  });

  it("name and type are immutable: PUT with another name or type is 400; the description is editable", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "fixed", list_type: "ip", description: "before" }), 201);
    expectError(await call("PUT", `/api/lists/${list.id}`, { token: session, body: { description: "x", name: "renamed" } }), 400, "validation_error");
    expectError(await call("PUT", `/api/lists/${list.id}`, { token: session, body: { description: "x", list_type: "domain" } }), 400, "validation_error");
    let got = ok(await call("GET", `/api/lists/${list.id}`, { token: session }), 200);
    expect([got.name, got.list_type, got.description]).toEqual(["fixed", "ip", "before"]);
    ok(await call("PUT", `/api/lists/${list.id}`, { token: session, body: { description: "after", name: "fixed", list_type: "ip" } }), 200);
    got = ok(await call("GET", `/api/lists/${list.id}`, { token: session }), 200);
    expect([got.name, got.list_type, got.description]).toEqual(["fixed", "ip", "after"]);
  });

  it("an unknown list id is 404 on every endpoint", async () => {
    const { session } = await signup();
    const id = 987654321;
    expectError(await call("GET", `/api/lists/${id}`, { token: session }), 404, "not_found");
    expectError(await call("PUT", `/api/lists/${id}`, { token: session, body: { description: "x" } }), 404, "not_found");
    expectError(await call("POST", `/api/lists/${id}/entries`, { token: session, body: { entries: ["192.0.2.1"] } }), 404, "not_found");
    expectError(await call("PUT", `/api/lists/${id}/entries`, { token: session, body: { entries: [] } }), 404, "not_found");
    expectError(await call("DELETE", `/api/lists/${id}/entries/1`, { token: session }), 404, "not_found");
    expectError(await call("DELETE", `/api/lists/${id}`, { token: session }), 404, "not_found");
  });

  it("another organization's list is 404, never 403, and is left untouched", async () => {
    const owner = await signup();
    const other = await signup();
    const list = ok(await createList(owner.session, { name: "mine", list_type: "ip", entries: ["192.0.2.1"] }), 201);
    const entryId = ok(await call("GET", `/api/lists/${list.id}`, { token: owner.session }), 200).entries[0].id;
    const t = other.session;
    expectError(await call("GET", `/api/lists/${list.id}`, { token: t }), 404, "not_found");
    expectError(await call("PUT", `/api/lists/${list.id}`, { token: t, body: { description: "pwned" } }), 404, "not_found");
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: t, body: { entries: ["198.51.100.1"] } }), 404, "not_found");
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: t, body: { entries: [] } }), 404, "not_found");
    expectError(await call("DELETE", `/api/lists/${list.id}/entries/${entryId}`, { token: t }), 404, "not_found");
    expectError(await call("DELETE", `/api/lists/${list.id}`, { token: t }), 404, "not_found");
    expect(ok(await call("GET", "/api/lists", { token: t }), 200).lists).toEqual([]);
    const got = ok(await call("GET", `/api/lists/${list.id}`, { token: owner.session }), 200);
    expect([got.description, got.entries.map((e: any) => e.value)]).toEqual(["", ["192.0.2.1/32"]]);
  });

  it("a list referenced by an alert rule cannot be deleted (409) until the rule is gone", async () => {
    const { session } = await signup();
    const list = ok(await createList(session, { name: "watched", list_type: "domain", entries: ["example.com"] }), 201);
    const rule = await call("POST", "/api/ct-log/alert-rules", { token: session, body: { name: "vip", expression: 'cert.dns_names.exists(n, in_list(n, lists["watched"]))' } });
    expect(rule.status).toBe(201);
    expectError(await call("DELETE", `/api/lists/${list.id}`, { token: session }), 409, "conflict");
    expect(await valuesOf(session, list.id)).toEqual(["example.com"]);
    expect((await call("DELETE", `/api/ct-log/alert-rules/${rule.body.id}`, { token: session })).status).toBe(200);
    ok(await call("DELETE", `/api/lists/${list.id}`, { token: session }), 200);
    expectError(await call("GET", `/api/lists/${list.id}`, { token: session }), 404, "not_found");
  });

  it("a rule's reference is replaced on PUT: the old list becomes deletable", async () => {
    const { session } = await signup();
    const l1 = ok(await createList(session, { name: "first", list_type: "ip" }), 201);
    ok(await createList(session, { name: "second", list_type: "ip" }), 201);
    const rule = await call("POST", "/api/cert-watcher/alert-rules", { token: session, body: { name: "r", expression: 'in_list(ip_address, lists["first"])' } });
    expect(rule.status).toBe(201);
    expectError(await call("DELETE", `/api/lists/${l1.id}`, { token: session }), 409, "conflict");
    expect((await call("PUT", `/api/cert-watcher/alert-rules/${rule.body.id}`, { token: session, body: { name: "r", expression: 'in_list(ip_address, lists["second"])' } })).status).toBe(200);
    ok(await call("DELETE", `/api/lists/${l1.id}`, { token: session }), 200);
  });
});

describe("permissions: lists:view_lists reads, lists:manage_lists writes", () => {
  it("a Viewer can GET lists but not create or change them (403)", async () => {
    const admin = await signup();
    const list = ok(await createList(admin.session, { name: "shared", list_type: "ip", entries: ["192.0.2.1"] }), 201);
    const viewer = await addMember(admin.session, [{ module_name: "ct-log", role_name: "Viewer" }]);
    expect(ok(await call("GET", "/api/lists", { token: viewer.session }), 200).lists.map((l: any) => l.name)).toEqual(["shared"]);
    expect(ok(await call("GET", `/api/lists/${list.id}`, { token: viewer.session }), 200).entries.length).toBe(1);
    expectError(await createList(viewer.session, { name: "nope", list_type: "ip" }), 403, "forbidden");
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: viewer.session, body: { entries: ["192.0.2.2"] } }), 403, "forbidden");
    expectError(await call("PUT", `/api/lists/${list.id}/entries`, { token: viewer.session, body: { entries: [] } }), 403, "forbidden");
    expectError(await call("PUT", `/api/lists/${list.id}`, { token: viewer.session, body: { description: "x" } }), 403, "forbidden");
    expectError(await call("DELETE", `/api/lists/${list.id}`, { token: viewer.session }), 403, "forbidden");
    expect(await valuesOf(admin.session, list.id)).toEqual(["192.0.2.1/32"]);
  });

  it("an Editor manages lists", async () => {
    const admin = await signup();
    const editor = await addMember(admin.session, [{ module_name: "rdap", role_name: "Editor" }]);
    const list = ok(await createList(editor.session, { name: "ed", list_type: "domain", entries: ["example.org"] }), 201);
    ok(await call("POST", `/api/lists/${list.id}/entries`, { token: editor.session, body: { entries: ["example.net"] } }), 201);
    expect(await valuesOf(admin.session, list.id)).toEqual(["example.org", "example.net"]);
  });

  it("API token scopes: view_lists only reads; manage_lists writes; no lists scope is 403", async () => {
    const admin = await signup();
    const list = ok(await createList(admin.session, { name: "scoped", list_type: "ip" }), 201);
    const view = await createToken(admin.session, ["lists:view_lists"]);
    const manage = await createToken(admin.session, ["lists:view_lists", "lists:manage_lists"]);
    const none = await createToken(admin.session, ["rdap:view_monitoring"]);
    ok(await call("GET", "/api/lists", { token: view.token }), 200);
    expectError(await call("POST", `/api/lists/${list.id}/entries`, { token: view.token, body: { entries: ["192.0.2.1"] } }), 403, "forbidden");
    ok(await call("POST", `/api/lists/${list.id}/entries`, { token: manage.token, body: { entries: ["192.0.2.1"] } }), 201);
    expectError(await call("GET", "/api/lists", { token: none.token }), 403, "forbidden");
    expectError(await call("GET", "/api/lists"), 401, "unauthorized");
  });
});

describe("success: true on every rule-list success body", () => {
  it("covers all eight endpoints", async () => {
    const { session } = await signup();
    const name = `s-${unique()}`.slice(0, 60).toLowerCase();
    const list = ok(await createList(session, { name, list_type: "domain", entries: ["a.example.com"] }), 201);
    expect(list.message).toEqual(expect.any(String));
    const summary = ok(await call("GET", "/api/lists", { token: session }), 200).lists[0];
    expect(Object.keys(summary).sort()).toEqual(["created_at", "description", "entry_count", "entry_limit", "id", "list_type", "name", "updated_at"]);
    expect(summary).not.toHaveProperty("entries");
    ok(await call("GET", `/api/lists/${list.id}`, { token: session }), 200);
    ok(await call("PUT", `/api/lists/${list.id}`, { token: session, body: { description: "d" } }), 200);
    const added = ok(await call("POST", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["b.example.com"] } }), 201);
    ok(await call("DELETE", `/api/lists/${list.id}/entries/${added.entries[0].id}`, { token: session }), 200);
    ok(await call("PUT", `/api/lists/${list.id}/entries`, { token: session, body: { entries: ["c.example.com"] } }), 200);
    ok(await call("DELETE", `/api/lists/${list.id}`, { token: session }), 200);
  });
});
