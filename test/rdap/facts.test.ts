import { beforeAll, describe, expect, it } from "vitest";
import { deriveFacts, isWithheldValue, registrantOf, registrarOf } from "../../src/modules/rdap/facts";
import { buildRdapEvent } from "../../src/modules/rdap/events";
import { compileRule, evaluate } from "../../src/modules/alerting/cel/engine";
import { clone, rdapJson } from "./data";

let hhgames: any;
let google: any;
let click: any;
let moscow: any;
let nomeo: any;
let lemonde: any;
let norway: any;
let redacted9537: any;
let icannFragment: any;

beforeAll(async () => {
  hhgames = await rdapJson("domain/registry-thin/verisign-hhgames.com.json");
  google = await rdapJson("domain/registry-thin/verisign-google.com-2021.json");
  click = await rdapJson("domain/registry-thick/microsoft.click.json");
  moscow = await rdapJson("domain/registry-thick/home.moscow.json");
  nomeo = await rdapJson("domain/registrar/nomeo.com.json");
  lemonde = await rdapJson("domain/cctld/lemonde.fr.json");
  norway = await rdapJson("domain/cctld/norway.no.json");
  redacted9537 = await rdapJson("domain/registry-thick/example.com-rfc9537-redacted.json");
  icannFragment = await rdapJson("entity/icann.org-registrant-redacted-fragment.json");
});

const registrant = (doc: any) => doc.entities.find((e: any) => e.roles.includes("registrant"));
const vcard = (entity: any, name: string) => entity.vcardArray[1].find((p: any) => p[0] === name);

const NO_CHANGE = { registrar_changed: false, registrant_changed: false, nameservers_changed: false, status_changed: false };

describe("registrar and registrant identities from real answers", () => {
  it("registrar: fn from the vCard, IANA id from publicIds (Verisign, AFNIC, NORID)", () => {
    expect(registrarOf(hhgames)).toEqual({ handle: "411", name: "Sea Wasp, LLC", iana_id: "411" });
    expect(registrarOf(lemonde)).toEqual({ handle: "RAR24-FRNIC", name: "NAMESHIELD", iana_id: "1251" });
    expect(registrarOf(norway)).toEqual({ handle: "reg42-NORID", name: "Domeneshop AS", iana_id: null });
  });

  it("registrant: absent at a thin registry, partly withheld elsewhere", () => {
    expect(registrantOf(hhgames)).toBeNull();
    expect(registrantOf(norway)).toBeNull();
    expect(registrantOf(click)).toEqual({ handle: null, name: null, organization: "Microsoft Corporation" });
    // Registrar-side answer: fn withheld as "", org disclosed.
    expect(registrantOf(nomeo)).toEqual({ handle: null, name: null, organization: "Kreos Services BVBA" });
    expect(registrantOf(icannFragment)).toEqual({
      handle: null,
      name: null,
      organization: "Internet Corporation for Assigned Names and Numbers",
    });
    expect(registrantOf(lemonde)).toEqual({
      handle: "SEDM254-FRNIC",
      name: "SOCIETE EDITRICE du monde",
      organization: "SOCIETE EDITRICE DU MONDE",
    });
    // FIR: a handle and "REDACTED FOR PRIVACY" remarks, no vCard at all.
    expect(registrantOf(moscow)?.handle).toBe("20231120183619454758_28c280fc7dcaa0dff7cd2b0e9b87e263_contact-FIR");
    expect(registrantOf(redacted9537)).toEqual({ handle: "XXXX", name: null, organization: null });
  });

  it("recognizes placeholder values", () => {
    for (const v of ["", "  ", "REDACTED FOR PRIVACY", "Redacted | EU Data Subject", "Data Protected", "Not Disclosed", "N/A", null]) {
      expect(isWithheldValue(v), String(v)).toBe(true);
    }
    for (const v of ["Microsoft Corporation", "Kreos Services BVBA", "Privacy Protect, LLC (PrivacyProtect.org)"]) {
      expect(isWithheldValue(v), v).toBe(false);
    }
  });
});

describe("deriveFacts", () => {
  it("first snapshot: no changes, expiration from the current answer", () => {
    expect(deriveFacts(null, hhgames)).toEqual({
      ...NO_CHANGE,
      expiration_date: "2026-07-04T19:21:02Z",
      previous_expiration_date: null,
    });
  });

  it("an unchanged registration re-queried: no changes (registry without status or expiry: NORID)", () => {
    const again = clone(norway);
    again.nameservers.reverse();
    expect(deriveFacts(norway, again)).toEqual({ ...NO_CHANGE, expiration_date: null, previous_expiration_date: null });
  });

  it("renewal: expiry moved, nothing else", () => {
    const renewed = clone(click);
    renewed.events.find((e: any) => e.eventAction === "expiration").eventDate = "2025-11-12T19:15:55.283Z";
    expect(deriveFacts(click, renewed)).toEqual({
      ...NO_CHANGE,
      expiration_date: "2025-11-12T19:15:55.283Z",
      previous_expiration_date: "2024-11-12T19:15:55.283Z",
    });
  });

  it("registrar transfer, nameserver and status changes", () => {
    const moved = clone(hhgames);
    moved.entities = clone(google.entities);
    moved.nameservers = clone(google.nameservers);
    moved.status = ["client transfer prohibited"];
    expect(deriveFacts(hhgames, moved)).toMatchObject({
      registrar_changed: true,
      registrant_changed: false,
      nameservers_changed: true,
      status_changed: true,
    });
  });

  it("registrar name reworded, same IANA id: not a registrar change", () => {
    const reworded = clone(google);
    vcard(reworded.entities[0], "fn")[3] = "MarkMonitor, Inc.";
    reworded.entities[0].handle = "292";
    expect(deriveFacts(google, reworded).registrar_changed).toBe(false);
  });

  it("registrant organization changed: a change; the same organization in other case: not", () => {
    const sold = clone(nomeo);
    vcard(registrant(sold), "org")[3] = "Another Owner NV";
    expect(deriveFacts(nomeo, sold).registrant_changed).toBe(true);
    const recased = clone(nomeo);
    vcard(registrant(recased), "org")[3] = "KREOS SERVICES BVBA";
    expect(deriveFacts(nomeo, recased).registrant_changed).toBe(false);
  });

  it("privacy-restricted registries: absent -> absent is no change", () => {
    // Thin .com: no registrant on either side, while the registrar changes.
    const moved = clone(hhgames);
    moved.entities = clone(google.entities);
    expect(deriveFacts(hhgames, moved).registrant_changed).toBe(false);
  });

  it("disclosed -> redacted (and back) is not a registrant change", () => {
    const hidden = clone(click);
    vcard(registrant(hidden), "org")[3] = "REDACTED FOR PRIVACY";
    expect(registrantOf(hidden)).toBeNull();
    expect(deriveFacts(click, hidden).registrant_changed).toBe(false);
    expect(deriveFacts(hidden, click).registrant_changed).toBe(false);
    const removed = clone(click);
    removed.entities = removed.entities.filter((e: any) => !e.roles.includes("registrant"));
    expect(deriveFacts(click, removed).registrant_changed).toBe(false);
  });

  it("a registrant known only by handle (FIR) changes when the handle does", () => {
    const other = clone(moscow);
    registrant(other).handle = "20240101000000000000_ffffffffffffffffffffffffffffffff_contact-FIR";
    expect(deriveFacts(moscow, other).registrant_changed).toBe(true);
  });

  it("garbage in: unknown, not an exception", () => {
    expect(deriveFacts("x", 5)).toEqual({ ...NO_CHANGE, expiration_date: null, previous_expiration_date: null });
    expect(deriveFacts({ entities: "x", events: [null, 3] }, { status: [1, "active"] })).toMatchObject({ status_changed: true });
  });
});

describe("buildRdapEvent", () => {
  it("produces the documented nested event fields with the raw answers", () => {
    const renewed = clone(hhgames);
    renewed.events[1].eventDate = "2027-07-04T19:21:02Z";
    const ev = buildRdapEvent({
      domain: "hhgames.com",
      tld: "com",
      current: renewed,
      previous: hhgames,
      fetchedAt: new Date(Date.UTC(2026, 5, 1, 12, 0, 0)),
      rdapServer: "https://rdap.verisign.com/com/v1/domain/hhgames.com",
      httpStatus: 200,
    });
    expect(ev.domain).toBe("hhgames.com");
    expect(ev.tld).toBe("com");
    expect(ev.metadata).toEqual({
      fetched_at: "2026-06-01T12:00:00.000Z",
      rdap_server: "https://rdap.verisign.com/com/v1/domain/hhgames.com",
      http_status: 200,
    });
    expect((ev.rdap.current as any).events[1].eventDate).toBe("2027-07-04T19:21:02Z");
    expect((ev.rdap.previous as any).events[1].eventDate).toBe("2026-07-04T19:21:02Z");
    // The full answer, notices included (rules see what the registry sent).
    expect((ev.rdap.current as any).notices).toHaveLength(3);
    expect(ev.rdap.current).not.toBe(renewed);
    // The event is exactly what RDAP alert rules are type-checked against.
    const rule = compileRule(
      "rdap",
      'domain == "hhgames.com" && tld == "com" && has(rdap.current.ldhName) && has(rdap.previous.events) && metadata.http_status == 200 && metadata.rdap_server.startsWith("https://") && metadata.fetched_at != ""',
      [],
    );
    if (!rule.ok) throw new Error(rule.message);
    expect(evaluate(rule, ev as unknown as Record<string, unknown>)).toEqual({ matched: true });
  });

  it("leaves rdap.previous absent on a first snapshot", () => {
    const ev = buildRdapEvent({
      domain: "norway.no",
      tld: "no",
      current: norway,
      previous: null,
      fetchedAt: "2026-06-01T12:00:00Z",
      rdapServer: "https://rdap.norid.no/domain/norway.no",
      httpStatus: 200,
    });
    expect("previous" in ev.rdap).toBe(false);
    expect(ev.metadata.fetched_at).toBe("2026-06-01T12:00:00.000Z");
  });
});
