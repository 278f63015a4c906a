/** Scan targets are unicast addresses: unspecified, broadcast and multicast ones are refused (issue 13). */
import { describe, expect, it } from "vitest";
import { call, expectErrorShape, signup, unique } from "../helpers";

describe("certificate monitor targets", () => {
  it("refuses 0.0.0.0, 255.255.255.255, 224.0.0.1 and ff02::1 with the field; accepts private unicast", async () => {
    const org = await signup("Unicast");
    for (const ip of ["0.0.0.0", "255.255.255.255", "224.0.0.1", "ff02::1", "::"]) {
      const r = await call("POST", "/api/cert-watcher/monitors", { token: org.session, body: { cn: `u-${unique()}.example.com`, ip_addresses: ["192.0.2.1", ip] } });
      expectErrorShape(r, 400, "validation_error");
      expect(r.body.error.details).toEqual([expect.objectContaining({ path: "ip_addresses.1" })]);
    }
    const ok = await call("POST", "/api/cert-watcher/monitors", { token: org.session, body: { cn: `u-${unique()}.example.com`, ip_addresses: ["10.1.2.3"] } });
    expect(ok.status).toBe(201);
    const bad = await call("POST", `/api/cert-watcher/monitors/${ok.body.id}/targets`, { token: org.session, body: { ip_address: "224.0.0.251" } });
    expectErrorShape(bad, 400, "validation_error");
    // Nothing of a refused create was saved.
    const list = await call("GET", "/api/cert-watcher/monitors", { token: org.session });
    expect(list.body.total).toBe(1);
  });
});
