// End to end: a typosquat-enabled filter `paypal.com`; certificates naming paypa1.com and
// paypal-login.com are appended to a fixture RFC 6962 log (x509 entries, self-signed by
// the test with @peculiar/asn1-x509 over WebCrypto); the Cron Trigger, fired through the
// Worker's scheduled handler, has the log's CtLogCursor read them; the typosquatting
// endpoints show them with their evidence. Another organization gets 404; disabling
// typosquatting stops detection at the next batch. Lookalikes are CT-Log events: a rule
// on their evidence fires, and the AlertState's alarm delivers to the webhook receiver.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, expectError, pollUntil, signup } from "../helpers";
import { certificate } from "./certificates";
import { createLog, cronAndWait, dohZone, logKey, postJson, publishLogList, runCron, uid, waitForPosition } from "./ingest-helpers";

describe("typosquatting end to end", () => {
  it("stores lookalikes of a protected filter seen through the Cron Trigger and serves them", async () => {
    const id = uid();
    const log = `t${id}`;
    await createLog(log, { from: "pilot", size: 2, leafIndexExtension: false });
    const list = await publishLogList(`tl${id}`, [{ log, protocol: "rfc6962" }]);
    const config = { ...list, CT_BATCH_SIZE: "64", DOH_RESOLVER_URLS: await dohZone(`tz${id}`, []) };
    const key = await logKey(log);

    const a = await signup("Typo A");
    const b = await signup("Typo B");
    const f = await call("POST", "/api/ct-log/filters", { token: a.session, body: { pattern: "paypal.com", match_type: "wide", typosquat_enabled: true } });
    expect(f.status).toBe(201);
    // An ineligible filter cannot be protected.
    const bad = await call("POST", "/api/ct-log/filters", { token: a.session, body: { pattern: "*.paypal.com", match_type: "wide", typosquat_enabled: true } });
    await expectError(bad, 400, "typosquat_ineligible");

    // First run: the cursor starts at the log's end (2 pilot entries, no lookalikes).
    const [s0] = await cronAndWait(config, [key.log_id_b64]);
    expect(s0).toMatchObject({ position: 2, lastError: null });

    const lookalike = await certificate(["paypa1.com", "www.paypa1.com"]);
    const login = await certificate(["paypal-login.com"]);
    const genuine = await certificate(["www.paypal.com", "paypal.com"]);
    const unrelated = await certificate(["example.org"]);
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: [lookalike.b64, genuine.b64, login.b64, unrelated.b64] });
    await runCron(config);
    await waitForPosition(key.log_id_b64, 6);

    const r = await call("GET", "/api/ct-log/typosquatting/matches", { token: a.session });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 2, page: 1, page_size: 20, sort_by: "detected_at", sort_order: "desc" });
    const byDomain = Object.fromEntries(r.body.matches.map((m: any) => [m.candidate_domain, m]));
    expect(byDomain["paypa1.com"]).toMatchObject({
      sha256: lookalike.sha256,
      filter_id: f.body.id,
      filter_pattern: "paypal.com",
      certificate_name: "paypa1.com",
      evidence: ["confusable"],
      edit_distance: null,
      log_count: 1,
      subject: "paypa1.com",
    });
    expect(byDomain["paypal-login.com"]).toMatchObject({ sha256: login.sha256, certificate_name: "paypal-login.com", evidence: ["affix"], edit_distance: null });
    expect(byDomain["paypal-login.com"].not_after > byDomain["paypal-login.com"].not_before).toBe(true);
    // The genuine certificate is a plain CT match, not a lookalike.
    expect((await call("GET", "/api/ct-log/matches", { token: a.session })).body.total).toBe(1);

    // Detail: by fingerprint, filter and candidate domain.
    const detailPath = `/api/ct-log/typosquatting/matches/${lookalike.sha256}?filter_id=${f.body.id}&candidate_domain=paypa1.com`;
    const d = await call("GET", detailPath, { token: a.session });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ candidate_domain: "paypa1.com", evidence: ["confusable"], log_count: 1, certificate_name: "paypa1.com" });
    expect(d.body.cert).toMatchObject({ sha256: lookalike.sha256, dns_names: ["paypa1.com", "www.paypa1.com"], is_precert: false, log_index: 2 });
    expect(d.body.occurrences).toEqual([expect.objectContaining({ log_index: 2, sha256: lookalike.sha256, is_precert: false })]);
    // Another organization, another candidate or another filter: 404.
    await expectError(await call("GET", detailPath, { token: b.session }), 404, "not_found");
    await expectError(await call("GET", detailPath.replace("candidate_domain=paypa1.com", "candidate_domain=paypal-login.com"), { token: a.session }), 404, "not_found");
    await expectError(await call("GET", detailPath.replace(`filter_id=${f.body.id}`, `filter_id=${f.body.id + 1000}`), { token: a.session }), 404, "not_found");
    expect((await call("GET", "/api/ct-log/typosquatting/matches", { token: b.session })).body.total).toBe(0);
    // Validation.
    await expectError(await call("GET", `/api/ct-log/typosquatting/matches/${lookalike.sha256}?candidate_domain=paypa1.com`, { token: a.session }), 400, "validation_error");
    await expectError(await call("GET", `/api/ct-log/typosquatting/matches/${lookalike.sha256}?filter_id=${f.body.id}`, { token: a.session }), 400, "validation_error");
    await expectError(await call("GET", `/api/ct-log/typosquatting/matches/nothex?filter_id=1&candidate_domain=x.com`, { token: a.session }), 400, "validation_error");
    for (const q of ["page=0", "page_size=0", "page_size=101", "sort_by=matched_at", "sort_order=up"]) {
      await expectError(await call("GET", `/api/ct-log/typosquatting/matches?${q}`, { token: a.session }), 400, "validation_error");
    }
    // Paging and sorting.
    const asc = await call("GET", "/api/ct-log/typosquatting/matches?sort_by=candidate_domain&sort_order=asc&page_size=1", { token: a.session });
    expect(asc.body).toMatchObject({ total: 2, page_size: 1, sort_by: "candidate_domain", sort_order: "asc" });
    expect(asc.body.matches.map((m: any) => m.candidate_domain)).toEqual(["paypa1.com"]);
    const page2 = await call("GET", "/api/ct-log/typosquatting/matches?sort_by=candidate_domain&sort_order=asc&page_size=1&page=2", { token: a.session });
    expect(page2.body.matches.map((m: any) => m.candidate_domain)).toEqual(["paypal-login.com"]);
    const byEvidence = await call("GET", "/api/ct-log/typosquatting/matches?sort_by=evidence&sort_order=asc", { token: a.session });
    expect(byEvidence.body.matches.map((m: any) => m.evidence[0])).toEqual(["affix", "confusable"]);

    // Typosquatting off: the next batch detects nothing more for this filter.
    expect((await call("PUT", `/api/ct-log/filters/${f.body.id}`, { token: a.session, body: { typosquat_enabled: false } })).status).toBe(200);
    const later = await certificate(["paypal-secure.com"]);
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: [later.b64] });
    await runCron(config);
    await waitForPosition(key.log_id_b64, 7);
    expect((await call("GET", "/api/ct-log/typosquatting/matches", { token: a.session })).body.total).toBe(2);
    // On again, then deleted: a deleted filter stops at once too.
    expect((await call("PUT", `/api/ct-log/filters/${f.body.id}`, { token: a.session, body: { typosquat_enabled: true } })).status).toBe(200);
    const again = await certificate(["paypal-secure.net"]);
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: [again.b64] });
    await runCron(config);
    await waitForPosition(key.log_id_b64, 8);
    const three = await call("GET", "/api/ct-log/typosquatting/matches?sort_by=candidate_domain&sort_order=asc", { token: a.session });
    expect(three.body.matches.map((m: any) => [m.candidate_domain, m.evidence])).toEqual([
      ["paypa1.com", ["confusable"]],
      ["paypal-login.com", ["affix"]],
      ["paypal-secure.net", ["tld_change", "affix"]],
    ]);
    expect((await call("DELETE", `/api/ct-log/filters/${f.body.id}`, { token: a.session })).status).toBe(200);
    const gone = await certificate(["paypal-verify.com"]);
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: [gone.b64] });
    await runCron(config);
    await waitForPosition(key.log_id_b64, 9);
    expect((await call("GET", "/api/ct-log/typosquatting/matches", { token: a.session })).body.total).toBe(3);
  }, 60_000);

  it("lookalikes are CT-Log events: typosquat.* in introspection, a rule on the evidence fires, the webhook receives it; paypal.com.evil.net is an affix", async () => {
    const E = env as any;
    const id = uid();
    const log = `te${id}`;
    await createLog(log, { from: "pilot", size: 2, leafIndexExtension: false });
    const list = await publishLogList(`tel${id}`, [{ log, protocol: "rfc6962" }]);
    const config = { ...list, CT_BATCH_SIZE: "64", DOH_RESOLVER_URLS: await dohZone(`tez${id}`, []) };
    const key = await logKey(log);
    const org = await signup("Typo events");

    // The module's CEL variables name the lookalike's fields.
    const intro = await call("GET", "/api/ct-log/introspection", { token: org.session });
    expect(intro.status).toBe(200);
    const vars = new Map((intro.body.variables as { path: string; type: string }[]).map((v) => [v.path, v.type]));
    for (const path of ["kind", "typosquat.candidate_domain", "typosquat.protected_domain", "typosquat.certificate_name", "typosquat.evidence", "typosquat.edit_distance", "typosquat.confidence"]) {
      expect(vars.has(path), path).toBe(true);
    }

    expect((await call("POST", "/api/ct-log/filters", { token: org.session, body: { pattern: "paypal.com", match_type: "wide", typosquat_enabled: true } })).status).toBe(201);
    const box = `typo-${id}`;
    const ch = await call("POST", "/api/notification-channels", { token: org.session, body: { name: `typo-${id}`, kind: "webhook", url: `${E.FIXTURE_URL}/webhook/${box}` } });
    expect(ch.status).toBe(201);
    for (const [name, expression] of [
      ["confusable lookalike", 'typosquat.evidence.exists(e, e == "confusable")'],
      ["combosquat by subdomain", 'kind == "typosquat" && typosquat.candidate_domain == "evil.net" && "affix" in typosquat.evidence'],
    ]) {
      const r = await call("POST", "/api/ct-log/alert-rules", { token: org.session, body: { name, expression, severity: "high", throttle_seconds: 0, channel_ids: [ch.body.id] } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }

    expect((await cronAndWait(config, [key.log_id_b64]))[0]).toMatchObject({ position: 2, lastError: null });
    const confusable = await certificate(["paypa1.com"]);
    const combo = await certificate(["paypal.com.evil.net"]);
    const login = await certificate(["paypal-login.com"]); // affix on its own registrable domain: neither rule
    await postJson(`/ctlog/${log}/__control/entries`, { certificates: [confusable.b64, combo.b64, login.b64] });
    await runCron(config);
    await waitForPosition(key.log_id_b64, 5);

    const matches = (await call("GET", "/api/ct-log/typosquatting/matches?sort_by=candidate_domain&sort_order=asc", { token: org.session })).body.matches;
    expect(matches.map((m: any) => [m.candidate_domain, m.certificate_name, m.evidence])).toEqual([
      ["evil.net", "paypal.com.evil.net", ["affix"]],
      ["paypa1.com", "paypa1.com", ["confusable"]],
      ["paypal-login.com", "paypal-login.com", ["affix"]],
    ]);

    // Through the queue to the organization's AlertState: exactly the two lookalikes the rules name.
    const hist = await pollUntil(async () => {
      const r = await call("GET", "/api/ct-log/alert-history?limit=100", { token: org.session });
      return r.status === 200 && r.body.total >= 2 ? r : null;
    }, 30_000, 100);
    expect(hist, "no typosquat alert fired").not.toBeNull();
    expect(hist!.body.total).toBe(2);
    const fired = JSON.stringify(hist!.body.alerts);
    expect(fired).toContain("paypa1.com");
    expect(fired).toContain("paypal.com.evil.net");
    expect(fired).not.toContain("paypal-login.com");

    // Delivered by the organization's AlertState on its own: firing armed its alarm, which runs the deliveries.
    const inbox = await pollUntil(async () => {
      const r = (await (await fetch(`${E.FIXTURE_URL}/webhook/__control/${box}`)).json()) as { received: { body: string }[] };
      return r.received.length >= 2 ? r : null;
    }, 30_000, 200);
    expect(inbox, "the AlertState alarm delivered nothing to the webhook").not.toBeNull();
    expect(inbox!.received.length).toBe(2);
    const bodies = inbox!.received.map((r) => r.body).join("\n");
    expect(bodies).toContain("paypa1.com");
    expect(bodies).toContain("paypal.com.evil.net");
  }, 60_000);
});
