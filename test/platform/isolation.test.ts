/**
 * Cross-organization isolation (docs/security.md#tenancy): another tenant's object ids are 404,
 * never 403, for every platform endpoint that takes an id; listings never show
 * another organization's rows.
 */
import { describe, expect, it } from "vitest";
import { addMember, call, createToken, expectErrorShape, signupFresh, unique, type Member, type Org } from "../helpers";

/** Organization A with a member, a token of that member and a pending invitation. */
async function populated(): Promise<{ org: Org; member: Member; tokenId: number; token: string; invitationId: number }> {
  const org = await signupFresh("A");
  const member = await addMember(org.session, [{ module_name: "api-tokens", role_name: "Token Manager" }]);
  const t = await createToken(member.session, ["api-tokens:view_own_tokens"]);
  const inv = await call("POST", "/api/admin/invitations", { token: org.session, body: { email: `pending-${unique()}@example.com` } });
  expect(inv.status).toBe(201);
  return { org, member, tokenId: t.id, token: t.token, invitationId: inv.body.id };
}

describe("cross-organization isolation", () => {
  it("B's administrator session and B's all-powerful token get 404 for every id of A", async () => {
    const a = await populated();
    const b = await signupFresh("B");
    const bToken = await createToken(b.session, [
      "api-tokens:delete_tokens", "api-tokens:revoke_all_tokens", "api-tokens:view_all_tokens",
      "admin:manage_users", "admin:manage_permissions",
    ]);
    for (const bearer of [b.session, bToken.token]) {
      const cases: [string, string, unknown?][] = [
        ["DELETE", `/api/api-tokens/${a.tokenId}`],
        ["PUT", `/api/admin/users/${a.member.userId}`, { roles: [] }],
        ["PUT", `/api/admin/users/${a.member.userId}/status`, { status: "disabled" }],
        ["DELETE", `/api/admin/users/${a.member.userId}`],
        ["POST", `/api/admin/invitations/${a.invitationId}/resend`],
        // A's signup user: still 404 from B (not the signup-user 403).
        ["PUT", `/api/admin/users/${a.org.userId}/status`, { status: "disabled" }],
        ["DELETE", `/api/admin/users/${a.org.userId}`],
      ];
      for (const [method, path, body] of cases) {
        const r = await call(method, path, { token: bearer, body });
        expectErrorShape(r, 404, "not_found");
      }
    }
    // Nothing of A changed.
    expect((await call("GET", "/api/api-tokens", { token: a.token })).status).toBe(200);
    expect((await call("GET", "/api/auth/me", { token: a.member.session })).body.user.status).toBe("active");
    const users = await call("GET", "/api/admin/users", { token: a.org.session });
    expect(users.body.users.find((u: any) => u.id === a.member.userId).permissions).toEqual([{ module: "api-tokens", role: "Token Manager" }]);
    const invs = await call("GET", "/api/admin/invitations", { token: a.org.session });
    const outbox = await call("GET", "/api/admin/mail-outbox", { token: a.org.session });
    expect(invs.body.invitations.map((i: any) => i.id)).toContain(a.invitationId);
    // Only A's two invitation mails (member + pending), no resend from B.
    expect(outbox.body.messages).toHaveLength(2);
  });

  it("renewing another organization's token: 403 with a token (not the token itself), as documented", async () => {
    const a = await populated();
    const b = await signupFresh("B");
    const bToken = await createToken(b.session, ["api-tokens:view_own_tokens"]);
    // Renewing with any credential other than the token itself is 403;
    // it reveals nothing, since the same answer is given for every id.
    expectErrorShape(await call("POST", `/api/api-tokens/${a.tokenId}/renew`, { token: bToken.token }), 403, "forbidden");
    expectErrorShape(await call("POST", `/api/api-tokens/${a.tokenId}/renew`, { token: b.session }), 403, "forbidden");
    expectErrorShape(await call("POST", `/api/api-tokens/999999999/renew`, { token: b.session }), 403, "forbidden");
  });

  it("listings never show another organization's rows", async () => {
    const a = await populated();
    const b = await signupFresh("B");
    await createToken(b.session, ["rdap:view_monitoring"]);
    const aIds = { users: [a.org.userId, a.member.userId], token: a.tokenId, inv: a.invitationId };
    const users = await call("GET", "/api/admin/users", { token: b.session });
    expect(users.body.users.map((u: any) => u.id)).toEqual([b.userId]);
    const tokens = await call("GET", "/api/api-tokens/org", { token: b.session });
    expect(tokens.body.tokens.every((t: any) => t.user_id === b.userId)).toBe(true);
    expect(tokens.body.tokens.map((t: any) => t.id)).not.toContain(aIds.token);
    expect((await call("GET", "/api/admin/invitations", { token: b.session })).body.invitations).toEqual([]);
    expect((await call("GET", "/api/admin/mail-outbox", { token: b.session })).body.messages).toEqual([]);
    const log = await call("GET", "/api/admin/audit-logs?limit=100", { token: b.session });
    expect(log.body.audit_logs.every((e: any) => e.user_id === b.userId)).toBe(true);
    expect(log.body.audit_logs.map((e: any) => e.action)).toEqual(["api_token.create", "auth.signup"]);
    // And A sees none of B's.
    const aTokens = await call("GET", "/api/api-tokens/org", { token: a.org.session });
    expect(aTokens.body.tokens.map((t: any) => t.user_id).every((id: number) => aIds.users.includes(id))).toBe(true);
  });
});
