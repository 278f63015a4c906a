// The authorization verdict of src/modules/ct-log/authorization.ts, pure: which issuers
// apply (a filter's own, else the organization's, else the names' CAA records), the order
// of the verdicts (caa_violation, unexpected_issuer, unknown_key, authorized), issuers
// declared by name (O, CN, CA name, CAA identifier) or by key, the words of each reason,
// and the worst verdict over several filters.
import { describe, expect, it } from "vitest";
import {
  applicableIssuers,
  authorizeIssuance,
  worstAuthorization,
  type AuthorizationInput,
  type AuthorizedIssuer,
} from "../../src/modules/ct-log/authorization";
import type { CaaEvaluation } from "../../src/modules/ct-log/events";

const LE_ISSUER = "C=US, O=Let's Encrypt, CN=R11";
const DIGICERT_ISSUER = "C=US, O=DigiCert Inc, CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1";
const ISSUER_KEY = "a".repeat(64);
const LEAF_KEY = "b".repeat(64);

const noCaa: CaaEvaluation = { has_records: false, authorized: true, records: [], error: "", checked_names: ["www.example.com"], issuer_candidates: ["letsencrypt.org"], evaluated_at: "2026-11-29T00:00:00Z" };
const caaPermitsLe: CaaEvaluation = { ...noCaa, has_records: true, authorized: true, records: ['0 issue "letsencrypt.org"'] };
const caaForbids: CaaEvaluation = { ...noCaa, has_records: true, authorized: false, records: ['0 issue "digicert.com"'] };

function input(over: { issuer?: string; issuerKey?: string; caa?: CaaEvaluation; filter?: AuthorizedIssuer[] | null; org?: AuthorizedIssuer[]; known?: boolean } = {}): AuthorizationInput {
  return {
    cert: { issuer: over.issuer ?? LE_ISSUER, issuer_spki_sha256: over.issuerKey ?? ISSUER_KEY, spki_sha256: LEAF_KEY },
    caa: over.caa ?? noCaa,
    issuers: applicableIssuers(over.filter ?? null, over.org ?? []),
    key: over.known === false ? { known: false, source: "" } : { known: true, source: "deployed on www.example.com (192.0.2.10:443)" },
  };
}

describe("which issuers apply", () => {
  it("takes the filter's own list first, then the organization's, then the CAA records", () => {
    const org = [{ name: "letsencrypt.org" }];
    const own = [{ name: "DigiCert Inc" }];
    expect(applicableIssuers(own, org)).toEqual({ issuers: own, source: "filter" });
    expect(applicableIssuers([], org)).toEqual({ issuers: org, source: "organization" });
    expect(applicableIssuers(null, org)).toEqual({ issuers: org, source: "organization" });
    expect(applicableIssuers(undefined, [])).toEqual({ issuers: [], source: "caa" });
  });
});

describe("the verdict", () => {
  it("is routine for a known key from an authorized issuer, whichever way the issuer is named", () => {
    for (const declared of [{ name: "letsencrypt.org" }, { name: "LET'S ENCRYPT" }, { name: "r11" }, { spki_sha256: ISSUER_KEY.toUpperCase() }]) {
      const v = authorizeIssuance(input({ org: [declared] }));
      expect(v.verdict, JSON.stringify(declared)).toBe("authorized");
      expect(v.reason).toMatch(/^Routine: issued by Let's Encrypt, authorized by the organization's issuance policy/);
      expect(v.reason).toContain("known key (deployed on www.example.com (192.0.2.10:443))");
    }
  });

  it("is unexpected_issuer for a CA outside the declared list, naming the list, and says when issuer keys could not be compared", () => {
    const v = authorizeIssuance(input({ issuer: DIGICERT_ISSUER, issuerKey: "c".repeat(64), org: [{ name: "letsencrypt.org" }, { spki_sha256: ISSUER_KEY }] }));
    expect(v.verdict).toBe("unexpected_issuer");
    expect(v.reason).toBe(`Issued by DigiCert Inc, which is not among the organization's issuance policy: "letsencrypt.org", key ${ISSUER_KEY.slice(0, 16)}…`);
    // A static-ct-api entry carries no issuer key: a key-only declaration cannot match, and the reason says why.
    const noKey = authorizeIssuance(input({ issuerKey: "", org: [{ spki_sha256: ISSUER_KEY }] }));
    expect(noKey.verdict).toBe("unexpected_issuer");
    expect(noKey.reason).toMatch(/does not carry the issuer's key/);
  });

  it("lets a filter's list override the organization's, both ways", () => {
    expect(authorizeIssuance(input({ issuer: DIGICERT_ISSUER, filter: [{ name: "digicert.com" }], org: [{ name: "letsencrypt.org" }] })).verdict).toBe("authorized");
    const v = authorizeIssuance(input({ filter: [{ name: "DigiCert Inc" }], org: [{ name: "letsencrypt.org" }] }));
    expect(v.verdict).toBe("unexpected_issuer");
    expect(v.reason).toContain("not among the filter's authorized issuers");
  });

  it("is unknown_key for an authorized issuer and a key never seen deployed nor declared", () => {
    const v = authorizeIssuance(input({ org: [{ name: "letsencrypt.org" }], known: false }));
    expect(v.verdict).toBe("unknown_key");
    expect(v.reason).toBe(
      `New key: key ${LEAF_KEY.slice(0, 16)}… was never seen deployed on the organization's endpoints nor on its declared key lists (issued by Let's Encrypt, authorized by the organization's issuance policy ("letsencrypt.org"))`,
    );
  });

  it("puts a CAA violation before everything, even a declared issuer and a known key", () => {
    const v = authorizeIssuance(input({ caa: caaForbids, org: [{ name: "letsencrypt.org" }] }));
    expect(v.verdict).toBe("caa_violation");
    expect(v.reason).toBe(`The CAA records of www.example.com (0 issue "digicert.com") do not permit Let's Encrypt`);
    // An unauthorized issuer with an unknown key: the issuer is said, not the key.
    expect(authorizeIssuance(input({ issuer: DIGICERT_ISSUER, org: [{ name: "letsencrypt.org" }], known: false })).verdict).toBe("unexpected_issuer");
  });

  it("defaults to the CAs the CAA records permit, and an issuer it cannot map to a CAA identifier is not shown to be permitted", () => {
    const permitted = authorizeIssuance(input({ caa: caaPermitsLe }));
    expect(permitted.verdict).toBe("authorized");
    expect(permitted.reason).toContain('permitted by the CAA records (0 issue "letsencrypt.org")');
    const unmapped = authorizeIssuance(input({ issuer: "O=Intranet Root, CN=Intranet Issuing CA", caa: { ...caaPermitsLe, issuer_candidates: [] } }));
    expect(unmapped.verdict).toBe("unexpected_issuer");
    expect(unmapped.reason).toMatch(/Intranet Root, which cannot be shown to be a CA the CAA records permit/);
  });

  it("without declarations nor CAA records any CA passes and the key decides; a failed CAA lookup leaves the issuer unchecked, never a violation", () => {
    const open = authorizeIssuance(input({ issuer: DIGICERT_ISSUER }));
    expect(open.verdict).toBe("authorized");
    expect(open.reason).toContain("any CA may issue: no authorized issuers are declared and the names publish no CAA records");
    expect(authorizeIssuance(input({ issuer: DIGICERT_ISSUER, known: false })).verdict).toBe("unknown_key");
    const failed = authorizeIssuance(input({ caa: { ...noCaa, error: "DNS lookup of example.com timed out" } }));
    expect(failed.verdict).toBe("authorized");
    expect(failed.reason).toContain("issuer not checked: no authorized issuers are declared and the CAA lookup failed (DNS lookup of example.com timed out)");
  });
});

describe("the worst verdict over several filters", () => {
  it("orders caa_violation > unexpected_issuer > unknown_key > authorized, keeping the worst one's reason", () => {
    const a = (verdict: "authorized" | "unknown_key" | "unexpected_issuer" | "caa_violation") => ({ verdict, reason: verdict });
    expect(worstAuthorization([])).toBeNull();
    expect(worstAuthorization([a("authorized"), a("unknown_key")])).toEqual(a("unknown_key"));
    expect(worstAuthorization([a("unexpected_issuer"), a("unknown_key"), a("authorized")])).toEqual(a("unexpected_issuer"));
    expect(worstAuthorization([a("authorized"), a("caa_violation"), a("unexpected_issuer")])).toEqual(a("caa_violation"));
    expect(worstAuthorization([a("authorized"), a("authorized")])).toEqual(a("authorized"));
  });
});
