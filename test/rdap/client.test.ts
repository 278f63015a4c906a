/**
 * The RDAP client against the local RDAP server (test/fixtures/servers/rdap.ts):
 * every outcome from a real HTTP exchange. Names end in ".client.test" so this
 * file can reset its own scenarios while other files use the server.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { fetchDomain, parseRetryAfter, type RdapFetchResult } from "../../src/modules/rdap/client";
import { findRdapServers, isBootstrapError, parseBootstrap } from "../../src/modules/rdap/bootstrap";
import { control, FIXTURE_URL, RDAP_BASE, rdapJson, requestCounts, serverStats } from "./data";

const SUFFIX = ".client.test";
const name = (label: string) => label + SUFFIX;

beforeEach(async () => {
  await control("reset", { suffix: SUFFIX });
});

async function lookup(label: string, opts: Parameters<typeof fetchDomain>[2] = {}): Promise<RdapFetchResult> {
  return fetchDomain(RDAP_BASE, name(label), { timeoutMs: 5_000, ...opts });
}

describe("fetchDomain outcomes", () => {
  it("success: a real registry answer, Accept: application/rdap+json, one request", async () => {
    const r = await lookup("plain");
    expect(r.outcome).toBe("success");
    if (r.outcome !== "success") return;
    expect(r.httpStatus).toBe(200);
    expect(r.requestUrl).toBe(`${RDAP_BASE}domain/plain${SUFFIX}`);
    expect(r.finalUrl).toBe(r.requestUrl);
    expect(r.domain.ldhName).toBe(name("plain"));
    // The default answer is Verisign's hhgames.com with the name substituted.
    expect(r.domain.handle).toBe("88133367_DOMAIN_COM-VRSN");
    expect(JSON.parse(r.bodyText).ldhName).toBe(name("plain"));
    const stats = await serverStats();
    expect(stats.requests[name("plain")]).toBe(1);
    expect(stats.lastAccept[name("plain")]).toBe("application/rdap+json");
  });

  it("success with a configured body (AFNIC lemonde.fr) and injected clock", async () => {
    const body = await rdapJson("domain/cctld/lemonde.fr.json");
    await control(`domain/${name("afnic")}`, { body });
    const r = await lookup("afnic", { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) });
    expect(r.outcome).toBe("success");
    expect(r.fetchedAt).toBe("2026-01-02T03:04:05.000Z");
    if (r.outcome === "success") expect(r.domain.handle).toBe("DOM000000024309-FRNIC");
  });

  it("not_found on 404", async () => {
    await control(`domain/${name("gone")}`, { status: 404 });
    const r = await lookup("gone");
    expect(r).toMatchObject({ outcome: "not_found", httpStatus: 404 });
  });

  it("rate_limited on 429 with Retry-After in seconds", async () => {
    await control(`domain/${name("busy")}`, { status: 429, retryAfter: 120 });
    expect(await lookup("busy")).toMatchObject({ outcome: "rate_limited", httpStatus: 429, retryAfterSeconds: 120 });
  });

  it("rate_limited on 429 with Retry-After as an HTTP date", async () => {
    await control(`domain/${name("busy-date")}`, { status: 429, retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT" });
    const now = Date.UTC(2026, 9, 21, 7, 27, 15);
    expect(await lookup("busy-date", { now: () => now })).toMatchObject({ outcome: "rate_limited", retryAfterSeconds: 45 });
  });

  it("rate_limited without Retry-After", async () => {
    await control(`domain/${name("busy-none")}`, { status: 429 });
    expect(await lookup("busy-none")).toMatchObject({ outcome: "rate_limited", retryAfterSeconds: null });
  });

  it("server_error on 5xx and on a refused connection", async () => {
    await control(`domain/${name("broken")}`, { status: 503 });
    expect(await lookup("broken")).toMatchObject({ outcome: "server_error", httpStatus: 503 });
    // workerd logs "Network connection lost" for the refused connect even though
    // the rejection is handled (a plain try/catch around fetch logs it too).
    const refused = await fetchDomain("http://127.0.0.1:1/rdap/", name("nobody"), { timeoutMs: 5_000 });
    expect(refused).toMatchObject({ outcome: "server_error", httpStatus: null });
  });

  it("timeout when the server never answers (hang)", async () => {
    await control(`domain/${name("hang")}`, { mode: "hang" });
    const t0 = Date.now();
    const r = await lookup("hang", { timeoutMs: 300 });
    expect(r).toMatchObject({ outcome: "timeout", httpStatus: null });
    expect(Date.now() - t0).toBeLessThan(4_000);
  });

  it("timeout when the answer is slower than the limit", async () => {
    await control(`domain/${name("slow")}`, { delayMs: 1_500 });
    expect(await lookup("slow", { timeoutMs: 200 })).toMatchObject({ outcome: "timeout" });
  });

  it("timeout (cancelled) when the caller aborts", async () => {
    await control(`domain/${name("cancel")}`, { mode: "hang" });
    const r = await lookup("cancel", { signal: AbortSignal.timeout(100) });
    expect(r.outcome).toBe("timeout");
    if (r.outcome === "timeout") expect(r.message).toMatch(/cancelled/);
  });

  it.each([
    ["html", { mode: "html" }, "html"],
    ["malformed", { mode: "malformed" }, "malformed_json"],
    ["html-as-json", { body: "<html><body>Not here</body></html>", contentType: "application/json" }, "html"],
    ["forbidden", { status: 403 }, "unexpected_status"],
  ])("invalid_response: %s", async (label, scenario, reason) => {
    await control(`domain/${name(label)}`, scenario);
    expect(await lookup(label)).toMatchObject({ outcome: "invalid_response", reason });
  });

  it("invalid_response: 200 with an RDAP error object, not a domain (RIPE)", async () => {
    await control(`domain/${name("notdomain")}`, { body: await rdapJson("error/ripe-error.json") });
    expect(await lookup("notdomain")).toMatchObject({ outcome: "invalid_response", reason: "not_domain_object", httpStatus: 200 });
  });

  it("invalid_response: a nameserver object where a domain was asked", async () => {
    await control(`domain/${name("ns")}`, { body: await rdapJson("nameserver/ns1.nic.fr.json") });
    expect(await lookup("ns")).toMatchObject({ outcome: "invalid_response", reason: "not_domain_object" });
  });

  it("invalid_response: body larger than the limit", async () => {
    expect(await lookup("big", { maxBodyBytes: 100 })).toMatchObject({ outcome: "invalid_response", reason: "too_large" });
  });

  it("follows a registry -> registrar redirect and reports the final URL", async () => {
    await control(`domain/${name("thin")}`, { redirectTo: `${RDAP_BASE}domain/${name("registrar")}` });
    await control(`domain/${name("registrar")}`, { body: await rdapJson("domain/registrar/nomeo.com.json") });
    const r = await lookup("thin");
    expect(r).toMatchObject({ outcome: "success", redirects: 1, finalUrl: `${RDAP_BASE}domain/${name("registrar")}` });
    if (r.outcome === "success") expect(r.domain.ldhName).toBe("nomeo.com");
    const counts = await requestCounts();
    expect([counts[name("thin")], counts[name("registrar")]]).toEqual([1, 1]);
  });

  it("invalid_response on a redirect loop, detected without running to the limit", async () => {
    await control(`domain/${name("loop")}`, { mode: "redirect-loop" });
    const r = await lookup("loop");
    expect(r).toMatchObject({ outcome: "invalid_response", reason: "redirect_loop", redirects: 1 });
    expect((await requestCounts())[name("loop")]).toBe(2);
  });

  it("invalid_response after 5 redirects to new URLs", async () => {
    await control(`domain/${name("chain")}`, { mode: "redirect-chain" });
    const r = await lookup("chain");
    expect(r).toMatchObject({ outcome: "invalid_response", reason: "too_many_redirects", redirects: 5 });
    expect((await requestCounts())[name("chain")]).toBe(6);
  });

  it("invalid_response on a redirect without Location", async () => {
    await control(`domain/${name("nowhere")}`, { status: 302 });
    expect(await lookup("nowhere")).toMatchObject({ outcome: "invalid_response", reason: "bad_redirect" });
  });

  it("no_rdap_server when discovery found none", async () => {
    expect(await fetchDomain(null, "example.io")).toMatchObject({ outcome: "no_rdap_server", requestUrl: null, httpStatus: null });
    expect(await fetchDomain("not a url", "example.io")).toMatchObject({ outcome: "no_rdap_server" });
  });
});

describe("discovery through the local bootstrap, then lookup", () => {
  it("maps .test to the local server and fetches once", async () => {
    const res = await fetch(`${FIXTURE_URL}/rdap/bootstrap.json`);
    const bootstrap = parseBootstrap(await res.text());
    if (isBootstrapError(bootstrap)) throw bootstrap;
    const servers = findRdapServers(bootstrap, name("disco"));
    expect(servers).toEqual([RDAP_BASE]);
    const r = await fetchDomain(servers[0], name("disco"), { timeoutMs: 5_000 });
    expect(r.outcome).toBe("success");
    expect((await requestCounts())[name("disco")]).toBe(1);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(2026, 0, 1);
  it.each([
    ["30", 30],
    [" 0 ", 0],
    ["Thu, 01 Jan 2026 00:01:00 GMT", 60],
    ["Wed, 31 Dec 2025 23:00:00 GMT", 0],
    ["soon", null],
    ["-5", null],
    ["1.5", null],
  ])("%s -> %s", (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
  it("absent -> null", () => expect(parseRetryAfter(null, now)).toBeNull());
});
