/**
 * The email checks' configuration through the API: `email_checks` and `dkim_selectors` on a
 * DNS domain's create and update bodies, the record sets they stand for, the bad input
 * refused with nothing saved, and the `email_security` view before anything is observed.
 */
import { describe, expect, it } from "vitest";
import { call, expectError, signup, unique } from "../helpers";

const names = async (token: string, id: number) =>
  ((await call("GET", `/api/dns-watcher/domains/${id}/records`, { token })).body.records as { name: string; type: string }[]).map((r) => `${r.name} ${r.type}`).sort();

describe("email checks on a DNS domain", () => {
  it("create and update watch the mechanisms' records and the declared selectors; off stops watching them", async () => {
    const org = await signup();
    const domain = `mail-${unique()}.test`;
    const created = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain, email_checks: true, dkim_selectors: ["Google", "s1.sub", "google"] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const emailSets = [`_mta-sts.${domain} TXT`, `_smtp._tls.${domain} TXT`, `default._bimi.${domain} TXT`];
    expect(await names(org.session, id)).toEqual(expect.arrayContaining([...emailSets, `google._domainkey.${domain} TXT`, `s1.sub._domainkey.${domain} TXT`]));
    expect((await names(org.session, id)).length).toBe(7 + 3 + 2);

    let d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(d).toMatchObject({ email_checks: true, dkim_selectors: ["google", "s1.sub"] });
    expect(d.email_security.enabled).toBe(true);
    for (const m of ["mta_sts", "tls_rpt", "dane", "dkim", "bimi"]) expect(d.email_security[m].status, m).toBe("unknown");
    expect(d.email_security.dkim.selectors.map((s: any) => [s.selector, s.status])).toEqual([["google", "unknown"], ["s1.sub", "unknown"]]);

    // The selector list is replaced; the other record sets stay.
    expect((await call("PATCH", `/api/dns-watcher/domains/${id}`, { token: org.session, body: { dkim_selectors: ["s2"] } })).status).toBe(200);
    expect(await names(org.session, id)).toEqual(expect.arrayContaining([...emailSets, `s2._domainkey.${domain} TXT`]));
    expect((await names(org.session, id)).filter((n) => n.includes("._domainkey."))).toEqual([`s2._domainkey.${domain} TXT`]);

    // Off: the mechanisms' record sets are no longer watched; every mechanism says why it is unknown.
    expect((await call("PATCH", `/api/dns-watcher/domains/${id}`, { token: org.session, body: { email_checks: false } })).status).toBe(200);
    expect((await names(org.session, id)).filter((n) => emailSets.includes(n))).toEqual([]);
    d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(d.email_security.enabled).toBe(false);
    expect(d.email_security.mta_sts.findings).toEqual(["The email checks are off for this domain (email_checks): nothing is looked up."]);
    // On again: watched again (no duplicate, no 409).
    expect((await call("PATCH", `/api/dns-watcher/domains/${id}`, { token: org.session, body: { email_checks: true } })).status).toBe(200);
    expect((await names(org.session, id)).filter((n) => emailSets.includes(n))).toEqual(emailSets);

    // A domain created without them: off, and 7 record sets as before.
    const plain = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `plain-${unique()}.test` } });
    expect((await call("GET", `/api/dns-watcher/domains/${plain.body.id}`, { token: org.session })).body.email_checks).toBe(false);
    expect(await names(org.session, plain.body.id)).toHaveLength(7);
  });

  it("a bad selector is 400 naming the field, and nothing is saved", async () => {
    const org = await signup();
    const domain = `bad-${unique()}.test`;
    for (const selector of ["*", "a b", "<script>", "x".repeat(64), "a..b", ""]) {
      const r = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain, email_checks: true, dkim_selectors: [selector] } });
      expectError(r, 400, "validation_error");
    }
    const list = (await call("GET", "/api/dns-watcher/domains", { token: org.session })).body;
    expect(list.total).toBe(0);
    const ok = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: domain } });
    const before = await names(org.session, ok.body.id);
    expectError(await call("PATCH", `/api/dns-watcher/domains/${ok.body.id}`, { token: org.session, body: { email_checks: true, dkim_selectors: ["ok", "no way"] } }), 400, "validation_error");
    expect(await names(org.session, ok.body.id)).toEqual(before);
    expect((await call("GET", `/api/dns-watcher/domains/${ok.body.id}`, { token: org.session })).body.email_checks).toBe(false);
    expectError(await call("PATCH", `/api/dns-watcher/domains/${ok.body.id}`, { token: org.session, body: { dkim_selectors: Array.from({ length: 21 }, (_, i) => `s${i}`) } }), 400, "validation_error");

    // The most a domain may declare, at creation and by update: every record set is written (7 + 3 email + 20 DKIM).
    const most = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const full = await call("POST", "/api/dns-watcher/domains", { token: org.session, body: { domain_name: `full-${domain}`, email_checks: true, dkim_selectors: most } });
    expect(full.status, JSON.stringify(full.body)).toBe(201);
    expect((await names(org.session, full.body.id)).length).toBe(30);
    const upd = await call("PATCH", `/api/dns-watcher/domains/${ok.body.id}`, { token: org.session, body: { email_checks: true, dkim_selectors: most } });
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect((await names(org.session, ok.body.id)).length).toBe(30);
  });
});
