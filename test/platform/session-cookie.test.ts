/**
 * The web console's session transport (src/platform/session-cookie.ts): the session
 * as an HttpOnly SameSite=Strict cookie, never in the body; CSRF refused without the
 * console header; bearer clients unaffected.
 */
import { describe, expect, it } from "vitest";
import { PASSWORD, call, callFresh, createToken, invitationTokenFor, serve, signup, unique, uniqueIp } from "../helpers";

const CONSOLE = { "x-trustplane-console": "1" };

/** `tp_session=<value>` from a Set-Cookie header, plus its attributes. */
function parseSetCookie(headers: Headers) {
  const raw = headers.get("set-cookie");
  expect(raw, "Set-Cookie header").toBeTruthy();
  const [pair, ...attrs] = raw!.split(/;\s*/);
  const [name, value] = pair.split("=");
  return { name, value, attrs: attrs.map((a) => a.toLowerCase()), raw: raw! };
}

async function consoleLogin(email: string) {
  const r = await call("POST", "/api/auth/login", { body: { email, password: PASSWORD }, headers: { ...CONSOLE, "cf-connecting-ip": uniqueIp() } });
  expect(r.status).toBe(200);
  return r;
}

describe("session cookie for the web console", () => {
  it("login with the console header sets an HttpOnly SameSite=Strict cookie on /api and leaves the token out of the body", async () => {
    const org = await signup("Cookie");
    const r = await consoleLogin(org.email);
    expect(r.body.token).toBeUndefined();
    expect(typeof r.body.expires_at).toBe("string");
    const c = parseSetCookie(r.headers);
    expect(c.name).toBe("tp_session");
    expect(c.value).toMatch(/^tps_/);
    expect(c.attrs).toContain("httponly");
    expect(c.attrs).toContain("samesite=strict");
    expect(c.attrs).toContain("path=/api");
    // Plain HTTP here (the test origin): not Secure, or the browser would drop it on http://127.0.0.1.
    expect(c.attrs).not.toContain("secure");
    expect(c.attrs.some((a) => a.startsWith("expires="))).toBe(true);

    // The cookie alone authenticates reads.
    const me = await call("GET", "/api/auth/me", { headers: { cookie: `tp_session=${c.value}` } });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(org.email);
    expect(me.body.credential).toBe("session");
  });

  it("is Secure when the request came over HTTPS", async () => {
    const org = await signup("CookieTls");
    const res = await serve(
      new Request("https://trust-plane.test/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": uniqueIp(), ...CONSOLE },
        body: JSON.stringify({ email: org.email, password: PASSWORD }),
      }),
    );
    expect(res.status).toBe(200);
    expect(parseSetCookie(res.headers).attrs).toContain("secure");
  });

  it("refuses a cookie-authenticated mutation without the console header (CSRF) and allows it with the header", async () => {
    const org = await signup("Csrf");
    const cookie = `tp_session=${parseSetCookie((await consoleLogin(org.email)).headers).value}`;
    const body = { name: `list-${unique()}`.toLowerCase(), list_type: "ip", entries: [] };
    const refused = await call("POST", "/api/lists", { headers: { cookie }, body });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("csrf_failed");
    // Nothing was created by the refused call.
    const before = await call("GET", "/api/lists", { headers: { cookie } });
    expect(before.body.lists.map((l: { name: string }) => l.name)).not.toContain(body.name);

    const ok = await call("POST", "/api/lists", { headers: { cookie, ...CONSOLE }, body });
    expect(ok.status).toBe(201);
  });

  it("accepts only a session token in the cookie, and an unknown one is 401", async () => {
    const org = await signup("CookieKind");
    const api = await createToken(org.session, ["lists:view_lists"]);
    const withApiToken = await call("GET", "/api/lists", { headers: { cookie: `tp_session=${api.token}` } });
    expect(withApiToken.status).toBe(401);
    const forged = await call("GET", "/api/auth/me", { headers: { cookie: "tp_session=tps_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000" } });
    expect(forged.status).toBe(401);
  });

  it("a bearer header wins over the cookie, and bearer mutations need no console header", async () => {
    const a = await signup("BearerA");
    const b = await signup("BearerB");
    const cookieOfB = `tp_session=${parseSetCookie((await consoleLogin(b.email)).headers).value}`;
    const me = await call("GET", "/api/auth/me", { token: a.session, headers: { cookie: cookieOfB } });
    expect(me.body.user.email).toBe(a.email);
    const created = await call("POST", "/api/lists", { token: a.session, headers: { cookie: cookieOfB }, body: { name: `b-${unique()}`.toLowerCase(), list_type: "ip" } });
    expect(created.status).toBe(201);
  });

  it("logout ends the session and clears the cookie", async () => {
    const org = await signup("Logout");
    const cookie = `tp_session=${parseSetCookie((await consoleLogin(org.email)).headers).value}`;
    const out = await call("POST", "/api/auth/logout", { headers: { cookie, ...CONSOLE } });
    expect(out.status).toBe(200);
    const cleared = parseSetCookie(out.headers);
    expect(cleared.name).toBe("tp_session");
    expect(cleared.value).toBe("");
    expect(cleared.attrs.some((a) => a === "max-age=0" || a.startsWith("expires=thu, 01 jan 1970"))).toBe(true);
    expect((await call("GET", "/api/auth/me", { headers: { cookie } })).status).toBe(401);
  });

  it("signup and invitation acceptance deliver the session the same way; bearer clients still get the token", async () => {
    const email = `cookie-${unique()}@example.com`;
    const s = await callFresh("POST", "/api/auth/signup", {
      body: { organization_name: `Cookie Org ${unique()}`, email, password: PASSWORD },
      headers: CONSOLE,
    });
    expect(s.status).toBe(201);
    expect(s.body.token).toBeUndefined();
    expect(parseSetCookie(s.headers).value).toMatch(/^tps_/);

    const org = await signup("Inviter");
    const invitee = `invitee-${unique()}@example.com`;
    expect((await call("POST", "/api/admin/invitations", { token: org.session, body: { email: invitee } })).status).toBe(201);
    const tpi = await invitationTokenFor(org.session, invitee);
    const acc = await callFresh("POST", "/api/auth/invitations/accept", { body: { token: tpi, password: PASSWORD }, headers: CONSOLE });
    expect(acc.status).toBe(201);
    expect(acc.body.token).toBeUndefined();
    const cookie = `tp_session=${parseSetCookie(acc.headers).value}`;
    expect((await call("GET", "/api/auth/me", { headers: { cookie } })).body.user.email).toBe(invitee);

    const plain = await callFresh("POST", "/api/auth/login", { body: { email, password: PASSWORD } });
    expect(plain.body.token).toMatch(/^tps_/);
    expect(plain.headers.get("set-cookie")).toBeNull();
  });
});
