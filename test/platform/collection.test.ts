import { describe, expect, it } from "vitest";
import {
  classifyFailure,
  collectionView,
  CollectionFailure,
  collectionEventFields,
  httpStatusFailure,
  logSourceFailure,
  NEVER_COLLECTED,
  recordAttempt,
  resetSourceLog,
  sanitizeFailureMessage,
  SOURCE_LOG_INTERVAL_MS,
} from "../../src/platform/collection";
import { DnsLookupError } from "../../src/platform/dns/message";

const T0 = "2026-11-01T00:00:00.000Z";
const T1 = "2026-11-01T01:00:00.000Z";
const T2 = "2026-11-01T02:00:00.000Z";
const T3 = "2026-11-01T03:00:00.000Z";
const timeout = { ok: false as const, error: { class: "timeout" as const, message: "no answer from rdap.example:443 in time" } };

describe("collection state transitions", () => {
  it("is pending before any attempt and after one failed first attempt; failing at the second failure", () => {
    expect(collectionView(NEVER_COLLECTED).state).toBe("pending");
    const a = recordAttempt(NEVER_COLLECTED, timeout, T0, T1);
    expect(a.transition).toBeNull();
    expect(collectionView(a.record)).toMatchObject({ state: "pending", consecutive_failures: 1, failing_since: T0, error: timeout.error, last_success_at: null });
    const b = recordAttempt(a.record, timeout, T1, T2);
    expect(b.transition).toBe("failing");
    expect(collectionView(b.record)).toMatchObject({ state: "failing", consecutive_failures: 2, failing_since: T0, next_attempt_at: T2 });
    // A third failure is no new transition: one event per change, not per attempt.
    const c = recordAttempt(b.record, timeout, T2, T3);
    expect(c.transition).toBeNull();
    expect(c.record.failingSince).toBe(T0);
  });

  it("stays ok with its error after one failure following a success, and recovers only from failing", () => {
    const ok = recordAttempt(NEVER_COLLECTED, { ok: true }, T0, T1);
    expect(ok.transition).toBeNull();
    const once = recordAttempt(ok.record, timeout, T1, T2);
    expect(collectionView(once.record)).toMatchObject({ state: "ok", last_success_at: T0, error: timeout.error });
    expect(recordAttempt(once.record, { ok: true }, T2, T3).transition).toBeNull();
    const failing = recordAttempt(once.record, timeout, T2, T3);
    const back = recordAttempt(failing.record, { ok: true }, T3, null);
    expect(back.transition).toBe("recovered");
    expect(collectionView(back.record)).toMatchObject({ state: "ok", failing_since: null, consecutive_failures: 0, error: null, last_success_at: T3 });
  });

  it("is paused when disabled, with no next attempt", () => {
    const ok = recordAttempt(NEVER_COLLECTED, { ok: true }, T0, T1);
    expect(collectionView(ok.record, false)).toMatchObject({ state: "paused", next_attempt_at: null, last_success_at: T0 });
  });

  it("gives the event fields of a transition", () => {
    const a = recordAttempt(recordAttempt(NEVER_COLLECTED, timeout, T0, T1).record, timeout, T1, T2);
    expect(collectionEventFields(a.record)).toEqual({ state: "failing", error_class: "timeout", error_message: timeout.error.message, failing_since: T0 });
  });
});

describe("classifyFailure", () => {
  it("says the runtime's opaque fetch failure as the DNS failure it is, never its reference", () => {
    const e = classifyFailure(new Error("internal error; reference = 7epfj5abc123"), { url: "https://rdap.example/domain/x.example" });
    expect(e).toEqual({ class: "dns_resolution", message: "DNS lookup of rdap.example failed" });
    const ip = classifyFailure(new Error("internal error; reference = 7epfj5abc123"), { url: "https://192.0.2.44/x" });
    expect(ip.class).toBe("connect");
    expect(ip.message).not.toMatch(/reference/);
  });

  it("classifies refused connections, timeouts, TLS, JSON and declared classes", () => {
    expect(classifyFailure(new Error("Network connection lost."), { url: "https://192.0.2.44/" })).toEqual({
      class: "connect",
      message: "connection to 192.0.2.44:443 failed: refused or closed before an answer",
    });
    expect(classifyFailure(new DOMException("signal timed out", "TimeoutError"), { host: "log.example", port: 443 }).class).toBe("timeout");
    expect(classifyFailure(new Error("TLS peer's certificate is not trusted"), { host: "a.example", port: 443 }).class).toBe("tls");
    expect(classifyFailure(new SyntaxError("Unexpected token < in JSON"), { host: "rdap.example" }).class).toBe("protocol");
    class TamperedTile extends Error {
      readonly collectionClass = "protocol";
    }
    expect(classifyFailure(new TamperedTile("tile 0/x/001 does not hash to the signed root"), { what: "log ct.example" })).toEqual({
      class: "protocol",
      message: "log ct.example: tile 0/x/001 does not hash to the signed root",
    });
    expect(classifyFailure(new CollectionFailure("blocked", "10.0.0.1 is a private address")).class).toBe("blocked");
    expect(classifyFailure(new DnsLookupError("timeout", "every resolver timed out")).class).toBe("timeout");
    expect(classifyFailure(new DnsLookupError("network", "resolver unreachable")).class).toBe("connect");
    expect(classifyFailure(new Error("boom")).class).toBe("internal");
  });

  it("maps HTTP statuses, 429 to rate_limited", () => {
    expect(httpStatusFailure(503, "https://rdap.example/domain/x")).toEqual({ class: "http_status", message: "HTTP 503 from https://rdap.example/domain/x" });
    expect(httpStatusFailure(429, "https://rdap.example/", undefined, 30).class).toBe("rate_limited");
    // A stored text that already says the status (a collector's record from before it classified).
    expect(classifyFailure(new Error("LogHttpError: HTTP 500 from http://ct.example/checkpoint after 4 attempts"), { what: "reading log A" })).toEqual({
      class: "http_status",
      message: "reading log A: LogHttpError: HTTP 500 from http://ct.example/checkpoint after 4 attempts",
    });
    expect(classifyFailure(new Error("HTTP 429 from https://rdap.example/")).class).toBe("rate_limited");
  });

  it("sanitizes control characters and the opaque reference out of any text", () => {
    expect(sanitizeFailureMessage("a\r\nBcc: x@evil.example internal error; reference = abc")).toBe("a Bcc: x@evil.example the runtime gave no reason");
  });
});

describe("logSourceFailure", () => {
  it("writes one line per source and class per interval, then counts repeats", () => {
    resetSourceLog();
    const lines: string[] = [];
    const err = { class: "dns_resolution" as const, message: "DNS lookup of ct.example failed" };
    expect(logSourceFailure("ct.example", err, 0, (l) => lines.push(l))).toBe(true);
    expect(logSourceFailure("ct.example", err, 1000, (l) => lines.push(l))).toBe(false);
    expect(logSourceFailure("ct.example", { ...err, class: "timeout" }, 1000, (l) => lines.push(l))).toBe(true);
    expect(logSourceFailure("ct.example", err, SOURCE_LOG_INTERVAL_MS + 1, (l) => lines.push(l))).toBe(true);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain("(1 more since the last line)");
    expect(lines.join("\n")).not.toMatch(/\n\s+at /);
  });
});
