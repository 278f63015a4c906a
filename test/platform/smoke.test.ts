import { describe, expect, it } from "vitest";
import { call, createToken, signup } from "../helpers";

describe("smoke", () => {
  it("health, signup, token", async () => {
    const h = await call("GET", "/api/health");
    expect(h.status).toBe(200);
    expect(h.body).toEqual({ status: "ok", database: "ok" });
    const org = await signup();
    const t = await createToken(org.session, ["rdap:view_monitoring", "api-tokens:view_own_tokens"]);
    expect(t.token).toMatch(/^tpm_/);
    const list = await call("GET", "/api/api-tokens", { token: t.token });
    expect(list.status).toBe(200);
    expect(list.body.tokens[0].token_prefix).toBe(t.token.slice(0, 12));
    expect(list.headers.get("RateLimit-Limit")).toBeTruthy();
  });
});
