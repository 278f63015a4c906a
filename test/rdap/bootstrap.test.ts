import { describe, expect, it } from "vitest";
import {
  BootstrapCache,
  bundledBootstrap,
  findRdapServers,
  isBootstrapError,
  parseBootstrap,
  rdapDomainUrl,
  resolveRdapServers,
  RdapBootstrapError,
  type Bootstrap,
} from "../../src/modules/rdap/bootstrap";
import { FIXTURE_URL, rdapText } from "./data";

async function load(rel: string): Promise<Bootstrap> {
  const b = parseBootstrap(await rdapText("bootstrap/" + rel));
  if (isBootstrapError(b)) throw b;
  return b;
}

describe("parseBootstrap on real IANA files", () => {
  it("reads the 2024-02-07 IANA dns.json: 603 services, 1165 TLDs", async () => {
    const b = await load("iana-dns-2024-02-07.json");
    expect(b.publication).toBe("2024-02-07T04:00:02Z");
    expect(b.services).toHaveLength(603);
    expect(b.byEntry.size).toBe(1165);
  });

  it("the bundled copy is that same file", async () => {
    const bundled = bundledBootstrap();
    const fromData = await load("iana-dns-2024-02-07.json");
    expect(bundled.publication).toBe(fromData.publication);
    expect([...bundled.byEntry]).toEqual([...fromData.byEntry]);
  });

  it("rejects whoisit's bundle at top level (not the IANA shape) but reads its dns member", async () => {
    const bundle = JSON.parse(await rdapText("bootstrap/whoisit-bootstrap-bundle-2022.json"));
    const top = parseBootstrap(bundle);
    expect(top).toBeInstanceOf(RdapBootstrapError);
    expect((top as RdapBootstrapError).code).toBe("shape");
    const dns = parseBootstrap(bundle.dns) as Bootstrap;
    expect(dns.publication).toBe("2022-07-06T16:00:02Z");
    expect(dns.services).toHaveLength(771);
    expect(findRdapServers(dns, "google.com")).toEqual(["https://rdap.verisign.com/com/v1/"]);
  });
});

describe("parseBootstrap rejects malformed files with a typed error", () => {
  it.each([
    ["openrdap-dns_empty.json", "syntax"],
    ["openrdap-dns_syntax_error.json", "syntax"],
    ["openrdap-dns_bad_services.json", "bad_service"],
    ["openrdap-dns_bad_url.json", "bad_url"],
  ])("%s -> %s", async (file, code) => {
    const result = parseBootstrap(await rdapText("bootstrap/malformed/" + file));
    expect(result).toBeInstanceOf(RdapBootstrapError);
    expect((result as RdapBootstrapError).code).toBe(code);
  });

  it("garbage values give errors, not exceptions", () => {
    for (const v of [null, 42, "[]", [], { services: {} }, { services: [[["a"], [7]]] }, { services: [[["a"], ["ftp://x/"]]] }]) {
      expect(parseBootstrap(v)).toBeInstanceOf(RdapBootstrapError);
    }
  });
});

describe("findRdapServers: RFC 9224 longest match", () => {
  it("multi-label entries win over the TLD, the root entry is the fallback (openrdap bootstrap_complex)", async () => {
    const b = await load("openrdap-dns-multilabel-and-root.json");
    expect(findRdapServers(b, "a.sub.example.com")).toEqual(["https://example.com/sub/", "http://example.com/sub/"]);
    expect(findRdapServers(b, "sub.example.com")).toEqual(["https://example.com/sub/", "http://example.com/sub/"]);
    expect(findRdapServers(b, "example.com")).toEqual(["https://example.com/", "http://example.com/"]);
    // "xsub.example.com" shares characters but not a label with "sub.example.com".
    expect(findRdapServers(b, "xsub.example.com")).toEqual(["https://example.com/", "http://example.com/"]);
    expect(findRdapServers(b, "example.org")).toEqual(["https://example.root/", "http://example.root/"]);
  });

  it("normalizes the trailing slash (openrdap mini: cz without, br with)", async () => {
    const b = await load("openrdap-dns-mini.json");
    expect(findRdapServers(b, "nic.cz")).toEqual(["https://rdap.nic.cz/"]);
    expect(findRdapServers(b, "registro.br")).toEqual(["https://rdap.registro.br/"]);
    expect(findRdapServers(b, "example.de")).toEqual([]);
    expect(rdapDomainUrl("https://rdap.nic.cz", "nic.cz")).toBe("https://rdap.nic.cz/domain/nic.cz");
  });

  it("finds real registries in the IANA file, case-insensitively, with trailing dot and IDN", async () => {
    const b = await load("iana-dns-2024-02-07.json");
    expect(findRdapServers(b, "HHGAMES.COM")).toEqual(["https://rdap.verisign.com/com/v1/"]);
    expect(findRdapServers(b, "lemonde.fr.")).toEqual(["https://rdap.nic.fr/"]);
    expect(findRdapServers(b, "home.moscow")).toEqual(["https://flexireg.net/moscow/rdap/"]);
    // .москва is listed as its A-label xn--80adxhks.
    expect(findRdapServers(b, "пример.москва")).toEqual(["https://flexireg.net/xn--80adxhks/rdap/"]);
    // http-only registries stay reachable.
    expect(findRdapServers(b, "example.uz")).toEqual(["http://cctld.uz:9000/"]);
    expect(findRdapServers(b, "example.io")).toEqual([]);
    expect(findRdapServers(b, "")).toEqual([]);
  });

  it("a configured override serves every TLD", async () => {
    const b = await load("openrdap-dns-mini.json");
    expect(resolveRdapServers({ bootstrap: b, overrideBaseUrl: "http://127.0.0.1:9/rdap" }, "example.io")).toEqual([
      "http://127.0.0.1:9/rdap/",
    ]);
    expect(resolveRdapServers({ bootstrap: b, overrideBaseUrl: "" }, "example.io")).toEqual([]);
  });
});

describe("BootstrapCache policy", () => {
  const day = 24 * 60 * 60 * 1000;

  it("fetches, keeps for 24 h, refreshes, and keeps the good copy when a refresh is malformed", async () => {
    let clock = Date.UTC(2026, 0, 1);
    let url = FIXTURE_URL + "/rdap/bootstrap.json";
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const persisted: number[] = [];
    const cache = new BootstrapCache({
      url: "unused",
      fetch: (_i, init) => counting(url, init),
      now: () => clock,
      onFetched: (_t, at) => {
        persisted.push(at);
      },
    });

    const first = await cache.get();
    expect(first.source).toBe("fetched");
    expect(findRdapServers(first.bootstrap, "anything.test")[0]).toBe(FIXTURE_URL + "/rdap/");
    expect(persisted).toEqual([clock]);

    clock += day - 1;
    expect((await cache.get()).source).toBe("cached");
    expect(calls).toBe(1);

    clock += 1;
    url = FIXTURE_URL + "/data/rdap/bootstrap/malformed/openrdap-dns_bad_url.json";
    const stale = await cache.get();
    expect(stale.source).toBe("stale");
    expect(stale.error).toMatch(/bad_url/);
    expect(stale.failure).toMatchObject({ class: "protocol", message: expect.stringMatching(/^fetching the RDAP bootstrap registry: unusable file from \S+ \(bad_url\): service #2 has an invalid base URL/) });
    expect(findRdapServers(stale.bootstrap, "anything.test")).toHaveLength(1);
    expect(calls).toBe(2);
    // Failure backoff: no new download within the hour.
    await cache.get();
    expect(calls).toBe(2);

    clock += 60 * 60 * 1000;
    url = FIXTURE_URL + "/data/rdap/bootstrap/openrdap-dns-mini.json";
    const refreshed = await cache.get();
    expect(refreshed.source).toBe("fetched");
    expect(findRdapServers(refreshed.bootstrap, "nic.cz")).toEqual(["https://rdap.nic.cz/"]);
  });

  it("a bootstrap server whose name does not resolve is said as such, never as the runtime's opaque text", async () => {
    const got = await new BootstrapCache({ url: "https://bootstrap.name-that-does-not-resolve.invalid/rdap/dns.json", now: () => 0 }).get();
    expect(got.source).toBe("bundled");
    expect(got.failure).toEqual({ class: "dns_resolution", message: "fetching the RDAP bootstrap registry: DNS lookup of bootstrap.name-that-does-not-resolve.invalid failed" });
  });

  it("falls back to the bundled IANA copy when nothing was ever fetched", async () => {
    const cache = new BootstrapCache({
      url: FIXTURE_URL + "/data/rdap/bootstrap/does-not-exist.json",
      now: () => 0,
    });
    const got = await cache.get();
    expect(got.source).toBe("bundled");
    expect(got.failure).toEqual({ class: "http_status", message: `fetching the RDAP bootstrap registry: HTTP 404 from ${FIXTURE_URL}/data/rdap/bootstrap/does-not-exist.json` });
    expect(got.error).toBe(got.failure!.message);
    expect(findRdapServers(got.bootstrap, "google.com")).toEqual(["https://rdap.verisign.com/com/v1/"]);
  });
});
