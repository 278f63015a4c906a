import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { emitEvent, alertStateOf } from "../../src/modules/alerting/emit";
import { call, signup, unique } from "../helpers";

const base = (env as any).FIXTURE_URL as string;

describe("alerting smoke", () => {
  it("list + rule + emit + webhook delivery", async () => {
    const org = await signup();
    const t = org.session;
    const list = await call("POST", "/api/lists", { token: t, body: { name: "dmz", list_type: "ip", entries: ["10.0.0.0/8", "2001:db8::/32"] } });
    expect(list.status).toBe(201);
    const inbox = unique();
    const ch = await call("POST", "/api/notification-channels", { token: t, body: { name: "hook", kind: "webhook", url: `${base}/webhook/${inbox}` } });
    expect(ch.status).toBe(201);
    expect(ch.body.secret).toMatch(/^whsec_/);
    const rule = await call("POST", "/api/cert-watcher/alert-rules", {
      token: t,
      body: { name: "dmz expiring", expression: 'in_list(ip_address, lists["dmz"]) && validity_days < 30', channel_ids: [ch.body.id], severity: "high" },
    });
    expect(rule.status).toBe(201);
    const del = await call("DELETE", `/api/lists/${list.body.id}`, { token: t });
    expect(del.status).toBe(409);
    const r = await emitEvent(env as any, "cert-watcher", org.organizationId, { monitor_cn: "a.example.com", ip_address: "10.1.2.3", validity_days: 5, has_error: false, error: "", protocol: [], ciphers: [] });
    expect(r.fired.length).toBe(1);
    await runInDurableObject(alertStateOf(env as any, org.organizationId), (o: any) => o.deliverNow(org.organizationId));
    const got = await (await fetch(`${base}/webhook/__control/${inbox}`)).json<any>();
    expect(got.received.length).toBe(1);
    const hist = await call("GET", "/api/cert-watcher/alert-history", { token: t });
    expect(hist.body.alerts[0].deliveries[0].status).toBe("delivered");
  });
});
