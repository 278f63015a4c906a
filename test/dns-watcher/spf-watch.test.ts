/**
 * SPF as a continuous check against the real DNS lab: an include target that turns
 * +all on its own, an analysis that failed on DNS and completes later, a policy first
 * seen allowing every sender, a permerror that is never "allows all". Runs are called
 * directly (the code the Cron Trigger runs) so their figures and events can be read.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { call, signup } from "../helpers";
import { factsOf, forgetWatchedDomains, putZone, runWatch, uniqueZone, watchDomain } from "./lab";

const BASE = `@ IN A 192.0.2.10\n@ IN MX 10 mx1\nmx1 IN A 192.0.2.25\n_dmarc IN TXT "v=DMARC1; p=reject"\n`;
const zone = (spf: string, extra = "") => `${BASE}@ IN TXT "${spf}"\n${extra}`;

beforeEach(forgetWatchedDomains);

describe("SPF include/redirect targets are watched", () => {
  it("a target turning +all on its own is seen, confirmed and recorded for every domain using it; asked once per run", async () => {
    const a = await signup();
    const b = await signup();
    const provider = uniqueZone("p");
    const one = uniqueZone("s");
    const two = uniqueZone("s");
    await putZone(provider, zone("v=spf1 -all", `_spf IN TXT "v=spf1 ip4:198.51.100.0/24 -all"\n`));
    await putZone(one, zone(`v=spf1 include:_spf.${provider} -all`));
    await putZone(two, zone(`v=spf1 mx redirect=_spf.${provider}`));
    const idOne = await watchDomain(a, one);
    const idTwo = await watchDomain(b, two);

    const baseline = await runWatch();
    // 14 record sets; the target (TXT of _spf.provider) was read by the analyses, not yet a question of the run.
    expect(baseline.summary).toMatchObject({ distinct_queries: 14, spf_target_queries: 0, facts: 0 });
    const view = (await call("GET", `/api/dns-watcher/domains/${idOne}`, { token: a.session })).body;
    expect(view.spf).toMatchObject({ status: "ok", allows_all: false, target_records: { [`_spf.${provider}`]: ["v=spf1 ip4:198.51.100.0/24 -all"] } });

    // Unchanged: the target is one more question, shared by both domains and organizations.
    const quiet = await runWatch();
    expect(quiet.summary).toMatchObject({ distinct_queries: 15, spf_target_queries: 1, confirmations: 0, spf_target_changes: 0, write_statements: 1 });
    expect(quiet.requests).toBe(15);

    // The provider's record turns +all; neither domain's own TXT changes.
    await putZone(provider, zone("v=spf1 -all", `_spf IN TXT "v=spf1 +all"\n`));
    const changed = await runWatch();
    expect(changed.summary).toMatchObject({ spf_target_queries: 1, spf_target_confirmations: 1, spf_target_changes: 2, changes: 0, facts: 2, events_emitted: 2 });
    expect(changed.requests).toBe(16); // one confirmation; the re-analyses read the run's answers
    for (const [id, via] of [[idOne, `include:_spf.${provider}`], [idTwo, `redirect=_spf.${provider}`]] as const) {
      const facts = await factsOf(id);
      expect(facts.map((f) => [f.kind, f.record_name, f.record_type]), String(id)).toEqual([["spf_allows_all", `_spf.${provider}`, "TXT"]]);
      expect(JSON.parse(facts[0].old_values)).toEqual(["v=spf1 ip4:198.51.100.0/24 -all"]);
      expect(JSON.parse(facts[0].new_values)).toEqual(["v=spf1 +all"]);
      expect(facts[0].detail).toContain(`SPF allows all senders (${via})`);
    }
    const org = (id: number) => (id === idOne ? a : b);
    for (const id of [idOne, idTwo]) {
      const h = (await call("GET", `/api/dns-watcher/domains/${id}/history`, { token: org(id).session })).body;
      expect(h.changes.map((c: any) => [c.kind, c.name])).toEqual([["spf", `_spf.${provider}`]]);
      expect(h.changes[0].analysis.spf.previous.allows_all).toBe(false);
      expect(h.changes[0].analysis.spf.current.allows_all).toBe(true);
    }
    expect(changed.events.map((e) => [e.domain, e.spf.became_permissive, e.spf.allows_all, e.spf.changed_targets]).sort()).toEqual(
      [[one, true, true, [`_spf.${provider}`]], [two, true, true, [`_spf.${provider}`]]].sort(),
    );
    expect((await call("GET", `/api/dns-watcher/domains/${idTwo}`, { token: b.session })).body.spf).toMatchObject({ allows_all: true, allows_all_via: `redirect=_spf.${provider}`, all: "+all" });

    // Seen again: nothing new.
    const after = await runWatch();
    expect(after.summary).toMatchObject({ spf_target_changes: 0, facts: 0, events_emitted: 0, confirmations: 0 });
    expect(await factsOf(idOne)).toHaveLength(1);
  });

  it("an analysis that failed on DNS (temperror) is made again every run until it completes, and then shows the +all it hid", async () => {
    const org = await signup();
    const domain = uniqueZone("t");
    const provider = uniqueZone("b");
    // The include's zone fails validation: the analysis ends in temperror.
    await putZone(provider, `_spf IN TXT "v=spf1 -all"\n`, "bogus");
    await putZone(domain, zone(`v=spf1 include:_spf.${provider} -all`));
    const id = await watchDomain(org, domain);
    await runWatch();
    let d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(d.spf).toMatchObject({ status: "temperror", allows_all: false });
    await runWatch();
    expect((await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body.spf.status).toBe("temperror");

    // The provider's zone is fixed, with +all: the apex TXT is the same, the next run sees it.
    await putZone(provider, `_spf IN TXT "v=spf1 +all"\n`);
    const run = await runWatch();
    expect(run.summary).toMatchObject({ changes: 0, facts: 1, events_emitted: 1 });
    d = (await call("GET", `/api/dns-watcher/domains/${id}`, { token: org.session })).body;
    expect(d.spf).toMatchObject({ status: "ok", allows_all: true, allows_all_via: `include:_spf.${provider}` });
    expect((await factsOf(id)).map((f) => f.kind)).toEqual(["spf_allows_all"]);
    expect(run.events[0].spf).toMatchObject({ became_permissive: true, previous: { allows_all: false } });
  });

  it("a policy first seen allowing all senders is a fact; a permerror never allows all", async () => {
    const org = await signup();
    const open = uniqueZone("o");
    const broken = uniqueZone("x");
    await putZone(open, zone("v=spf1 +all"));
    // Three void lookups before +all: permerror (RFC 7208 4.6.4), so receivers do not pass the mail.
    await putZone(broken, zone(`v=spf1 a:n1.${broken} a:n2.${broken} a:n3.${broken} +all`));
    const idOpen = await watchDomain(org, open);
    const idBroken = await watchDomain(org, broken);
    const first = await runWatch();
    const facts = await factsOf(idOpen);
    expect(facts.map((f) => [f.kind, f.record_name])).toEqual([["spf_allows_all", open]]);
    expect(JSON.parse(facts[0].old_values)).toEqual([]);
    expect(first.events.map((e) => [e.domain, e.spf.became_permissive])).toEqual([[open, true]]);
    const h = (await call("GET", `/api/dns-watcher/domains/${idOpen}/history`, { token: org.session })).body;
    expect(h.changes.map((c: any) => c.kind)).toEqual(["spf"]);
    expect(h.changes[0].detail).toMatch(/^SPF allows all senders \(\+all\): first seen/);

    const b = (await call("GET", `/api/dns-watcher/domains/${idBroken}`, { token: org.session })).body;
    expect(b.spf).toMatchObject({ status: "permerror", allows_all: false, void_lookups: 3 });
    expect(await factsOf(idBroken)).toEqual([]);
    // Nothing more on the next run.
    expect((await runWatch()).summary).toMatchObject({ facts: 0, events_emitted: 0 });
  });
});
