import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, canonicalize, snapshotHash } from "../../src/modules/rdap/snapshot";
import { diffSnapshots } from "../../src/modules/rdap/diff";
import { clone, rdapJson } from "./data";

// Real answers: Verisign thin (.com), a thick registry (.click), AFNIC (.fr), a registrar.
let hhgames: any;
let google: any;
let click: any;
let lemonde: any;
let nomeo: any;

beforeAll(async () => {
  hhgames = await rdapJson("domain/registry-thin/verisign-hhgames.com.json");
  google = await rdapJson("domain/registry-thin/verisign-google.com-2021.json");
  click = await rdapJson("domain/registry-thick/microsoft.click.json");
  lemonde = await rdapJson("domain/cctld/lemonde.fr.json");
  nomeo = await rdapJson("domain/registrar/nomeo.com.json");
});

function event(doc: any, action: string): any {
  return doc.events.find((e: any) => e.eventAction === action);
}

/** The same registration as Verisign would answer it a day later, in another order. */
function reQueried(original: any): any {
  const d = clone(original);
  const last = event(d, "last update of RDAP database");
  if (last) last.eventDate = "2031-01-01T00:00:00Z";
  d.notices = [{ title: "Terms of Use", description: ["New wording of the terms."] }];
  d.links?.reverse();
  d.links?.forEach((l: any) => (l.value = String(l.value).toLowerCase()));
  d.rdapConformance?.reverse();
  d.status?.reverse();
  d.nameservers?.reverse();
  d.entities?.reverse();
  d.events.reverse();
  d.nameservers?.forEach((n: any) => (n.ldhName = n.ldhName === n.ldhName.toUpperCase() ? n.ldhName.toLowerCase() : n.ldhName.toUpperCase()));
  // Key order is not meaning either.
  return Object.fromEntries(Object.entries(d).reverse());
}

describe("canonicalize", () => {
  it("drops the volatile parts of a real Verisign answer and sorts what has no order", () => {
    const c = canonicalize(hhgames) as any;
    expect(c.notices).toBeUndefined();
    expect(c.links).toBeUndefined();
    expect(c.rdapConformance).toBeUndefined();
    expect(c.entities[0].links).toBeUndefined();
    expect(c.events).toEqual([
      { eventAction: "expiration", eventDate: "2026-07-04T19:21:02Z" },
      { eventAction: "last changed", eventDate: "2025-04-16T04:27:20Z" },
      { eventAction: "registration", eventDate: "2002-07-04T19:15:32Z" },
    ]);
    expect(c.nameservers.map((n: any) => n.ldhName)).toEqual([
      "ns1.fabulous.com",
      "ns2.fabulous.com",
      "ns3.fabulous.com",
      "ns4.fabulous.com",
    ]);
    expect(c.ldhName).toBe("hhgames.com");
    expect(c.handle).toBe("88133367_DOMAIN_COM-VRSN");
    expect(c.secureDNS).toEqual({ delegationSigned: false });
    expect(Object.keys(c)).toEqual([...Object.keys(c)].sort());
  });

  it("spells event dates one way: .0Z, microseconds and offsets", () => {
    const c = canonicalize(nomeo) as any;
    expect(c.events.find((e: any) => e.eventAction === "registration").eventDate).toBe("2003-10-10T01:55:12Z");
    expect(c.events.find((e: any) => e.eventAction === "last changed").eventDate).toBe("2025-12-18T16:30:08.570Z");
    const l = canonicalize(lemonde) as any;
    expect(l.events.find((e: any) => e.eventAction === "last changed").eventDate).toBe("2024-06-12T22:09:39.881Z");
  });

  it("does not modify its input and survives garbage", async () => {
    const before = JSON.stringify(hhgames);
    canonicalize(hhgames);
    expect(JSON.stringify(hhgames)).toBe(before);
    expect(canonicalize(undefined)).toBeNull();
    expect(canonicalize("text")).toBe("text");
    expect(await snapshotHash({ events: "nope", entities: [1, null, "x"] })).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });
});

describe("snapshotHash: unchanged registrations keep their hash", () => {
  it.each(["hhgames", "click", "lemonde", "nomeo", "google"])("%s re-queried gives the same hash and an empty diff", async (name) => {
    const doc = { hhgames, click, lemonde, nomeo, google }[name];
    const again = reQueried(doc);
    expect(JSON.stringify(again)).not.toBe(JSON.stringify(doc));
    expect(await snapshotHash(again)).toBe(await snapshotHash(doc));
    expect(diffSnapshots(doc, again)).toEqual({ added: [], removed: [], modified: [], summary: {} });
  });

  it("ignores the registrant's own 'last update of RDAP database' event (microsoft.click)", async () => {
    const again = clone(click);
    const registrant = again.entities.find((e: any) => e.roles.includes("registrant"));
    expect(registrant.events[0].eventAction).toBe("last update of RDAP database");
    registrant.events[0].eventDate = "2024-06-19T14:30:59.585Z";
    expect(await snapshotHash(again)).toBe(await snapshotHash(click));
  });

  it("the same instant written with an offset or .0Z is not a change", async () => {
    const again = clone(hhgames);
    event(again, "expiration").eventDate = "2026-07-04T22:21:02.0+03:00";
    expect(await snapshotHash(again)).toBe(await snapshotHash(hhgames));
  });

  it("different registrations have different hashes", async () => {
    expect(await snapshotHash(hhgames)).not.toBe(await snapshotHash(google));
  });
});

describe("snapshotHash and diffSnapshots on real changes", () => {
  it("registrar change (Sea Wasp 411 -> MarkMonitor 292)", async () => {
    const moved = clone(hhgames);
    moved.entities = clone(google.entities);
    expect(await snapshotHash(moved)).not.toBe(await snapshotHash(hhgames));
    const d = diffSnapshots(hhgames, moved);
    expect(d.summary.registrar).toEqual({
      from: { handle: "411", name: "Sea Wasp, LLC", iana_id: "411" },
      to: { handle: "292", name: "MarkMonitor Inc.", iana_id: "292" },
    });
    expect(d.removed.map((r) => r.path)).toEqual(["$.entities[registrar:411]"]);
    expect(d.added.map((a) => a.path)).toEqual(["$.entities[registrar:292]"]);
    expect(Object.keys(d.summary)).toEqual(["registrar"]);
  });

  it("registrar renamed in place: modified vCard fn, same IANA id is not a registrar change", async () => {
    const renamed = clone(hhgames);
    renamed.entities[0].vcardArray[1][1][3] = "Sea Wasp LLC";
    expect(await snapshotHash(renamed)).not.toBe(await snapshotHash(hhgames));
    const d = diffSnapshots(hhgames, renamed);
    expect(d.modified).toEqual([
      { path: "$.entities[registrar:411].vcardArray[1][fn][3]", from: "Sea Wasp, LLC", to: "Sea Wasp LLC" },
    ]);
    expect(d.summary).toEqual({});
  });

  it("nameserver change", async () => {
    const ns = clone(hhgames);
    ns.nameservers[3] = { objectClassName: "nameserver", ldhName: "NS1.EXAMPLE-DNS.NET" };
    expect(await snapshotHash(ns)).not.toBe(await snapshotHash(hhgames));
    const d = diffSnapshots(hhgames, ns);
    expect(d.summary).toEqual({ nameservers: { added: ["ns1.example-dns.net"], removed: ["ns4.fabulous.com"] } });
    expect(d.removed).toEqual([
      { path: "$.nameservers[ns4.fabulous.com]", value: { ldhName: "ns4.fabulous.com", objectClassName: "nameserver" } },
    ]);
    expect(d.added).toEqual([
      { path: "$.nameservers[ns1.example-dns.net]", value: { ldhName: "ns1.example-dns.net", objectClassName: "nameserver" } },
    ]);
  });

  it("status change", async () => {
    const held = clone(lemonde);
    held.status = held.status.filter((s: string) => s !== "server transfer prohibited").concat("server hold");
    expect(await snapshotHash(held)).not.toBe(await snapshotHash(lemonde));
    const d = diffSnapshots(lemonde, held);
    expect(d.summary).toEqual({ status: { added: ["server hold"], removed: ["server transfer prohibited"] } });
    expect(d.added).toEqual([{ path: "$.status[server hold]", value: "server hold" }]);
    expect(d.removed).toEqual([{ path: "$.status[server transfer prohibited]", value: "server transfer prohibited" }]);
  });

  it("expiry moved (renewal)", async () => {
    const renewed = clone(hhgames);
    event(renewed, "expiration").eventDate = "2027-07-04T19:21:02Z";
    event(renewed, "last changed").eventDate = "2026-06-01T08:00:00Z";
    expect(await snapshotHash(renewed)).not.toBe(await snapshotHash(hhgames));
    const d = diffSnapshots(hhgames, renewed);
    expect(d.modified).toEqual([
      { path: "$.events[expiration].eventDate", from: "2026-07-04T19:21:02Z", to: "2027-07-04T19:21:02Z" },
      { path: "$.events[last changed].eventDate", from: "2025-04-16T04:27:20Z", to: "2026-06-01T08:00:00Z" },
    ]);
    expect(d.summary).toEqual({ expiration: { from: "2026-07-04T19:21:02Z", to: "2027-07-04T19:21:02Z" } });
  });

  it("registrant change at a thick registry (AFNIC)", () => {
    const sold = clone(lemonde);
    const registrant = sold.entities.find((e: any) => e.roles.includes("registrant"));
    registrant.handle = "NEWCO1-FRNIC";
    for (const p of registrant.vcardArray[1]) if (p[0] === "fn" || p[0] === "org") p[3] = "NEWCO SAS";
    const d = diffSnapshots(lemonde, sold);
    expect(d.summary.registrant).toEqual({
      from: { handle: "SEDM254-FRNIC", name: "SOCIETE EDITRICE du monde", organization: "SOCIETE EDITRICE DU MONDE" },
      to: { handle: "NEWCO1-FRNIC", name: "NEWCO SAS", organization: "NEWCO SAS" },
    });
    expect(d.removed.map((r) => r.path)).toEqual(["$.entities[registrant:SEDM254-FRNIC]"]);
    expect(d.added.map((r) => r.path)).toEqual(["$.entities[registrant:NEWCO1-FRNIC]"]);
  });

  it("a member added or removed is reported with its path; garbage inputs do not throw", () => {
    const withPort43 = clone(hhgames);
    withPort43.port43 = "whois.verisign-grs.com";
    expect(diffSnapshots(hhgames, withPort43).added).toEqual([{ path: "$.port43", value: "whois.verisign-grs.com" }]);
    expect(diffSnapshots(withPort43, hhgames).removed).toEqual([{ path: "$.port43", value: "whois.verisign-grs.com" }]);
    expect(diffSnapshots(null, "x").modified).toEqual([{ path: "$", from: null, to: "x" }]);
  });
});
